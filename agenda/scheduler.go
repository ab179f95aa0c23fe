package agenda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// Scheduler defaults.
const (
	// DefaultRunHour is the local hour a tenant's day is run from: when
	// the default contact window opens, so the day's first contacts go
	// out as soon as they may.
	DefaultRunHour = 8
	// DefaultEvery is how often the scheduler looks for due runs.
	DefaultEvery = time.Minute
)

// SchedulerOptions configure a Scheduler.
type SchedulerOptions struct {
	Hour   int           // local hour (0-23) a tenant's day is run from (the zero value is midnight; see DefaultRunHour)
	Every  time.Duration // between passes; 0 means DefaultEvery
	Logger *slog.Logger  // nil: the runner's
}

// Scheduler runs each tenant's agenda once a day inside lastro serve:
// every pass it lists the tenants (the directory, one Query), and runs
// the day of each tenant whose run hour has come in its time zone and
// whose shards have not all finished that day (their RUN items, one
// Query). Several engines may run schedulers on one store: the shard
// leases keep a shard to one worker at a time, and a finished shard is
// not run again the same day (ADR 0021).
type Scheduler struct {
	r     *Runner
	hour  int
	every time.Duration
	log   *slog.Logger
}

// NewScheduler returns a scheduler driving r.
func NewScheduler(r *Runner, opt SchedulerOptions) (*Scheduler, error) {
	if opt.Hour < 0 || opt.Hour > 23 {
		return nil, fmt.Errorf("agenda: run hour %d is not 0-23", opt.Hour)
	}
	if r.d.Tenants == nil {
		return nil, errors.New("agenda: the scheduler needs Deps.Tenants")
	}
	if opt.Every <= 0 {
		opt.Every = DefaultEvery
	}
	if opt.Logger == nil {
		opt.Logger = r.d.Logger
	}
	return &Scheduler{r: r, hour: opt.Hour, every: opt.Every, log: opt.Logger}, nil
}

// Run makes a pass at once and then every opt.Every until ctx ends; a
// run in progress then stops at its next page, leaving its checkpoints.
// It returns when the last pass has returned, so the caller may close the
// store after it.
func (s *Scheduler) Run(ctx context.Context) {
	tick := time.NewTicker(s.every)
	defer tick.Stop()
	for {
		if _, err := s.RunDue(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("agenda scheduler pass failed", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// RunDue makes one pass: it runs, tenant after tenant, every day that is
// due now and not finished, and returns the reports of the runs it made.
// A tenant that fails is logged and the pass goes on with the next one;
// the failures are returned joined.
func (s *Scheduler) RunDue(ctx context.Context) ([]*Report, error) {
	ids, err := s.r.d.Tenants.List(ctx)
	if err != nil {
		return nil, err
	}
	var reps []*Report
	var failed []error
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return reps, err
		}
		rep, err := s.runTenant(ctx, id)
		if rep != nil {
			reps = append(reps, rep)
		}
		if err != nil {
			failed = append(failed, fmt.Errorf("tenant %s: %w", id, err))
		}
	}
	return reps, errors.Join(failed...)
}

func (s *Scheduler) runTenant(ctx context.Context, id string) (*Report, error) {
	t, err := s.r.d.Tenants.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	now := s.r.d.Clock.Now()
	date := calendar.Of(now, t.Location)
	var todo []int
	if now.In(t.Location).Hour() >= s.hour {
		if todo, err = s.r.Unfinished(ctx, t, date); err != nil {
			return nil, err
		}
	}
	// Contacts blocked before their window opened wait for it: at each
	// opening that has some, the whole date runs again (ADR 0064), at any
	// hour — the run hour only starts the day.
	wakes, err := s.r.dueWakes(ctx, t, date, now)
	if err != nil {
		return nil, err
	}
	if len(todo) == 0 && len(wakes) == 0 {
		return nil, nil
	}
	if len(wakes) > 0 {
		todo = nil // every shard: a waiting contract may be on any
	}
	start := time.Now()
	rep, err := s.r.Run(ctx, t, date, Options{Shards: todo})
	s.r.YieldInterrupted(ctx, t, rep) // shutting down: the next start resumes at once
	if rep == nil {
		return nil, err
	}
	busy := 0
	for _, sr := range rep.Shards {
		if sr.Busy {
			busy++
		}
	}
	if len(wakes) > 0 && err == nil && busy == 0 {
		// Served only by a run that read every shard to the end after
		// the instant; a busy shard (another engine's run) is tried again
		// next pass.
		if werr := s.r.wakesServed(ctx, t, wakes); werr != nil {
			return rep, werr
		}
	}
	level := slog.LevelInfo
	switch {
	case err != nil && ctx.Err() == nil:
		level = slog.LevelWarn
	case busy == len(rep.Shards):
		// Another engine is running every shard: nothing to say each minute.
		level = slog.LevelDebug
	}
	// Counts only: the tenant, the date and what ran, never whom.
	attrs := []any{"tenant", t.ID, "date", rep.Date, "shards", len(rep.Shards), "busy", busy,
		"executed", rep.Executed, "blocked", rep.Blocked, "skipped", rep.Skipped, "ms", time.Since(start).Milliseconds()}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	s.log.Log(ctx, level, "agenda run", attrs...)
	return rep, err
}

// Unfinished returns the shards of the tenant whose run of date has not
// finished (never started, interrupted, or running elsewhere), in order,
// from the date's RUN items: one strongly consistent Query on the tenant
// partition.
func (r *Runner) Unfinished(ctx context.Context, t *tenant.Tenant, date calendar.Date) ([]int, error) {
	ctx = kit.Within(ctx, "agenda.schedule")
	q := kit.Query{Partition: keys.Tenant(t.ID), Sort: kit.BeginsWith(keys.RunsOn(date.String())), Consistent: true}
	finished := map[int]bool{}
	for cursor := ""; ; {
		page, err := r.db(t).QueryPage(ctx, q, cursor)
		if err != nil {
			return nil, fmt.Errorf("agenda: runs of %s: %w", date, err)
		}
		for _, it := range page.Items {
			var run struct {
				SK       string `dynamodbav:"SK"`
				Finished bool   `dynamodbav:"finished"`
			}
			if err := attributevalue.UnmarshalMap(it, &run); err != nil {
				return nil, fmt.Errorf("agenda: decode run: %w", err)
			}
			shard, err := strconv.Atoi(run.SK[strings.LastIndexByte(run.SK, '#')+1:])
			if err != nil {
				return nil, fmt.Errorf("agenda: run key %q: %w", run.SK, err)
			}
			finished[shard] = run.Finished
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	var todo []int
	for s := range t.Shards {
		if !finished[s] {
			todo = append(todo, s)
		}
	}
	return todo, nil
}
