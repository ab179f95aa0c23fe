package agenda

import (
	"context"

	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// runItem is a shard's run of one date, PK T#<t>, SK RUN#<date>#<shard2>:
// the checkpoint (the agenda partition being read and the last entry
// handled in it) an interrupted run resumes from, and the token of the
// lease it runs under: every write to it is conditioned on that token, so
// a worker that lost its lease stops. The lease itself is the shard's,
// across dates (leaseItem, ADR 0063). expiresAt lets TTL clean it up 40
// days after the run started, on the business clock the store's TTL runs
// on.
type runItem struct {
	Owner      string         `dynamodbav:"owner"`
	Token      string         `dynamodbav:"token"`     // the lease this run is under: every write to it is conditioned on it
	Partition  string         `dynamodbav:"partition"` // agenda date being read ("" before the first page)
	After      string         `dynamodbav:"after"`     // last GSI1SK handled in it
	Finished   bool           `dynamodbav:"finished"`
	Executed   map[string]int `dynamodbav:"executed"`
	Runs       int            `dynamodbav:"runs"`
	StartedAt  string         `dynamodbav:"startedAt"`
	FinishedAt string         `dynamodbav:"finishedAt,omitempty"`
}

// leaseItem is a shard's lease, PK T#<t>, SK LEASE#<shard2>: one holder
// per tenant and shard whatever date it runs, so two runs whose catch-up
// windows overlap (11-09 and 11-10 at once) never work the same
// partitions side by side (ADR 0063). It times out on the wall clock and
// is renewed while its run works.
type leaseItem struct {
	Owner      string `dynamodbav:"owner"`
	Token      string `dynamodbav:"token"`
	LeaseUntil int64  `dynamodbav:"leaseUntil"` // unix milliseconds, wall clock
	Date       string `dynamodbav:"date"`       // the date its holder runs
}

// resumed reports whether the lease picked up an interrupted run.
func (l *runItem) resumed() bool { return l.Partition != "" }

func runKey(t *tenant.Tenant, date calendar.Date, shard int) kit.Key {
	return kit.Key{PK: keys.Tenant(t.ID), SK: keys.Run(date.String(), shard)}
}

func leaseKey(t *tenant.Tenant, shard int) kit.Key {
	return kit.Key{PK: keys.Tenant(t.ID), SK: keys.ShardLease(shard)}
}

// leaseOperation names the lease's own writes on the kit's meter (its
// take, renewals and release): a few per shard run, apart from the run's
// checkpoints.
const leaseOperation = "agenda.lease"

// runSlot names a shard of a tenant held in this process.
type runSlot struct {
	tenant string
	shard  int
}

// holding is the run this process holds on a shard: its token and date.
type holding struct {
	token, date string
}

// token is the lease token this runner holds on the shard for date, ""
// when none.
func (r *Runner) token(t *tenant.Tenant, date calendar.Date, shard int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h, ok := r.held[runSlot{t.ID, shard}]; ok && h.date == date.String() {
		return h.token
	}
	return ""
}

// forget drops the token of a run that returned.
func (r *Runner) forget(t *tenant.Tenant, shard int) {
	r.mu.Lock()
	delete(r.held, runSlot{t.ID, shard})
	r.mu.Unlock()
}

// acquire takes the shard's lease for a run of date: granted when nobody
// holds it or its holder let it expire — never to a second run while one
// holds it, for this date or another, in this process (the scheduler and
// the run endpoint share a runner) or another. A lease that is held but
// expires within wait is waited for: a holder killed a moment ago is taken
// over as soon as its lease runs out, while a live holder renews it and
// the shard stays busy. Each grant has its own token, and every later
// write under the lease is conditioned on it. A finished run starts over
// from the first partition; an unfinished one keeps its checkpoint.
func (r *Runner) acquire(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int, wait time.Duration) (*runItem, error) {
	slot := runSlot{t.ID, shard}
	tok := uuid.NewString()
	r.mu.Lock()
	if _, busy := r.held[slot]; busy {
		r.mu.Unlock()
		return nil, ErrBusy
	}
	r.held[slot] = holding{token: tok, date: date.String()}
	r.mu.Unlock()
	deadline := r.d.LeaseClock.Now().Add(wait)
	for {
		l, err := r.take(ctx, t, date, shard, tok)
		if err == nil {
			return l, nil
		}
		if errors.Is(err, ErrBusy) && wait > 0 {
			until, gerr := r.leaseUntil(ctx, t, shard)
			now := r.d.LeaseClock.Now()
			if gerr == nil && !until.After(deadline) {
				// The holder has until then to renew; past it the lease is
				// ours to take.
				if serr := sleepUntil(ctx, r.d.LeaseClock, until.Add(20*time.Millisecond)); serr == nil && now.Before(deadline) {
					continue
				}
			}
		}
		r.forget(t, shard)
		return nil, err
	}
}

// sleepUntil waits until the clock reads at, or ctx ends.
func sleepUntil(ctx context.Context, clk clock.Clock, at time.Time) error {
	d := at.Sub(clk.Now())
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// leaseUntil is when the shard's lease runs out, strongly consistent.
func (r *Runner) leaseUntil(ctx context.Context, t *tenant.Tenant, shard int) (time.Time, error) {
	ctx, _ = kit.Operation(ctx, leaseOperation)
	it, err := r.db(t).Get(ctx, leaseKey(t, shard), true)
	if err != nil || it == nil {
		return time.Time{}, err
	}
	var l leaseItem
	if err := attributevalue.UnmarshalMap(it, &l); err != nil {
		return time.Time{}, fmt.Errorf("agenda: decode lease: %w", err)
	}
	return time.UnixMilli(l.LeaseUntil), nil
}

func (r *Runner) take(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int, tok string) (*runItem, error) {
	now := r.d.LeaseClock.Now()
	name := expression.Name
	val := expression.Value
	lease := expression.Set(name("owner"), val(r.d.Owner)).Set(name("token"), val(tok)).
		Set(name("leaseUntil"), val(now.Add(r.d.Lease).UnixMilli())).Set(name("date"), val(date.String())).
		Set(name("type"), val("AGENDA_LEASE")).Set(name("shard"), val(shard)).Set(name("takenAt"), val(keys.Timestamp(now)))
	free := name("PK").AttributeNotExists().Or(name("leaseUntil").LessThan(val(now.UnixMilli())))
	lctx, _ := kit.Operation(ctx, leaseOperation)
	if _, err := r.db(t).Update(lctx, leaseKey(t, shard), lease, &free, types.ReturnValueNone); errors.Is(err, kit.ErrConditionFailed) {
		return nil, ErrBusy
	} else if err != nil {
		return nil, fmt.Errorf("agenda: lease: %w", err)
	}
	// The shard's lease is ours: the date's run item follows it, under the
	// same token, whoever wrote it last.
	upd := expression.Set(name("owner"), val(r.d.Owner)).Set(name("token"), val(tok)).
		Set(name("startedAt"), val(keys.Timestamp(now))).
		Set(name("type"), val("AGENDA_RUN")).Set(name("date"), val(date.String())).Set(name("shard"), val(shard)).
		Set(name("expiresAt"), val(r.d.Clock.Now().Add(40*24*time.Hour).Unix())).
		Add(name("runs"), val(1))
	it, err := r.db(t).Update(ctx, runKey(t, date, shard), upd, nil, types.ReturnValueAllNew)
	if err != nil {
		return nil, fmt.Errorf("agenda: lease: %w", err)
	}
	var l runItem
	if err := attributevalue.UnmarshalMap(it, &l); err != nil {
		return nil, fmt.Errorf("agenda: decode lease: %w", err)
	}
	if l.Finished {
		// A new run of a finished date: from the start, with a clean slate.
		reset := expression.Set(name("finished"), val(false)).Set(name("partition"), val("")).Set(name("after"), val(""))
		mine := name("token").Equal(val(tok))
		if _, err := r.db(t).Update(ctx, runKey(t, date, shard), reset, &mine, types.ReturnValueNone); err != nil {
			return nil, fmt.Errorf("agenda: lease: %w", err)
		}
		l.Partition, l.After = "", ""
	}
	return &l, nil
}

// renew moves the shard's lease forward; ErrBusy (with who holds it) when
// it was lost, so this runner stops instead of working beside the new
// holder.
func (r *Runner) renew(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int) error {
	ctx, _ = kit.Operation(ctx, leaseOperation)
	name, val := expression.Name, expression.Value
	upd := expression.Set(name("leaseUntil"), val(r.d.LeaseClock.Now().Add(r.d.Lease).UnixMilli()))
	mine := name("token").Equal(val(r.token(t, date, shard)))
	_, err := r.db(t).Update(ctx, leaseKey(t, shard), upd, &mine, types.ReturnValueNone)
	if errors.Is(err, kit.ErrConditionFailed) {
		return r.lost(ctx, t, shard)
	}
	return err
}

// checkpoint records the position after a page and renews the lease; it
// fails with ErrBusy when the lease was lost (expired and taken over), so
// this runner stops instead of working beside the new holder.
func (r *Runner) checkpoint(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int, partition, after string, rep ShardReport) error {
	name := expression.Name
	val := expression.Value
	upd := expression.Set(name("partition"), val(partition)).Set(name("after"), val(after)).Set(name("executed"), val(rep.Executed))
	owner := name("token").Equal(val(r.token(t, date, shard)))
	_, err := r.db(t).Update(ctx, runKey(t, date, shard), upd, &owner, types.ReturnValueNone)
	if errors.Is(err, kit.ErrConditionFailed) {
		return r.lost(ctx, t, shard)
	}
	if err != nil {
		return err
	}
	return r.renew(ctx, t, date, shard)
}

// lost says who holds a lease this runner lost.
func (r *Runner) lost(ctx context.Context, t *tenant.Tenant, shard int) error {
	it, err := r.db(t).Get(ctx, leaseKey(t, shard), true)
	if err != nil {
		return errors.Join(ErrBusy, err)
	}
	if it == nil {
		// Not taken over: gone (deleted by hand). An error, not a busy
		// shard, so the run is not reported as someone else's.
		return fmt.Errorf("agenda: the lease of shard %d vanished under its worker", shard)
	}
	var l leaseItem
	_ = attributevalue.UnmarshalMap(it, &l)
	return fmt.Errorf("%w: lost to %s running %s (lease until %s)", ErrBusy, l.Owner, l.Date, time.UnixMilli(l.LeaseUntil).UTC().Format(time.RFC3339Nano))
}

// release marks the run finished and lets the shard's lease go.
func (r *Runner) release(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int, rep ShardReport) error {
	name := expression.Name
	val := expression.Value
	upd := expression.Set(name("finished"), val(true)).
		Set(name("finishedAt"), val(keys.Timestamp(r.d.LeaseClock.Now()))).Set(name("executed"), val(rep.Executed))
	owner := name("token").Equal(val(r.token(t, date, shard)))
	_, err := r.db(t).Update(ctx, runKey(t, date, shard), upd, &owner, types.ReturnValueNone)
	if errors.Is(err, kit.ErrConditionFailed) {
		return r.lost(ctx, t, shard)
	}
	if err != nil {
		return err
	}
	return r.letGo(ctx, t, date, shard)
}

// letGo ends this runner's lease of the shard at once (leaseUntil = 0),
// conditioned on its token: a lease someone else holds is left alone.
func (r *Runner) letGo(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int) error {
	tok := r.token(t, date, shard)
	if tok == "" {
		return nil
	}
	ctx, _ = kit.Operation(ctx, leaseOperation)
	name, val := expression.Name, expression.Value
	owner := name("token").Equal(val(tok))
	_, err := r.db(t).Update(ctx, leaseKey(t, shard), expression.Set(name("leaseUntil"), val(0)), &owner, types.ReturnValueNone)
	if errors.Is(err, kit.ErrConditionFailed) {
		return nil
	}
	return err
}

// maxCatchUp bounds how far back a run reaches for entries a downtime
// left behind.
const maxCatchUp = 366

// since is the first agenda partition a run of date must read: the
// catch-up window's start, or earlier when the shard's last finished run
// is older than that (an engine stopped for longer than the window, a
// clock moved forward) — the day after that run, or the tenant's creation
// when the shard never finished one — never more than maxCatchUp days
// back. One Query on the tenant's RUN items, newest first: the latest
// day's items come first, so it reads a page of a few items.
func (r *Runner) since(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int) (calendar.Date, error) {
	from := date.AddDays(-r.d.CatchUp)
	floor := date.AddDays(-maxCatchUp)
	name, val := expression.Name, expression.Value
	mine := name("shard").Equal(val(shard)).And(name("finished").Equal(val(true)))
	q := kit.Query{Partition: keys.Tenant(t.ID), Sort: kit.Between(keys.Run(floor.String(), 0), keys.Run(date.String(), 99)),
		Descending: true, Limit: int32(4 * max(t.Shards, 1)), Filter: &mine}
	page, err := r.db(t).QueryPage(ctx, q, "")
	if err != nil {
		return from, err
	}
	last := calendar.Date{}
	for _, it := range page.Items {
		var l struct {
			Date string `dynamodbav:"date"`
		}
		if err := attributevalue.UnmarshalMap(it, &l); err == nil {
			if d, err := calendar.Parse(l.Date); err == nil && (last.IsZero() || d.After(last)) {
				last = d
			}
		}
	}
	start := last.AddDays(1)
	if last.IsZero() {
		if len(page.Items) == 0 && page.Next != "" {
			return from, nil // history exists but not in the first page: the window is enough
		}
		start = calendar.Of(t.CreatedAt, t.Location)
	}
	if start.Before(from) {
		from = start
	}
	if from.Before(floor) {
		from = floor
	}
	return from, nil
}
