package stream

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"lastro/collections/clock"
)

// Lag is the consumer's lag metric: the age of the newest record it has
// committed, per shard (a shard's id is a bounded label: a table has a
// handful open at a time). Its Observe is Config.Observe.
type Lag struct {
	age     *prometheus.GaugeVec
	records prometheus.Counter
	clock   clock.Clock
}

// NewLag registers the lag collectors on reg; the age is measured on clk
// (the wall clock: records carry the store's time).
func NewLag(reg prometheus.Registerer, clk clock.Clock) (*Lag, error) {
	l := &Lag{
		age: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "lastro", Subsystem: "stream", Name: "lag_seconds",
			Help: "Age of the newest stream record the consumer has checkpointed, per shard."}, []string{"shard"}),
		records: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "lastro", Subsystem: "stream", Name: "records_total",
			Help: "Stream records the consumer processed and checkpointed (its own bookkeeping excluded)."}),
		clock: clk,
	}
	for _, c := range []prometheus.Collector{l.age, l.records} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("stream lag metrics: %w", err)
		}
	}
	return l, nil
}

// Observe records one committed chunk. The age goes first: a scrape
// that sees a chunk's records counted then sees its shard's lag too.
func (l *Lag) Observe(p Progress) {
	if !p.Newest.IsZero() {
		l.age.WithLabelValues(p.Shard).Set(max(0, l.clock.Now().Sub(p.Newest).Seconds()))
	}
	l.records.Add(float64(p.Records))
}
