package ddblocal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
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
	iter, err := s.eng.DB.NewIter(lo, hi)
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
			s, err := Open(engine.Options{Now: clk.Now, TTLSweepInterval: -1})
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
			id := s.eng.Table("keep").Def.Load().ID
			lo, _ := storage.RecordSpan(id)
			iter, err := s.eng.DB.NewIter(lo, nil)
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
				if err := s.eng.TrimStreams(); err != nil {
					t.Fatal(err)
				}
				if got := storedRecords(t, s, id); got != st.stored {
					t.Errorf("step %d: %d records stored, want %d", i, got, st.stored)
				}
				if got := s.eng.HorizonOf(id) <= first; got != st.visible {
					t.Errorf("step %d: record visible to Streams = %v, want %v (horizon %d, record %d)", i, got, st.visible, s.eng.HorizonOf(id), first)
				}
			}
		})
	}
}

// TestLegacyHorizonBoundsExports: a store that trimmed its records at 24
// hours before keeping the PITR window persisted the horizon alone. After
// an upgrade its PITR is older than its history, so exports must start no
// earlier than the first record left rather than silently miss changes.
func TestLegacyHorizonBoundsExports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := &manualClock{now: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)}
	opts := engine.Options{Dir: dir, Now: clk.Now, TTLSweepInterval: -1}
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	mustCall(t, s, "CreateTable", `{"TableName":"keep","BillingMode":"PAY_PER_REQUEST",
		"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],
		"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
		"StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_AND_OLD_IMAGES"}}`)
	mustCall(t, s, "UpdateContinuousBackups", `{"TableName":"keep","PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":true}}`)
	clk.Add(time.Hour)
	old := clk.Now()
	mustCall(t, s, "PutItem", `{"TableName":"keep","Item":{"pk":{"S":"old"}}}`)
	clk.Add(3 * 24 * time.Hour)
	kept := clk.Now()
	mustCall(t, s, "PutItem", `{"TableName":"keep","Item":{"pk":{"S":"kept"}}}`)
	clk.Add(time.Hour)
	// What the 24-hour trim of an older store left: the first record
	// deleted and an 8-byte horizon.
	id := s.eng.Table("keep").Def.Load().ID
	lo, hi := storage.RecordSpan(id)
	iter, err := s.eng.DB.NewIter(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	iter.First()
	iter.Next()
	second := storage.RecordSeq(iter.Key())
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	b := s.eng.DB.NewBatch()
	b.DeleteRange(lo, storage.RecordKey(id, second))
	b.Set(storage.HorizonKey(id), binary.BigEndian.AppendUint64(nil, second))
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	window := func(from time.Time) string {
		return fmt.Sprintf(`{"TableArn":%q,"S3Bucket":"bkt","ExportType":"INCREMENTAL_EXPORT",
			"IncrementalExportSpecification":{"ExportFromTime":%d,"ExportToTime":%d}}`,
			s.eng.TableARN("keep"), from.Unix(), from.Add(30*time.Minute).Unix())
	}
	_, err = call(t, s, "ExportTableToPointInTime", window(old.Add(-10*time.Minute)))
	var ae *wire.APIError
	if !errors.As(err, &ae) || ae.Type != "InvalidExportTimeException" || !strings.Contains(ae.Message, kept.Format(time.RFC3339Nano)) {
		t.Errorf("export of a window whose records are gone: %v, want InvalidExportTimeException from %s", err, kept.Format(time.RFC3339Nano))
	}
	if _, err := call(t, s, "ExportTableToPointInTime", window(kept)); err != nil {
		t.Errorf("export from the first record left: %v", err)
	}
}
