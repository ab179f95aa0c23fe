package ddblocal

import (
	"sync"
	"testing"
	"time"

	"lastro/ddblocal/internal/storage"
)

// manualClock is a settable clock for internal tests.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *manualClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// storedRecords counts a table's stream records in storage, trimmed from
// the Streams API or not.
func storedRecords(t *testing.T, s *Store, tableID uint32) int {
	t.Helper()
	lo, hi := storage.RecordSpan(tableID)
	iter, err := s.db.NewIter(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for iter.First(); iter.Valid(); iter.Next() {
		n++
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRecordRetentionFollowsPITR: stream records are deleted from storage
// 24 hours after their write without point-in-time recovery, kept for the
// 35-day window with it, and deleted as soon as a trim runs after PITR is
// turned off; the Streams horizon moves at 24 hours either way.
func TestRecordRetentionFollowsPITR(t *testing.T) {
	t.Parallel()
	type step struct {
		advance time.Duration
		pitrOff bool // turn PITR off before the trim
		stored  int  // records left in storage after the trim
		visible bool // the first record still above the Streams horizon
	}
	cases := []struct {
		name  string
		pitr  bool
		steps []step
	}{
		{"without PITR", false, []step{
			{advance: 23 * time.Hour, stored: 1, visible: true},
			{advance: 2 * time.Hour, stored: 0},
		}},
		{"with PITR", true, []step{
			{advance: 25 * time.Hour, stored: 1},
			{advance: 33 * 24 * time.Hour, stored: 1},
			{advance: 3 * 24 * time.Hour, stored: 0},
		}},
		{"PITR turned off", true, []step{
			{advance: 3 * 24 * time.Hour, stored: 1},
			{pitrOff: true, stored: 0},
		}},
		{"PITR turned off within a day", true, []step{
			{advance: time.Hour, pitrOff: true, stored: 1, visible: true},
			{advance: 24 * time.Hour, stored: 0},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := &manualClock{now: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)}
			s, err := Open(Options{Now: clk.Now, TTLSweepInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			mustCall(t, s, "CreateTable", `{"TableName":"keep","BillingMode":"PAY_PER_REQUEST",
				"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],
				"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
				"StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_AND_OLD_IMAGES"}}`)
			setPITR := func(on bool) {
				b := `{"TableName":"keep","PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":false}}`
				if on {
					b = `{"TableName":"keep","PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":true}}`
				}
				mustCall(t, s, "UpdateContinuousBackups", b)
			}
			if tc.pitr {
				setPITR(true)
			}
			mustCall(t, s, "PutItem", `{"TableName":"keep","Item":{"pk":{"S":"a"}}}`)
			id := s.table("keep").def.Load().ID
			lo, _ := storage.RecordSpan(id)
			iter, err := s.db.NewIter(lo, nil)
			if err != nil {
				t.Fatal(err)
			}
			iter.First()
			first := storage.RecordSeq(iter.Key())
			if err := iter.Close(); err != nil {
				t.Fatal(err)
			}
			for i, st := range tc.steps {
				clk.Add(st.advance)
				if st.pitrOff {
					setPITR(false)
				}
				if err := s.trimStreams(); err != nil {
					t.Fatal(err)
				}
				if got := storedRecords(t, s, id); got != st.stored {
					t.Errorf("step %d: %d records stored, want %d", i, got, st.stored)
				}
				if got := s.horizonOf(id) <= first; got != st.visible {
					t.Errorf("step %d: record visible to Streams = %v, want %v (horizon %d, record %d)", i, got, st.visible, s.horizonOf(id), first)
				}
			}
		})
	}
}
