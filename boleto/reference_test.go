package boleto_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lastro/boleto"
)

// referenceDir holds real CNAB 240 return files published with an
// independent library (MIT) beside this repository, never copied into it;
// docs/adr/0071 lists what is read from them.
const referenceDir = "../../shared/reference/cnab240"

func reference(t *testing.T, name string) *boleto.Return {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(referenceDir, name))
	if os.IsNotExist(err) {
		t.Skipf("reference file %s absent (it sits in shared/reference/cnab240 beside the repository): skipped", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	r, err := boleto.ParseReturn(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// TestRealReturnFiles reads the real files of five banks at each bank's
// positions and checks what the library that published them expects of
// their first title (nosso número, due date, face value, amount paid,
// dates, fee, interest, discount, rebate, IOF, other expenses and
// credits, reasons), plus what holds for every title. The expectations:
//   - Banco do Brasil: 35 liquidations after write-off (17) of R$ 21.880,94
//     in all, a fee of R$ 1,03 each, paid 2011-12-29 and credited
//     2012-01-02 with no due date; the first has 9 cents of interest,
//     1 of discount, 2 of rebate, 3 of IOF, 4 of other expenses, 5 of
//     other credits and reason 03; its nosso número is the convênio's 17
//     digits, whose last 8 the library keeps.
//   - Santander (its own positions): an entry (02) with a fee of R$ 3,92,
//     then its liquidation (06) of R$ 10,00 credited 2016-04-04.
//   - Sicoob: 3 liquidations of R$ 2,00 with a fee of R$ 1,70, due
//     2015-08-13, paid and credited 2015-08-10; the nosso número is the
//     10 digits before the parcel and modality.
//   - Ailos: the same three titles, the nosso número in FEBRABAN's 20
//     positions.
//   - Sicredi: an entry (02) of R$ 9,95 due 2017-04-13 with reason A4,
//     then a movement 28 with a fee of R$ 3,80.
func TestRealReturnFiles(t *testing.T) {
	t.Parallel()
	type first struct {
		nosso, movement, carteira, due, paidOn, creditOn string
		face                                             int64
		amounts                                          boleto.Amounts
		reasons                                          []string
	}
	tests := []struct {
		file, bank string
		titles     int
		first      first
		each       func(t *testing.T, ti boleto.Title)
		totalPaid  int64
	}{
		{file: "CNAB240.RET", bank: "001", titles: 35, totalPaid: 2188094,
			first: first{nosso: "14499570000020673", movement: "17", carteira: "7", paidOn: "2011-12-29", creditOn: "2012-01-02", face: 34400,
				amounts: boleto.Amounts{PaidCents: 34400, NetCents: 34297, FeeCents: 103, InterestCents: 9, DiscountCents: 1, RebateCents: 2,
					IOFCents: 3, OtherExpensesCents: 4, OtherCreditsCents: 5}, reasons: []string{"03"}},
			each: func(t *testing.T, ti boleto.Title) {
				if ti.Movement != "17" || ti.FeeCents != 103 || !ti.DueDate.IsZero() || ti.NetCents != ti.PaidCents-103 ||
					!strings.HasPrefix(ti.NossoNumero, "1449957") || len(ti.NossoNumero) != 17 {
					t.Errorf("title of line %d: %+v", ti.Line, ti)
				}
			}},
		{file: "CNAB240SANTANDER.RET", bank: "033", titles: 2, totalPaid: 1000,
			first: first{nosso: "0000000001406", movement: "02", carteira: "2", due: "2016-04-01", paidOn: "2016-04-01", creditOn: "2016-04-01",
				face: 1000, amounts: boleto.Amounts{PaidCents: 1000, NetCents: 1000, FeeCents: 392}},
			each: func(t *testing.T, ti boleto.Title) {
				if ti.NossoNumero != "0000000001406" || ti.FaceCents != 1000 {
					t.Errorf("title of line %d: %+v", ti.Line, ti)
				}
			}},
		{file: "CNAB240SICOOB.RET", bank: "756", titles: 3, totalPaid: 600,
			first: first{nosso: "0000000083", movement: "06", carteira: "1", due: "2015-08-13", paidOn: "2015-08-10", creditOn: "2015-08-10",
				face: 200, amounts: boleto.Amounts{PaidCents: 200, NetCents: 200, FeeCents: 170}, reasons: []string{"03"}},
			each: func(t *testing.T, ti boleto.Title) {
				if !ti.Liquidation() || ti.FeeCents != 170 || len(ti.NossoNumero) != 10 {
					t.Errorf("title of line %d: %+v", ti.Line, ti)
				}
			}},
		{file: "CNAB240AILOS.RET", bank: "085", titles: 3, totalPaid: 600,
			first: first{nosso: "000000000000083", movement: "06", carteira: "1", due: "2015-08-13", paidOn: "2015-08-10", creditOn: "2015-08-10",
				face: 200, amounts: boleto.Amounts{PaidCents: 200, NetCents: 200, FeeCents: 170}, reasons: []string{"03"}},
			each: func(t *testing.T, ti boleto.Title) {
				if !ti.Liquidation() || ti.FeeCents != 170 {
					t.Errorf("title of line %d: %+v", ti.Line, ti)
				}
			}},
		{file: "CNAB240SICREDI.CRT", bank: "748", titles: 2, totalPaid: 0,
			first: first{nosso: "172000595", movement: "02", carteira: "1", due: "2017-04-13", paidOn: "2017-04-06", face: 995,
				reasons: []string{"A4"}},
			each: func(t *testing.T, ti boleto.Title) {
				if ti.Liquidation() || ti.FaceCents != 995 {
					t.Errorf("title of line %d: %+v", ti.Line, ti)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := reference(t, tt.file)
			if r.Bank != tt.bank || len(r.Titles) != tt.titles {
				t.Fatalf("bank %s, %d titles; want %s, %d", r.Bank, len(r.Titles), tt.bank, tt.titles)
			}
			f := r.Titles[0]
			got := first{nosso: f.NossoNumero, movement: f.Movement, carteira: f.Carteira, due: str(f.DueDate.IsZero(), f.DueDate.String()),
				paidOn: str(f.PaidOn.IsZero(), f.PaidOn.String()), creditOn: str(f.CreditOn.IsZero(), f.CreditOn.String()), face: f.FaceCents,
				amounts: f.Amounts, reasons: f.Reasons}
			if got.nosso != tt.first.nosso || got.movement != tt.first.movement || got.carteira != tt.first.carteira || got.due != tt.first.due ||
				got.paidOn != tt.first.paidOn || got.creditOn != tt.first.creditOn || got.face != tt.first.face || got.amounts != tt.first.amounts ||
				!slices.Equal(got.reasons, tt.first.reasons) {
				t.Fatalf("first title\n got %+v\nwant %+v", got, tt.first)
			}
			var paid int64
			for _, ti := range r.Titles {
				tt.each(t, ti)
				if ti.Liquidation() {
					paid += ti.PaidCents
				}
			}
			if paid != tt.totalPaid {
				t.Errorf("liquidations pay %d cents, want %d", paid, tt.totalPaid)
			}
			t.Logf("notes: %q", r.Notes)
		})
	}
}

func str(zero bool, s string) string {
	if zero {
		return ""
	}
	return s
}
