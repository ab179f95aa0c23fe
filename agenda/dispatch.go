package agenda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"lastro/collections/calendar"
	"lastro/contactlimit"
	"lastro/policy"
	"lastro/tenant"
)

// DefaultDispatchEvery is how often the dispatcher looks for outbox
// entries that came due: a failed delivery's next try, or an attempt a
// crashed engine left without an outcome.
const DefaultDispatchEvery = 15 * time.Second

// Dispatch delivers the tenant's outbox entries that are due, shard by
// shard (every entry with all, as at an engine's start, when none of its
// own deliveries is in flight): the attempts whose step was recorded but
// whose delivery has no outcome yet (ADR 0062). A delivered bureau notice
// writes its evidence on the contract before its entry goes.
func (r *Runner) Dispatch(ctx context.Context, t *tenant.Tenant, all bool) (contactlimit.DispatchReport, error) {
	var rep contactlimit.DispatchReport
	var failed []error
	for s := range t.Shards {
		sr, err := r.d.Contacts.Dispatch(ctx, t, s, all, r.sent(t))
		rep.Sent, rep.Failed, rep.Dead, rep.Retried, rep.Skipped = rep.Sent+sr.Sent, rep.Failed+sr.Failed, rep.Dead+sr.Dead,
			rep.Retried+sr.Retried, rep.Skipped+sr.Skipped
		if err != nil {
			if ctx.Err() != nil {
				return rep, err
			}
			failed = append(failed, fmt.Errorf("shard %d: %w", s, err))
		}
	}
	return rep, errors.Join(failed...)
}

// sent is what a delivered attempt of t owes the contract: a bureau
// notice's delivery is its evidence, dated the day it was delivered.
func (r *Runner) sent(t *tenant.Tenant) func(context.Context, contactlimit.Attempt) error {
	return func(ctx context.Context, a contactlimit.Attempt) error {
		if a.Action != policy.BureauNotice {
			return nil
		}
		day := calendar.Today(r.d.Clock.Now(), t.Location)
		return r.noticeDelivered(ctx, t, a.DebtorKey, a.ContractID, day, a.AttemptID)
	}
}

// DispatchAll is Dispatch for every tenant of the directory. A tenant that
// fails is logged and the pass goes on; the failures are returned joined.
func (r *Runner) DispatchAll(ctx context.Context, all bool) (contactlimit.DispatchReport, error) {
	var rep contactlimit.DispatchReport
	if r.d.Tenants == nil {
		return rep, errors.New("agenda: the dispatcher needs Deps.Tenants")
	}
	ids, err := r.d.Tenants.List(ctx)
	if err != nil {
		return rep, err
	}
	var failed []error
	for _, id := range ids {
		t, err := r.d.Tenants.Get(ctx, id)
		if err == nil {
			var tr contactlimit.DispatchReport
			tr, err = r.Dispatch(ctx, t, all)
			rep.Sent, rep.Failed, rep.Dead, rep.Retried, rep.Skipped = rep.Sent+tr.Sent, rep.Failed+tr.Failed, rep.Dead+tr.Dead,
				rep.Retried+tr.Retried, rep.Skipped+tr.Skipped
		}
		if err != nil {
			if ctx.Err() != nil {
				return rep, err
			}
			failed = append(failed, fmt.Errorf("tenant %s: %w", id, err))
		}
	}
	return rep, errors.Join(failed...)
}

// Dispatcher runs the outbox's dispatch inside lastro serve: one pass of
// every entry at its start (what a crash left), then a pass of the due
// entries every Every.
type Dispatcher struct {
	r     *Runner
	every time.Duration
	log   *slog.Logger
}

// NewDispatcher returns a dispatcher driving r; every 0 means
// DefaultDispatchEvery, a nil logger the runner's.
func NewDispatcher(r *Runner, every time.Duration, log *slog.Logger) *Dispatcher {
	if every <= 0 {
		every = DefaultDispatchEvery
	}
	if log == nil {
		log = r.d.Logger
	}
	return &Dispatcher{r: r, every: every, log: log}
}

// Run makes the start pass and then a pass every d.every until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) {
	tick := time.NewTicker(d.every)
	defer tick.Stop()
	for all := true; ; all = false {
		d.Pass(ctx, all)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Pass makes one dispatch pass and logs its counts when it did anything.
func (d *Dispatcher) Pass(ctx context.Context, all bool) contactlimit.DispatchReport {
	rep, err := d.r.DispatchAll(ctx, all)
	if err != nil && ctx.Err() == nil {
		d.log.Warn("outbox dispatch failed", "error", err.Error())
	}
	if rep != (contactlimit.DispatchReport{}) {
		// Counts only, never whom.
		d.log.Info("outbox dispatch", "all", all, "sent", rep.Sent, "failed", rep.Failed, "dead", rep.Dead, "retried", rep.Retried,
			"skipped", rep.Skipped)
	}
	return rep
}
