package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"lastro/ddblocal/internal/av"
)

// BenchmarkPartitionRead is BenchmarkQuery of the store's package
// (ddblocal/bench_test.go) without the HTTP, the SDK and the item codec:
// the same keys (a partition of 10 items of about 260 bytes) committed
// through the pipeline 25 at a time, then b.N reads of a random whole
// partition through a view, as a Query reads; compact=true first
// compacts everything into sstables, the shape of a store whose table
// outgrew its memtables long ago. Besides p50 and p99 it reports the
// engine's shape at that size (memtables, sstables, the block cache's hit
// rate during the reads) and logs Pebble's iterator statistics, which is
// how the Query growth from 10k to 100k items was explained
// (docs/performance.md, "Query growth").
//
//	go test -run='^$' -bench=PartitionRead -benchtime=50000x ./ddblocal/internal/storage/
func BenchmarkPartitionRead(b *testing.B) {
	part := func(p int) []byte { return AppendPartition(SpaceKey(1, 0), av.Str(fmt.Sprintf("p%07d", p))) }
	val := make([]byte, 260)
	for _, n := range []int{10_000, 100_000} {
		for _, compact := range []bool{false, true} {
			var d *DB // loaded once, shared by every run of b.N
			b.Run(fmt.Sprintf("items=%d/compact=%v", n, compact), func(sb *testing.B) {
				if d == nil {
					var err error
					if d, err = Open(Options{Dir: b.TempDir()}); err != nil {
						sb.Fatal(err)
					}
					b.Cleanup(func() { d.Close() })
					for first := 0; first < n; first += 25 {
						batch := d.NewBatch()
						for i := first; i < min(first+25, n); i++ {
							batch.Set(av.AppendKey(part(i/10), av.Num(fmt.Sprint(i%10))), val)
						}
						if err := d.Commit(batch, func() error { return nil }); err != nil {
							sb.Fatal(err)
						}
					}
					if compact {
						if err := d.db.Compact(context.Background(), []byte{0}, []byte{0xff}, true); err != nil {
							sb.Fatal(err)
						}
					}
				}
				before := d.db.Metrics().BlockCache
				lat := make([]time.Duration, 0, sb.N)
				var stats pebble.IteratorStats
				sb.ResetTimer()
				for range sb.N {
					p := part(rand.IntN(n / 10))
					t0 := time.Now()
					v := d.Acquire()
					it, err := v.NewIter(p, PrefixEnd(p))
					if err != nil {
						sb.Fatal(err)
					}
					k := 0
					for ok := it.First(); ok; ok = it.Next() {
						k++
					}
					s := it.it.Stats()
					stats.Merge(s)
					err = it.Close()
					v.Release()
					lat = append(lat, time.Since(t0))
					if err != nil || k != 10 {
						sb.Fatalf("read %d keys (%v), want 10", k, err)
					}
				}
				sb.StopTimer()
				m := d.db.Metrics()
				slices.Sort(lat)
				sb.ReportMetric(float64(lat[len(lat)/2])/1e3, "p50-µs")
				sb.ReportMetric(float64(lat[len(lat)*99/100])/1e3, "p99-µs")
				sb.ReportMetric(float64(m.MemTable.Count), "memtables")
				sb.ReportMetric(float64(m.Total().TablesCount), "sstables")
				if reads := (m.BlockCache.Hits - before.Hits) + (m.BlockCache.Misses - before.Misses); reads > 0 {
					sb.ReportMetric(float64(m.BlockCache.Hits-before.Hits)/float64(reads), "cache-hit-rate")
				}
				sb.Logf("%d items: %s", n, stats.String())
			})
		}
	}
}
