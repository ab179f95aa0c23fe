package charges_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"lastro/engine/enginetest"
)

// TestDueTodayIsWhatAChargeWouldAsk: a 95-day-late instalment owes a fine
// and late interest today though none is stored yet; the contract's due
// answer shows them, splits overdue from the instalments not yet due, and
// its figure for the instalment is what a charge issued now asks for.
func TestDueTodayIsWhatAChargeWouldAsk(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t, enginetest.At(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)))
	keys := env.CreateTenant(t, "t-due")
	op := keys["operator"]
	status, reg := env.Do(t, http.MethodPost, "/v1/debtors", op, fmt.Sprintf(`{"document":%q,"name":"Pessoa Sintética"}`, env.CPF()))
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, reg)
	}
	dk := reg["debtorKey"].(string)
	insts := `{"seq":1,"dueDate":"2026-09-10","principalCents":90000,"interestCents":10000},` +
		`{"seq":2,"dueDate":"2027-01-10","principalCents":90000,"interestCents":10000}`
	if status, out := env.Do(t, http.MethodPost, "/v1/debtors/"+dk+"/contracts", op,
		`{"contractId":"C-1","productCode":"CREDIARIO_12X","installments":[`+insts+`]}`); status != http.StatusCreated {
		t.Fatalf("sign: %d %v", status, out)
	}
	env.Clock.Set(time.Date(2026, 12, 14, 15, 0, 0, 0, time.UTC)) // 95 days after 09-10
	status, due := env.Do(t, http.MethodGet, "/v1/debtors/"+dk+"/contracts/C-1/due", op, "")
	if status != http.StatusOK {
		t.Fatalf("due: %d %v", status, due)
	}
	items := due["installments"].([]any)
	if len(items) != 2 {
		t.Fatalf("open instalments: %v", due)
	}
	first, second := items[0].(map[string]any), items[1].(map[string]any)
	owed := first["owed"].(map[string]any)
	if first["late"] != true || first["daysLate"] != float64(95) || owed["fine"].(float64) <= 0 || owed["lateInterest"].(float64) <= 0 {
		t.Fatalf("late instalment: %v", first)
	}
	if second["late"] != false || second["totalCents"] != float64(100000) {
		t.Fatalf("instalment not yet due: %v", second)
	}
	if due["overdueCents"] != first["totalCents"] || due["totalCents"] != first["totalCents"].(float64)+100000 || due["today"] != "2026-12-14" {
		t.Fatalf("totals: %v", due)
	}
	status, ch := env.Do(t, http.MethodPost, "/v1/charges", op, fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":1,"method":"PIX"}`, dk))
	if status != http.StatusCreated || ch["amountCents"] != first["totalCents"] {
		t.Fatalf("charge %d %v; due %v", status, ch, first)
	}
	for _, bad := range []struct {
		path string
		want int
	}{
		{"/v1/debtors/" + dk + "/contracts/C-404/due", http.StatusNotFound},
		{"/v1/debtors/NOTAKEY/contracts/C-1/due", http.StatusBadRequest},
		{"/v1/debtors/" + dk + "/contracts/C%231/due", http.StatusBadRequest},
	} {
		if status, out := env.Do(t, http.MethodGet, bad.path, op, ""); status != bad.want {
			t.Errorf("%s: %d %v, want %d", bad.path, status, out, bad.want)
		}
	}
}
