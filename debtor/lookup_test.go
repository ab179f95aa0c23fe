package debtor_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"lastro/collections/keys"
	"lastro/debtor"
	"lastro/engine/enginetest"
)

// lookupKeys runs POST /v1/debtors/lookup and answers the status, the
// matched debtor keys (sorted), the single debtorKey and the error code.
func lookupKeys(t *testing.T, env *enginetest.Env, key, body string) (int, []string, string, string) {
	t.Helper()
	status, out := env.Do(t, http.MethodPost, "/v1/debtors/lookup", key, body)
	var dks []string
	ms, _ := out["matches"].([]any)
	for _, m := range ms {
		mm, _ := m.(map[string]any)
		dk, _ := mm["debtorKey"].(string)
		if doc, _ := mm["maskedDocument"].(string); !strings.Contains(doc, "*") {
			t.Errorf("%s: match %s shows document %q, not masked", body, dk, doc)
		}
		dks = append(dks, dk)
	}
	sort.Strings(dks)
	one, _ := out["debtorKey"].(string)
	return status, dks, one, enginetest.ErrorCode(out)
}

// TestLookupByPhoneAndContractID: two tenants; a phone shared by two
// debtors lists both (in any spelling of the number), a contract id held
// by two debtors lists both, a changed phone is found under the new
// number and not the old, an erasure removes the phone's entry, and the
// other tenant finds nothing of them. No entry's key holds the phone.
func TestLookupByPhoneAndContractID(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	ta, ka := env.Tenant(t, "t-la")
	_, kb := env.Tenant(t, "t-lb")
	op, opB := ka["operator"], kb["operator"]
	register := func(key, doc, phone string) string {
		t.Helper()
		body := fmt.Sprintf(`{"document":%q,"name":"Pessoa Sintética","phone":%q}`, doc, phone)
		status, out := env.Do(t, http.MethodPost, "/v1/debtors", key, body)
		if status != http.StatusCreated {
			t.Fatalf("register: %d %v", status, out)
		}
		return out["debtorKey"].(string)
	}
	contractOf := func(key, dk, id string) {
		t.Helper()
		body := fmt.Sprintf(`{"contractId":%q,"productCode":"CDC","installments":[{"seq":1,"dueDate":"2026-10-10","principalCents":10000,"interestCents":0}]}`, id)
		if status, out := env.Do(t, http.MethodPost, "/v1/debtors/"+dk+"/contracts", key, body); status != http.StatusCreated {
			t.Fatalf("contract: %d %v", status, out)
		}
	}
	d1 := register(op, env.CPF(), "+55 11 98765-4321")
	d2 := register(op, env.CPF(), "(11) 98765-4321") // the same phone, typed otherwise
	d3 := register(op, env.CPF(), "21 99999-0000")
	dB := register(opB, env.CPF(), "+55 11 98765-4321") // the other tenant's debtor, same phone
	contractOf(op, d1, "C-SHARED")
	contractOf(op, d3, "C-SHARED")
	contractOf(op, d2, "C-ONLY-2")
	contractOf(opB, dB, "C-SHARED")
	both := []string{d1, d2}
	sort.Strings(both)
	for _, phone := range []string{"+55 11 98765-4321", "(11) 98765-4321", "11987654321", "+5511987654321", "011 98765 4321"} {
		status, dks, one, _ := lookupKeys(t, env, op, fmt.Sprintf(`{"phone":%q}`, phone))
		if status != http.StatusOK || fmt.Sprint(dks) != fmt.Sprint(both) || one != "" {
			t.Errorf("phone %s: %d %v single %q, want %v", phone, status, dks, one, both)
		}
	}
	shared := []string{d1, d3}
	sort.Strings(shared)
	if status, dks, one, _ := lookupKeys(t, env, op, `{"contractId":"C-SHARED"}`); status != http.StatusOK || fmt.Sprint(dks) != fmt.Sprint(shared) || one != "" {
		t.Errorf("contract C-SHARED: %d %v %q, want %v", status, dks, one, shared)
	}
	if status, dks, one, _ := lookupKeys(t, env, op, `{"contractId":"C-ONLY-2"}`); status != http.StatusOK || len(dks) != 1 || one != d2 {
		t.Errorf("contract C-ONLY-2: %d %v %q, want %s", status, dks, one, d2)
	}
	// The other tenant finds only its own debtor, under the same phone and id.
	for _, body := range []string{`{"phone":"11987654321"}`, `{"contractId":"C-SHARED"}`} {
		if status, dks, one, _ := lookupKeys(t, env, opB, body); status != http.StatusOK || len(dks) != 1 || one != dB {
			t.Errorf("tenant b %s: %d %v %q, want only %s", body, status, dks, one, dB)
		}
	}
	if status, _, _, code := lookupKeys(t, env, opB, `{"contractId":"C-ONLY-2"}`); status != http.StatusNotFound || code != "debtor_not_found" {
		t.Errorf("tenant b finds tenant a's contract: %d %s", status, code)
	}

	// A change of phone moves the entry: the new number finds d2, the
	// old finds d1 alone.
	if status, out := env.Do(t, http.MethodPatch, "/v1/debtors/"+d2, op, `{"version":1,"phone":"+55 31 97777-1234"}`); status != http.StatusOK {
		t.Fatalf("patch phone: %d %v", status, out)
	}
	if status, dks, one, _ := lookupKeys(t, env, op, `{"phone":"(31) 97777-1234"}`); status != http.StatusOK || len(dks) != 1 || one != d2 {
		t.Errorf("new phone: %d %v %q", status, dks, one)
	}
	if status, dks, one, _ := lookupKeys(t, env, op, `{"phone":"(11) 98765-4321"}`); status != http.StatusOK || len(dks) != 1 || one != d1 {
		t.Errorf("old phone: %d %v %q, want only %s", status, dks, one, d1)
	}
	// Removing the phone removes the entry.
	if status, out := env.Do(t, http.MethodPatch, "/v1/debtors/"+d2, op, `{"version":2,"phone":""}`); status != http.StatusOK {
		t.Fatalf("remove phone: %d %v", status, out)
	}
	if status, _, _, code := lookupKeys(t, env, op, `{"phone":"31977771234"}`); status != http.StatusNotFound || code != "debtor_not_found" {
		t.Errorf("removed phone: %d %s", status, code)
	}

	// Erasure (an authority's order; d3's contract written off first)
	// removes d3's phone entry; its contract stays findable, marked erased.
	if status, out := env.Do(t, http.MethodPost, "/v1/debtors/"+d3+"/contracts/C-SHARED/write-off", ka["supervisor"], `{"reason":"UNCOLLECTIBLE"}`); status != http.StatusOK {
		t.Fatalf("write-off: %d %v", status, out)
	}
	if status, out := env.Do(t, http.MethodPost, "/v1/debtors/"+d3+"/erasure", ka["compliance"], `{"reason":"LEGAL_ORDER"}`); status != http.StatusOK {
		t.Fatalf("erasure: %d %v", status, out)
	}
	if status, _, _, code := lookupKeys(t, env, op, `{"phone":"(21) 99999-0000"}`); status != http.StatusNotFound || code != "debtor_not_found" {
		t.Errorf("erased debtor's phone: %d %s", status, code)
	}
	status, out := env.Do(t, http.MethodPost, "/v1/debtors/lookup", op, `{"contractId":"C-SHARED"}`)
	erased := 0
	for _, m := range out["matches"].([]any) {
		if mm := m.(map[string]any); mm["debtorKey"] == d3 && mm["erased"] == true && mm["maskedDocument"] == nil {
			erased++
		}
	}
	if status != http.StatusOK || erased != 1 {
		t.Errorf("contract of an erased debtor: %d %v", status, out)
	}

	// No key holds a phone, in any spelling.
	for _, it := range env.ScanAll(t) {
		k := fmt.Sprint(it["PK"], it["SK"])
		for _, digits := range []string{"987654321", "977771234", "999990000"} {
			if strings.Contains(k, digits) {
				t.Errorf("a key holds the phone: %s", k)
			}
		}
	}
	// Bad input: the spec's error shape, 400, nothing found.
	for _, tt := range []struct{ body, code string }{
		{`{"phone":"12"}`, "invalid_phone"},
		{`{"phone":"+55 11 9876x-4321"}`, "invalid_phone"},
		{`{"contractId":"C#1"}`, "invalid_contract_id"},
		{`{"contractId":"C-1","phone":"11987654321"}`, "invalid_lookup"},
		{`{"document":"529.982.247-25","contractId":"C-1"}`, "invalid_lookup"},
		{`{}`, "invalid_document"},
	} {
		if status, out := env.Do(t, http.MethodPost, "/v1/debtors/lookup", op, tt.body); status != http.StatusBadRequest || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want 400 %s", tt.body, status, out, tt.code)
		}
	}
	// The lookups naming a debtor, for a key rotation: d1's phone and
	// contract entries.
	ls, err := env.Debtors.Lookups(bg, ta, d1)
	if err != nil || len(ls) != 2 {
		t.Fatalf("lookups of d1: %v %v", ls, err)
	}
	for _, k := range ls {
		if !strings.HasPrefix(k.PK, keys.TenantPrefix(ta.ID)) || k.SK != keys.LookupEntry(d1) {
			t.Errorf("lookup %v does not name d1", k)
		}
	}
}

// TestE164: the spellings of a Brazilian number agree; numbers with their
// country code keep it.
func TestE164(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"11987654321": "+5511987654321", "1133334444": "+551133334444", "011987654321": "+5511987654321",
		"5511987654321": "+5511987654321", "+5511987654321": "+5511987654321", "+351912345678": "+351912345678",
	} {
		if got := debtor.E164(in); got != want {
			t.Errorf("E164(%s) = %s, want %s", in, got, want)
		}
	}
	a, b := debtor.PhoneHash([]byte("s1"), "+5511987654321"), debtor.PhoneHash([]byte("s2"), "+5511987654321")
	if a == b || len(a) != 32 || strings.Contains(a, "987654321") {
		t.Errorf("phone hashes %s, %s", a, b)
	}
}
