package ui

import (
	"strings"
	"testing"
	"time"

	"lastro/report"
	"lastro/worklist"
)

// TestRollSeriesAndChart: three monthly exports give two months of roll
// rates for the tenant (another tenant's contracts do not count), drawn
// as one line per transition.
func TestRollSeriesAndChart(t *testing.T) {
	t.Parallel()
	pos := func(tenant, id, state string) report.Position {
		return report.Position{TenantID: tenant, ContractID: id, State: state, OutstandingCents: 100}
	}
	month := func(m time.Month, ps ...report.Position) *report.Export {
		return &report.Export{ExportTime: time.Date(2026, m, 30, 23, 0, 0, 0, time.UTC), Positions: ps}
	}
	exports := []*report.Export{
		month(8, pos("t", "A", "CURRENT"), pos("t", "B", "CURRENT"), pos("t", "C", "D001_030"), pos("t", "D", "D001_030"), pos("x", "Z", "D001_030")),
		month(9, pos("t", "A", "D001_030"), pos("t", "B", "CURRENT"), pos("t", "C", "D031_060"), pos("t", "D", "CURRENT"), pos("x", "Z", "D031_060")),
		month(10, pos("t", "A", "D031_060"), pos("t", "B", "CURRENT"), pos("t", "C", "D061_090"), pos("t", "D", "CURRENT")),
	}
	pts := rollSeries(exports, "t")
	if len(pts) != 2 || pts[0].Month != "09/2026" || pts[1].Month != "10/2026" {
		t.Fatalf("points %+v", pts)
	}
	// September: 1 of 2 current entered 1–30; 1 of 2 in 1–30 rolled on.
	if got := pts[0].PPM; got[0] != 500_000 || got[1] != 500_000 || got[2] != 0 {
		t.Errorf("September rates %v", got)
	}
	// October: 0 of 2 current; A rolled 1–30 → 31–60 (1 of 1); C 31–60 → 61–90.
	if got := pts[1].PPM; got[0] != 0 || got[1] != 1_000_000 || got[2] != 1_000_000 {
		t.Errorf("October rates %v", got)
	}
	svg := string(rollChart(portuguese, pts))
	if n := strings.Count(svg, `class="roll-line"`); n != len(rollLinks) || !strings.Contains(svg, "10/2026") || !strings.HasPrefix(svg, "<svg") ||
		!strings.Contains(svg, "em dia → 1–30") {
		t.Errorf("chart: %d lines\n%s", n, svg)
	}
	if en := string(rollChart(english, pts)); !strings.Contains(en, "current → 1–30") || !strings.Contains(en, "Roll rates month over month") {
		t.Errorf("chart in English:\n%s", en)
	}
	if got := portuguese.ppm(125_000); got != "12,5 %" {
		t.Errorf("ppm in Portuguese: %q", got)
	}
	if got := english.ppm(125_000); got != "12.5%" {
		t.Errorf("ppm in English: %q", got)
	}
}

// TestCountCalls: the dashboard's call counts by status and outcome, in
// the outcomes' order.
func TestCountCalls(t *testing.T) {
	t.Parallel()
	c := countCalls([]worklist.Task{{Status: worklist.StatusOpen}, {Status: worklist.StatusDone, Outcome: "NO_ANSWER"},
		{Status: worklist.StatusDone, Outcome: worklist.OutcomePromise}, {Status: worklist.StatusDone, Outcome: "NO_ANSWER"},
		{Status: worklist.StatusCallback}})
	if c.Listed != 5 || c.ToCall != 1 || c.Done != 3 || c.Callbacks != 1 || len(c.Outcomes) != 2 ||
		c.Outcomes[0] != (outcomeCount{"NO_ANSWER", 2}) || c.Outcomes[1] != (outcomeCount{worklist.OutcomePromise, 1}) {
		t.Fatalf("%+v", c)
	}
}
