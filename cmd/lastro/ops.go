package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"lastro/collections/iam"
	"lastro/collections/table"
	"lastro/debtor"
	"lastro/ops"
	"lastro/tenant"
)

// opsApp opens the engine for a maintenance command and refuses a table
// that is not Lastro's before anything is read or written.
func opsApp(ctx context.Context, cfg config, stderr io.Writer) (*app, error) {
	e, err := newApp(ctx, cfg, slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return nil, err
	}
	if err := table.CheckLastro(ctx, e.db, cfg.Table); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (a *app) opsDeps(stderr io.Writer) ops.Deps {
	host, _ := os.Hostname()
	return ops.Deps{Kit: a.Kit, Tenants: a.Tenants, Debtors: a.Debtors, Clock: a.Clock, Log: a.log, Progress: stderr,
		Owner: fmt.Sprintf("%s-%d", host, os.Getpid())}
}

func printJSON(w io.Writer, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(raw))
	return err
}

// tenantCmd: lastro tenant offboard T --out DIR [--wcu N].
func tenantCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "offboard" {
		fmt.Fprint(stderr, "usage: lastro tenant offboard TENANT --out DIR [--wcu N] [flags]\n")
		if len(args) > 0 && isHelp(args[0]) {
			return flag.ErrHelp
		}
		return fmt.Errorf("unknown tenant command (offboard)")
	}
	if len(args) < 2 || isHelp(args[1]) || args[1] == "" || args[1][0] == '-' {
		fs := newFlagSet("tenant offboard", "TENANT --out DIR [--wcu N] [flags]", stderr)
		fs.String("out", "", "hand-over folder")
		fs.Float64("wcu", 0, "write capacity units a second for the deletes")
		if _, err := loadConfig(fs, args[1:], os.Getenv); err != nil {
			return err
		}
		return fmt.Errorf("no tenant given: lastro tenant offboard TENANT --out DIR")
	}
	id := args[1]
	fs := newFlagSet("tenant offboard", "TENANT --out DIR [--wcu N] [flags]", stderr)
	out := fs.String("out", "", "hand-over folder: items.jsonl, debtors.jsonl (profiles decrypted) and manifest.json, 0600")
	wcu := fs.Float64("wcu", 200, "write capacity units a second the deletes may spend (0: no limit)")
	cfg, err := loadConfig(fs, args[2:], os.Getenv)
	if err != nil {
		return err
	}
	if !tenant.ValidID(id) {
		return fmt.Errorf("invalid tenant id %q", id)
	}
	if *out == "" {
		return fmt.Errorf("--out is required: the tenant's data are handed over before they are deleted")
	}
	if *wcu < 0 {
		return fmt.Errorf("--wcu must be 0 or more")
	}
	e, err := opsApp(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer e.Close()
	rep, err := ops.Offboard(ctx, e.opsDeps(stderr), id, ops.OffboardOptions{Out: *out, WCU: *wcu})
	return jobDone(ctx, stdout, rep, err)
}

// lgpdCmd: lastro lgpd erase-due --tenant T.
func lgpdCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "erase-due" {
		fmt.Fprint(stderr, "usage: lastro lgpd erase-due --tenant T [flags]\n")
		if len(args) > 0 && isHelp(args[0]) {
			return flag.ErrHelp
		}
		return fmt.Errorf("unknown lgpd command (erase-due)")
	}
	fs := newFlagSet("lgpd erase-due", "--tenant T [flags]", stderr)
	id := fs.String("tenant", "", "tenant whose debtors past their retention are erased")
	cfg, err := loadConfig(fs, args[1:], os.Getenv)
	if err != nil {
		return err
	}
	if !tenant.ValidID(*id) {
		return fmt.Errorf("--tenant must be a tenant id")
	}
	e, err := opsApp(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer e.Close()
	t, err := e.Tenants.Get(ctx, *id)
	if err != nil {
		return err
	}
	res, err := e.Debtors.EraseDue(ctx, t, debtor.Actor{Role: "maintenance"}, func(visited, erased int) {
		if visited%100 == 0 {
			fmt.Fprintf(stderr, "lgpd erase-due %s: %d debtors visited, %d erased\n", *id, visited, erased)
		}
	})
	if perr := printJSON(stdout, res); err == nil {
		err = perr
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: run the same command again to resume (erased debtors are skipped)")
	}
	return err
}

// iamCmd: lastro iam policy --role api|worker|stream|lambda.
func iamCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "policy" {
		fmt.Fprint(stderr, "usage: lastro iam policy --role api|worker|stream|lambda [--region R] [--account A]\n")
		if len(args) > 0 && isHelp(args[0]) {
			return flag.ErrHelp
		}
		return fmt.Errorf("unknown iam command (policy)")
	}
	fs := newFlagSet("iam policy", "--role api|worker|stream|lambda [flags]", stderr)
	role := fs.String("role", "", "api (tenant-scoped by the tenantId session tag), worker, stream or lambda")
	region := fs.String("region", "*", "the table's AWS region")
	account := fs.String("account", "*", "the table's AWS account")
	cfg, err := loadConfig(fs, args[1:], os.Getenv)
	if err != nil {
		return err
	}
	doc, err := iam.Policy(*role, iam.ARNs(*region, *account, cfg.Table))
	if err != nil {
		return err
	}
	return printJSON(stdout, doc)
}

// cloudFormationRoles adds one AWS::IAM::Role per role to a template of
// table.CloudFormation, their policies on the template's own tables.
func cloudFormationRoles(tmpl []byte) ([]byte, error) {
	var t map[string]any
	if err := json.Unmarshal(tmpl, &t); err != nil {
		return nil, err
	}
	res, ok := t["Resources"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("template without resources")
	}
	r := iam.Resources{
		Table:   map[string]any{"Fn::GetAtt": []string{"LastroTable", "Arn"}},
		Indexes: map[string]any{"Fn::Sub": "${LastroTable.Arn}/index/*"},
		Stream:  map[string]any{"Fn::GetAtt": []string{"LastroTable", "StreamArn"}},
		Archive: map[string]any{"Fn::GetAtt": []string{"LastroArchiveTable", "Arn"}},
	}
	principal := map[string]map[string]any{
		// The API assumes its tenant-scoped role per tenant with the
		// tenantId session tag (sts:TagSession), from the account's roles.
		"api":    {"AWS": map[string]any{"Fn::Sub": "arn:aws:iam::${AWS::AccountId}:root"}},
		"worker": {"Service": "ecs-tasks.amazonaws.com"},
		"stream": {"Service": "ecs-tasks.amazonaws.com"},
		"lambda": {"Service": "lambda.amazonaws.com"},
	}
	for _, role := range iam.Roles {
		doc, err := iam.Policy(role, r)
		if err != nil {
			return nil, err
		}
		assume := []string{"sts:AssumeRole"}
		if role == "api" {
			assume = append(assume, "sts:TagSession")
		}
		name := "Lastro" + strings.ToUpper(role[:1]) + role[1:] + "Role"
		res[name] = map[string]any{
			"Type": "AWS::IAM::Role",
			"Properties": map[string]any{
				"AssumeRolePolicyDocument": map[string]any{"Version": "2012-10-17", "Statement": []map[string]any{
					{"Effect": "Allow", "Principal": principal[role], "Action": assume}}},
				"Policies": []map[string]any{{"PolicyName": "lastro-" + role, "PolicyDocument": doc}},
			},
		}
	}
	return json.MarshalIndent(t, "", "  ")
}

// rotateDebtorKeysCmd: lastro rotate debtor-keys --tenant T [--wcu N]
// [--settle D] (docs/adr/0075).
func rotateDebtorKeysCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("rotate debtor-keys", "--tenant T [--wcu N] [--settle D] [flags]", stderr)
	id := fs.String("tenant", "", "tenant whose debtor-key secret is rotated")
	wcu := fs.Float64("wcu", 200, "write capacity units a second the moves may spend (0: no limit)")
	settle := fs.Duration("settle", tenant.DefaultTenantCacheTTL, "keep the old profiles at least this long after the new secret became current, for instances that cached the tenant before it")
	cfg, err := loadConfig(fs, args[1:], os.Getenv)
	if err != nil {
		return err
	}
	if !tenant.ValidID(*id) {
		return fmt.Errorf("--tenant must be a tenant id")
	}
	if *settle < 0 {
		return fmt.Errorf("--settle must be 0 or more")
	}
	if *wcu < 0 {
		return fmt.Errorf("--wcu must be 0 or more")
	}
	e, err := opsApp(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer e.Close()
	rep, err := ops.RotateDebtorKeys(ctx, e.opsDeps(stderr), *id, ops.RotateOptions{WCU: *wcu, Settle: *settle})
	return jobDone(ctx, stdout, rep, err)
}

// jobDone ends a maintenance command: the job's report, printed as JSON
// even when the job stopped early (it says how far it got), and an
// interruption worded as what to do next. Every job resumes from its
// checkpoint when run again.
func jobDone[R any](ctx context.Context, stdout io.Writer, rep *R, err error) error {
	if rep != nil {
		if perr := printJSON(stdout, rep); err == nil {
			err = perr
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: run the same command again to resume")
	}
	return err
}
