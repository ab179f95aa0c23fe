package ddblocal_test

// Benchmarks of the store beside minidyn, both driven through the same AWS
// SDK v2 client over loopback HTTP, so the numbers include everything a
// caller pays: SDK marshalling, HTTP, JSON decoding and storage. Results
// and the commands that produce them are in docs/performance.md.
//
//	go test -run='^$' -bench=. -benchtime=2s ./ddblocal/

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	minidyn "github.com/truora/minidyn/server"

	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// benchWriters is the number of concurrent writers of the write benchmarks.
const benchWriters = 32

// benchStore starts one implementation behind an HTTP server and returns
// its endpoint. dir is a fresh data directory; stores without persistence
// ignore it.
type benchStore struct {
	name  string
	start func(tb testing.TB, dir string) string
}

var benchStores = []benchStore{
	{"ddblocal", func(tb testing.TB, dir string) string {
		return ddbtest.Start(tb, ddblocal.Options{Dir: dir}).URL
	}},
	// minidyn keeps everything in memory; it has no data directory.
	{"minidyn", func(tb testing.TB, dir string) string {
		hs := httptest.NewServer(minidyn.NewServer())
		tb.Cleanup(hs.Close)
		return hs.URL
	}},
}

// writeStores adds an in-memory ddblocal to the write benchmarks, which
// separates what durability (fsync) costs from what the request path costs.
var writeStores = append(benchStores[:1:1], benchStore{"ddblocal-mem", func(tb testing.TB, dir string) string {
	return ddbtest.Start(tb, ddblocal.Options{}).URL
}}, benchStores[1])

// benchClient returns an SDK client for endpoint whose connection pool
// keeps a connection per writer, so the benchmarks measure requests
// rather than TCP handshakes. Retries are off: every error is reported.
func benchClient(endpoint string) *dynamodb.Client {
	hc := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns = 4 * benchWriters
		t.MaxIdleConnsPerHost = 4 * benchWriters
	})
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		HTTPClient:  hc,
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	})
}

// createBenchTable creates table pk (S) / sk (N), optionally with a GSI
// gsi on gpk (S) / gsk (N).
func createBenchTable(tb testing.TB, c *dynamodb.Client, name string, gsi bool) {
	tb.Helper()
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeN},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange},
		},
	}
	if gsi {
		in.AttributeDefinitions = append(in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String("gpk"), AttributeType: types.ScalarAttributeTypeS},
			types.AttributeDefinition{AttributeName: aws.String("gsk"), AttributeType: types.ScalarAttributeTypeN})
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{
			IndexName: aws.String("gsi"),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("gpk"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("gsk"), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}}
	}
	if _, err := c.CreateTable(context.Background(), in); err != nil {
		tb.Fatalf("create table %s: %v", name, err)
	}
}

// benchItem is a typical small item (~250 bytes): keys, a GSI key pair and
// a few payload attributes.
func benchItem(pk string, sk int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk":     &types.AttributeValueMemberS{Value: pk},
		"sk":     &types.AttributeValueMemberN{Value: strconv.Itoa(sk)},
		"gpk":    &types.AttributeValueMemberS{Value: "status#" + strconv.Itoa(sk%7)},
		"gsk":    &types.AttributeValueMemberN{Value: strconv.Itoa(sk * 13)},
		"name":   &types.AttributeValueMemberS{Value: "customer " + pk},
		"email":  &types.AttributeValueMemberS{Value: pk + "@example.com"},
		"amount": &types.AttributeValueMemberN{Value: "1234.56"},
		"note":   &types.AttributeValueMemberS{Value: "the quick brown fox jumps over the lazy dog, twice over: the quick brown fox jumps over the lazy dog"},
		"tags":   &types.AttributeValueMemberSS{Value: []string{"a", "b", "c"}},
	}
}

// benchLoad fills table with n items in partitions of 10, using
// BatchWriteItem from a few concurrent loaders.
func benchLoad(tb testing.TB, c *dynamodb.Client, table string, n int) {
	tb.Helper()
	const perBatch, loaders = 25, 8
	batches := make(chan int)
	errs := make(chan error, loaders)
	var wg sync.WaitGroup
	for range loaders {
		wg.Go(func() {
			for first := range batches {
				var reqs []types.WriteRequest
				for i := first; i < min(first+perBatch, n); i++ {
					reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{
						Item: benchItem(benchPartition(i/10), i%10)}})
				}
				for len(reqs) > 0 {
					out, err := c.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{
						RequestItems: map[string][]types.WriteRequest{table: reqs}})
					if err != nil {
						errs <- err
						for range batches { // drain so the producer finishes
						}
						return
					}
					reqs = out.UnprocessedItems[table]
				}
			}
		})
	}
	for first := 0; first < n; first += perBatch {
		batches <- first
	}
	close(batches)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		tb.Fatalf("load %d items: %v", n, err)
	}
}

func benchPartition(p int) string { return fmt.Sprintf("p%07d", p) }

// BenchmarkQuery measures the latency of a Query reading one whole
// 10-item partition, with 10k and 100k items in the table. It reports p50
// and p99 in milliseconds and, at 100k, the ratio p50(100k)/p50(10k): a
// store whose Query cost grows with the table shows a ratio well above 1.
func BenchmarkQuery(b *testing.B) {
	for _, st := range benchStores {
		p50 := map[int]float64{}
		for _, n := range []int{10_000, 100_000} {
			var c *dynamodb.Client // loaded once, shared by every run of b.N
			b.Run(fmt.Sprintf("store=%s/items=%d", st.name, n), func(sb *testing.B) {
				if c == nil {
					// The store lives as long as the parent benchmark, so
					// the load is paid once rather than on each b.N round.
					c = benchClient(st.start(b, b.TempDir()))
					createBenchTable(sb, c, "query", false)
					benchLoad(sb, c, "query", n)
				}
				sb.ResetTimer()
				cpu := processCPU()
				lat := benchQueries(sb, c, n, sb.N, nil)
				sb.StopTimer()
				cpu = processCPU() - cpu
				q := benchPercentiles(lat)
				sb.ReportMetric(benchMS(q.p50), "p50-ms")
				sb.ReportMetric(benchMS(q.p99), "p99-ms")
				sb.ReportMetric(benchMS(cpu)/float64(sb.N), "cpu-ms/op")
				p50[n] = benchMS(q.p50)
				if n == 100_000 && p50[10_000] > 0 {
					sb.ReportMetric(p50[n]/p50[10_000], "p50-ratio")
				}
			})
		}
	}
}

// benchQueries runs k Queries of a random whole partition of a table of
// n items loaded by benchLoad, appends their latencies to lat and returns
// it.
func benchQueries(tb testing.TB, c *dynamodb.Client, n, k int, lat []time.Duration) []time.Duration {
	in := &dynamodb.QueryInput{
		TableName:              aws.String("query"),
		KeyConditionExpression: aws.String("pk = :p"),
	}
	for range k {
		in.ExpressionAttributeValues = map[string]types.AttributeValue{
			":p": &types.AttributeValueMemberS{Value: benchPartition(rand.IntN(n / 10))}}
		t0 := time.Now()
		out, err := c.Query(context.Background(), in)
		lat = append(lat, time.Since(t0))
		if err != nil {
			tb.Fatalf("query: %v", err)
		}
		if out.Count != 10 {
			tb.Fatalf("query returned %d items, want 10", out.Count)
		}
	}
	return lat
}

// BenchmarkQueryGrowth measures what BenchmarkQuery's p50-ratio measures,
// in a way a shared machine does not blur: both tables (10k and 100k
// items, each on its own persistent store) stay open and the Queries
// alternate between them in blocks of 100, so a change in the machine's
// load falls on both sizes alike instead of on whichever ran second. b.N
// is the number of Queries per size. It reports p50 and p99 per size and
// their ratios, 100k over 10k (docs/performance.md, "Query growth").
func BenchmarkQueryGrowth(b *testing.B) {
	sizes := []int{10_000, 100_000}
	var clients []*dynamodb.Client // loaded once, shared by every run of b.N
	b.Run("items=10000+100000", func(sb *testing.B) {
		if clients == nil {
			for _, n := range sizes {
				c := benchClient(ddbtest.Start(b, ddblocal.Options{Dir: b.TempDir()}).URL)
				createBenchTable(sb, c, "query", false)
				benchLoad(sb, c, "query", n)
				clients = append(clients, c)
			}
		}
		const block = 100
		lat := make([][]time.Duration, len(sizes))
		sb.ResetTimer()
		for done := 0; done < sb.N; done += block {
			for i, n := range sizes {
				lat[i] = benchQueries(sb, clients[i], n, min(block, sb.N-done), lat[i])
			}
		}
		sb.StopTimer()
		small, large := benchPercentiles(lat[0]), benchPercentiles(lat[1])
		sb.ReportMetric(benchMS(small.p50), "p50-10k-ms")
		sb.ReportMetric(benchMS(small.p99), "p99-10k-ms")
		sb.ReportMetric(benchMS(large.p50), "p50-100k-ms")
		sb.ReportMetric(benchMS(large.p99), "p99-100k-ms")
		sb.ReportMetric(float64(large.p50)/float64(small.p50), "p50-ratio")
		sb.ReportMetric(float64(large.p99)/float64(small.p99), "p99-ratio")
	})
}

// BenchmarkPutItem measures PutItem throughput with 32 concurrent writers
// on a persistent data directory (every acknowledged write is fsynced),
// into a table with one GSI.
func BenchmarkPutItem(b *testing.B) {
	for _, st := range writeStores {
		b.Run("store="+st.name, func(b *testing.B) {
			c := benchClient(st.start(b, b.TempDir()))
			createBenchTable(b, c, "puts", true)
			runWriters(b, func(w, i int) error {
				_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{
					TableName: aws.String("puts"),
					Item:      benchItem("w"+strconv.Itoa(w), i),
				})
				return err
			})
		})
	}
}

// BenchmarkTransactWriteItems measures three-action transactions (two
// counter updates and a conditional Put of a ledger row, as a transfer
// does) with 32 concurrent writers on a persistent data directory. Each
// writer works on its own items, so no transaction conflicts.
func BenchmarkTransactWriteItems(b *testing.B) {
	for _, st := range writeStores {
		b.Run("store="+st.name, func(b *testing.B) {
			c := benchClient(st.start(b, b.TempDir()))
			createBenchTable(b, c, "txns", true)
			runWriters(b, func(w, i int) error {
				pk := &types.AttributeValueMemberS{Value: "acct" + strconv.Itoa(w)}
				key := func(sk string) map[string]types.AttributeValue {
					return map[string]types.AttributeValue{"pk": pk, "sk": &types.AttributeValueMemberN{Value: sk}}
				}
				ledger := benchItem(pk.Value, 10+i)
				_, err := c.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{
					TransactItems: []types.TransactWriteItem{
						{Update: &types.Update{
							TableName:                 aws.String("txns"),
							Key:                       key("1"),
							UpdateExpression:          aws.String("ADD balance :minus, moves :one"),
							ExpressionAttributeValues: map[string]types.AttributeValue{":minus": &types.AttributeValueMemberN{Value: "-5"}, ":one": &types.AttributeValueMemberN{Value: "1"}},
						}},
						{Update: &types.Update{
							TableName:                 aws.String("txns"),
							Key:                       key("2"),
							UpdateExpression:          aws.String("ADD balance :plus, moves :one"),
							ExpressionAttributeValues: map[string]types.AttributeValue{":plus": &types.AttributeValueMemberN{Value: "5"}, ":one": &types.AttributeValueMemberN{Value: "1"}},
						}},
						{Put: &types.Put{
							TableName:           aws.String("txns"),
							Item:                ledger,
							ConditionExpression: aws.String("attribute_not_exists(pk)"),
						}},
					},
				})
				return err
			})
		})
	}
}

// runWriters runs b.N calls of op spread over benchWriters goroutines
// (op gets the writer number and a per-writer sequence number) and reports
// throughput, per-call latency percentiles and the CPU time each call
// costs the process (SDK client, HTTP and store together).
func runWriters(b *testing.B, op func(w, i int) error) {
	b.Helper()
	var next atomic.Int64
	var failed atomic.Pointer[error]
	lats := make([][]time.Duration, benchWriters)
	var wg sync.WaitGroup
	b.ResetTimer()
	start, cpu := time.Now(), processCPU()
	for w := range benchWriters {
		wg.Go(func() {
			for i := 0; next.Add(1) <= int64(b.N) && failed.Load() == nil; i++ {
				t0 := time.Now()
				err := op(w, i)
				lats[w] = append(lats[w], time.Since(t0))
				if err != nil {
					err = fmt.Errorf("writer %d op %d: %w", w, i, err)
					failed.CompareAndSwap(nil, &err)
				}
			}
		})
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), processCPU()-cpu
	b.StopTimer()
	if p := failed.Load(); p != nil {
		b.Fatal(*p)
	}
	q := benchPercentiles(slices.Concat(lats...))
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(benchMS(q.p50), "p50-ms")
	b.ReportMetric(benchMS(q.p99), "p99-ms")
	b.ReportMetric(benchMS(cpu)/float64(b.N), "cpu-ms/op")
}

type benchQuantiles struct{ p50, p99 time.Duration }

func benchPercentiles(lat []time.Duration) benchQuantiles {
	if len(lat) == 0 {
		return benchQuantiles{}
	}
	slices.Sort(lat)
	at := func(p int) time.Duration { return lat[min(len(lat)-1, len(lat)*p/100)] }
	return benchQuantiles{p50: at(50), p99: at(99)}
}

func benchMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
