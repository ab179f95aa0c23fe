package debtor_test

import (
	"testing"

	"lastro/collections/kit"
	"lastro/debtor"
)

// BenchmarkView360 measures AP01 on the typical debtor of docs/design.md#capacity-budgets
// (1 contract × 12 instalments, 10 contacts) through the SDK over HTTP to
// the embedded store; it reports the read units of one view.
func BenchmarkView360(b *testing.B) {
	f, a, dk := typicalDebtor(b)
	var rru float64
	b.ResetTimer()
	for b.Loop() {
		ctx, u := kit.Operation(bg, "bench.view360")
		if _, err := f.Debtors.View(ctx, a, dk, debtor.DefaultViewLimit, ""); err != nil {
			b.Fatal(err)
		}
		rru = u.RRU()
	}
	b.ReportMetric(rru, "RRU/op")
}
