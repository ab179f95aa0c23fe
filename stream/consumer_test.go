package stream_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/clock"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
	"lastro/stream"
)

// fixture is an embedded store with the table and its archive, on a
// manual business clock (the store's TTL runs on it) and a manual lease
// clock.
type fixture struct {
	srv     *ddbtest.Server
	kit     *kit.Kit
	archive *kit.Kit
	streams *kit.Streams
	clock   *clock.Manual
	lease   *clock.Manual
}

var t0 = time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)

func newFixture(t *testing.T) *fixture {
	t.Helper()
	clk := clock.NewManual(t0)
	srv := ddbtest.Start(t, ddblocal.Options{Now: clk.Now})
	ctx := context.Background()
	if _, err := table.Ensure(ctx, srv.Client(), "lastro"); err != nil {
		t.Fatal(err)
	}
	if _, err := table.EnsureArchive(ctx, srv.Client(), "lastro"+table.ArchiveSuffix); err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, kit: kit.New(srv.Client(), "lastro"), archive: kit.New(srv.Client(), "lastro"+table.ArchiveSuffix),
		streams: kit.NewStreams(kit.NewEmbeddedStreamsClient(srv.URL, nil)), clock: clk, lease: clock.NewManual(t0)}
}

// memPub keeps what it is given; hook, when set, runs after each accepted
// batch (a test kills the consumer there: published, not checkpointed).
type memPub struct {
	mu     sync.Mutex
	events []stream.Event
	hook   func([]stream.Event)
	fail   error
}

func (p *memPub) Publish(ctx context.Context, evs []stream.Event) error {
	p.mu.Lock()
	if p.fail != nil {
		p.mu.Unlock()
		return p.fail
	}
	p.events = append(p.events, evs...)
	hook := p.hook
	p.mu.Unlock()
	if hook != nil {
		hook(evs)
	}
	return nil
}

func (p *memPub) all() []stream.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.events)
}

// unique drops redelivered events (same id), failing the test when two
// deliveries of one id differ: at-least-once, effectively once.
func unique(t *testing.T, evs []stream.Event) []stream.Event {
	t.Helper()
	seen := map[string]stream.Event{}
	var out []stream.Event
	for _, e := range evs {
		if prev, ok := seen[e.ID]; ok {
			if fmt.Sprint(prev) != fmt.Sprint(e) {
				t.Errorf("event %s delivered twice with different contents:\n%v\n%v", e.ID, prev, e)
			}
			continue
		}
		seen[e.ID] = e
		out = append(out, e)
	}
	return out
}

type memDead struct {
	mu   sync.Mutex
	recs []stream.Record
	errs []error
}

func (d *memDead) Dead(ctx context.Context, r stream.Record, cause error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.recs, d.errs = append(d.recs, r), append(d.errs, cause)
	return nil
}

// note is the test's translator: a NOTE item's change is one event named
// after its contract, a POISON item does not translate, anything else
// yields nothing.
func note(r stream.Record) ([]stream.Event, error) {
	img := r.New
	if img == nil {
		return nil, nil
	}
	switch s(img, "type") {
	case "NOTE":
		return []stream.Event{{ID: r.Sequence + "-0", Type: "Noted", Tenant: "t1", ContractID: s(img, "contractId"),
			Sequence: r.Sequence, Data: map[string]any{"n": s(img, "n")}}}, nil
	case "POISON":
		return nil, errors.New("cannot decode")
	}
	return nil, nil
}

func s(img map[string]types.AttributeValue, name string) string {
	if v, ok := img[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func (f *fixture) consumer(t *testing.T, owner string, pub stream.Publisher, dead stream.DeadLetter) *stream.Consumer {
	t.Helper()
	c, err := stream.New(stream.Config{Kit: f.kit, Streams: f.streams, Archive: f.archive, Translate: note, Publisher: pub,
		DeadLetter: dead, Owner: owner, Lease: 10 * time.Second, LeaseClock: f.lease, Clock: f.clock, Poll: 5 * time.Millisecond, Batch: 7})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// putNotes writes n NOTE items for contract ct, numbered from first.
func (f *fixture) putNotes(t *testing.T, ct string, first, n int) {
	t.Helper()
	tn := f.kit.Tenant("t1", nil)
	for i := first; i < first+n; i++ {
		it := kit.Item{"PK": &types.AttributeValueMemberS{Value: keys.Debtor("t1", "0123456789abcdef")},
			"SK": &types.AttributeValueMemberS{Value: "CT#" + ct + "#N#" + strconv.Itoa(i)}, "type": &types.AttributeValueMemberS{Value: "NOTE"},
			"contractId": &types.AttributeValueMemberS{Value: ct}, "n": &types.AttributeValueMemberS{Value: strconv.Itoa(i)}}
		if err := tn.Put(context.Background(), it, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// ns are the events' note numbers, in delivery order.
func ns(evs []stream.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i], _ = e.Data["n"].(string)
	}
	return out
}

func seq(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(from + i)
	}
	return out
}

func TestConsumerDeliversEveryRecordOnceAndResumesFromItsCheckpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.putNotes(t, "C-1", 0, 20)
	pub := &memPub{}
	rep, err := f.consumer(t, "a", pub, &memDead{}).Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := ns(pub.all()); !slices.Equal(got, seq(0, 20)) || rep.Records != 20 || rep.Events != 20 {
		t.Fatalf("first drain: %v (%+v), want notes 0..19 once each", got, rep)
	}
	// A new consumer (a restarted process) starts at the checkpoint.
	f.putNotes(t, "C-1", 20, 3)
	pub2 := &memPub{}
	if _, err := f.consumer(t, "b", pub2, &memDead{}).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ns(pub2.all()); !slices.Equal(got, seq(20, 3)) {
		t.Fatalf("after restart: %v, want notes 20..22 only", got)
	}
}

// TestConsumerKilledBeforeItsCheckpointRedeliversTheSameEvents: the
// context is cancelled right after a chunk was published and before its
// checkpoint; the restarted consumer publishes that chunk again with the
// same ids and nothing is lost.
func TestConsumerKilledBeforeItsCheckpointRedeliversTheSameEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.putNotes(t, "C-1", 0, 30)
	pub := &memPub{}
	ctx, kill := context.WithCancel(context.Background())
	batches := 0
	pub.hook = func([]stream.Event) {
		if batches++; batches == 2 {
			kill()
		}
	}
	if _, err := f.consumer(t, "a", pub, &memDead{}).Drain(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("killed drain: %v, want context.Canceled", err)
	}
	if killed := len(pub.all()); killed != 14 {
		t.Fatalf("published %d events before the kill, want two chunks of 7", killed)
	}
	pub.hook = nil
	if _, err := f.consumer(t, "b", pub, &memDead{}).Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	all := pub.all()
	if len(all) != 30+7 {
		t.Errorf("delivered %d events, want 30 and the second chunk again (7)", len(all))
	}
	if got := ns(unique(t, all)); !slices.Equal(got, seq(0, 30)) {
		t.Fatalf("unique events %v, want notes 0..29 in order", got)
	}
}

// TestALeaseKeepsASecondConsumerOffTheShardUntilItExpires: while one
// consumer is stuck mid-chunk (its publisher hangs), a second finds the
// shard busy; once the lease expires the second takes the shard over,
// and the first, unstuck, loses its checkpoint write (ErrLost) instead
// of writing beside it.
func TestALeaseKeepsASecondConsumerOffTheShardUntilItExpires(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.putNotes(t, "C-1", 0, 10)
	stuck, unstick := make(chan struct{}), make(chan struct{})
	slow := &memPub{}
	slow.hook = func([]stream.Event) {
		close(stuck)
		<-unstick
	}
	a := f.consumer(t, "a", slow, &memDead{})
	type result struct {
		rep stream.Report
		err error
	}
	done := make(chan result, 1)
	go func() { r, err := a.Pass(context.Background()); done <- result{r, err} }()
	<-stuck
	pub := &memPub{}
	b := f.consumer(t, "b", pub, &memDead{})
	rep, err := b.Pass(context.Background())
	if err != nil || rep.Busy != 1 || rep.Records != 0 {
		t.Fatalf("pass under a live lease: %+v %v, want the shard busy", rep, err)
	}
	f.lease.Advance(11 * time.Second)
	if _, err := b.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ns(pub.all()); !slices.Equal(got, seq(0, 10)) {
		t.Fatalf("after the takeover: %v, want notes 0..9", got)
	}
	close(unstick)
	if r := <-done; r.err != nil || r.rep.Busy != 1 {
		t.Fatalf("pass of the stuck consumer: %+v %v, want the shard counted as lost (busy), no error", r.rep, r.err)
	}
}

func TestPoisonRecordsGoToTheDeadLetterAndTheShardMovesOn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.putNotes(t, "C-1", 0, 2)
	bad := kit.Item{"PK": &types.AttributeValueMemberS{Value: keys.Debtor("t1", "0123456789abcdef")},
		"SK": &types.AttributeValueMemberS{Value: "CT#C-1#X"}, "type": &types.AttributeValueMemberS{Value: "POISON"}}
	if err := f.kit.Tenant("t1", nil).Put(ctx, bad, nil); err != nil {
		t.Fatal(err)
	}
	f.putNotes(t, "C-1", 2, 2)
	pub, dead := &memPub{}, &memDead{}
	rep, err := f.consumer(t, "a", pub, dead).Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := ns(pub.all()); !slices.Equal(got, seq(0, 4)) || rep.Dead != 1 {
		t.Fatalf("events %v, report %+v: want notes 0..3 and one dead record", got, rep)
	}
	if len(dead.recs) != 1 || s(dead.recs[0].New, "type") != "POISON" || dead.errs[0] == nil {
		t.Fatalf("dead letters %+v", dead.recs)
	}
	// The poison record is behind the checkpoint: not dead-lettered again.
	if _, err := f.consumer(t, "b", pub, dead).Drain(ctx); err != nil || len(dead.recs) != 1 {
		t.Fatalf("second drain: %v, %d dead", err, len(dead.recs))
	}
}

func TestAFailingPublisherLeavesTheCheckpointAlone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.putNotes(t, "C-1", 0, 5)
	pub := &memPub{fail: errors.New("broker down")}
	c := f.consumer(t, "a", pub, &memDead{})
	if _, err := c.Drain(ctx); err == nil {
		t.Fatal("drain with a failing publisher succeeded")
	}
	pub.fail = nil
	if _, err := c.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ns(pub.all()); !slices.Equal(got, seq(0, 5)) {
		t.Fatalf("events %v, want notes 0..4", got)
	}
}

// TestTwoConsumersAtOnceDeliverEveryEventInOrder: two consumers run side
// by side while items are written; between them every record is
// published, in order per contract, and duplicates only ever repeat an
// id.
func TestTwoConsumersAtOnceDeliverEveryEventInOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pub := &memPub{}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, owner := range []string{"a", "b"} {
		c := f.consumer(t, owner, pub, &memDead{})
		wg.Go(func() {
			if err := c.Run(ctx); err != nil {
				t.Errorf("run %s: %v", owner, err)
			}
		})
	}
	for i := range 10 {
		f.putNotes(t, "C-1", i*10, 10)
		f.putNotes(t, "C-2", i*10, 10)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(unique(t, pub.all())) < 200 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	wg.Wait()
	got := unique(t, pub.all())
	perContract := map[string][]stream.Event{}
	for _, e := range got {
		perContract[e.ContractID] = append(perContract[e.ContractID], e)
	}
	for _, ct := range []string{"C-1", "C-2"} {
		if n := ns(perContract[ct]); !slices.Equal(n, seq(0, 100)) {
			t.Errorf("%s: events %v, want 0..99 in order", ct, n)
		}
	}
}

// headerImg is a contract header image in bucket b ("" = no bucket).
func headerImg(ct, b string, cents int64) kit.Item {
	it := kit.Item{"PK": &types.AttributeValueMemberS{Value: keys.Debtor("t1", "0123456789abcdef")},
		"SK": &types.AttributeValueMemberS{Value: "CT#" + ct}, "type": &types.AttributeValueMemberS{Value: "COUNTED"},
		"contractId":       &types.AttributeValueMemberS{Value: ct},
		"outstandingCents": &types.AttributeValueMemberN{Value: strconv.FormatInt(cents, 10)}}
	// The test's translator ignores this type, the counters read headers
	// by the contract header's own type.
	it["type"] = &types.AttributeValueMemberS{Value: "CONTRACT"}
	if b != "" {
		it["GSI2PK"] = &types.AttributeValueMemberS{Value: keys.Bucket("t1", b)}
		it["bucket"] = &types.AttributeValueMemberS{Value: b}
	}
	return it
}

type summary struct {
	Contracts        int64 `dynamodbav:"contracts"`
	OutstandingCents int64 `dynamodbav:"outstandingCents"`
}

func (f *fixture) summary(t *testing.T, tenant, bucket string) (summary, bool) {
	t.Helper()
	it, err := f.kit.Tenant(tenant, nil).Get(context.Background(), kit.Key{PK: keys.Tenant(tenant), SK: keys.BucketSummary(bucket)}, true)
	if err != nil {
		t.Fatal(err)
	}
	var sm summary
	if it == nil {
		return sm, false
	}
	if err := attributevalue.UnmarshalMap(it, &sm); err != nil {
		t.Fatal(err)
	}
	return sm, true
}

// TestBucketCountersFollowTheHeadersExactlyOnce: headers enter, move
// between and leave buckets; the counters equal what the buckets hold,
// even after a kill before a checkpoint and a redelivery.
func TestBucketCountersFollowTheHeadersExactlyOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tn := f.kit.Tenant("t1", nil)
	bg := context.Background()
	put := func(it kit.Item) {
		t.Helper()
		if err := tn.Put(bg, it, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		put(headerImg(fmt.Sprintf("C-%d", i), "", 10000))                  // not overdue: no bucket
		put(headerImg(fmt.Sprintf("C-%d", i), "D001_030", 10000+int64(i))) // overdue
	}
	put(headerImg("C-0", "D031_060", 10000)) // a BUCKET_MOVE
	put(headerImg("C-1", "D001_030", 4000))  // a partial payment
	put(headerImg("C-2", "", 0))             // cured
	put(headerImg("C-3", "D031_060", 10003)) // a move...
	put(headerImg("C-3", "D061_090", 10003)) // ...and another
	if err := tn.Delete(bg, kit.Key{PK: keys.Debtor("t1", "0123456789abcdef"), SK: "CT#C-4"}, nil); err != nil {
		t.Fatal(err) // a deleted header (offboarding) leaves its bucket too
	}
	pub := &memPub{}
	ctx, kill := context.WithCancel(bg)
	commits := 0
	c, err := stream.New(stream.Config{Kit: f.kit, Streams: f.streams, Translate: note, Publisher: pub, DeadLetter: &memDead{},
		Owner: "a", Lease: time.Second, LeaseClock: f.lease, Clock: f.clock, Batch: 4,
		Observe: func(stream.Progress) {
			if commits++; commits == 3 {
				kill() // after the third checkpoint: the fourth chunk dies mid-way
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Drain(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("killed drain: %v", err)
	}
	f.lease.Advance(2 * time.Second)
	if _, err := f.consumer(t, "b", pub, &memDead{}).Drain(bg); err != nil {
		t.Fatal(err)
	}
	want := map[string]summary{
		// C-1 4000, C-5..C-9 10005..10009
		"D001_030":  {6, 4000 + 10005 + 10006 + 10007 + 10008 + 10009},
		"D031_060":  {1, 10000},
		"D061_090":  {1, 10003},
		"D091_PLUS": {0, 0},
	}
	for b, w := range want {
		got, ok := f.summary(t, "t1", b)
		if b == "D091_PLUS" && ok {
			t.Errorf("%s: counters %+v, want no item (nothing ever entered it)", b, got)
			continue
		}
		if got != w {
			t.Errorf("%s: counters %+v, want %+v", b, got, w)
		}
	}
}

// TestTTLDeletionsAreArchivedAndUserDeletesAreNot: a contact limit
// counter swept by the TTL lands in the archive table with its keys; a
// counter a client deleted does not.
func TestTTLDeletionsAreArchivedAndUserDeletesAreNot(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	pk := keys.Debtor("t1", "0123456789abcdef")
	limit := func(date string) kit.Item {
		d, _ := time.Parse("2006-01-02", date)
		return kit.Item{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: keys.Limit(date)},
			"type": &types.AttributeValueMemberS{Value: "LIMIT"}, "count": &types.AttributeValueMemberN{Value: "2"},
			"expiresAt": &types.AttributeValueMemberN{Value: strconv.FormatInt(d.AddDate(0, 0, 8).Unix(), 10)}}
	}
	tn := f.kit.Tenant("t1", nil)
	for _, d := range []string{"2026-09-24", "2026-09-25"} {
		if err := tn.Put(ctx, limit(d), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := tn.Delete(ctx, kit.Key{PK: pk, SK: keys.Limit("2026-09-25")}, nil); err != nil {
		t.Fatal(err)
	}
	f.clock.Set(time.Date(2026, 10, 2, 12, 0, 0, 0, time.UTC)) // 2026-09-24 + 8 days has passed
	if n, err := f.srv.Store.SweepExpired(); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v, want one item", n, err)
	}
	rep, err := f.consumer(t, "a", &memPub{}, &memDead{}).Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Archived != 1 {
		t.Errorf("archived %d, want 1", rep.Archived)
	}
	arch := f.archive.Tenant("t1", nil)
	got, err := arch.Get(ctx, kit.Key{PK: pk, SK: keys.Limit("2026-09-24")}, true)
	if err != nil || got == nil || s(got, "type") != "LIMIT" || s(got, "archivedAt") == "" {
		t.Fatalf("archived TTL item: %v %v", got, err)
	}
	if got, err := arch.Get(ctx, kit.Key{PK: pk, SK: keys.Limit("2026-09-25")}, true); err != nil || got != nil {
		t.Fatalf("a user delete was archived: %v %v", got, err)
	}
	if got, err := tn.Get(ctx, kit.Key{PK: pk, SK: keys.Limit("2026-09-24")}, true); err != nil || got != nil {
		t.Fatalf("swept item still in the table: %v %v", got, err)
	}
}

// TestRunKeepsItsLeaseWhileIdleAndLetsGoWhenStopped: an idle Run writes
// nothing pass after pass (it keeps its lease instead of taking and
// releasing it, which would be writes, hence records, every poll); a
// second consumer finds the shard busy meanwhile, and takes it at once
// when the first stops.
func TestRunKeepsItsLeaseWhileIdleAndLetsGoWhenStopped(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.putNotes(t, "C-1", 0, 3)
	pub := &memPub{}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	a := f.consumer(t, "a", pub, &memDead{})
	go func() { done <- a.Run(ctx) }()
	for len(pub.all()) < 3 {
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let a's first passes settle
	before := f.records(t)
	time.Sleep(300 * time.Millisecond) // ~60 polls of 5 ms
	if idle := f.records(t) - before; idle > 1 {
		t.Errorf("an idle consumer wrote %d records in 300 ms, want at most a renewal", idle)
	}
	b := f.consumer(t, "b", &memPub{}, &memDead{})
	if rep, err := b.Pass(context.Background()); err != nil || rep.Busy != 1 {
		t.Fatalf("b's pass while a runs: %+v %v, want the shard busy", rep, err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f.putNotes(t, "C-1", 3, 1)
	pubB := &memPub{}
	if _, err := f.consumer(t, "b", pubB, &memDead{}).Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ns(pubB.all()); !slices.Equal(got, []string{"3"}) {
		t.Fatalf("b after a stopped: %v, want note 3 only (no lease to wait for)", got)
	}
}

// records counts the records the table's stream holds.
func (f *fixture) records(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	s, err := f.streams.Latest(ctx, "lastro")
	if err != nil {
		t.Fatal(err)
	}
	shards, err := f.streams.Shards(ctx, s.ARN)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sh := range shards {
		it, err := f.streams.Iterator(ctx, s.ARN, sh.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		for it != "" {
			recs, next, err := f.streams.Records(ctx, it, 1000)
			if err != nil {
				t.Fatal(err)
			}
			n += len(recs)
			if len(recs) == 0 {
				break
			}
			it = next
		}
	}
	return n
}

// TestDrainGivesUpOnAShardAnotherConsumerKeeps: while a Run keeps its
// lease, a Drain elsewhere ends with ErrBusy after two leases' time
// instead of waiting forever.
func TestDrainGivesUpOnAShardAnotherConsumerKeeps(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.putNotes(t, "C-1", 0, 1)
	pub := &memPub{}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- f.consumer(t, "a", pub, &memDead{}).Run(ctx) }()
	for len(pub.all()) < 1 {
		time.Sleep(2 * time.Millisecond)
	}
	// The lease clock runs fast (200 ms every 5 ms): a renews at half
	// life, b sees the shard busy for two leases (20 s) within a second.
	tick := make(chan struct{})
	go func() {
		for {
			select {
			case <-tick:
				return
			case <-time.After(5 * time.Millisecond):
				f.lease.Advance(200 * time.Millisecond)
			}
		}
	}()
	defer close(tick)
	b := f.consumer(t, "b", &memPub{}, &memDead{})
	if _, err := b.Drain(context.Background()); !errors.Is(err, stream.ErrBusy) {
		t.Fatalf("drain beside a running consumer: %v, want ErrBusy", err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
