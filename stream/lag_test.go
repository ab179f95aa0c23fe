package stream_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"lastro/collections/clock"
	"lastro/stream"
)

func TestLagIsTheAgeOfTheNewestCommittedRecord(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	clk := clock.NewManual(t0)
	lag, err := stream.NewLag(reg, clk)
	if err != nil {
		t.Fatal(err)
	}
	lag.Observe(stream.Progress{Shard: "s1", Records: 3, Newest: t0.Add(-90 * time.Second)})
	lag.Observe(stream.Progress{Shard: "s1", Records: 2, Newest: t0.Add(-2 * time.Second)})
	if n, err := testutil.GatherAndCount(reg, "lastro_stream_lag_seconds"); err != nil || n != 1 {
		t.Fatalf("lag series: %d %v", n, err)
	}
	if got := testutil.ToFloat64(lagGauge(t, reg)); got != 2 {
		t.Errorf("lag %v s, want 2 (the newest record's age)", got)
	}
	if _, err := stream.NewLag(reg, clk); err == nil {
		t.Error("registering the lag twice succeeded")
	}
}

// lagGauge is the registry's lag gauge of shard s1.
func lagGauge(t *testing.T, reg *prometheus.Registry) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "lastro_stream_lag_seconds" {
			g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "x"})
			g.Set(mf.GetMetric()[0].GetGauge().GetValue())
			return g
		}
	}
	t.Fatal("no lag gauge")
	return nil
}
