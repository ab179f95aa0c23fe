package contactlimit_test

import (
	"net/http"
	"testing"

	"lastro/contactlimit"
	"lastro/contract"
	"lastro/engine/enginetest"
)

// contract signs contract id for dk: three monthly instalments of R$ 1,000.00
// from 2026-09-10, the first overdue on the fixture's date.
func (f *fixture) contract(t testing.TB, dk, id string) {
	t.Helper()
	if _, err := f.Contracts.Create(bg, f.t, dk, contract.Input{ContractID: id, ProductCode: "CREDIARIO",
		Installments: enginetest.Monthly("2026-09-10", 3, 90000, 10000)}, contract.Actor{Role: "operator"}); err != nil {
		t.Fatal(err)
	}
}

func TestHTTPContacts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk := f.debtor(t, "")
	f.contract(t, dk, "C-1")
	op, comp := f.keys["operator"], f.keys["compliance"]
	path := "/v1/debtors/" + dk + "/contacts"
	body := `{"channel":"SMS","template":"SMS_D5","contractId":"C-1"}`

	// 400s write nothing.
	for _, bad := range []string{`{"channel":"FAX","template":"SMS_D5","contractId":"C-1"}`, `{"channel":"SMS","template":"SMS_D5","contractId":"C#1"}`,
		`{"channel":"SMS","template":"SMS_D5"}`, `{"channel":"SMS","template":"SMS_D5","contractId":"C-1","phone":"1"}`, `not json`} {
		if status, out := f.Do(t, http.MethodPost, path, op, bad); status != http.StatusBadRequest || out["error"] == nil {
			t.Errorf("%s: %d %v", bad, status, out)
		}
	}
	if status, _ := f.Do(t, http.MethodPost, "/v1/debtors/NOT-A-KEY/contacts", op, body); status != http.StatusBadRequest {
		t.Errorf("bad debtor key: %d", status)
	}
	if status, out := f.Do(t, http.MethodPost, "/v1/debtors/0123456789abcdef/contacts", op, body); status != http.StatusNotFound {
		t.Errorf("unknown debtor: %d %v", status, out)
	}
	if status, _ := f.Do(t, http.MethodPost, path, comp, body); status != http.StatusForbidden {
		t.Errorf("compliance may not claim: %d", status)
	}

	for i := 1; i <= 3; i++ {
		status, out := f.Do(t, http.MethodPost, path, op, body)
		if status != http.StatusCreated || out["allowed"] != true || out["attemptNumber"] != float64(i) || out["action"] != contactlimit.ManualAction || out["actorRole"] != "operator" {
			t.Fatalf("claim %d: %d %v", i, status, out)
		}
	}
	status, out := f.Do(t, http.MethodPost, path, op, body)
	e, _ := out["error"].(map[string]any)
	attempt, _ := out["attempt"].(map[string]any)
	if status != http.StatusTooManyRequests || e["code"] != "contact_blocked" || e["reason"] != "LIMIT" || e["message"] == "" ||
		attempt["allowed"] != false || attempt["reason"] != "LIMIT" {
		t.Fatalf("fourth claim: %d %v", status, out)
	}

	status, out = f.Do(t, http.MethodGet, path+"?date=2026-09-24", comp, "")
	items, _ := out["items"].([]any)
	if status != http.StatusOK || out["counter"] != float64(3) || out["maxDailyContacts"] != float64(3) || len(items) != 4 || out["nextCursor"] != nil {
		t.Fatalf("day view: %d %v", status, out)
	}
	// Today is the default date; another day is empty.
	if status, out := f.Do(t, http.MethodGet, path, comp, ""); status != http.StatusOK || out["date"] != "2026-09-24" || out["counter"] != float64(3) {
		t.Fatalf("default date: %d %v", status, out)
	}
	if status, out := f.Do(t, http.MethodGet, path+"?date=2026-09-23", comp, ""); status != http.StatusOK || out["counter"] != float64(0) || len(out["items"].([]any)) != 0 {
		t.Fatalf("another day: %d %v", status, out)
	}
	// Paginated with a signed cursor.
	_, page := f.Do(t, http.MethodGet, path+"?date=2026-09-24&limit=3", comp, "")
	next, _ := page["nextCursor"].(string)
	if len(page["items"].([]any)) != 3 || next == "" {
		t.Fatalf("first page: %v", page)
	}
	if _, rest := f.Do(t, http.MethodGet, path+"?date=2026-09-24&limit=3&cursor="+next, comp, ""); len(rest["items"].([]any)) != 1 {
		t.Fatalf("second page: %v", rest)
	}
	for _, q := range []string{"?date=2026-02-30", "?date=yesterday", "?limit=0", "?cursor=forged"} {
		if status, _ := f.Do(t, http.MethodGet, path+q, comp, ""); status != http.StatusBadRequest {
			t.Errorf("GET %s: %d", q, status)
		}
	}
	if status, _ := f.Do(t, http.MethodGet, path, op, ""); status != http.StatusForbidden {
		t.Errorf("operator may not read the compliance view: %d", status)
	}
	noPersonalData(t, f.Logs.String())
}

func TestHTTPBlockedReasons(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	keys := f.keys
	dk := f.debtor(t, "")
	f.contract(t, dk, "C-1")
	path := "/v1/debtors/" + dk + "/contacts"
	if err := f.Contacts.SetOptOut(bg, f.t, dk, contactlimit.WhatsApp, true); err != nil {
		t.Fatal(err)
	}
	status, out := f.Do(t, http.MethodPost, path, keys["operator"], `{"channel":"WHATSAPP","template":"SMS_D5","contractId":"C-1"}`)
	if e, _ := out["error"].(map[string]any); status != http.StatusTooManyRequests || e["reason"] != "OPT_OUT" {
		t.Fatalf("opt-out: %d %v", status, out)
	}
	f.Clock.Set(local("2026-09-24", 21, 0))
	status, out = f.Do(t, http.MethodPost, path, keys["operator"], `{"channel":"SMS","template":"SMS_D5","contractId":"C-1"}`)
	if e, _ := out["error"].(map[string]any); status != http.StatusTooManyRequests || e["reason"] != "WINDOW" {
		t.Fatalf("window: %d %v", status, out)
	}
	_, day := f.Do(t, http.MethodGet, path+"?date=2026-09-24", keys["compliance"], "")
	if len(day["items"].([]any)) != 2 || day["counter"] != float64(0) {
		t.Fatalf("blocked evidence: %v", day)
	}
}
