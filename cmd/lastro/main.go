// Command lastro runs the Lastro collections engine and its tools.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

func main() {
	// The engine allocates at a high rate for a modest live heap (SDK
	// requests and attribute maps on both sides of the in-process store):
	// collecting at 400 % instead of 100 % cuts the agenda run's CPU by
	// about a tenth (docs/performance.md). GOGC, when set, decides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return // -h: the usage was printed
	}
	if err != nil {
		// One line: joined errors are newline-separated.
		fmt.Fprintln(os.Stderr, "lastro:", strings.ReplaceAll(err.Error(), "\n", "; "))
		os.Exit(1)
	}
}

const usage = `usage: lastro <command> [flags]

commands:
  serve        run the engine (API on LASTRO_ADDR; embedded store unless LASTRO_DYNAMODB_ENDPOINT is set)
  table create|describe|definition [--archive] [--roles]
               create or describe the table (--archive: also its cold archive table);
               definition prints CloudFormation JSON (--roles: with the IAM roles of lastro iam)
  inspect PK   print a partition with every key decoded by the prefix registry
  worker [--date D] [--tenant T] [--shard S]
               run the dunning agenda once (every tenant and shard by default); progress on
               stderr, one JSON report per tenant on stdout; interrupted, it resumes on the next run
  stream [--once] [--kafka BROKERS] [--eventbridge BUS] [--metrics ADDR]
               read the table's stream: domain events to events.jsonl in the data directory (and
               Kafka / EventBridge), bucket counters, the TTL's deletions to the archive table;
               serve runs it too with LASTRO_STREAM=on
  stream replay --records FILE | --events FILE [--out FILE]
               send a dead letter on once its cause is fixed (poison records through the
               publishers again, or dead events to the tenants' webhooks); idempotent (event
               ids are deterministic); what still fails goes to FILE.remaining, FILE unchanged
  ddb serve    run the embedded DynamoDB-compatible store standalone
  boleto parse [--today D] [--convenio C] <linha>
               decode a linha digitável or barcode (bank, due date, amount, free field), every check digit verified
  boleto remessa new|list|get N [--url U] [--out FILE]
               write, list or download the tenant's CNAB 240 shipping files over the API (supervisor key in LASTRO_API_KEY)
  psp sandbox --addr A --webhook-secret S
               run the sandbox Pix PSP standalone (BACEN Pix API subset, POST /sandbox/pay)
  demo seed --tenant ID --debtors N [--seed S]
               build a synthetic portfolio through the services (progress on stderr; resumable)
  export [--type full|incremental] [--at T | --from T --to T] [--bucket B] [--prefix P]
               ExportTableToPointInTime and wait for it (same request on AWS and locally)
  report aging|rollrate --export DIR [--previous DIR] [--out DIR]
               aging by bucket or the roll-rate matrix from exports only: a table, CSV and SVG
  tenant offboard T --out DIR [--wcu N]
               hand the tenant's data over to DIR, delete every item of it (rate-limited,
               resumable), its secrets last, and prove with counts that nothing of it remains
  rotate debtor-keys --tenant T [--wcu N] [--settle 30s]
               rotates the tenant's debtor-key secret: a new version for new debtors, then moves every
               debtor collection to its new key (copy, verify, switch, delete; resumable, ADR 0075)
  rotate data-key [--new-key FILE|env:NAME [--new-key-id ID] | --new-kms-key ARN] [--wcu N]
               re-seal every tenant's secrets and every profile under the new data key (the
               configured ones kept to open; rate-limited, resumable) until none is under an old one
  lgpd erase-due --tenant T
               erase the personal data of every debtor past the tenant's retention (LGPD art. 16)
  iam policy --role api|worker|stream|lambda [--region R] [--account A]
               the role's IAM policy: api reaches only T#${aws:PrincipalTag/tenantId} keys
  backup create [--name N] | list | restore (--backup ARN | --at T) --target TABLE [--verify]
               on-demand backups and point-in-time recovery, restored into a new table
  backup drill [--target TABLE] [--keep]
               back up, restore into a new table and verify the counts per item type
  cost [--json]
               capacity (RRU/WRU, table and each index apart) of every business operation on a fresh
               embedded store, against the budgets; exits 1 when one is over
  cost compare [--sizes 1000,10000,100000] [--ab-sizes 10000] [--days 30]
               the seed's comparisons side by side: model A against model B over simulated days, the
               keyed portfolio page against Scan + FilterExpression, in on-demand dollars
  simulate heat [--reschedules N] [--window D] [--settlements R] [--shards S]
               the seed's peak load through the engine's keys: hottest partition per table and index
               against DynamoDB's 1,000 WCU / 3,000 RCU, for our design and the rejected ones
  bench [--serve 1,2,3 | --target URL] [--scenarios ...] [--requests N] [--duration D] [--profile DIR]
               load generator over loopback, bounded in count and time: settlement webhooks (JSON and
               Pix), 360, portfolio, an agenda run; p50/p95/p99; exactly once across processes
  migrate list | plan|run|verify NAME [--wcu N] [--segments N]
               registered migrations: plan is a dry run with the blast radius (items, WCU, time);
               run backfills new index keys (parallel, rate-limited, resumable); verify counts
               source, carriers and index and lists key violations
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("no command given")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stderr)
	case "table":
		return tableCmd(ctx, args[1:], stdout, stderr)
	case "inspect":
		return inspect(ctx, args[1:], stdout, stderr)
	case "ddb":
		if len(args) < 2 || args[1] != "serve" {
			fmt.Fprint(stderr, "usage: lastro ddb serve [flags]\n")
			if len(args) > 1 && isHelp(args[1]) {
				return flag.ErrHelp
			}
			return fmt.Errorf("unknown ddb command (lastro ddb serve -h lists its flags)")
		}
		return ddbServe(ctx, args[2:], stderr)
	case "psp":
		return pspCmd(ctx, args[1:], stderr)
	case "worker":
		return workerCmd(ctx, args[1:], stdout, stderr)
	case "stream":
		return streamCmd(ctx, args[1:], stdout, stderr)
	case "demo":
		return demoCmd(ctx, args[1:], stdout, stderr)
	case "boleto":
		return boletoCmd(ctx, args[1:], stdout, stderr, time.Now())
	case "export":
		return exportCmd(ctx, args[1:], stdout, stderr)
	case "report":
		return reportCmd(args[1:], stdout, stderr)
	case "tenant":
		return tenantCmd(ctx, args[1:], stdout, stderr)
	case "rotate":
		return rotateCmd(ctx, args[1:], stdout, stderr)
	case "lgpd":
		return lgpdCmd(ctx, args[1:], stdout, stderr)
	case "iam":
		return iamCmd(ctx, args[1:], stdout, stderr)
	case "backup":
		return backupCmd(ctx, args[1:], stdout, stderr)
	case "cost":
		return costCmd(ctx, args[1:], stdout, stderr)
	case "simulate":
		return simulateCmd(ctx, args[1:], stdout, stderr)
	case "bench":
		return benchCmd(ctx, args[1:], stdout, stderr)
	case "migrate":
		return migrateCmd(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// isHelp reports whether arg asks for usage.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}
