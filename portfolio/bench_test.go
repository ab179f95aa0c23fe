package portfolio_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"lastro/collections/calendar"
	"lastro/contract"
	"lastro/debtor"
	"lastro/engine/enginetest"
)

// BenchmarkPages measures the supervisor's portfolio page (AP05, a page
// of 100 of one bucket, largest first, cursor) and the operator's 360 page
// (AP01) over HTTP on the embedded store with a data directory (Pebble,
// synced commits, as lastro serve runs), with 10,000 debtors of one
// contract each, 60 % of them late across the four buckets. Seeding goes
// through the services on parallel goroutines, outside the timer. Each
// iteration is one request of each kind, from 8 concurrent clients;
// p50/p99 of each are reported (targets: portfolio p99 < 200 ms, 360 p99
// < 50 ms).
func BenchmarkPages(b *testing.B) {
	env, err := enginetest.Open(enginetest.DataDir(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer env.Close()
	tn, keys := env.Tenant(b, "t-bench")
	const n = 10_000
	today := calendar.Of(env.Clock.Now(), tn.Location)
	dks := make([]string, n)
	start := time.Now()
	var wg sync.WaitGroup
	work := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				r, err := env.Debtors.Register(bg, tn, debtor.RegisterInput{Document: env.CPF(), Name: "Pessoa Sintética"}, debtor.Actor{Role: "operator"})
				if err != nil {
					b.Error(err)
					return
				}
				dks[i] = r.DebtorKey
				// 40 % current, the rest 1–150 days late: every bucket.
				first := today.AddDays(10)
				if i%5 >= 2 {
					first = today.AddDays(-(1 + i%150))
				}
				in := contract.Input{ContractID: fmt.Sprintf("C-%05d", i), ProductCode: "CREDIARIO_12X",
					Installments: enginetest.Monthly(first.String(), 12, int64(50000+i%997*100), 5000)}
				if _, err := env.Contracts.Create(bg, tn, r.DebtorKey, in, contract.Actor{Role: "operator"}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if b.Failed() {
		return
	}
	b.Logf("seeded %d debtors and contracts in %v", n, time.Since(start).Round(time.Millisecond))

	get := func(path, key string) time.Duration {
		req, _ := http.NewRequest(http.MethodGet, env.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		t0 := time.Now()
		resp, err := env.HTTP.Do(req)
		if err != nil {
			b.Error(err)
			return 0
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Errorf("%s: %d", path, resp.StatusCode)
		}
		return time.Since(t0)
	}
	var mu sync.Mutex
	var pages, views []time.Duration
	buckets := []string{"D001_030", "D031_060", "D061_090", "D091_PLUS"}
	b.ResetTimer()
	next := make(chan int)
	var clients sync.WaitGroup
	for range 8 {
		clients.Go(func() {
			for i := range next {
				p := get("/v1/portfolio?limit=100&bucket="+buckets[i%len(buckets)], keys["supervisor"])
				v := get("/v1/debtors/"+dks[(i*7919)%n], keys["operator"])
				mu.Lock()
				pages, views = append(pages, p), append(views, v)
				mu.Unlock()
			}
		})
	}
	for i := range b.N {
		next <- i
	}
	close(next)
	clients.Wait()
	b.StopTimer()
	q := func(d []time.Duration, p float64) float64 {
		slices.Sort(d)
		if len(d) == 0 {
			return 0
		}
		return float64(d[min(len(d)-1, int(float64(len(d))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(q(pages, 0.50), "portfolio-p50-ms")
	b.ReportMetric(q(pages, 0.99), "portfolio-p99-ms")
	b.ReportMetric(q(views, 0.50), "360-p50-ms")
	b.ReportMetric(q(views, 0.99), "360-p99-ms")
}
