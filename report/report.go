// Package report answers the analytical questions AP11 and AP12 — the
// portfolio's aging by delinquency bucket and the month-over-month roll
// rate — from a table export, never from the operational table
// (docs/design.md#ap11-and-ap12-analytics: analytics never scan the table
// that serves the operation). ReadExport turns an export's files into positions; Aging
// and RollRate are pure functions of positions; Write* render them as a
// table, CSV and SVG.
package report

import (
	"fmt"
	"slices"
	"strings"

	"lastro/contract/regua"
)

// States a contract can be in, in report order. The delinquency buckets
// are regua's; CURRENT is an open contract with nothing overdue.
const (
	StateCurrent    = "CURRENT"
	StateAgreement  = "IN_AGREEMENT"
	StateSettled    = "SETTLED"
	StateWrittenOff = "WRITTEN_OFF"
	StateNew        = "NEW"  // roll rate: not in the previous export
	StateGone       = "GONE" // roll rate: not in the current export
)

// States is the order of rows and columns.
var States = []string{StateCurrent, regua.BucketD001_030, regua.BucketD031_060, regua.BucketD061_090, regua.BucketD091_PLUS,
	StateAgreement, StateSettled, StateWrittenOff}

// Position is one contract as of an export's date: its state derived on
// that date and its outstanding balance. It carries no personal data.
type Position struct {
	TenantID         string
	ContractID       string
	State            string
	DaysPastDue      int
	OutstandingCents int64
}

// key identifies a contract across exports.
func (p Position) key() string { return p.TenantID + "\x00" + p.ContractID }

// AgingRow is one state of the aging.
type AgingRow struct {
	State        string
	Contracts    int
	BalanceCents int64
}

// Aging is the portfolio distributed by state on one date.
type Aging struct {
	Rows              []AgingRow // every state of States, in order, then any other
	Contracts         int
	BalanceCents      int64
	DelinquentCents   int64 // balance in the delinquency buckets
	DelinquentRatePPM int64 // DelinquentCents / BalanceCents, parts per million
}

// NewAging aggregates positions.
func NewAging(ps []Position) Aging {
	byState := map[string]*AgingRow{}
	for _, s := range States {
		byState[s] = &AgingRow{State: s}
	}
	var a Aging
	for _, p := range ps {
		r := byState[p.State]
		if r == nil {
			r = &AgingRow{State: p.State}
			byState[p.State] = r
		}
		r.Contracts++
		r.BalanceCents += p.OutstandingCents
		a.Contracts++
		a.BalanceCents += p.OutstandingCents
		if delinquent(p.State) {
			a.DelinquentCents += p.OutstandingCents
		}
	}
	for _, s := range orderedStates(byState) {
		a.Rows = append(a.Rows, *byState[s])
	}
	if a.BalanceCents > 0 {
		a.DelinquentRatePPM = a.DelinquentCents * 1_000_000 / a.BalanceCents
	}
	return a
}

func delinquent(state string) bool { return strings.HasPrefix(state, "D0") }

// orderedStates lists the keys of m: States first, the others sorted.
func orderedStates[V any](m map[string]V) []string {
	out := slices.Clone(States)
	var extra []string
	for s := range m {
		if !slices.Contains(States, s) {
			extra = append(extra, s)
		}
	}
	slices.Sort(extra)
	return append(out, extra...)
}

// RollRate is the matrix of contracts moving from a state in the previous
// export (row) to a state in the current one (column).
type RollRate struct {
	From, To []string         // row and column states, in order
	Counts   map[string]int   // "from\x00to" -> contracts
	Balance  map[string]int64 // "from\x00to" -> current balance in cents (previous for GONE)
	RowTotal map[string]int
}

// Count is the contracts that went from one state to another.
func (r RollRate) Count(from, to string) int { return r.Counts[from+"\x00"+to] }

// BalanceCents is the balance of the contracts that went from one state
// to another.
func (r RollRate) BalanceCents(from, to string) int64 { return r.Balance[from+"\x00"+to] }

// RatePPM is the share of the row's contracts that went to the column,
// in parts per million.
func (r RollRate) RatePPM(from, to string) int64 {
	n := r.RowTotal[from]
	if n == 0 {
		return 0
	}
	return int64(r.Count(from, to)) * 1_000_000 / int64(n)
}

// NewRollRate matches contracts of two exports by tenant and contract id.
func NewRollRate(previous, current []Position) RollRate {
	r := RollRate{Counts: map[string]int{}, Balance: map[string]int64{}, RowTotal: map[string]int{}}
	prev := make(map[string]Position, len(previous))
	for _, p := range previous {
		prev[p.key()] = p
	}
	from, to := map[string]bool{}, map[string]bool{}
	add := func(f, t string, cents int64) {
		from[f], to[t] = true, true
		r.Counts[f+"\x00"+t]++
		r.Balance[f+"\x00"+t] += cents
		r.RowTotal[f]++
	}
	seen := make(map[string]bool, len(current))
	for _, c := range current {
		seen[c.key()] = true
		f := StateNew
		if p, ok := prev[c.key()]; ok {
			f = p.State
		}
		add(f, c.State, c.OutstandingCents)
	}
	for _, p := range previous {
		if !seen[p.key()] {
			add(p.State, StateGone, p.OutstandingCents)
		}
	}
	for _, s := range orderedStates(from) {
		if from[s] || slices.Contains(States, s) {
			r.From = append(r.From, s)
		}
	}
	if from[StateNew] {
		r.From = slices.DeleteFunc(r.From, func(s string) bool { return s == StateNew })
		r.From = append(r.From, StateNew)
	}
	r.To = orderedStates(to)
	if to[StateGone] {
		r.To = slices.DeleteFunc(r.To, func(s string) bool { return s == StateGone })
		r.To = append(r.To, StateGone)
	}
	return r
}

// BRL renders cents as Brazilian reais: R$ 1.234,56 (negative: -R$ ...).
func BRL(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	units := fmt.Sprint(cents / 100)
	var b strings.Builder
	for i, c := range units {
		if i > 0 && (len(units)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	return fmt.Sprintf("%sR$ %s,%02d", sign, b.String(), cents%100)
}

// percent renders parts per million as a percentage with one decimal.
func percent(ppm int64) string {
	tenths := (ppm + 500) / 1000
	return fmt.Sprintf("%d,%d%%", tenths/10, tenths%10)
}
