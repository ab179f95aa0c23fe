package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"lastro/agenda"
	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/contactlimit"
	"lastro/tenant"
)

// workerCmd runs the agenda once: lastro worker [--date D] [--tenant T]
// [--shard S]. It prints a progress line per page on stderr and one JSON
// report per tenant on stdout (JSON lines). Interrupted (SIGINT, SIGTERM),
// it stops at the next page, prints what it did and fails: the shards
// keep their checkpoints and the same command resumes them.
func workerCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("worker", "[--date YYYY-MM-DD] [--tenant ID] [--shard N] [flags]", stderr)
	dateFlag := fs.String("date", "", "agenda date to run, YYYY-MM-DD (default: each tenant's today)")
	tenantID := fs.String("tenant", "", "run only this tenant (default: every tenant)")
	shard := fs.Int("shard", -1, "run only this shard (default: every shard of each tenant)")
	cfg, err := loadConfig(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	var date calendar.Date
	if *dateFlag != "" {
		if date, err = calendar.Parse(*dateFlag); err != nil {
			return fmt.Errorf("--date %q is not a date YYYY-MM-DD", *dateFlag)
		}
	}
	if *shard < -1 {
		return fmt.Errorf("--shard must be a shard number (0 or more), got %d", *shard)
	}
	if *tenantID != "" && !tenant.ValidID(*tenantID) {
		return fmt.Errorf("unknown tenant %q", *tenantID)
	}
	e, err := newApp(ctx, cfg, slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	defer e.Close()
	ids := []string{*tenantID}
	if *tenantID == "" {
		if ids, err = e.Tenants.List(ctx); err != nil {
			return err
		}
	}
	// Check every tenant and its shard first, so a bad --shard fails
	// before anything runs.
	var tenants []*tenant.Tenant
	for _, id := range ids {
		t, err := e.Tenants.Get(ctx, id)
		if errs.Is(err, errs.NotFound) {
			return fmt.Errorf("unknown tenant %q", id)
		}
		if err != nil {
			return err
		}
		if *shard >= t.Shards {
			return fmt.Errorf("--shard %d is out of range: tenant %s has shards 0-%d", *shard, t.ID, t.Shards-1)
		}
		if !date.IsZero() {
			if today := calendar.Today(e.Clock.Now(), t.Location); date.After(today) {
				return fmt.Errorf("--date %s is after tenant %s's today (%s): the agenda of a day runs on that day", date, t.ID, today)
			}
		}
		tenants = append(tenants, t)
	}
	// First what a crash left in the outbox (every entry: nothing of this
	// process is in flight yet), so no attempt waits for the next serve.
	if d, err := e.Agenda.DispatchAll(ctx, true); err != nil {
		return fmt.Errorf("outbox dispatch: %w", err)
	} else if d != (contactlimit.DispatchReport{}) {
		fmt.Fprintf(stderr, "worker: outbox: %d sent, %d failed, %d dead, %d to retry\n", d.Sent, d.Failed, d.Dead, d.Retried)
	}
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	for _, t := range tenants {
		d := date
		if d.IsZero() {
			d = calendar.Today(e.Clock.Now(), t.Location)
		}
		opt := agenda.Options{Progress: func(p agenda.Progress) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(stderr, "worker: %s %s shard %02d: partition %s, %d handled, %d executed\n", t.ID, d, p.Shard, p.Partition, p.Done, p.Executed)
		}}
		if *shard >= 0 {
			opt.Shards = []int{*shard}
		}
		rep, runErr := e.Agenda.Run(ctx, t, d, opt)
		// Interrupted: let the leases go now, so the next run resumes at
		// once rather than after they expire.
		e.Agenda.YieldInterrupted(ctx, t, rep)
		if rep != nil {
			if err := enc.Encode(rep); err != nil {
				return err
			}
			ex, _ := json.Marshal(rep.Executed)
			bl, _ := json.Marshal(rep.Blocked)
			fmt.Fprintf(stderr, "worker: %s %s: %d shards, executed %s, blocked %s, skipped %d\n", t.ID, d, len(rep.Shards), ex, bl, rep.Skipped)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: the shards keep their checkpoints; run the same command again to resume")
		}
		if runErr != nil {
			return fmt.Errorf("tenant %s: %w", t.ID, runErr)
		}
	}
	if len(tenants) == 0 {
		fmt.Fprintln(stderr, "worker: no tenants")
	}
	// The deliveries the runs left PENDING that are due again by now.
	if _, err := e.Agenda.DispatchAll(ctx, false); err != nil {
		return fmt.Errorf("outbox dispatch: %w", err)
	}
	return nil
}
