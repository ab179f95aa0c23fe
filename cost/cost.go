// Package cost measures what Lastro's business operations cost in
// DynamoDB capacity, and what the designs the seeds reject would cost
// instead: the catalogue of operations that lastro cost runs against a
// fresh engine (and CI runs as a test), the budgets of docs/design.md's
// capacity section, on-demand prices, and the partition-heat simulator.
//
// It drives the engine only through its HTTP API, as a client would, and
// reads capacity from a Meter the caller wires to the store (the embedded
// store's meter locally, CloudWatch's view on AWS), so it depends on no
// store and no service.
package cost

import (
	"maps"
	"slices"
)

// Units are read and write request units.
type Units struct {
	RRU float64 `json:"rru"`
	WRU float64 `json:"wru"`
}

// Add returns u + o.
func (u Units) Add(o Units) Units { return Units{u.RRU + o.RRU, u.WRU + o.WRU} }

// Sub returns u − o.
func (u Units) Sub(o Units) Units { return Units{u.RRU - o.RRU, u.WRU - o.WRU} }

// Capacity is what one table consumed: its own arm and each global
// secondary index apart, reads and writes apart.
type Capacity struct {
	Table   Units            `json:"table"`
	Indexes map[string]Units `json:"indexes,omitempty"`
}

// Sub returns c − o, index by index (an index o lacks counts from zero).
func (c Capacity) Sub(o Capacity) Capacity {
	out := Capacity{Table: c.Table.Sub(o.Table), Indexes: map[string]Units{}}
	for name, u := range c.Indexes {
		if d := u.Sub(o.Indexes[name]); d != (Units{}) {
			out.Indexes[name] = d
		}
	}
	return out
}

// Index is the units of one index (zero when untouched).
func (c Capacity) Index(name string) Units { return c.Indexes[name] }

// IndexTotal is the units of every index together.
func (c Capacity) IndexTotal() Units {
	var t Units
	for _, u := range c.Indexes {
		t = t.Add(u)
	}
	return t
}

// Total is the table and its indexes together: what the bill counts.
func (c Capacity) Total() Units { return c.Table.Add(c.IndexTotal()) }

// IndexNames are the indexes c touched, sorted.
func (c Capacity) IndexNames() []string { return slices.Sorted(maps.Keys(c.Indexes)) }

// Meter returns what the table has consumed so far (monotonic totals);
// the catalogue takes differences around each operation. It must count
// what failed conditional writes consumed too, as CloudWatch does: a
// duplicate webhook is not free.
type Meter func() Capacity

// Prices are on-demand request prices in US dollars per million units.
type Prices struct {
	Name    string
	PerMWRU float64
	PerMRRU float64
}

// OnDemand returns DynamoDB's on-demand list prices for the Standard
// table class in us-east-1 since the reduction of 1 November 2024, the
// figure the seed's section 5 uses ($0.625 per million write units);
// docs/performance.md#cost-per-business-operation says where they were
// checked.
func OnDemand() Prices { return Prices{Name: "on-demand us-east-1", PerMWRU: 0.625, PerMRRU: 0.125} }

// OnDemandBefore2024 are the on-demand prices before that reduction
// ($1.25 and $0.25 per million), still quoted by older material.
func OnDemandBefore2024() Prices {
	return Prices{Name: "on-demand us-east-1 before 2024-11", PerMWRU: 1.25, PerMRRU: 0.25}
}

// Dollars is what u costs at p.
func (p Prices) Dollars(u Units) float64 { return u.WRU/1e6*p.PerMWRU + u.RRU/1e6*p.PerMRRU }

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
