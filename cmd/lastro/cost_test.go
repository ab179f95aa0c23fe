package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"lastro/cost"
)

// costLine is a result's capacity in one comparable line: the table arm,
// then each index it touched, RRU/WRU.
func costLine(r cost.Result) string {
	parts := []string{fmt.Sprintf("table %g/%g", r.Capacity.Table.RRU, r.Capacity.Table.WRU)}
	for _, ix := range r.Capacity.IndexNames() {
		u := r.Capacity.Index(ix)
		parts = append(parts, fmt.Sprintf("%s %g/%g", ix, u.RRU, u.WRU))
	}
	return strings.Join(parts, ", ")
}

// wantCost pins every business operation's capacity as lastro cost
// measures it (docs/performance.md#cost-per-business-operation). Capacity
// is deterministic: the clock is frozen and every item has the same size
// on every run, so a change here is a change of what an operation costs
// on DynamoDB. Update the table in docs/performance.md with it.
var wantCost = map[string]string{
	"tenant.create":                     "table 4/10",
	"debtor.register":                   "table 0/6, tenant-debtors 0/1",
	"contract.create":                   "table 1/32, agenda 0/1, portfolio 0/1",
	"debtor.lookup phone":               "table 2/0",
	"debtor.lookup contract":            "table 2/0",
	"charge.issue":                      "table 1/4",
	"settlement.apply k=1":              "table 2/8, agenda 0/1, portfolio 0/2",
	"settlement.duplicate":              "table 2/0",
	"settlement.apply k=2":              "table 2/12, agenda 0/1, portfolio 0/2",
	"settlement.apply k=3":              "table 2/16, agenda 0/1, portfolio 0/2",
	"settlement.pix":                    "table 2/8, agenda 0/2, portfolio 0/1",
	"contact.claim allowed":             "table 3/3",
	"contact.claim blocked":             "table 3/2",
	"debtor.view360":                    "table 1.5/0",
	"contract.installments AP02":        "table 0.5/0",
	"contract.events AP09":              "table 0.5/0",
	"portfolio.page":                    "table 0.5/0, portfolio 2.5/0",
	"arrangement.promise":               "table 2/6, agenda 0/2",
	"arrangement.agreement":             "table 3/32, agenda 0/2, portfolio 0/1",
	"arrangement.dispute":               "table 1/6",
	"arrangement.write-off":             "table 1/4, agenda 0/1, portfolio 0/1",
	"agenda.page AP03":                  "table 0/0, agenda 0.5/0",
	"agenda.run empty shard":            "table 0.5/4, agenda 4/0",
	"agenda.entry DUE_CHECK+SMS_D1":     "table 3/14, agenda 0/2, portfolio 0/1",
	"agenda.entry PROMISE_CHECK+SMS_D5": "table 5/18, agenda 0/2, portfolio 0/1",
	"agenda.entry SMS_D5":               "table 3/14, agenda 0/2, portfolio 0/1",
	"agenda.entry CALL_D15":             "table 4/12, agenda 0/2, portfolio 0/1",
	"agenda.entry BUCKET_MOVE":          "table 3/3, agenda 0/2, portfolio 0/2",
	"agenda.entry SMS_D45":              "table 5.5/14, agenda 0/2, portfolio 0/1",
	"agenda.entry BUREAU_NOTICE":        "table 7.5/18, agenda 0/2, portfolio 0/1",
	"agenda.entry BUREAU_REPORT":        "table 3.5/6, agenda 0/2",
	"export":                            "table 0/0",
}

// TestCostCatalogue runs lastro cost's catalogue (every business operation
// through the HTTP API on a fresh embedded store) and checks the budgets of
// docs/design.md#capacity-budgets and every operation's exact capacity.
func TestCostCatalogue(t *testing.T) {
	t.Parallel()
	results, err := runCatalogue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cost.Over(results) {
		t.Errorf("%s over budget (%s): %s", r.Name, r.Budget, r.Over)
	}
	seen := map[string]bool{}
	for _, r := range results {
		seen[r.Name] = true
		want, ok := wantCost[r.Name]
		if !ok {
			t.Errorf("%s: not pinned (%s)", r.Name, costLine(r))
			continue
		}
		if got := costLine(r); got != want {
			t.Errorf("%s: %s, want %s", r.Name, got, want)
		}
	}
	for name := range wantCost {
		if !seen[name] {
			t.Errorf("%s: not measured", name)
		}
	}
	for _, r := range results {
		if r.Name == "agenda.entry BUCKET_MOVE" && r.Capacity.Total().WRU != bucketMoveWRU {
			t.Errorf("a bucket move costs %.0f WRU; lastro cost compare counts %d", r.Capacity.Total().WRU, bucketMoveWRU)
		}
	}
	var out bytes.Buffer
	if err := cost.Print(&out, results); err != nil || !strings.Contains(out.String(), "settlement.apply k=1") {
		t.Errorf("print: %v\n%s", err, out.String())
	}
}

func TestCostCommandArguments(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"cost", "--nope"}, {"cost", "extra"}} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestSimulateHeatArguments(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"simulate"}, {"simulate", "cold"}, {"simulate", "heat", "--shards", "0"},
		{"simulate", "heat", "--date", "tomorrow"}, {"simulate", "heat", "--window", "1ms"}, {"simulate", "heat", "extra"}} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestCostCompare runs lastro cost compare's two comparisons at a small
// size: model A's nightly recompute costs what the seed says per
// delinquent contract-night (2 WRU for the 1.1 KB header, up to 2 for
// the moved index entry), far above model B's bucket moves, and a Scan
// reads the whole table where the keyed page reads one page, whatever
// the size. Sizes and timings are commands, not this test.
func TestCostCompare(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var out, progress bytes.Buffer
	o := compareOptions{sizes: []int{100, 300}, days: 10, workers: 4, extrapolate: 2_000_000}
	ab, err := compareModels(ctx, 200, o, &out, &progress)
	if err != nil {
		t.Fatal(err)
	}
	perNight := ab.a.Total().WRU / float64(ab.delinquentNights)
	if perNight < 3 || perNight > 4 {
		t.Errorf("model A: %.2f WRU per delinquent contract-night, want 3-4", perNight)
	}
	if moves := float64(ab.bucketMoves * bucketMoveWRU); ab.a.Total().WRU < 10*moves {
		t.Errorf("model A %.0f WRU is not ten times model B's bucket moves (%.0f WRU)", ab.a.Total().WRU, moves)
	}
	points, err := compareScan(ctx, o, &out, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 2 || points[1].scanRRU < 2.5*points[0].scanRRU || points[1].keyedRRU > 4 || points[1].scanRRU < 50*points[1].keyedRRU {
		t.Errorf("scan against keyed: %+v", points)
	}
	if !strings.Contains(out.String(), "like for like") || !strings.Contains(out.String(), "extrapolated to 8M contracts") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestCostCompareArguments(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"cost", "compare", "--sizes", "5"}, {"cost", "compare", "--sizes", "x"}, {"cost", "compare", "--days", "0"},
		{"cost", "compare", "--ab-sizes", ""}, {"cost", "compare", "--workers", "100"}, {"cost", "compare", "extra"}} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
