package stream_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"lastro/collections/kit"
	"lastro/stream"
)

// recounting returns a consumer that lists tenant t1 for the recount of
// the bucket counters, as serve wires it.
func (f *fixture) recounting(t *testing.T, owner string) *stream.Consumer {
	t.Helper()
	c, err := stream.New(stream.Config{Kit: f.kit, Streams: f.streams, Translate: note, Publisher: &memPub{}, DeadLetter: &memDead{},
		Owner: owner, Lease: 10 * time.Second, LeaseClock: f.lease, Clock: f.clock, Poll: 5 * time.Millisecond, Batch: 7,
		Tenants: func(context.Context) ([]string, error) { return []string{"t1"}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bucketWant is what the buckets of TestCountersAreRecounted... hold.
func (f *fixture) checkCounters(t *testing.T, want map[string]summary) {
	t.Helper()
	for b, w := range want {
		got, _ := f.summary(t, "t1", b)
		if got.Contracts < 0 || got.OutstandingCents < 0 {
			t.Errorf("%s: negative counters %+v", b, got)
		}
		if got != w {
			t.Errorf("%s: counters %+v, want %+v (what the bucket holds)", b, got, w)
		}
	}
}

// TestCountersStartedWithoutHistoryAreRecountedFromTheIndex: a month of
// portfolio built with no consumer running (the stream trims records
// after 24 hours); a consumer then started adds no deltas to nothing but
// counts the buckets from the portfolio index, and moves them by deltas
// after that.
func TestCountersStartedWithoutHistoryAreRecountedFromTheIndex(t *testing.T) {
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
	for i := range 5 {
		put(headerImg(fmt.Sprintf("C-%d", i), "D001_030", 1000))
	}
	for day := range 30 { // a month: every record of the first days is trimmed
		f.clock.Advance(24 * time.Hour)
		if day == 29 {
			put(headerImg("C-0", "D031_060", 1000)) // a move whose entry was trimmed
			put(headerImg("C-1", "", 0))            // a cure whose entry was trimmed
		}
	}
	c := f.recounting(t, "a")
	rep, err := c.Drain(bg)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Recounted {
		t.Error("the first drain did not recount the counters")
	}
	f.checkCounters(t, map[string]summary{"D001_030": {3, 3000}, "D031_060": {1, 1000}, "D061_090": {}, "D091_PLUS": {}})

	// From then on the counters move by deltas, exactly once.
	put(headerImg("C-2", "D061_090", 700))
	put(headerImg("C-9", "D001_030", 50))
	rep, err = f.recounting(t, "b").Drain(bg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Recounted {
		t.Error("a drain of a seeded stream recounted")
	}
	f.checkCounters(t, map[string]summary{"D001_030": {3, 2050}, "D031_060": {1, 1000}, "D061_090": {1, 700}, "D091_PLUS": {}})
}

// TestATrimmedCheckpointRecountsTheCounters: a consumer that read the
// stream, stopped for more than the stream's retention while contracts
// moved, finds its checkpoint trimmed: it recounts instead of applying
// only the moves it still sees (which would take a bucket below zero).
func TestATrimmedCheckpointRecountsTheCounters(t *testing.T) {
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
	put(headerImg("C-0", "D001_030", 1000))
	if _, err := f.recounting(t, "a").Drain(bg); err != nil {
		t.Fatal(err)
	}
	f.checkCounters(t, map[string]summary{"D001_030": {1, 1000}})
	put(headerImg("C-1", "D001_030", 500)) // read by nobody before it is trimmed
	f.clock.Advance(3 * 24 * time.Hour)
	put(headerImg("C-1", "D031_060", 500)) // moves out of a bucket the counters never saw it in
	put(headerImg("C-0", "", 0))           // cured
	rep, err := f.recounting(t, "b").Drain(bg)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Recounted {
		t.Error("a trimmed checkpoint did not recount the counters")
	}
	f.checkCounters(t, map[string]summary{"D001_030": {}, "D031_060": {1, 500}})
}
