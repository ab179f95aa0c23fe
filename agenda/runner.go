// Package agenda runs the dunning agenda (AP03, AP04, AP10): for a tenant
// and a date, per shard, the contracts whose next action is due — read
// from the sparse, sharded agenda index (GSI1) — each executed with a
// version-conditioned write that records the step and schedules the next
// one through the régua (contract/regua). A shard is run by one worker at a
// time under a lease, and a run resumes from its checkpoint (ADR 0018).
package agenda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/contactlimit"
	"lastro/policy"
	"lastro/tenant"
)

// Defaults of a run.
const (
	DefaultCatchUp = 7 // days before the run date still processed (k)
	// DefaultLease is a shard's lease: renewed at every page and, while
	// entries are in flight, every third of it, so a killed worker's
	// shard is free again within it (ADR 0063).
	DefaultLease = 10 * time.Second
	// DefaultParallel entries of one shard run at once: enough to overlap
	// one entry's waits (fsyncs, a messaging provider) with the others'
	// work, so a run keeps both cores busy (docs/performance.md).
	DefaultParallel = 16
	pageSize        = 100
)

// Deps are what the runner needs.
type Deps struct {
	Kit      *kit.Kit
	Tenants  *tenant.Service
	Policies *policy.Service
	Contacts *contactlimit.Gateway
	Bureau   Bureau      // nil: a BUREAU_REPORT is refused (the step waits)
	Clock    clock.Clock // the business clock: dates, contact windows
	// LeaseClock times leases; nil means the system clock. Leases must
	// expire in real time even when the business clock is frozen
	// (LASTRO_NOW), or a killed worker would hold its shard for good.
	LeaseClock clock.Clock
	Logger     *slog.Logger
	Owner      string        // this instance's name on leases; "" generates one
	CatchUp    int           // 0 means DefaultCatchUp
	Lease      time.Duration // 0 means DefaultLease
	Parallel   int           // entries of a shard executed at once; 0 means DefaultParallel
}

// Runner executes agenda runs.
type Runner struct {
	d Deps
	// held are the lease tokens of the runs in progress here, by date and
	// shard: a second run of a shard in this process is refused, and Yield
	// releases only leases this runner still holds.
	mu   sync.Mutex
	held map[runSlot]holding
	// beforeSave, when set, runs between an action's reads and its write:
	// tests use it to force interleavings with payments.
	beforeSave func(contractID string)
}

// New returns a runner.
func New(d Deps) *Runner {
	if d.Owner == "" {
		d.Owner = "worker-" + uuid.NewString()[:8]
	}
	if d.CatchUp <= 0 {
		d.CatchUp = DefaultCatchUp
	}
	if d.Lease <= 0 {
		d.Lease = DefaultLease
	}
	if d.Parallel <= 0 {
		d.Parallel = DefaultParallel
	}
	if d.LeaseClock == nil {
		d.LeaseClock = clock.System{}
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{d: d, held: map[runSlot]holding{}}
}

// Options narrow a run.
type Options struct {
	Shards   []int          // nil: every shard of the tenant
	Progress func(Progress) // called after every page, from the shard's goroutine
	// Wait is how long a shard whose lease is held is waited for: a lease
	// that runs out within it (its holder was killed and renews no more)
	// is taken over then. 0 reports the shard busy at once.
	Wait time.Duration
}

// Progress is a shard's position in a run.
type Progress struct {
	Shard     int    `json:"shard"`
	Partition string `json:"partition"` // the agenda date being read
	Done      int    `json:"done"`      // entries handled so far
	Executed  int    `json:"executed"`  // actions executed so far
}

// ShardReport is what a run did on one shard.
type ShardReport struct {
	Shard    int            `json:"shard"`
	Executed map[string]int `json:"executed"` // actions executed, by action
	Blocked  map[string]int `json:"blocked"`  // contact steps the gateway refused (rescheduled), by reason
	Skipped  int            `json:"skipped"`  // entries no longer due: paid or changed meanwhile
	Failed   int            `json:"failed"`   // entries whose action failed (logged; retried by the next run)
	Resumed  bool           `json:"resumed"`  // continued from an interrupted run's checkpoint
	Busy     bool           `json:"busy"`     // another worker holds the shard's lease: not run here
	Error    string         `json:"error,omitempty"`
}

// Report is what a run did.
type Report struct {
	TenantID string         `json:"tenantId"`
	Date     string         `json:"date"`
	Executed map[string]int `json:"executed"` // over every shard, by action
	Blocked  map[string]int `json:"blocked"`
	Skipped  int            `json:"skipped"`
	Failed   int            `json:"failed"`
	// Busy lists the shards another worker held: not run by this run.
	Busy   []int         `json:"busy"`
	Shards []ShardReport `json:"shards"`
}

// ErrBusy is returned by a shard run when another worker (or another run
// of this one) holds its lease.
var ErrBusy = errors.New("agenda: the shard is leased by another worker")

// ErrFutureDate refuses a run for a date after the tenant's today: the
// agenda of a day runs on that day, never ahead (a run dated ahead would
// derive delinquency, and contact, before an instalment is due).
var ErrFutureDate = errors.New("agenda: the run date is after today")

// Run executes the tenant's agenda for date: every shard (or opt.Shards)
// in its own goroutine, each reading its agenda partitions from date − k
// to date, so a missed day is not lost. It returns when every shard is
// done or ctx ends (then with the work done so far, resumable).
func (r *Runner) Run(ctx context.Context, t *tenant.Tenant, date calendar.Date, opt Options) (*Report, error) {
	if today := calendar.Today(r.d.Clock.Now(), t.Location); date.After(today) {
		return nil, fmt.Errorf("%w: %s after %s", ErrFutureDate, date, today)
	}
	shards := opt.Shards
	if shards == nil {
		for s := range t.Shards {
			shards = append(shards, s)
		}
	}
	for _, s := range shards {
		if s < 0 || s >= t.Shards {
			return nil, fmt.Errorf("agenda: shard %d out of 0-%d", s, t.Shards-1)
		}
	}
	rep := &Report{TenantID: t.ID, Date: date.String(), Executed: map[string]int{}, Blocked: map[string]int{}, Busy: []int{},
		Shards: make([]ShardReport, len(shards))}
	var wg sync.WaitGroup
	errs := make([]error, len(shards))
	for i, s := range shards {
		wg.Go(func() {
			sr, err := r.runShard(ctx, t, date, s, opt.Progress, opt.Wait)
			if errors.Is(err, ErrBusy) {
				sr.Busy, err = true, nil
			}
			if err != nil {
				sr.Error = err.Error()
			}
			rep.Shards[i], errs[i] = sr, err
		})
	}
	wg.Wait()
	for _, sr := range rep.Shards {
		for a, n := range sr.Executed {
			rep.Executed[a] += n
		}
		for b, n := range sr.Blocked {
			rep.Blocked[b] += n
		}
		rep.Skipped += sr.Skipped
		rep.Failed += sr.Failed
	}
	sort.Slice(rep.Shards, func(i, j int) bool { return rep.Shards[i].Shard < rep.Shards[j].Shard })
	for _, sr := range rep.Shards {
		if sr.Busy {
			rep.Busy = append(rep.Busy, sr.Shard)
		}
	}
	return rep, errors.Join(errs...)
}

// RunShard runs one shard of the tenant's agenda for date under the
// shard's lease: ErrBusy when another worker holds it. An interrupted run
// (killed, or ctx ended) leaves its checkpoint and the next run of the
// same date and shard continues from it; a finished one starts over,
// which is cheap since executed entries have left the partitions.
func (r *Runner) RunShard(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int, progress func(Progress)) (ShardReport, error) {
	return r.runShard(ctx, t, date, shard, progress, 0)
}

func (r *Runner) runShard(parent context.Context, t *tenant.Tenant, date calendar.Date, shard int, progress func(Progress), wait time.Duration) (_ ShardReport, err error) {
	parent = kit.Within(parent, "agenda.run")
	rep := ShardReport{Shard: shard, Executed: map[string]int{}, Blocked: map[string]int{}}
	l, err := r.acquire(parent, t, date, shard, wait)
	if err != nil {
		return rep, err
	}
	// A lost lease (renewed too late, taken over) stops the run: ctx ends
	// with the loss as its cause.
	ctx, lose := context.WithCancelCause(parent)
	var inflight atomic.Int64
	stopBeat := r.heartbeat(ctx, t, date, shard, &inflight, lose)
	defer func() {
		stopBeat()
		lose(nil)
		if parent.Err() == nil && err != nil && errors.Is(err, context.Canceled) {
			if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
				err = cause
			}
		}
		if parent.Err() != nil {
			// Stopped (Ctrl-C, shutdown): let the lease go at once, keeping
			// the checkpoint, so the next run resumes without waiting.
			yctx, cancel := context.WithTimeout(context.WithoutCancel(parent), 5*time.Second)
			if err := r.Yield(yctx, t, date, []int{shard}); err != nil {
				r.d.Logger.Warn("agenda: lease not yielded; it expires by itself", "tenant", t.ID, "shard", shard, "error", err.Error())
			}
			cancel()
		}
		r.forget(t, shard)
	}()
	rep.Resumed = l.resumed()
	// The outbox entries this shard's deliveries are done with go in
	// batches: flushed after every page, and at the end whatever ended
	// the run (what a failed flush leaves, the dispatcher deletes).
	dels := r.d.Contacts.Deletions(t)
	defer func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(parent), 5*time.Second)
		defer cancel()
		r.flush(fctx, t, shard, dels)
	}()
	renewed := r.d.LeaseClock.Now()
	done := 0
	from, err := r.since(ctx, t, date, shard)
	if err != nil {
		return rep, err
	}
	for p := from; !p.After(date); p = p.AddDays(1) {
		if l.Partition != "" && p.String() < l.Partition {
			continue // finished before the interruption
		}
		after := ""
		if p.String() == l.Partition {
			after = l.After
		}
		for {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			q := kit.Query{Index: table.Agenda, Partition: keys.Agenda(t.ID, p.String(), shard), Limit: pageSize}
			if after != "" {
				q.Sort = &kit.Sort{Op: ">", Values: []string{after}}
			}
			page, err := r.db(t).QueryPage(ctx, q, "")
			if err != nil {
				return rep, err
			}
			entries := make([]entry, len(page.Items))
			for i, it := range page.Items {
				if entries[i], err = decodeEntry(it); err != nil {
					return rep, err
				}
			}
			// Entries are independent contracts: several run at once, so
			// the shard's waits (fsyncs, the provider) overlap. Results are
			// taken in the index's order, and the position moves only past
			// entries that are done, along with everything before them.
			var stop error
			halts := func(err error) bool {
				return ctx.Err() != nil || errors.Is(err, kit.ErrThrottled) || errs.Is(err, errs.Transient)
			}
			r.executeWindow(ctx, t, date, entries, dels, &inflight, halts, func(e entry, res result) bool {
				switch err := res.err; {
				case err == nil:
				case halts(err):
					// The run cannot go on (stopped, or the store is
					// unavailable): the checkpoint has the position. The
					// entries already running are still counted: one beside
					// this may have committed and sent its message.
					if stop == nil {
						stop = fmt.Errorf("agenda: contract %s: %w", e.ContractID, err)
					}
					return false
				default:
					// One contract's failure (contended past the retries, the
					// bureau down, a bad item) must not stop the shard: its
					// entry stays, so the next run of the catch-up window
					// takes it again.
					r.d.Logger.WarnContext(ctx, "agenda action failed, left for the next run", "tenant", t.ID, "contract", e.ContractID,
						"action", e.Action, "error", err.Error())
					res.out = outcome{failed: true}
				}
				res.out.count(&rep)
				done++
				if stop != nil {
					return false
				}
				after = e.SK
				// Renew the lease well before it expires, even inside a slow
				// page (a provider retrying), so no one takes the shard over.
				if r.d.LeaseClock.Now().Sub(renewed) > r.d.Lease/3 {
					if err := r.checkpoint(ctx, t, date, shard, p.String(), after, rep); err != nil {
						stop = err
						return false
					}
					renewed = r.d.LeaseClock.Now()
				}
				return true
			})
			if stop != nil {
				return rep, stop
			}
			r.flush(ctx, t, shard, dels)
			if len(page.Items) == 0 {
				break
			}
			if err := r.checkpoint(ctx, t, date, shard, p.String(), after, rep); err != nil {
				return rep, err
			}
			renewed = r.d.LeaseClock.Now()
			if progress != nil {
				progress(Progress{Shard: shard, Partition: p.String(), Done: done, Executed: sum(rep.Executed)})
			}
			if len(page.Items) < pageSize && page.Next == "" {
				break
			}
		}
	}
	stopBeat()
	return rep, r.release(ctx, t, date, shard, rep)
}

// heartbeat renews the shard's lease every third of it while entries are
// in flight (a provider retrying, the store slow), so a live run keeps its
// shard through a slow entry; between entries the run renews it itself at
// each page. A run that is stuck between entries renews nothing and its
// lease runs out as a killed one's does. A lost lease ends the run (lose).
// The returned stop waits for the heartbeat to end, so nothing renews the
// lease after the run let it go.
func (r *Runner) heartbeat(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int, inflight *atomic.Int64,
	lose context.CancelCauseFunc) (stop func()) {
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(max(r.d.Lease/3, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-quit:
				return
			case <-tick.C:
			}
			if inflight.Load() == 0 {
				continue
			}
			if err := r.renew(ctx, t, date, shard); errors.Is(err, ErrBusy) {
				lose(err)
				return
			} else if err != nil && ctx.Err() == nil {
				r.d.Logger.Warn("agenda: lease not renewed", "tenant", t.ID, "shard", shard, "error", err.Error())
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit); <-done }) }
}

// flush writes the shard's queued outbox deletions. A failure is only
// logged: those entries carry their outcome, and the dispatcher deletes
// them without sending anything again.
func (r *Runner) flush(ctx context.Context, t *tenant.Tenant, shard int, dels *contactlimit.Deletions) {
	if err := dels.Flush(ctx); err != nil {
		r.d.Logger.WarnContext(ctx, "agenda: outbox entries left to the dispatcher", "tenant", t.ID, "shard", shard, "error", err.Error())
	}
}

func (r *Runner) db(t *tenant.Tenant) *kit.Tenant { return r.d.Kit.Tenant(t.ID, t.CursorKey()) }

// result is one entry's outcome.
type result struct {
	out outcome
	err error
}

// executeWindow executes entries in a window of at most Parallel: an
// entry starts once fewer than Parallel before it are still unhanded, so
// a slow entry holds the window back rather than letting the rest of the
// page run past it (and past the lease renewal that take does). Each
// result goes to take in the entries' order. No further entry starts once
// take returns false, ctx ends or an entry failed with an error that
// stops the run (halts); those already running are still handed over, so
// every entry started is accounted for.
func (r *Runner) executeWindow(ctx context.Context, t *tenant.Tenant, date calendar.Date, entries []entry, dels *contactlimit.Deletions, inflight *atomic.Int64,
	halts func(error) bool, take func(entry, result) bool) {
	results := make([]result, len(entries))
	ready := make([]bool, len(entries))
	finished := make(chan int, len(entries))
	var halted atomic.Bool
	started, next := 0, 0
	going := true
	for next < len(entries) {
		for going && !halted.Load() && ctx.Err() == nil && started < len(entries) && started-next < r.d.Parallel {
			i := started
			started++
			inflight.Add(1)
			go func() {
				defer inflight.Add(-1)
				out, err := r.execute(ctx, t, date, entries[i], dels)
				if err != nil && halts(err) {
					halted.Store(true)
				}
				results[i] = result{out, err}
				finished <- i
			}()
		}
		if next == started {
			return // stopped: nothing left running
		}
		ready[<-finished] = true
		for next < started && ready[next] {
			going = take(entries[next], results[next]) && going
			next++
		}
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
