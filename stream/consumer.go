package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"lastro/arrangement"
	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
)

// Translator turns one record into its domain events; a record of no
// interest yields none. An error marks the record as poison: it goes to
// the dead-letter sink and the stream moves on.
type Translator func(Record) ([]Event, error)

// DeadLetter keeps the records the translator refused, with the reason,
// so they can be inspected and replayed; the consumer never stops a shard
// for one bad record.
type DeadLetter interface {
	Dead(ctx context.Context, rec Record, cause error) error
}

// ErrLost is returned when a consumer lost a shard's lease (it expired
// and another consumer took it): the consumer stops reading the shard
// instead of working beside the new holder.
var ErrLost = errors.New("stream: shard lease lost")

// Config wires a consumer.
type Config struct {
	Kit        *kit.Kit     // the table: shard leases and checkpoints, bucket counters
	Streams    *kit.Streams // the table's stream
	Archive    *kit.Kit     // the archive table; nil: TTL deletions are not archived
	Translate  Translator
	Publisher  Publisher
	DeadLetter DeadLetter
	// Owner names this consumer on leases (a host name, a process id).
	Owner string
	// Lease is how long a shard stays this consumer's without a renewal
	// (every commit renews it); 30 s unless set.
	Lease time.Duration
	// LeaseClock times leases (the wall clock unless set); Clock stamps
	// the counters' updatedAt (the business clock).
	LeaseClock, Clock clock.Clock
	// Poll is the pause after a pass that found nothing new; 1 s unless
	// set.
	Poll time.Duration
	// Batch is GetRecords' limit; 100 unless set (at most 1000).
	Batch int32
	// Observe, when set, is told of every committed chunk: the lag
	// metric's hook (Progress.Newest is the newest record's time).
	Observe func(Progress)
	// Tenants lists every tenant (tenant.Service.List): the recount of
	// the bucket counters from the portfolio index visits each. When nil
	// the counters move by deltas from the first record read, which is
	// right only when the stream holds the table's whole history.
	Tenants func(context.Context) ([]string, error)
	// Zone is a tenant's time zone (tenant.Service.Get's Location): the
	// day counters date promises and cures on the tenant's civil date
	// (ADR 0085). When nil they count contacts only (their date is the
	// attempt's own).
	Zone   func(ctx context.Context, tenantID string) (*time.Location, error)
	Logger *slog.Logger
}

// Progress is one committed chunk of a shard.
type Progress struct {
	Shard    string
	Sequence string    // the checkpoint after the chunk
	Records  int       // records in the chunk
	Events   int       // events published for it
	Newest   time.Time // the newest record's ApproximateCreationDateTime
}

// Consumer reads the table's stream: every shard, parents before
// children, one consumer per shard at a time (a lease in the table), from
// its checkpoint. Delivery is at least once (a crash between publish and
// checkpoint publishes a chunk again, with the same deterministic event
// ids); the bucket counters move in the same transaction as the
// checkpoint, so they move exactly once (ADR 0047).
type Consumer struct {
	cfg Config
	db  *kit.Tenant
	mu  sync.Mutex
	// held are the shards this process reads now: a second goroutine of
	// the same consumer never takes one.
	held map[string]bool
	// kept are the leases Run keeps between passes (ADR 0047): an idle
	// consumer neither takes nor releases, it renews every half lease.
	kept map[string]*lease
	// zone caches Config.Zone's answers: a tenant's zone changes by an
	// admin's hand, and a restart picks it up.
	zone map[string]*time.Location
}

// New returns a consumer.
func New(cfg Config) (*Consumer, error) {
	if cfg.Kit == nil || cfg.Streams == nil || cfg.Translate == nil || cfg.Publisher == nil || cfg.DeadLetter == nil {
		return nil, errors.New("stream: a consumer needs a kit, a stream, a translator, a publisher and a dead-letter sink")
	}
	if cfg.Owner == "" {
		cfg.Owner = "consumer-" + uuid.NewString()[:8]
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.LeaseClock == nil {
		cfg.LeaseClock = clock.System{}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Batch <= 0 || cfg.Batch > 1000 {
		cfg.Batch = 100
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Consumer{cfg: cfg, db: cfg.Kit.System(), held: map[string]bool{}, kept: map[string]*lease{}, zone: map[string]*time.Location{}}, nil
}

// Report counts what a pass did.
type Report struct {
	Records, Events, Dead, Archived int
	// Busy are shards another consumer held; Pending are shards waiting
	// for their parent.
	Busy, Pending int
	// Recounted reports a pass that set the bucket counters from the
	// portfolio index (ADR 0079).
	Recounted bool
}

func (r *Report) add(o Report) {
	r.Records += o.Records
	r.Events += o.Events
	r.Dead += o.Dead
	r.Archived += o.Archived
	r.Busy += o.Busy
	r.Pending += o.Pending
	r.Recounted = r.Recounted || o.Recounted
}

// Run reads the stream until ctx is done, pausing Poll after a pass with
// nothing new. It returns nil when ctx was cancelled, else the error
// that stopped it. A killed consumer resumes from its checkpoints; its
// leases expire after Lease.
func (c *Consumer) Run(ctx context.Context) error {
	defer c.releaseKept(ctx)
	for {
		rep, err := c.pass(ctx, true)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			// A transient failure (a publisher down, throttling): log it and
			// try again from the checkpoint after the pause.
			c.cfg.Logger.Warn("stream pass failed", "err", err)
		}
		if err == nil && rep.Records > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(c.cfg.Poll):
		}
	}
}

// Drain passes over the stream until a pass finds nothing new and no
// shard is held by another consumer or waits for its parent: every
// record written before the call has been processed (by this consumer or
// another). It is Run for jobs and tests. A shard another consumer keeps
// holding (a running `lastro stream` or serve) for two leases' time ends
// it with ErrBusy: that consumer is reading the stream.
func (c *Consumer) Drain(ctx context.Context) (Report, error) {
	var total Report
	var busySince time.Time
	for {
		rep, err := c.Pass(ctx)
		total.add(Report{Records: rep.Records, Events: rep.Events, Dead: rep.Dead, Archived: rep.Archived, Recounted: rep.Recounted})
		if err != nil {
			return total, err
		}
		if rep.Records == 0 && rep.Busy == 0 && rep.Pending == 0 {
			return total, nil
		}
		now := c.cfg.LeaseClock.Now()
		switch {
		case rep.Records > 0 || rep.Busy == 0:
			busySince = time.Time{}
		case busySince.IsZero():
			busySince = now
		case now.Sub(busySince) > 2*c.cfg.Lease:
			return total, fmt.Errorf("%w: for %s", ErrBusy, now.Sub(busySince).Round(time.Second))
		}
		if rep.Records == 0 {
			select {
			case <-ctx.Done():
				return total, ctx.Err()
			case <-time.After(min(c.cfg.Poll, 50*time.Millisecond)):
			}
		}
	}
}

// Pass discovers the stream's shards and reads every shard it can take to
// its current end, parents first, releasing each lease after it.
func (c *Consumer) Pass(ctx context.Context) (Report, error) { return c.pass(ctx, false) }

// pass is Pass; keep keeps the leases of open shards for the next pass.
func (c *Consumer) pass(ctx context.Context, keep bool) (Report, error) {
	var rep Report
	ctx = kit.Within(ctx, "stream.consume") // leases, checkpoints and counters in the capacity report
	s, err := c.cfg.Streams.Latest(ctx, c.cfg.Kit.Table())
	if err != nil {
		return rep, err
	}
	shards, err := c.cfg.Streams.Shards(ctx, s.ARN)
	if err != nil {
		return rep, err
	}
	count, err := c.seeded(ctx, s)
	if err != nil {
		return rep, err
	}
	finished := map[string]bool{}
	for _, sh := range order(shards) {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		st, err := c.state(ctx, s, sh)
		if err != nil {
			return rep, err
		}
		if st.Finished {
			finished[sh.ID] = true
			continue
		}
		if sh.Parent != "" && present(shards, sh.Parent) && !finished[sh.Parent] {
			rep.Pending++ // its parent is not read to its end yet
			continue
		}
		r, done, err := c.shard(ctx, s, sh, keep, &count)
		rep.add(r)
		switch {
		case errors.Is(err, ErrBusy), errors.Is(err, ErrLost):
			rep.Busy++
		case err != nil:
			return rep, err
		case done:
			finished[sh.ID] = true
		}
	}
	if !count && rep.Busy == 0 && rep.Pending == 0 {
		// Every shard was read to its end without moving the counters:
		// count them from the index now, and move them by deltas after.
		if err := c.reseed(ctx, s); err != nil {
			return rep, err
		}
		rep.Recounted = true
	}
	return rep, nil
}

// order sorts shards so that a parent comes before its children (a
// topological order by ancestry depth, ties by id for a stable pass).
func order(shards []kit.Shard) []kit.Shard {
	byID := make(map[string]kit.Shard, len(shards))
	for _, sh := range shards {
		byID[sh.ID] = sh
	}
	depth := func(sh kit.Shard) int {
		d := 0
		for seen := map[string]bool{}; sh.Parent != "" && !seen[sh.Parent]; d++ {
			seen[sh.Parent] = true
			p, ok := byID[sh.Parent]
			if !ok {
				break
			}
			sh = p
		}
		return d
	}
	out := slices.Clone(shards)
	slices.SortStableFunc(out, func(a, b kit.Shard) int {
		if da, db := depth(a), depth(b); da != db {
			return da - db
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

func present(shards []kit.Shard, id string) bool {
	return slices.ContainsFunc(shards, func(s kit.Shard) bool { return s.ID == id })
}

// shardItem is a shard's lease and checkpoint, PK SYS, SK
// SHARD#<streamLabel>#<shardId>.
type shardItem struct {
	Owner      string `dynamodbav:"owner"`
	Token      string `dynamodbav:"token"`
	LeaseUntil int64  `dynamodbav:"leaseUntil"` // unix milliseconds on the lease clock
	After      string `dynamodbav:"after"`      // the last sequence number processed
	Finished   bool   `dynamodbav:"finished"`   // a closed shard read to its end
	Records    int64  `dynamodbav:"records"`
}

func shardKey(s kit.Stream, sh kit.Shard) kit.Key {
	return kit.Key{PK: keys.System, SK: keys.Shard(s.Label, sh.ID)}
}

// state reads a shard's checkpoint (zero when the shard is new).
func (c *Consumer) state(ctx context.Context, s kit.Stream, sh kit.Shard) (shardItem, error) {
	var st shardItem
	it, err := c.db.Get(ctx, shardKey(s, sh), true)
	if err != nil || it == nil {
		return st, err
	}
	if err := attributevalue.UnmarshalMap(it, &st); err != nil {
		return st, fmt.Errorf("stream: decode shard checkpoint: %w", err)
	}
	return st, nil
}

// ErrBusy is Drain's answer when another consumer keeps a shard: it is
// reading the stream, so this one has nothing to do there.
var ErrBusy = errors.New("stream: shard held by another consumer")

// lease is a shard held by this consumer.
type lease struct {
	key   kit.Key
	token string
	after string    // the position read to
	saved string    // the checkpoint as stored
	until time.Time // when it expires, on the lease clock
}

// acquire takes the shard's lease: granted when nobody holds it or its
// holder let it expire, with a token of its own that every later write
// is conditioned on (agenda's run leases work the same way, ADR 0018).
// A lease Run kept from the previous pass is reused, renewed once half of
// it has run out.
func (c *Consumer) acquire(ctx context.Context, s kit.Stream, sh kit.Shard) (*lease, error) {
	c.mu.Lock()
	if c.held[sh.ID] {
		c.mu.Unlock()
		return nil, ErrBusy
	}
	c.held[sh.ID] = true
	l := c.kept[sh.ID]
	delete(c.kept, sh.ID)
	c.mu.Unlock()
	var err error
	switch {
	case l == nil:
		l, err = c.take(ctx, s, sh)
	case c.cfg.LeaseClock.Now().After(l.until.Add(-c.cfg.Lease / 2)):
		err = c.renew(ctx, l)
	}
	if err != nil {
		c.forget(sh.ID)
	}
	return l, err
}

// renew extends a kept lease.
func (c *Consumer) renew(ctx context.Context, l *lease) error {
	name, val := expression.Name, expression.Value
	until := c.cfg.LeaseClock.Now().Add(c.cfg.Lease)
	mine := name("token").Equal(val(l.token))
	_, err := c.db.Update(ctx, l.key, expression.Set(name("leaseUntil"), val(until.UnixMilli())), &mine, types.ReturnValueNone)
	if errors.Is(err, kit.ErrConditionFailed) {
		return ErrLost
	}
	if err == nil {
		l.until = until
	}
	return err
}

// releaseKept lets the kept leases go when Run stops, so another
// consumer takes the shards at once instead of after a lease.
func (c *Consumer) releaseKept(ctx context.Context) {
	c.mu.Lock()
	kept := c.kept
	c.kept = map[string]*lease{}
	c.mu.Unlock()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	for _, l := range kept {
		_ = c.release(rctx, l)
	}
}

func (c *Consumer) forget(id string) {
	c.mu.Lock()
	delete(c.held, id)
	c.mu.Unlock()
}

func (c *Consumer) take(ctx context.Context, s kit.Stream, sh kit.Shard) (*lease, error) {
	now := c.cfg.LeaseClock.Now()
	tok := uuid.NewString()
	name, val := expression.Name, expression.Value
	upd := expression.Set(name("owner"), val(c.cfg.Owner)).Set(name("token"), val(tok)).
		Set(name("leaseUntil"), val(now.Add(c.cfg.Lease).UnixMilli())).
		Set(name("type"), val("STREAM_SHARD")).Set(name("streamLabel"), val(s.Label)).Set(name("shardId"), val(sh.ID)).
		Set(name("parentShardId"), val(sh.Parent)).
		Set(name("after"), name("after").IfNotExists(val(""))).
		Set(name("finished"), name("finished").IfNotExists(val(false))).
		Set(name("records"), name("records").IfNotExists(val(0)))
	cond := name("PK").AttributeNotExists().Or(name("leaseUntil").LessThan(val(now.UnixMilli())))
	it, err := c.db.Update(ctx, shardKey(s, sh), upd, &cond, types.ReturnValueAllNew)
	if errors.Is(err, kit.ErrConditionFailed) {
		return nil, ErrBusy
	}
	if err != nil {
		return nil, fmt.Errorf("stream: lease shard: %w", err)
	}
	var st shardItem
	if err := attributevalue.UnmarshalMap(it, &st); err != nil {
		return nil, fmt.Errorf("stream: decode shard lease: %w", err)
	}
	return &lease{key: shardKey(s, sh), token: tok, after: st.After, saved: st.After, until: now.Add(c.cfg.Lease)}, nil
}

// release lets the lease go, saving the position read to (past the
// bookkeeping records no commit saved), so another consumer may take the
// shard at once.
func (c *Consumer) release(ctx context.Context, l *lease) error {
	name, val := expression.Name, expression.Value
	mine := name("token").Equal(val(l.token)).And(name("after").Equal(val(l.saved)))
	upd := expression.Set(name("leaseUntil"), val(0)).Set(name("after"), val(l.after))
	_, err := c.db.Update(ctx, l.key, upd, &mine, types.ReturnValueNone)
	if errors.Is(err, kit.ErrConditionFailed) {
		return ErrLost
	}
	return err
}

// shard reads one shard from its checkpoint to its current end. done
// reports a closed shard read to its end. keep keeps the lease of an
// open shard for the next pass instead of releasing it. *count says
// whether its records move the bucket counters; a trimmed checkpoint
// turns it off (and marks the counters for a recount).
func (c *Consumer) shard(ctx context.Context, s kit.Stream, sh kit.Shard, keep bool, count *bool) (rep Report, done bool, err error) {
	l, err := c.acquire(ctx, s, sh)
	if err != nil {
		return rep, false, err
	}
	defer c.forget(sh.ID)
	defer func() {
		if err != nil && !errors.Is(err, ErrLost) {
			// A failed or stopped read lets the lease go at once, so the
			// shard is not stuck for a lease's length. A consumer that dies
			// without getting here leaves its lease to expire.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			_ = c.release(rctx, l)
		}
	}()
	it, err := c.cfg.Streams.Iterator(ctx, s.ARN, sh.ID, l.after)
	if errors.Is(err, kit.ErrTrimmed) {
		// The checkpoint is older than the stream's retention: what lies
		// between is lost to this consumer. Say so and go on from the
		// oldest record kept rather than stop forever.
		// The counters missed those records' moves: they are recounted
		// from the portfolio index once every shard is read (ADR 0079).
		c.cfg.Logger.Error("stream checkpoint trimmed: records lost; the bucket counters will be recounted", "shard", sh.ID, "after", l.after)
		if err := c.unseed(ctx, s, "checkpoint trimmed"); err != nil {
			return rep, false, err
		}
		*count = false
		it, err = c.cfg.Streams.Iterator(ctx, s.ARN, sh.ID, "")
	}
	if err != nil {
		return rep, false, err
	}
	empty := 0
	for it != "" {
		changes, next, err := c.cfg.Streams.Records(ctx, it, c.cfg.Batch)
		if errors.Is(err, kit.ErrIteratorExpired) {
			if it, err = c.cfg.Streams.Iterator(ctx, s.ARN, sh.ID, l.after); err != nil {
				return rep, false, err
			}
			continue
		}
		if err != nil {
			return rep, false, err
		}
		r, err := c.page(ctx, l, sh.ID, changes, next == "", *count)
		rep.add(r)
		if err != nil {
			return rep, false, err
		}
		if len(changes) == 0 && next != "" {
			// Caught up with an open shard — unless this read started at
			// the trim horizon with nothing checkpointed, where AWS may
			// answer empty pages over trimmed records before the first one
			// kept: a few more steps before concluding.
			if empty++; l.saved != "" || l.after != "" || empty >= maxEmptyFromHorizon {
				break
			}
		} else {
			empty = 0
		}
		it = next
	}
	if keep && it != "" {
		c.mu.Lock()
		c.kept[sh.ID] = l
		c.mu.Unlock()
		return rep, false, nil
	}
	if err := c.release(ctx, l); err != nil {
		return rep, false, err
	}
	return rep, it == "", nil
}

// maxEmptyFromHorizon is how many empty pages a read from the trim
// horizon steps over before it counts the shard as caught up.
const maxEmptyFromHorizon = 5

// maxCounters bounds the counter items one chunk moves: with the
// checkpoint they must fit one transaction (100 actions).
const maxCounters = 99

// page processes one page of records in chunks that each end in a
// commit. closed marks the shard's last page: its commit also marks the
// shard finished. A chunk of the consumer's own bookkeeping only (see
// bookkeeping) moves the position in memory and writes nothing: writing
// a checkpoint for it would be a new record, read on the next pass, and
// so on forever. The next real commit or the release saves it. count
// false commits no counter moves (the counters await a recount).
func (c *Consumer) page(ctx context.Context, l *lease, shardID string, changes []kit.Change, closed, count bool) (Report, error) {
	var rep Report
	p := c.processor()
	z, err := c.zones(ctx, changes)
	if err != nil {
		return rep, err
	}
	start := 0
	for start < len(changes) || (closed && start == len(changes)) {
		end, deltas := start, counters{}
		for end < len(changes) {
			rec := record(changes[end])
			next := deltas.clone()
			next.apply(rec, true, z)
			if len(next) > maxCounters && end > start {
				break
			}
			deltas = next
			end++
		}
		chunk := changes[start:end]
		var recs []Record
		for _, ch := range chunk {
			if !after(ch.Sequence, l.after) || bookkeeping(record(ch)) {
				continue // processed already, or the consumer's own writes
			}
			recs = append(recs, record(ch))
		}
		r, err := p.process(ctx, recs)
		rep.add(r)
		if err != nil {
			return rep, err
		}
		seq := l.after
		if len(chunk) > 0 && after(chunk[len(chunk)-1].Sequence, seq) {
			seq = chunk[len(chunk)-1].Sequence
		}
		last := closed && end == len(changes)
		if len(recs) > 0 || last {
			// Day counters move whether or not the buckets are trusted:
			// they count what happened in the records read, and no recount
			// could restore them (ADR 0085).
			deltas := counterDeltas(recs, count, z)
			if err := c.commit(ctx, l, seq, len(recs), deltas, last); err != nil {
				return rep, err
			}
			l.saved = seq
		}
		l.after = seq
		if c.cfg.Observe != nil && len(recs) > 0 {
			c.cfg.Observe(Progress{Shard: shardID, Sequence: seq, Records: len(recs), Events: r.Events, Newest: recs[len(recs)-1].At})
		}
		start = end
		if last {
			break
		}
	}
	return rep, nil
}

// bookkeeping reports a change the consumer itself made: a shard lease or
// checkpoint (the system partition) or a bucket counter. They are in the
// stream like every write; nothing comes of them, and they are not
// counted as work (Drain would never see the stream quiet).
func bookkeeping(r Record) bool {
	img := r.New
	if img == nil {
		img = r.Old
	}
	typ := str(img, "type")
	return str(r.Keys, "PK") == keys.System || typ == summaryType || typ == daySummaryType
}

// counterDeltas are the records' counter moves (records already filtered
// against the checkpoint): the buckets' only when buckets.
func counterDeltas(recs []Record, buckets bool, z zones) counters {
	d := counters{}
	for _, r := range recs {
		d.apply(r, buckets, z)
	}
	return d
}

// zones resolves the time zones of the tenants whose headers and
// promises the changes hold, once per tenant per process.
func (c *Consumer) zones(ctx context.Context, changes []kit.Change) (zones, error) {
	z := zones{}
	if c.cfg.Zone == nil {
		return z, nil
	}
	for _, ch := range changes {
		img := ch.New
		if img == nil {
			continue
		}
		if typ := str(img, "type"); typ != contract.TypeHeader && typ != arrangement.TypePromise {
			continue
		}
		o, err := ownerOf(img)
		if err != nil || z[o.tenant] != nil {
			continue
		}
		c.mu.Lock()
		loc := c.zone[o.tenant]
		c.mu.Unlock()
		if loc == nil {
			if loc, err = c.cfg.Zone(ctx, o.tenant); err != nil {
				if errs.Is(err, errs.NotFound) {
					continue // an offboarded tenant's late records
				}
				return nil, fmt.Errorf("stream: zone of tenant %s: %w", o.tenant, err)
			}
			c.mu.Lock()
			c.zone[o.tenant] = loc
			c.mu.Unlock()
		}
		z[o.tenant] = loc
	}
	return z, nil
}

// commit moves the checkpoint to seq, renews the lease and applies the
// chunk's counter deltas, in one transaction conditioned on the lease's
// token and on the checkpoint still being where this lease left it:
// counters move exactly once per record, whoever crashed where.
func (c *Consumer) commit(ctx context.Context, l *lease, seq string, n int, deltas counters, finished bool) error {
	name, val := expression.Name, expression.Value
	now := c.cfg.LeaseClock.Now()
	upd := expression.Set(name("after"), val(seq)).Set(name("leaseUntil"), val(now.Add(c.cfg.Lease).UnixMilli())).
		Set(name("finished"), val(finished)).Set(name("updatedAt"), val(keys.Timestamp(c.cfg.Clock.Now()))).
		Add(name("records"), val(n))
	cond := name("token").Equal(val(l.token)).And(name("after").Equal(val(l.saved)))
	actions := []kit.Action{kit.UpdateAction(l.key, upd, &cond)}
	actions = append(actions, deltas.actions(c.cfg.Clock.Now())...)
	var err error
	for attempt := range 5 {
		if len(actions) == 1 {
			_, err = c.db.Update(ctx, l.key, upd, &cond, types.ReturnValueNone)
		} else {
			err = c.db.Transact(ctx, actions...)
		}
		if !errors.Is(err, kit.ErrConflict) && !errors.Is(err, kit.ErrThrottled) {
			break
		}
		// Another shard's transaction on the same counter item: the
		// transaction did not apply, so trying it again is safe.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(10<<attempt) * time.Millisecond):
		}
	}
	var tx *kit.TxCanceled
	if errors.Is(err, kit.ErrConditionFailed) && (!errors.As(err, &tx) || tx.Failed(0)) {
		return fmt.Errorf("%w: %s", ErrLost, l.key.SK)
	}
	if err != nil {
		return fmt.Errorf("stream: checkpoint: %w", err)
	}
	l.until = now.Add(c.cfg.Lease)
	return nil
}

// record converts a kit change into the translator's record.
func record(c kit.Change) Record {
	return Record{EventID: c.EventID, Sequence: c.Sequence, Name: c.Name, Keys: c.Keys, Old: c.Old, New: c.New, Service: c.Service, At: c.At}
}

// after reports whether sequence number a comes after b ("" is before
// everything). Sequence numbers are decimal strings of varying length, so
// they compare by length first, then digits.
func after(a, b string) bool {
	if b == "" {
		return a != ""
	}
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a > b
}
