package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestBenchScaleOutIsExactlyOnce runs lastro bench's scale-out at a small
// load: two lastro serve processes on one lastro ddb serve, every
// settlement delivered to both at once, the agenda's shards split between
// them. Each settlement must be applied once and each contract acted on
// once (benchWebhooks and benchAgenda fail otherwise). No timing is
// asserted: throughput is the command's, not a test's.
func TestBenchScaleOutIsExactlyOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	o := benchOptions{scenarios: []string{"settlement", "pix", "agenda"}, requests: 40, duration: 2 * time.Minute, clients: 4, debtors: 10, due: 40,
		dataDir: t.TempDir(), childEnv: []string{childEnv + "=1"}}
	var out, progress bytes.Buffer
	rep, err := benchStarted(ctx, o, 2, &out, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(rep.results) != 3 {
		t.Fatalf("results: %+v", rep.results)
	}
	for _, r := range rep.results {
		if !strings.Contains(r.exactlyOnce, "exactly once") {
			t.Errorf("%s: %q", r.name, r.exactlyOnce)
		}
		if r.allocs == 0 {
			t.Errorf("%s: the engines' allocations were not read", r.name)
		}
	}
	if err := printBench(&out, []benchReport{rep}); err != nil || !strings.Contains(out.String(), "2 lastro serve process(es)") {
		t.Errorf("print: %v\n%s", err, out.String())
	}
}

func TestBenchArguments(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"bench", "--target", "http://192.0.2.1:8080", "--admin-token", "x"}, {"bench", "--target", "ftp://127.0.0.1"},
		{"bench", "--target", "http://127.0.0.1:8080"}, {"bench", "--serve", "0"}, {"bench", "--serve", "1", "--target", "http://127.0.0.1:1"},
		{"bench", "--scenarios", "nope"}, {"bench", "--requests", "0"}, {"bench", "--duration", "1ms"}, {"bench", "--clients", "0"},
		{"bench", "--debtors", "1"}, {"bench", "extra"}} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestProfilingStaysOnLoopback(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:6060", "nonsense"} {
		if _, err := serveProfiling(addr, nil); err == nil {
			t.Errorf("%s: served", addr)
		}
	}
}
