package stream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the stream's Prometheus collectors, registered on the
// registry the caller owns (the engine's, served at /metrics). Labels are
// bounded: the publisher's name and the event type, never a tenant (their
// number grows with the business, and each would multiply every series),
// a debtor or a contract (ADR 0046).
type Metrics struct {
	Published *prometheus.CounterVec   // events accepted, by publisher and type
	Failures  *prometheus.CounterVec   // batches not accepted, by publisher
	Latency   *prometheus.HistogramVec // seconds per Publish call, by publisher
	Dead      prometheus.Counter       // records sent to the dead letter
	// DeadEvents counts the events a publisher gave up on, kept in the
	// events dead letter (a tenant's failing webhook, ADR 0050).
	DeadEvents prometheus.Counter
}

// NewMetrics creates the stream's collectors and registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Published: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "lastro", Subsystem: "stream", Name: "events_published_total",
			Help: "Domain events accepted by a publisher."}, []string{"publisher", "type"}),
		Failures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "lastro", Subsystem: "stream", Name: "publish_failures_total",
			Help: "Publish calls that returned an error (the batch is retried whole)."}, []string{"publisher"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "lastro", Subsystem: "stream", Name: "publish_duration_seconds",
			Help: "Duration of a Publish call, retries included.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 9)}, []string{"publisher"}),
		Dead: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "lastro", Subsystem: "stream", Name: "dead_records_total",
			Help: "Stream records the translator could not decode, kept in the dead letter."}),
		DeadEvents: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "lastro", Subsystem: "stream", Name: "dead_events_total",
			Help: "Domain events a publisher gave up on (a tenant's failing webhook), kept in the events dead letter."}),
	}
	for _, c := range []prometheus.Collector{m.Published, m.Failures, m.Latency, m.Dead, m.DeadEvents} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("stream metrics: %w", err)
		}
	}
	return m, nil
}

// Prepare makes the series of publisher name start at zero, for a
// publisher that counts itself (Webhook.Metrics).
func (m *Metrics) Prepare(name string) {
	for _, typ := range EventTypes() {
		m.Published.WithLabelValues(name, typ)
	}
	m.Failures.WithLabelValues(name)
}

// Instrument wraps p so its calls are counted under the name given (a
// fixed name per publisher: kafka, eventbridge, file; Webhook uses Prepare).
func (m *Metrics) Instrument(name string, p Publisher) Publisher {
	// Every known type starts at zero, so a rate over a type that has not
	// happened yet is 0, not absent.
	m.Prepare(name)
	return &instrumented{m: m, name: name, next: p}
}

type instrumented struct {
	m    *Metrics
	name string
	next Publisher
}

func (p *instrumented) Publish(ctx context.Context, events []Event) error {
	start := time.Now()
	err := p.next.Publish(ctx, events)
	p.m.Latency.WithLabelValues(p.name).Observe(time.Since(start).Seconds())
	if err != nil {
		p.m.Failures.WithLabelValues(p.name).Inc()
		return err
	}
	for _, e := range events {
		p.m.Published.WithLabelValues(p.name, e.Type).Inc()
	}
	return nil
}

// CountDead wraps a dead letter so the records it keeps are counted.
func (m *Metrics) CountDead(d deadKeeper) *CountingDeadLetter {
	return &CountingDeadLetter{m: m, next: d}
}

// CountingDeadLetter is a dead letter whose kept records are counted.
type CountingDeadLetter struct {
	m    *Metrics
	next deadKeeper
}

// deadKeeper is what keeps a poison record (DeadLetterFile).
type deadKeeper interface {
	Dead(ctx context.Context, r Record, cause error) error
}

// Dead passes the record on and counts it once kept.
func (d *CountingDeadLetter) Dead(ctx context.Context, r Record, cause error) error {
	if d.next == nil {
		return errors.New("stream: no dead letter")
	}
	if err := d.next.Dead(ctx, r, cause); err != nil {
		return err
	}
	d.m.Dead.Inc()
	return nil
}
