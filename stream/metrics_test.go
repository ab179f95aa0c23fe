package stream_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"lastro/stream"
)

type failingPub struct{ err error }

func (p failingPub) Publish(context.Context, []stream.Event) error { return p.err }

func TestMetricsCountPublishedFailedAndDead(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := stream.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.NewMetrics(reg); err == nil {
		t.Fatal("registered the collectors twice")
	}
	file := m.Instrument("file", stream.NewFileSink(filepath.Join(t.TempDir(), "ev.jsonl")))
	bad := m.Instrument("webhook", failingPub{errors.New("down")})
	evs := fixtureEvents(t)
	if err := file.Publish(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	if err := bad.Publish(context.Background(), evs); err == nil {
		t.Fatal("the failure was swallowed")
	}
	byType := map[string]float64{}
	for _, e := range evs {
		byType[e.Type]++
	}
	for _, typ := range stream.EventTypes() {
		if got := testutil.ToFloat64(m.Published.WithLabelValues("file", typ)); got != byType[typ] {
			t.Errorf("file %s: %v published, want %v", typ, got, byType[typ])
		}
		if got := testutil.ToFloat64(m.Published.WithLabelValues("webhook", typ)); got != 0 {
			t.Errorf("webhook %s counted %v though it failed", typ, got)
		}
	}
	if got := testutil.ToFloat64(m.Failures.WithLabelValues("webhook")); got != 1 {
		t.Errorf("webhook failures %v", got)
	}
	if got := testutil.ToFloat64(m.Failures.WithLabelValues("file")); got != 0 {
		t.Errorf("file failures %v", got)
	}
	if n := testutil.CollectAndCount(m.Latency); n != 2 {
		t.Errorf("%d latency series, want one per publisher", n)
	}
	dl := m.CountDead(stream.NewDeadLetterFile(filepath.Join(t.TempDir(), "dead.jsonl")))
	if err := dl.Dead(context.Background(), stream.Record{Sequence: "1"}, stream.ErrUndecodable); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(m.Dead); got != 1 {
		t.Errorf("dead %v", got)
	}
	// No label may name a tenant, debtor or contract.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, metric := range mf.GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() != "publisher" && l.GetName() != "type" {
					t.Errorf("%s has label %s", mf.GetName(), l.GetName())
				}
				if strings.Contains(l.GetValue(), tenantID) || strings.Contains(l.GetValue(), dk) || strings.Contains(l.GetValue(), cid) {
					t.Errorf("%s label %s=%s names a tenant, debtor or contract", mf.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}
