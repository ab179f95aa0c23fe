package ddblocal_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// BenchmarkBatchGetLarge: 64 concurrent BatchGetItems, each of 100 keys
// of 400 KB items (40 MB asked for, past DynamoDB's 16 MB response limit),
// sent as raw HTTP so that only the store's memory is measured (the
// bodies are read and discarded). It reports the peak heap in use
// (sampled every 5 ms), the bytes allocated per request and how the
// requests ended (issue 25, finding 4; docs/performance.md).
//
// Its sub-benchmarks Scan and Query send a Scan or a Query of the same
// table instead (1 MB pages of 400 KB items).
//
//	go test -run '^$' -bench BenchmarkBatchGetLarge -benchtime 64x ./ddblocal/
func BenchmarkBatchGetLarge(b *testing.B) {
	for _, c := range []struct{ name, op, body string }{
		{"BatchGetItem", "BatchGetItem", ""},
		{"Scan", "Scan", `{"TableName":"big"}`},
		{"Query", "Query", `{"TableName":"big","KeyConditionExpression":"PK = :k","ExpressionAttributeValues":{":k":{"S":"k007"}}}`},
	} {
		b.Run(c.name, func(b *testing.B) { benchLargeReads(b, c.op, c.body) })
	}
}

func benchLargeReads(b *testing.B, op, reqBody string) {
	srv := ddbtest.Start(b, ddblocal.Options{TTLSweepInterval: -1})
	c := srv.Client()
	if _, err := c.CreateTable(bg, &dynamodb.CreateTableInput{TableName: aws.String("big"), BillingMode: "PAY_PER_REQUEST",
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: "S"}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: "HASH"}}}); err != nil {
		b.Fatal(err)
	}
	blob := strings.Repeat("x", 400_000-20)
	var keys strings.Builder
	for i := range 100 {
		k := fmt.Sprintf("k%03d", i)
		if _, err := c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String("big"), Item: avmap{"PK": vS(k), "v": vS(blob)}}); err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			keys.WriteByte(',')
		}
		fmt.Fprintf(&keys, `{"PK":{"S":"%s"}}`, k)
	}
	body := []byte(`{"RequestItems":{"big":{"Keys":[` + keys.String() + `]}}}`)
	if reqBody != "" {
		body = []byte(reqBody)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func() (int, int64, error) {
		req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		if err != nil {
			return 0, 0, err
		}
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, 0, err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, n, err
	}
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var ok, throttled, other, bytesOut atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				status, n, err := post()
				switch {
				case err != nil:
					b.Error(err)
					return
				case status == 200:
					ok.Add(1)
					bytesOut.Add(n)
				case status == 400:
					throttled.Add(1)
				default:
					other.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(stop)
	<-sampled
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MB/op")
	if ok.Load() > 0 {
		b.ReportMetric(float64(bytesOut.Load())/float64(ok.Load())/(1<<20), "resp-MB")
	}
	b.ReportMetric(float64(throttled.Load()), "throttled")
	if other.Load() > 0 {
		b.Errorf("%d requests answered neither 200 nor 400", other.Load())
	}
}
