package agenda

import (
	"context"
	"errors"
	"fmt"
	"time"

	"lastro/collections/calendar"
	"lastro/tenant"
)

// Yield gives up the leases this runner holds on the shards of date —
// after a run stopped by its context — so the next run, in this process
// or another, resumes them at once from their checkpoints instead of
// waiting for the leases to expire. A lease another runner holds is left
// alone (the write is conditioned on the owner). Call it after Run has
// returned, with a context that is still alive.
func (r *Runner) Yield(ctx context.Context, t *tenant.Tenant, date calendar.Date, shards []int) error {
	var failed []error
	for _, s := range shards {
		// Only a lease this runner holds for date (letGo is conditioned on
		// its token; without one there is nothing of ours to yield).
		if err := r.letGo(ctx, t, date, s); err != nil {
			failed = append(failed, fmt.Errorf("agenda: yield shard %d: %w", s, err))
		}
	}
	return errors.Join(failed...)
}

// YieldInterrupted yields, when ctx has ended, the shards of rep (what
// Run returned under ctx) that ran here rather than being busy elsewhere:
// the clean stop of the scheduler, the run endpoint and lastro worker.
func (r *Runner) YieldInterrupted(ctx context.Context, t *tenant.Tenant, rep *Report) {
	if ctx.Err() == nil || rep == nil {
		return
	}
	date, err := calendar.Parse(rep.Date)
	if err != nil {
		return
	}
	var mine []int
	for _, sr := range rep.Shards {
		if !sr.Busy {
			mine = append(mine, sr.Shard)
		}
	}
	yctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := r.Yield(yctx, t, date, mine); err != nil {
		r.d.Logger.Warn("agenda: leases not yielded; they expire by themselves", "tenant", t.ID, "error", err.Error())
	}
}
