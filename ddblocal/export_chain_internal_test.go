package ddblocal

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	rand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lastro/ddblocal/internal/backup"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/storage"
)

// fastClock runs ten seconds of store time per real millisecond from
// base, monotonically: incremental windows (15 minutes to 24 hours) then
// fit in a test, even a slow one, and the clock still separates commits
// by millisecond as a real one does.
type fastClock struct {
	base  time.Time
	start time.Time
}

func (c fastClock) Now() time.Time { return c.base.Add(time.Since(c.start) * 10_000) }

// wireImage is an image of the chain test's items: strings and numbers.
type wireImage map[string]map[string]string

func (w wireImage) String() string {
	if w == nil {
		return "-"
	}
	keys := slices.Sorted(maps.Keys(w))
	var b strings.Builder
	for _, k := range keys {
		for t, v := range w[k] {
			fmt.Fprintf(&b, "%s:%s=%s ", k, t, v)
		}
	}
	return b.String()
}

// exportLines reads every data line of a completed export.
func exportLines(t *testing.T, s *Store, arn string) []map[string]wireImage {
	t.Helper()
	dir, err := s.ExportDir(arn)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "data", "*.json.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("export %s has no data files (%v)", arn, err)
	}
	var out []map[string]wireImage
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(z)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l map[string]wireImage
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out = append(out, l)
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return out
}

// waitExport waits for an export to complete (bounded: a hang fails).
func waitExport(t *testing.T, s *Store, arn string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		d := mustCall(t, s, "DescribeExport", `{"ExportArn":"`+arn+`"}`)["ExportDescription"].(map[string]any)
		switch d["ExportStatus"] {
		case backup.ExportCompleted:
			return d
		case backup.ExportFailed:
			t.Fatalf("export %s failed: %v", arn, d["FailureMessage"])
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("export %s did not complete within 30 s", arn)
	return nil
}

// historyAt rebuilds the table from its stored stream records: every
// change stamped at or before at (Unix ms), in commit order.
func historyAt(t *testing.T, s *Store, tableID uint32, at int64) map[string]string {
	t.Helper()
	lo, hi := storage.RecordSpan(tableID)
	iter, err := s.eng.DB.NewIter(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	defer iter.Close()
	table := map[string]string{}
	for iter.First(); iter.Valid(); iter.Next() {
		v := iter.Value()
		if int64(binary.BigEndian.Uint64(v[:8])) > at {
			continue
		}
		var r struct {
			Dynamodb struct {
				Keys     wireImage `json:"Keys"`
				NewImage wireImage `json:"NewImage"`
			} `json:"dynamodb"`
		}
		if err := json.Unmarshal(v[8:], &r); err != nil {
			t.Fatal(err)
		}
		k := r.Dynamodb.Keys["PK"]["S"]
		if r.Dynamodb.NewImage == nil {
			delete(table, k)
		} else {
			table[k] = r.Dynamodb.NewImage.String()
		}
	}
	if err := iter.Error(); err != nil {
		t.Fatal(err)
	}
	return table
}

// fullExport starts a full export of now and returns its ARN and
// ExportTime (Unix ms).
func fullExport(t *testing.T, s *Store, arn string) (string, int64) {
	t.Helper()
	d := mustCall(t, s, "ExportTableToPointInTime", `{"TableArn":"`+arn+`","S3Bucket":"chain"}`)["ExportDescription"].(map[string]any)
	return d["ExportArn"].(string), int64(d["ExportTime"].(float64)*1000 + 0.5)
}

func diffTables(got, want map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			out = append(out, fmt.Sprintf("%s: got %q, want %q", k, got[k], want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s: got %q, want absent", k, got[k]))
		}
	}
	return out
}

// TestExportChainWithConcurrentWriters: with writers running during the
// exports, each full export is the table rebuilt from its history at the
// ExportTime it reports, and a full export at Ta chained with the
// incremental export [Ta, Tb) equals the full export at Tb, item for
// item (issue 25, finding 1; ADR 0059). Before, ExportTime was the
// request's clock while the data came from the last published view, so
// commits stamped before the instant but not yet published were missing
// and ones stamped after it present.
func TestExportChainWithConcurrentWriters(t *testing.T) {
	t.Parallel()
	clk := fastClock{base: time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC), start: time.Now()}
	s, err := Open(engine.Options{Dir: t.TempDir(), ExportDir: t.TempDir(), Now: clk.Now, TTLSweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustCall(t, s, "CreateTable", `{"TableName":"chain","BillingMode":"PAY_PER_REQUEST",
		"AttributeDefinitions":[{"AttributeName":"PK","AttributeType":"S"}],
		"KeySchema":[{"AttributeName":"PK","KeyType":"HASH"}],
		"StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_AND_OLD_IMAGES"}}`)
	mustCall(t, s, "UpdateContinuousBackups", `{"TableName":"chain","PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":true}}`)
	tarn := s.eng.TableARN("chain")
	tableID := s.eng.Table("chain").Def.Load().ID

	var stop atomic.Bool
	var wg sync.WaitGroup
	var writes atomic.Int64
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 25))
			for n := 0; !stop.Load(); n++ {
				k := fmt.Sprintf("k%02d", r.IntN(40))
				var err error
				if r.IntN(4) == 0 {
					_, err = call(t, s, "DeleteItem", `{"TableName":"chain","Key":{"PK":{"S":"`+k+`"}}}`)
				} else {
					_, err = call(t, s, "PutItem", fmt.Sprintf(`{"TableName":"chain","Item":{"PK":{"S":"%s"},"v":{"N":"%d"},"w":{"N":"%d"}}}`, k, n, w))
				}
				if err != nil {
					t.Error(err)
					return
				}
				writes.Add(1)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	arnA, ta := fullExport(t, s, tarn)
	time.Sleep(150 * time.Millisecond) // 25 minutes of store time
	arnB, tb := fullExport(t, s, tarn)
	inc := mustCall(t, s, "ExportTableToPointInTime", fmt.Sprintf(`{"TableArn":"%s","S3Bucket":"chain","ExportType":"INCREMENTAL_EXPORT",
		"IncrementalExportSpecification":{"ExportFromTime":%.3f,"ExportToTime":%.3f}}`, tarn, float64(ta)/1000, float64(tb)/1000))
	arnI := inc["ExportDescription"].(map[string]any)["ExportArn"].(string)
	time.Sleep(20 * time.Millisecond) // writes after the exports' instants
	stop.Store(true)
	wg.Wait()
	if writes.Load() < 50 {
		t.Fatalf("only %d writes ran during the exports", writes.Load())
	}

	table := func(arn string) map[string]string {
		waitExport(t, s, arn)
		out := map[string]string{}
		for _, l := range exportLines(t, s, arn) {
			out[l["Item"]["PK"]["S"]] = l["Item"].String()
		}
		return out
	}
	fullA, fullB := table(arnA), table(arnB)
	for _, c := range []struct {
		name string
		got  map[string]string
		at   int64
	}{{"A", fullA, ta}, {"B", fullB, tb}} {
		if d := diffTables(c.got, historyAt(t, s, tableID, c.at)); len(d) > 0 {
			t.Errorf("full export %s differs from the table at its ExportTime %d: %v", c.name, c.at, d)
		}
	}
	waitExport(t, s, arnI)
	chained := maps.Clone(fullA)
	for _, l := range exportLines(t, s, arnI) {
		k := l["Keys"]["PK"]["S"]
		if l["NewImage"] == nil {
			delete(chained, k)
		} else {
			chained[k] = l["NewImage"].String()
		}
	}
	if d := diffTables(chained, fullB); len(d) > 0 {
		t.Errorf("full(Ta) + incremental[Ta, Tb) != full(Tb): %v", d)
	}
}
