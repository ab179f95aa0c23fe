package debtor_test

import (
	"fmt"
	"net/http"
	"testing"

	"lastro/engine/enginetest"
)

// TestNinthOfJulySaoPauloVersusRio, through the public API: an instalment
// due on Thursday 9 July 2026 is payable on Friday 10 July without charges
// in São Paulo (a state bank holiday, Revolução Constitucionalista) and is
// late on the 10th in Rio de Janeiro. A PATCH moving the SP debtor to RJ
// moves its contract to Rio's calendar.
func TestNinthOfJulySaoPauloVersusRio(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t, enginetest.At(enginetest.SaoPaulo("2026-07-10", 10, 0)))
	_, keys := env.Tenant(t, "t-jul")
	op := keys["operator"]
	debtorIn := func(uf string) string {
		t.Helper()
		status, out := env.Do(t, http.MethodPost, "/v1/debtors", op, fmt.Sprintf(`{"document":%q,"name":"Pessoa Sintética","phone":"+55 11 90000-0001","uf":%q}`, env.CPF(), uf))
		if status != http.StatusCreated {
			t.Fatalf("register %s: %d %v", uf, status, out)
		}
		dk := out["debtorKey"].(string)
		body := `{"contractId":"C-1","productCode":"CDC","installments":[{"seq":1,"dueDate":"2026-07-09","principalCents":90000,"interestCents":10000},{"seq":2,"dueDate":"2026-08-09","principalCents":90000,"interestCents":10000}]}`
		if status, out := env.Do(t, http.MethodPost, "/v1/debtors/"+dk+"/contracts", op, body); status != http.StatusCreated {
			t.Fatalf("contract %s: %d %v", uf, status, out)
		}
		return dk
	}
	quote := func(dk string) float64 {
		t.Helper()
		status, out := env.Do(t, http.MethodPost, "/v1/charges", op, fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":1,"method":"PIX"}`, dk))
		if status != http.StatusCreated && status != http.StatusOK {
			t.Fatalf("charge: %d %v", status, out)
		}
		return out["amountCents"].(float64)
	}
	firstStatus := func(dk string) (string, any) {
		t.Helper()
		status, out := env.Do(t, http.MethodGet, "/v1/debtors/"+dk, op, "")
		if status != http.StatusOK {
			t.Fatalf("360: %d %v", status, out)
		}
		c := out["contracts"].([]any)[0].(map[string]any)
		in := c["installments"].([]any)[0].(map[string]any)
		return fmt.Sprint(in["status"]), c["daysPastDue"]
	}
	sp, rj := debtorIn("SP"), debtorIn("RJ")
	if got := quote(sp); got != 100000 {
		t.Errorf("SP on 10 July owes %v, want 100000 (no fine: payable today)", got)
	}
	if got := quote(rj); got <= 100000 {
		t.Errorf("RJ on 10 July owes %v, want the fine and a day's interest on top of 100000", got)
	}
	if st, dpd := firstStatus(sp); st == "OVERDUE" || fmt.Sprint(dpd) != "0" {
		t.Errorf("SP instalment on 10 July: %s, %v days past due", st, dpd)
	}
	if st, dpd := firstStatus(rj); st != "OVERDUE" || fmt.Sprint(dpd) != "1" {
		t.Errorf("RJ instalment on 10 July: %s, %v days past due", st, dpd)
	}
	// The SP debtor moves to Rio: its contract follows Rio's calendar.
	status, out := env.Do(t, http.MethodPatch, "/v1/debtors/"+sp, op, `{"version":1,"uf":"RJ"}`)
	if status != http.StatusOK || out["uf"] != "RJ" || out["version"] != float64(2) || out["timeZone"] != "America/Sao_Paulo" {
		t.Fatalf("PATCH uf: %d %v", status, out)
	}
	if st, _ := firstStatus(sp); st != "OVERDUE" {
		t.Errorf("after moving to RJ the instalment is %s", st)
	}
	// Bad input is the spec's error shape, never a 500.
	for _, body := range []string{`{"version":2,"timeZone":"Mars/Olympus"}`, `{"version":2,"uf":"XX"}`, `{"version":2}`, `{"version":"2"}`,
		`{"version":2,"address":{"street":"Rua A, 1","city":"Recife","uf":"PE","postalCode":"1"}}`, `{"version":2,"nope":1}`} {
		status, out := env.Do(t, http.MethodPatch, "/v1/debtors/"+sp, op, body)
		if status != http.StatusBadRequest || enginetest.ErrorCode(out) == "" {
			t.Errorf("PATCH %s: %d %v", body, status, out)
		}
	}
	if status, out := env.Do(t, http.MethodPatch, "/v1/debtors/"+sp, op, `{"version":1,"uf":"SP"}`); status != http.StatusConflict || enginetest.ErrorCode(out) != "version_conflict" {
		t.Errorf("stale PATCH: %d %v", status, out)
	}
	if status, _ := env.Do(t, http.MethodPatch, "/v1/debtors/"+sp, keys["compliance"], `{"version":2,"uf":"SP"}`); status != http.StatusForbidden {
		t.Errorf("compliance PATCH: %d", status)
	}
}
