package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"lastro/ops/migrate"
)

const migrateUsage = "usage: lastro migrate list | plan|run|verify NAME [--wcu N] [--segments N] [--page N] [flags]\n"

// migrateCmd: lastro migrate list | plan|run|verify NAME, the migrations
// toolkit over the registered migrations (docs/adr/0081).
func migrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprint(stderr, migrateUsage)
		if len(args) > 0 {
			return flag.ErrHelp
		}
		return fmt.Errorf("no migrate command given (list, plan, run or verify)")
	}
	reg := migrate.Registered()
	sub := args[0]
	switch sub {
	case "list":
		for _, m := range reg.List() {
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", m.Name, m.Kind, m.Summary)
		}
		return nil
	case "plan", "run", "verify":
	default:
		fmt.Fprint(stderr, migrateUsage)
		return fmt.Errorf("unknown migrate command %q (list, plan, run or verify)", sub)
	}
	if len(args) < 2 || args[1] == "" || strings.HasPrefix(args[1], "-") {
		if len(args) > 1 && isHelp(args[1]) {
			fmt.Fprint(stderr, migrateUsage)
			return flag.ErrHelp
		}
		return fmt.Errorf("no migration given: lastro migrate %s NAME (lastro migrate list names them)", sub)
	}
	m, err := reg.Lookup(args[1])
	if err != nil {
		return err
	}
	fs := newFlagSet("migrate "+sub, "NAME [flags]", stderr)
	wcu := fs.Float64("wcu", 100, "plan, run: write capacity units a second the backfill may spend, all segments together (0: no limit)")
	segs := fs.Int("segments", 4, "parallel scan segments (a resumed run keeps the count it started with)")
	page := fs.Int("page", 100, "run: items a scan page evaluates, between checkpoints")
	cfg, err := loadConfig(fs, args[2:], os.Getenv)
	if err != nil {
		return err
	}
	switch {
	case *wcu < 0:
		return fmt.Errorf("--wcu must be 0 or more")
	case *segs < 1 || *segs > 1000:
		return fmt.Errorf("--segments must be between 1 and 1000")
	case *page < 1 || *page > 10000:
		return fmt.Errorf("--page must be between 1 and 10000")
	}
	e, err := opsApp(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer e.Close()
	d := e.opsDeps(stderr)
	d.Segments = *segs
	var perr error
	switch sub {
	case "plan":
		var p *migrate.Plan
		if p, err = migrate.PlanBackfill(ctx, d, m, *wcu); p != nil {
			perr = printJSON(stdout, p)
		}
	case "run":
		var r *migrate.RunReport
		if r, err = migrate.Run(ctx, d, m, migrate.Options{WCU: *wcu, PageSize: int32(*page)}); r != nil {
			perr = printJSON(stdout, r)
		}
	case "verify":
		var v *migrate.Verification
		if v, err = migrate.Verify(ctx, d, m); v != nil {
			perr = printJSON(stdout, v)
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: run the same command again to resume")
	}
	if err == nil {
		err = perr
	}
	if errors.Is(err, migrate.ErrDifferences) {
		return fmt.Errorf("migrate verify %s: the index differs from its source or holds key violations (see the report): do not switch reads yet", m.Name)
	}
	return err
}
