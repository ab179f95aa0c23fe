package debtor

import (
	"lastro/contract"
	"testing"

	"lastro/collections/kit"
)

// BenchmarkView360 measures AP01 on the typical debtor of docs/design.md#capacity-budgets
// (1 contract × 12 instalments, 10 contacts) through the SDK over HTTP to
// the embedded store; it reports the read units of one view.
func BenchmarkView360(b *testing.B) {
	f := newFixture(b, "t-a")
	a := f.tenant(b, "t-a")
	dk := f.register(b, a, "52998224725")
	if _, err := f.c.Create(bg, a, dk, contract.Input{ContractID: "C-1", ProductCode: "CREDIARIO_12X", Installments: monthly("2026-08-10", 12, 41230, 7560)}, actor); err != nil {
		b.Fatal(err)
	}
	putContacts(b, f, a, dk, 10)
	var rru float64
	b.ResetTimer()
	for b.Loop() {
		ctx, u := kit.Operation(bg, "bench.view360")
		if _, err := f.s.View(ctx, a, dk, DefaultViewLimit, ""); err != nil {
			b.Fatal(err)
		}
		rru = u.RRU()
	}
	b.ReportMetric(rru, "RRU/op")
}
