package settlement

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// DefaultReconcileEvery is how often lastro serve makes a reconcile pass
// over every tenant's open Pix charges (LASTRO_PIX_RECONCILE_EVERY).
const DefaultReconcileEvery = 10 * time.Minute

// ReconcileScheduler runs ReconcileOpen for every tenant on a schedule
// (docs/adr/0070). Two engine instances may both run it: a pass is
// idempotent (the STL record keeps each payment once; a check is closed or
// moved under its version), so the worst is a GET twice.
type ReconcileScheduler struct {
	s     *Service
	every time.Duration
	log   *slog.Logger
}

// NewReconcileScheduler returns a scheduler making a pass every every
// (DefaultReconcileEvery when 0), logging to log.
func (s *Service) NewReconcileScheduler(every time.Duration, log *slog.Logger) *ReconcileScheduler {
	if every <= 0 {
		every = DefaultReconcileEvery
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ReconcileScheduler{s: s, every: every, log: log}
}

// Run makes a pass every r.every until ctx ends (the first one after one
// interval: a start is no reason to read every PSP at once).
func (r *ReconcileScheduler) Run(ctx context.Context) {
	tick := time.NewTicker(r.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := r.Pass(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("Pix reconcile pass failed", "error", err.Error())
		}
	}
}

// Pass reconciles every tenant's due checks once, tenant after tenant
// (the directory of tenants: one Query); a tenant that fails is logged
// and the pass goes on. It answers the pass's totals and the failures
// joined.
func (r *ReconcileScheduler) Pass(ctx context.Context) (ReconcileRun, error) {
	var total ReconcileRun
	ids, err := r.s.tenants.List(ctx)
	if err != nil {
		return total, err
	}
	var failed []error
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		t, err := r.s.tenants.Get(ctx, id)
		if err == nil {
			var run *ReconcileRun
			if run, err = r.s.ReconcileOpen(ctx, t); run != nil {
				total.Checked += run.Checked
				total.Applied += run.Applied
				total.Closed += run.Closed
				total.Rescheduled += run.Rescheduled
				total.Failed += run.Failed
				if run.Applied > 0 || run.Failed > 0 {
					// A payment applied here had a lost or late webhook:
					// worth a line. Counts only, never a charge or payer.
					r.log.Info("Pix reconcile", "tenant", id, "checked", run.Checked, "applied", run.Applied, "failed", run.Failed)
				}
			}
		}
		if err != nil {
			r.log.Warn("Pix reconcile of a tenant failed", "tenant", id, "error", err.Error())
			failed = append(failed, err)
		}
	}
	return total, errors.Join(failed...)
}
