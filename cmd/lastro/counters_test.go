package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"
)

// TestCountersAfterAMonthWithTheStreamOff: a month of collections run
// with the stream consumer off (demo data, the agenda run on three days
// ten days apart, so its records are trimmed); serve then started with the
// consumer shows, for every bucket, counters equal to the contracts the
// bucket lists, never negative (ADR 0079).
func TestCountersAfterAMonthWithTheStreamOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := func(now string) map[string]string {
		return map[string]string{"LASTRO_DATA_DIR": dir, "LASTRO_NOW": now, "LASTRO_STREAM": "off"}
	}
	code, out, errOut := runChild(t, env("2026-10-01T12:00:00Z"), "demo", "seed", "--tenant", "t-cnt", "--debtors", "60", "--seed", "3")
	if code != 0 {
		t.Fatalf("demo seed: %d %s", code, errOut)
	}
	m := regexp.MustCompile(`(?m)^\s+supervisor\s+(\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no supervisor key in %s", out)
	}
	sup := m[1]
	for _, day := range []string{"2026-10-11", "2026-10-21", "2026-10-31"} {
		if code, _, errOut := runChild(t, env(day+"T12:00:00Z"), "worker", "--date", day); code != 0 {
			t.Fatalf("worker %s: %d %s", day, code, errOut)
		}
	}
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": dir, "LASTRO_NOW": "2026-11-02T12:00:00Z", "LASTRO_STREAM": "on",
		"LASTRO_SCHEDULER": "off", "LASTRO_ADMIN_TOKEN": testAdminToken})
	type page struct {
		Items []struct {
			OutstandingCents int64 `json:"outstandingCents"`
		} `json:"items"`
		NextCursor *string `json:"nextCursor"`
		Summary    *struct {
			Contracts        int64 `json:"contracts"`
			OutstandingCents int64 `json:"outstandingCents"`
		} `json:"summary"`
	}
	get := func(bucket, cursor string) page {
		t.Helper()
		q := url.Values{"bucket": {bucket}, "limit": {"100"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		req, _ := http.NewRequest(http.MethodGet, "http://"+s.addr+"/v1/portfolio?"+q.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+sup)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("portfolio %s: %d", bucket, resp.StatusCode)
		}
		var p page
		if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	listed := 0
	for _, b := range []string{"D001_030", "D031_060", "D061_090", "D091_PLUS"} {
		var first page
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if first = get(b, ""); first.Summary != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no counters after the consumer started", b)
			}
		}
		var n, cents int64
		for p := first; ; {
			for _, it := range p.Items {
				n++
				cents += it.OutstandingCents
			}
			if p.NextCursor == nil {
				break
			}
			p = get(b, *p.NextCursor)
		}
		listed += int(n)
		sum := first.Summary
		if sum.Contracts < 0 || sum.OutstandingCents < 0 {
			t.Errorf("%s: negative counters %+v", b, *sum)
		}
		if sum.Contracts != n || sum.OutstandingCents != cents {
			t.Errorf("%s: counters %d contracts, %d cents; the bucket lists %d, %d", b, sum.Contracts, sum.OutstandingCents, n, cents)
		}
	}
	if listed == 0 {
		t.Fatal("no delinquent contract in any bucket: the test proves nothing")
	}
}
