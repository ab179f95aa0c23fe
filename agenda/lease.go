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
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// runItem is a shard's run of one date, PK T#<t>, SK RUN#<date>#<shard2>:
// the lease (owner, until) that keeps a second worker off the shard, and
// the checkpoint (the agenda partition being read and the last entry
// handled in it) an interrupted run resumes from. expiresAt lets TTL clean
// it up 40 days after the run started, on the business clock the store's
// TTL runs on (the lease itself times out on the wall clock).
type runItem struct {
	Owner      string         `dynamodbav:"owner"`
	Token      string         `dynamodbav:"token"`      // this lease's own id: every write under it is conditioned on it
	LeaseUntil int64          `dynamodbav:"leaseUntil"` // unix milliseconds
	Partition  string         `dynamodbav:"partition"`  // agenda date being read ("" before the first page)
	After      string         `dynamodbav:"after"`      // last GSI1SK handled in it
	Finished   bool           `dynamodbav:"finished"`
	Executed   map[string]int `dynamodbav:"executed"`
	Runs       int            `dynamodbav:"runs"`
	StartedAt  string         `dynamodbav:"startedAt"`
	FinishedAt string         `dynamodbav:"finishedAt,omitempty"`
}

// resumed reports whether the lease picked up an interrupted run.
func (l *runItem) resumed() bool { return l.Partition != "" }

func runKey(t *tenant.Tenant, date calendar.Date, shard int) kit.Key {
	return kit.Key{PK: keys.Tenant(t.ID), SK: keys.Run(date.String(), shard)}
}

// runSlot names a run held in this process.
type runSlot struct {
	tenant, date string
	shard        int
}

// token is the lease token this runner holds on a run, "" when none.
func (r *Runner) token(t *tenant.Tenant, date calendar.Date, shard int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held[runSlot{t.ID, date.String(), shard}]
}

// forget drops the token of a run that returned.
func (r *Runner) forget(t *tenant.Tenant, date calendar.Date, shard int) {
	r.mu.Lock()
	delete(r.held, runSlot{t.ID, date.String(), shard})
	r.mu.Unlock()
}

// acquire takes the shard's lease for date: granted when nobody holds it
// or its holder let it expire — never to a second run while one holds it,
// in this process (the scheduler and the run endpoint share a runner) or
// another. Each grant has its own token, and every later write under the
// lease is conditioned on it. A finished run starts over from the first
// partition; an unfinished one keeps its checkpoint.
func (r *Runner) acquire(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int) (*runItem, error) {
	slot := runSlot{t.ID, date.String(), shard}
	tok := uuid.NewString()
	r.mu.Lock()
	if _, busy := r.held[slot]; busy {
		r.mu.Unlock()
		return nil, ErrBusy
	}
	r.held[slot] = tok
	r.mu.Unlock()
	l, err := r.take(ctx, t, date, shard, tok)
	if err != nil {
		r.forget(t, date, shard)
	}
	return l, err
}

func (r *Runner) take(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int, tok string) (*runItem, error) {
	now := r.d.LeaseClock.Now()
	name := expression.Name
	val := expression.Value
	upd := expression.Set(name("owner"), val(r.d.Owner)).Set(name("token"), val(tok)).
		Set(name("leaseUntil"), val(now.Add(r.d.Lease).UnixMilli())).
		Set(name("startedAt"), val(keys.Timestamp(now))).
		Set(name("type"), val("AGENDA_RUN")).Set(name("date"), val(date.String())).Set(name("shard"), val(shard)).
		Set(name("expiresAt"), val(r.d.Clock.Now().Add(40*24*time.Hour).Unix())).
		Add(name("runs"), val(1))
	cond := name("PK").AttributeNotExists().Or(name("leaseUntil").LessThan(val(now.UnixMilli())))
	it, err := r.db(t).Update(ctx, runKey(t, date, shard), upd, &cond, types.ReturnValueAllNew)
	if errors.Is(err, kit.ErrConditionFailed) {
		return nil, ErrBusy
	}
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

// checkpoint records the position after a page and renews the lease; it
// fails with ErrBusy when the lease was lost (expired and taken over), so
// this runner stops instead of working beside the new holder.
func (r *Runner) checkpoint(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int, partition, after string, rep ShardReport) error {
	now := r.d.LeaseClock.Now()
	name := expression.Name
	val := expression.Value
	upd := expression.Set(name("partition"), val(partition)).Set(name("after"), val(after)).
		Set(name("leaseUntil"), val(now.Add(r.d.Lease).UnixMilli())).Set(name("executed"), val(rep.Executed))
	owner := name("token").Equal(val(r.token(t, date, shard)))
	_, err := r.db(t).Update(ctx, runKey(t, date, shard), upd, &owner, types.ReturnValueNone)
	if errors.Is(err, kit.ErrConditionFailed) {
		return r.lost(ctx, t, date, shard)
	}
	return err
}

// lost says who holds a lease this runner lost.
func (r *Runner) lost(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int) error {
	it, err := r.db(t).Get(ctx, runKey(t, date, shard), true)
	if err != nil {
		return errors.Join(ErrBusy, err)
	}
	if it == nil {
		// Not taken over: gone (swept, deleted by hand). An error, not a
		// busy shard, so the run is not reported as someone else's.
		return fmt.Errorf("agenda: the run item of %s shard %d vanished under its worker", date, shard)
	}
	var l runItem
	_ = attributevalue.UnmarshalMap(it, &l)
	return fmt.Errorf("%w: lost to %s (lease until %s)", ErrBusy, l.Owner, time.UnixMilli(l.LeaseUntil).UTC().Format(time.RFC3339Nano))
}

// release marks the run finished and lets the lease go.
func (r *Runner) release(ctx context.Context, t *tenant.Tenant, date calendar.Date, shard int, rep ShardReport) error {
	name := expression.Name
	val := expression.Value
	upd := expression.Set(name("finished"), val(true)).Set(name("leaseUntil"), val(0)).
		Set(name("finishedAt"), val(keys.Timestamp(r.d.LeaseClock.Now()))).Set(name("executed"), val(rep.Executed))
	owner := name("token").Equal(val(r.token(t, date, shard)))
	_, err := r.db(t).Update(ctx, runKey(t, date, shard), upd, &owner, types.ReturnValueNone)
	if errors.Is(err, kit.ErrConditionFailed) {
		return r.lost(ctx, t, date, shard)
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
