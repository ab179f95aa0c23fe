package debtor_test

import (
	"lastro/contract"
	"testing"

	"lastro/collections/kit"
	"lastro/debtor"
	"lastro/engine/enginetest"
)

// BenchmarkView360 measures AP01 on the typical debtor of SPEC section 9
// (1 contract × 12 instalments, 10 contacts) through the SDK over HTTP to
// the embedded store; it reports the read units of one view.
func BenchmarkView360(b *testing.B) {
	f := newFixture(b, "t-a")
	a := f.tenant(b, "t-a")
	dk := f.register(b, a, "52998224725")
	if _, err := f.Contracts.Create(bg, a, dk, contract.Input{ContractID: "C-1", ProductCode: "CREDIARIO_12X", Installments: enginetest.Monthly("2026-08-10", 12, 41230, 7560)}, actor); err != nil {
		b.Fatal(err)
	}
	putContacts(b, f, a, dk, 10)
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
