package cost

import (
	"fmt"
	"strings"
)

// budget is one rule of docs/design.md#capacity-budgets over a result.
type budget struct {
	rule  string
	check func(Result) string // "" when met, else why not
}

// budgets are the capacity budgets by operation name.
var budgets = map[string]budget{
	"settlement.apply k=1": paymentBudget(1),
	"settlement.apply k=2": paymentBudget(2),
	"settlement.apply k=3": paymentBudget(3),
	"settlement.pix": {"the typical payment (one instalment): 11 WRU", func(r Result) string {
		return atMost("WRU", r.Capacity.Total().WRU, 11, true)
	}},
	"debtor.view360":        {"≤ 4 RRU", func(r Result) string { return atMost("RRU", r.Capacity.Total().RRU, 4, false) }},
	"portfolio.page":        {"≤ 4 RRU", func(r Result) string { return atMost("RRU", r.Capacity.Total().RRU, 4, false) }},
	"contact.claim allowed": claimBudget(),
	"contact.claim blocked": claimBudget(),
}

// paymentBudget: a payment touching k instalments costs exactly
// 2 × (2 + 2k) table WRU plus at most 3 WRU of index writes.
func paymentBudget(k int) budget {
	want := float64(2 * (2 + 2*k))
	return budget{fmt.Sprintf("table = 2×(2+2k) = %.0f WRU, indexes ≤ 3 WRU", want), func(r Result) string {
		var why []string
		if got := r.Capacity.Table.WRU; got != want {
			why = append(why, fmt.Sprintf("table %.1f WRU, want exactly %.0f", got, want))
		}
		if got := r.Capacity.IndexTotal().WRU; got > 3 {
			why = append(why, fmt.Sprintf("indexes %.1f WRU, want at most 3", got))
		}
		return strings.Join(why, "; ")
	}}
}

// claimBudget: claiming a contact costs at most 2 WRU (the counter's
// conditional ADD and the evidence item); the delivery's outcome is
// recorded apart.
func claimBudget() budget {
	return budget{"claim + evidence ≤ 2 WRU", func(r Result) string {
		if r.Parts == nil {
			return "no per-operation parts to tell the claim from the delivery"
		}
		got := r.Parts["contact.claim"].WRU + r.Parts["contact.evidence"].WRU
		return atMost("WRU", got, 2, false)
	}}
}

func atMost(unit string, got, limit float64, exact bool) string {
	switch {
	case exact && got != limit:
		return fmt.Sprintf("%.1f %s, want exactly %.0f", got, unit, limit)
	case got > limit:
		return fmt.Sprintf("%.1f %s, over %.0f", got, unit, limit)
	}
	return ""
}

// checkBudget fills r's budget and whether it is over.
func checkBudget(r *Result) {
	b, ok := budgets[r.Name]
	if !ok {
		return
	}
	r.Budget, r.Over = b.rule, b.check(*r)
}

// Over returns the results whose budget is not met.
func Over(results []Result) []Result {
	var out []Result
	for _, r := range results {
		if r.Over != "" {
			out = append(out, r)
		}
	}
	return out
}
