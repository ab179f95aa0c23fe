package contactlimit_test

import (
	"net/http"
	"testing"
)

// TestManualContactChecksItsContract is issue 22 finding 4: an
// operator's contact names a contract, which must be this debtor's (404
// for one that does not exist or is another debtor's, and nothing is
// sent), and an open dispute on it blocks the contact with reason DISPUTE
// as the README says.
func TestManualContactChecksItsContract(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	op := f.keys["operator"]
	dk, other := f.debtor(t, ""), f.debtor(t, "")
	f.contract(t, dk, "C-1")
	f.contract(t, other, "C-OTHER")
	path := "/v1/debtors/" + dk + "/contacts"

	for _, tt := range []struct{ name, contractID string }{
		{"a contract that does not exist", "C-NONE"},
		{"another debtor's contract", "C-OTHER"},
	} {
		status, out := f.Do(t, http.MethodPost, path, op, `{"channel":"SMS","template":"SMS_D5","contractId":"`+tt.contractID+`"}`)
		if e, _ := out["error"].(map[string]any); status != http.StatusNotFound || e["code"] != "contract_not_found" {
			t.Errorf("%s: %d %v, want 404 contract_not_found", tt.name, status, out)
		}
	}

	status, out := f.Do(t, http.MethodPost, "/v1/debtors/"+dk+"/contracts/C-1/disputes", op, `{"reason":"NOT_RECOGNISED"}`)
	if status != http.StatusCreated {
		t.Fatalf("open dispute: %d %v", status, out)
	}
	status, out = f.Do(t, http.MethodPost, path, op, `{"channel":"SMS","template":"SMS_D5","contractId":"C-1"}`)
	if e, _ := out["error"].(map[string]any); status != http.StatusTooManyRequests || e["reason"] != "DISPUTE" {
		t.Fatalf("disputed contract: %d %v, want 429 DISPUTE", status, out)
	}
	if msgs := f.Outbox(t); len(msgs) != 0 {
		t.Fatalf("a message went out: %v", msgs)
	}
	_, day := f.Do(t, http.MethodGet, path+"?date=2026-09-24", f.keys["compliance"], "")
	if items, _ := day["items"].([]any); len(items) != 1 || day["counter"] != float64(0) {
		t.Fatalf("evidence: %v", day)
	}
}
