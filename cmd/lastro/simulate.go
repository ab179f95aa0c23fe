package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"lastro/collections/calendar"
	"lastro/cost"
)

// simulateCmd: lastro simulate heat [flags].
func simulateCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "heat" {
		fmt.Fprint(stderr, "usage: lastro simulate heat [flags]\n")
		if len(args) > 0 && isHelp(args[0]) {
			return flag.ErrHelp
		}
		return fmt.Errorf("unknown simulate command (lastro simulate heat -h lists its flags)")
	}
	p := cost.SeedHeat()
	fs := newFlagSet("simulate heat", "[flags]", stderr)
	fs.IntVar(&p.Tenants, "tenants", p.Tenants, "tenants")
	fs.IntVar(&p.Contracts, "contracts", p.Contracts, "active contracts, all tenants")
	fs.Float64Var(&p.LargestShare, "largest-share", p.LargestShare, "the largest tenant's share of the contracts (0-1)")
	fs.IntVar(&p.Delinquent, "delinquent", p.Delinquent, "contracts in collection, all tenants")
	fs.IntVar(&p.Reschedules, "reschedules", p.Reschedules, "the largest tenant's contracts the agenda acts on and reschedules in the window")
	fs.DurationVar(&p.Window, "window", p.Window, "how long the agenda's burst lasts")
	fs.Float64Var(&p.SettlementsPerSecond, "settlements", p.SettlementsPerSecond, "settlement webhooks per second, all tenants (payday peak)")
	fs.IntVar(&p.Shards, "shards", p.Shards, "agenda index shards")
	date := fs.String("date", p.Date.String(), "the run's date (YYYY-MM-DD)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	d, err := calendar.Parse(*date)
	if err != nil {
		return fmt.Errorf("--date must be YYYY-MM-DD")
	}
	p.Date = d
	start := time.Now()
	results, err := cost.SimulateHeat(p)
	if err != nil {
		return err
	}
	if err := cost.PrintHeat(stdout, p, results); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "simulated in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}
