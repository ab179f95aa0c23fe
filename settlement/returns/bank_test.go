package returns_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/boleto/cnabtest"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/settlement"
	"lastro/settlement/returns"
)

// TestImportKeepsBankAmountsAndRegistrations: a liquidation with the
// bank's fee answers the fee and the net credit and keeps them on its
// settlement; an entry confirmed (02) and one rejected (03, reasons 08
// and 09) set their boletos' registration, visible on the charge; an
// entry for a nosso número never issued is listed as charge_not_found.
func TestImportKeepsBankAmountsAndRegistrations(t *testing.T) {
	t.Parallel()
	env, keysOf, _, chs := fixture(t)
	sup := keysOf["supervisor"]
	liq := paid(chs[0])
	liq.FeeCents = 103
	confirmed := cnabtest.Title{Movement: "02", NossoNumero: chs[1]["chargeId"].(string), DueDate: "24092026", FaceCents: 1}
	rejected := cnabtest.Title{Movement: "03", NossoNumero: chs[2]["chargeId"].(string), DueDate: "24092026", FaceCents: 1, Reasons: "0809"}
	stranger := cnabtest.Title{Movement: "02", NossoNumero: "12345679999999998", DueDate: "24092026", FaceCents: 1}
	status, out := env.Do(t, http.MethodPost, "/v1/boletos/returns", sup, cnabtest.Return("001", liq, confirmed, rejected, stranger).CRLF())
	if status != http.StatusOK || counts(out) != "titles=4 liquidations=1 registrations=3 ignored=0 applied=1 suspense=0 alreadyApplied=0 alreadyInSuspense=0 repeated=0 conflicts=0" {
		t.Fatalf("import: %d %v", status, out)
	}
	cents := liq.PaidCents
	item := out["items"].([]any)[0].(map[string]any)
	bank := item["bank"].(map[string]any)
	if bank["feeCents"] != float64(103) || bank["netCents"] != float64(cents-103) || bank["creditOn"] != "2026-09-25" || bank["bank"] != "001" ||
		out["feeCents"] != float64(103) || out["netCents"] != float64(cents-103) || out["paidCents"] != float64(cents) {
		t.Fatalf("bank amounts %v in %v", bank, out)
	}
	var regs []string
	for _, r := range out["registrationItems"].([]any) {
		r := r.(map[string]any)
		regs = append(regs, fmt.Sprintln(r["line"], r["movement"], r["status"], r["reasons"]))
	}
	if fmt.Sprint(regs) != "[5 02 CONFIRMED <nil>\n 7 03 REJECTED [08 09]\n 9 02 charge_not_found <nil>\n]" {
		t.Fatalf("registrations %v", regs)
	}
	for i, want := range map[int]string{1: "CONFIRMED [] ", 2: "REJECTED [08 09] "} {
		status, ch := env.Do(t, http.MethodGet, "/v1/charges/"+chs[i]["chargeId"].(string), keysOf["operator"], "")
		reg, _ := ch["registration"].(map[string]any)
		got := fmt.Sprint(reg["status"], " ", reg["reasons"], " ")
		if reg["reasons"] == nil {
			got = fmt.Sprint(reg["status"], " [] ")
		}
		if status != http.StatusOK || got != want || reg["bank"] != "001" {
			t.Errorf("charge %d: %d %v, want %s", i, status, ch, want)
		}
	}
	// The settlement keeps what the bank reported.
	id := returns.SettlementID("001", chs[0]["chargeId"].(string))
	it, err := env.Kit.Tenant("t-cnab", nil).Get(context.Background(), kit.Key{PK: keys.Settlement("t-cnab", id), SK: keys.SettlementSK}, true)
	if err != nil || it == nil {
		t.Fatalf("settlement %s: %v", id, err)
	}
	var rec settlement.Record
	if err := attributevalue.UnmarshalMap(it, &rec); err != nil || rec.Bank == nil || rec.Bank.FeeCents != 103 || rec.Bank.NetCents != cents-103 {
		t.Fatalf("settlement record %+v %v", rec.Bank, err)
	}
}
