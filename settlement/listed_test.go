package settlement_test

import (
	"testing"
	"time"

	"lastro/psp"
	"lastro/settlement"
)

// TestListedPayment: what a PSP lists under a charge is checked as the
// webhook's decoder checks a body; a refusal never echoes the input.
func TestListedPayment(t *testing.T) {
	t.Parallel()
	const charge = "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF"
	good := psp.Payment{EndToEndID: "E00000000202609241200ABCDEFGHIJK", TxID: charge, Valor: "1024.67", Horario: "2026-09-24T12:00:00Z"}
	with := func(f func(*psp.Payment)) psp.Payment { p := good; f(&p); return p }
	for _, tt := range []struct {
		name  string
		in    psp.Payment
		ok    bool
		keeps bool // the endToEndId is kept in the answer
	}{
		{"good", good, true, true},
		{"no txid: this charge's", with(func(p *psp.Payment) { p.TxID = "" }), true, true},
		{"another txid", with(func(p *psp.Payment) { p.TxID = "Zz3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF" }), false, true},
		{"a refund's id", with(func(p *psp.Payment) { p.EndToEndID = "D00000000202609241200ABCDEFGHIJK" }), false, true},
		{"short id", with(func(p *psp.Payment) { p.EndToEndID = "E123" }), false, false},
		{"float valor", with(func(p *psp.Payment) { p.Valor = "1e3" }), false, true},
		{"zero valor", with(func(p *psp.Payment) { p.Valor = "0.00" }), false, true},
		{"bad horario", with(func(p *psp.Payment) { p.Horario = "yesterday" }), false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, e := settlement.ListedPayment(tt.in, charge)
			if (e == nil) != tt.ok {
				t.Fatalf("error %v, want ok %v", e, tt.ok)
			}
			if (got.EndToEndID != "") != tt.keeps {
				t.Fatalf("endToEndId %q", got.EndToEndID)
			}
			if tt.ok {
				want := settlement.PixPayment{EndToEndID: tt.in.EndToEndID, TxID: charge, ValorCents: 102467, Horario: time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)}
				if got.EndToEndID != want.EndToEndID || got.TxID != want.TxID || got.ValorCents != want.ValorCents || !got.Horario.Equal(want.Horario) {
					t.Fatalf("got %+v, want %+v", got, want)
				}
				return
			}
			if e.Code != "psp_bad_answer" || e.Message == "" {
				t.Fatalf("refusal %+v", e)
			}
		})
	}
}
