package report

import (
	"strings"
	"testing"
)

func TestAging(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		ps        []Position
		state     string
		contracts int
		cents     int64
		ratePPM   int64
	}{
		{"empty", nil, StateCurrent, 0, 0, 0},
		{"one late", []Position{{ContractID: "a", State: "D001_030", OutstandingCents: 1000}}, "D001_030", 1, 1000, 1_000_000},
		{"mixed", []Position{
			{ContractID: "a", State: "D001_030", OutstandingCents: 1000},
			{ContractID: "b", State: "D031_060", OutstandingCents: 3000},
			{ContractID: "c", State: StateCurrent, OutstandingCents: 6000},
			{ContractID: "d", State: "D031_060", OutstandingCents: 500},
		}, "D031_060", 2, 3500, 428_571}, // (1000+3500) of 10500
		{"settled counts, is not delinquent", []Position{{ContractID: "a", State: StateSettled}, {ContractID: "b", State: StateCurrent, OutstandingCents: 10}}, StateSettled, 1, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := NewAging(tc.ps)
			if len(a.Rows) < len(States) || a.Rows[0].State != StateCurrent {
				t.Fatalf("rows %+v: every state, CURRENT first", a.Rows)
			}
			var got AgingRow
			for _, r := range a.Rows {
				if r.State == tc.state {
					got = r
				}
			}
			if got.Contracts != tc.contracts || got.BalanceCents != tc.cents || a.DelinquentRatePPM != tc.ratePPM || a.Contracts != len(tc.ps) {
				t.Errorf("%s = %+v, delinquent %d ppm (total %d); want %d, %d cents, %d ppm", tc.state, got, a.DelinquentRatePPM, a.Contracts, tc.contracts, tc.cents, tc.ratePPM)
			}
		})
	}
}

func TestRollRate(t *testing.T) {
	t.Parallel()
	prev := []Position{
		{TenantID: "t", ContractID: "a", State: "D001_030", OutstandingCents: 100},
		{TenantID: "t", ContractID: "b", State: "D001_030", OutstandingCents: 200},
		{TenantID: "t", ContractID: "c", State: "D001_030", OutstandingCents: 300},
		{TenantID: "t", ContractID: "d", State: "D031_060", OutstandingCents: 400},
		{TenantID: "t", ContractID: "e", State: StateCurrent, OutstandingCents: 500},
		{TenantID: "u", ContractID: "a", State: StateCurrent, OutstandingCents: 1}, // same id, other tenant
	}
	cur := []Position{
		{TenantID: "t", ContractID: "a", State: "D031_060", OutstandingCents: 110},
		{TenantID: "t", ContractID: "b", State: StateCurrent, OutstandingCents: 150},
		{TenantID: "t", ContractID: "c", State: "D031_060", OutstandingCents: 330},
		{TenantID: "t", ContractID: "d", State: StateWrittenOff, OutstandingCents: 0},
		{TenantID: "t", ContractID: "f", State: "D001_030", OutstandingCents: 50},
		{TenantID: "u", ContractID: "a", State: StateCurrent, OutstandingCents: 1},
	}
	r := NewRollRate(prev, cur)
	cases := []struct {
		from, to string
		n        int
		ppm      int64
		cents    int64
	}{
		{"D001_030", "D031_060", 2, 666_666, 440},
		{"D001_030", StateCurrent, 1, 333_333, 150},
		{"D031_060", StateWrittenOff, 1, 1_000_000, 0},
		{StateCurrent, StateGone, 1, 500_000, 500},
		{StateCurrent, StateCurrent, 1, 500_000, 1},
		{StateNew, "D001_030", 1, 1_000_000, 50},
		{"D001_030", "D061_090", 0, 0, 0},
	}
	for _, tc := range cases {
		if n, ppm, c := r.Count(tc.from, tc.to), r.RatePPM(tc.from, tc.to), r.BalanceCents(tc.from, tc.to); n != tc.n || ppm != tc.ppm || c != tc.cents {
			t.Errorf("%s -> %s = %d (%d ppm, %d cents), want %d (%d ppm, %d cents)", tc.from, tc.to, n, ppm, c, tc.n, tc.ppm, tc.cents)
		}
	}
	if r.From[len(r.From)-1] != StateNew || r.To[len(r.To)-1] != StateGone {
		t.Errorf("NEW and GONE go last: rows %v, columns %v", r.From, r.To)
	}
}

func TestBRL(t *testing.T) {
	t.Parallel()
	for cents, want := range map[int64]string{0: "R$ 0,00", 5: "R$ 0,05", 123456: "R$ 1.234,56", 100000000: "R$ 1.000.000,00", -250: "-R$ 2,50"} {
		if got := BRL(cents); got != want {
			t.Errorf("BRL(%d) = %q, want %q", cents, got, want)
		}
	}
}

func TestRenderings(t *testing.T) {
	t.Parallel()
	a := NewAging([]Position{{ContractID: "a", State: "D031_060", OutstandingCents: 123456}})
	var b strings.Builder
	if err := WriteAgingTable(&b, a); err != nil || !strings.Contains(b.String(), "R$ 1.234,56") {
		t.Errorf("aging table %q, %v", b.String(), err)
	}
	b.Reset()
	if err := WriteAgingCSV(&b, a); err != nil || !strings.Contains(b.String(), "D031_060,1,123456\n") {
		t.Errorf("aging CSV %q, %v", b.String(), err)
	}
	if svg := AgingSVG(a, "aging <2026-09>"); !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, "aging &lt;2026-09&gt;") || strings.Count(svg, "<rect") != len(a.Rows) {
		t.Errorf("aging SVG %s", svg)
	}
	r := NewRollRate([]Position{{ContractID: "a", State: "D001_030"}}, []Position{{ContractID: "a", State: "D031_060", OutstandingCents: 7}})
	b.Reset()
	if err := WriteRollCSV(&b, r); err != nil || !strings.Contains(b.String(), "D001_030,D031_060,1,1,1000000,7\n") {
		t.Errorf("roll CSV %q, %v", b.String(), err)
	}
	if svg := RollSVG(r, "roll"); strings.Count(svg, "<rect") != len(r.From)*len(r.To) {
		t.Errorf("roll SVG has %d cells, want %d", strings.Count(svg, "<rect"), len(r.From)*len(r.To))
	}
}
