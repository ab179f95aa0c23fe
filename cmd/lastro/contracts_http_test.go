package main

import (
	"strings"
	"testing"

	"lastro/engine/enginetest"
)

// TestContractsAndPoliciesOverHTTP: roles, the error shape, bad input that
// changes nothing, Idempotency-Key on contract creation, policy versions
// frozen on contracts.
func TestContractsAndPoliciesOverHTTP(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	k := te.CreateTenant(t, "t-http")
	op, sup, comp := k["operator"], k["supervisor"], k["compliance"]
	status, out := te.Do(t, "POST", "/v1/debtors", op, `{"document":"111.444.777-35","name":"Devedor Sintético"}`)
	if status != 201 {
		t.Fatalf("register: %d %v", status, out)
	}
	dk := out["debtorKey"].(string)
	good := `{"contractId":"C-1","productCode":"CREDIARIO_12X","installments":` + installmentsJSON("2026-10", 12, "10000") + `}`
	status, first := te.Raw(t, "POST", "/v1/debtors/"+dk+"/contracts", op, good, "Idempotency-Key", "k-1")
	if status != 201 {
		t.Fatalf("create: %d %s", status, first)
	}
	status, replay := te.Raw(t, "POST", "/v1/debtors/"+dk+"/contracts", op, good, "Idempotency-Key", "k-1")
	if status != 201 || replay != first {
		t.Fatalf("replay: %d %s", status, replay)
	}
	count := func() int {
		_, v := te.Do(t, "GET", "/v1/debtors/"+dk, op, "")
		n := 0
		for _, c := range v["contracts"].([]any) {
			n += 1 + len(c.(map[string]any)["installments"].([]any)) + len(c.(map[string]any)["events"].([]any))
		}
		return n + len(v["events"].([]any))
	}
	before := count()
	one := func(field string) string {
		return `{"contractId":"C-2","productCode":"CREDIARIO_12X","installments":[{"seq":1,"dueDate":"2026-10-10","principalCents":100,"interestCents":0` + field + `}]}`
	}
	tests := []struct {
		name, method, path, token, body string
		status                          int
		code                            string
	}{
		{"duplicate contract", "POST", "/v1/debtors/" + dk + "/contracts", op, good, 409, "contract_exists"},
		{"same key other body", "POST", "/v1/debtors/" + dk + "/contracts", op, strings.Replace(good, "C-1", "C-3", 1), 201, ""},
		{"unknown debtor", "POST", "/v1/debtors/00000000000000ff/contracts", op, strings.Replace(good, "C-1", "C-2", 1), 404, "debtor_not_found"},
		{"unknown debtor 360", "GET", "/v1/debtors/00000000000000ff", op, "", 404, "debtor_not_found"},
		{"malformed debtor key", "GET", "/v1/debtors/NOT-A-KEY", op, "", 400, "invalid_debtor_key"},
		{"hash in contract id", "POST", "/v1/debtors/" + dk + "/contracts", op, strings.Replace(good, "C-1", "C#2", 1), 400, "invalid_contract_id"},
		{"negative cents", "POST", "/v1/debtors/" + dk + "/contracts", op, strings.Replace(one(""), `"principalCents":100`, `"principalCents":-100`, 1), 400, "invalid_amount"},
		{"fractional cents", "POST", "/v1/debtors/" + dk + "/contracts", op, strings.Replace(one(""), `"principalCents":100`, `"principalCents":100.5`, 1), 400, "invalid_amount"},
		{"impossible date", "POST", "/v1/debtors/" + dk + "/contracts", op, strings.Replace(one(""), "2026-10-10", "2026-02-30", 1), 400, "invalid_date"},
		{"unknown field", "POST", "/v1/debtors/" + dk + "/contracts", op, one(`,"fineCents":3`), 400, "invalid_json"},
		{"1000 instalments", "POST", "/v1/debtors/" + dk + "/contracts", op, `{"contractId":"C-2","productCode":"X","installments":` + installmentsJSON("2026-10", 1000, "1") + `}`, 400, "too_many_installments"},
		{"invalid document", "POST", "/v1/debtors", op, `{"document":"111.444.777-36","name":"X"}`, 400, "invalid_document"},
		{"lookup unknown", "POST", "/v1/debtors/lookup", op, `{"document":"52998224725"}`, 404, "debtor_not_found"},
		{"operator may not reveal", "POST", "/v1/debtors/" + dk + "/reveal", op, "", 403, "forbidden"},
		{"operator may not read the audit trail", "GET", "/v1/debtors/" + dk + "/contracts/C-1/installments/0/events", op, "", 403, "forbidden"},
		{"AP02 unknown contract", "GET", "/v1/debtors/" + dk + "/contracts/C-9/installments?status=open", op, "", 404, "contract_not_found"},
		{"AP02 bad limit", "GET", "/v1/debtors/" + dk + "/contracts/C-1/installments?limit=0", op, "", 400, "invalid_limit"},
		{"AP09 as compliance", "GET", "/v1/debtors/" + dk + "/contracts/C-1/installments/0/events", comp, "", 200, ""},
		{"fine above cap", "PUT", "/v1/policies/charges", sup, `{"finePercent":"2.01","lateInterestMonthlyPercent":"1.00"}`, 422, "fine_above_cap"},
		{"operator may not set policies", "PUT", "/v1/policies/charges", op, `{"finePercent":"1.00","lateInterestMonthlyPercent":"1.00"}`, 403, "forbidden"},
		{"numeric percent", "PUT", "/v1/policies/charges", sup, `{"finePercent":1,"lateInterestMonthlyPercent":"1.00"}`, 400, "invalid_json"},
	}
	for _, tt := range tests {
		status, out := te.Do(t, tt.method, tt.path, tt.token, tt.body)
		if status != tt.status || (tt.code != "" && enginetest.ErrorCode(out) != tt.code) {
			t.Errorf("%s: %d %v, want %d %s", tt.name, status, out, tt.status, tt.code)
		}
	}
	// Only C-3 was added (its header, 12 instalments and its event).
	if after := count(); after != before+14 {
		t.Fatalf("items: %d before, %d after", before, after)
	}
	// Policies: a new version is used by new contracts only.
	status, out = te.Do(t, "PUT", "/v1/policies/charges", sup, `{"finePercent":"1.50","lateInterestMonthlyPercent":"0.99"}`)
	if status != 201 || out["name"] != "CP#v0001" || out["finePercent"] != "1.50" {
		t.Fatalf("charges v1: %d %v", status, out)
	}
	status, out = te.Do(t, "PUT", "/v1/policies/dunning", sup, `{"steps":[{"daysPastDue":2,"action":"SMS_D2"}],"contactWindow":{"weekdays":{"from":"09:00","to":"18:00"},"saturday":null,"sunday":null},"maxDailyContacts":2,"bureauNoticeToReportDays":10}`)
	if status != 201 || out["name"] != "DP#v0001" {
		t.Fatalf("dunning v1: %d %v", status, out)
	}
	status, out = te.Do(t, "GET", "/v1/tenant", op, "")
	if pol := out["policies"].(map[string]any); status != 200 || pol["charges"] != "CP#v0001" || pol["dunning"] != "DP#v0001" {
		t.Fatalf("tenant policies: %v", out)
	}
	status, out = te.Do(t, "POST", "/v1/debtors/"+dk+"/contracts", op, strings.Replace(good, "C-1", "C-4", 1))
	if status != 201 || out["chargesPolicy"] != "CP#v0001" || out["dunningPolicy"] != "DP#v0001" {
		t.Fatalf("new contract: %d %v", status, out)
	}
	_, v := te.Do(t, "GET", "/v1/debtors/"+dk, op, "")
	for _, c := range v["contracts"].([]any) {
		c := c.(map[string]any)
		want := "CP#v0000"
		if c["contractId"] == "C-4" {
			want = "CP#v0001"
		}
		if c["chargesPolicy"] != want {
			t.Errorf("%s signed under %s, shows %s", c["contractId"], want, c["chargesPolicy"])
		}
	}
	status, out = te.Do(t, "PUT", "/v1/tenant/holidays", sup, `{"dates":["2027-01-25","2026-11-20"]}`)
	if status != 200 || len(out["dates"].([]any)) != 2 {
		t.Fatalf("holidays: %d %v", status, out)
	}
	status, out = te.Do(t, "GET", "/v1/tenant/holidays?year=2027", op, "")
	if status != 200 || len(out["national"].([]any)) != 14 || len(out["tenant"].([]any)) != 1 {
		t.Fatalf("holidays 2027: %d %v", status, out)
	}
	if status, out = te.Do(t, "PUT", "/v1/tenant/holidays", op, `{"dates":[]}`); status != 403 {
		t.Fatalf("operator sets holidays: %d %v", status, out)
	}
	status, out = te.Do(t, "GET", "/v1/policies/charges?version=0", comp, "")
	if status != 200 || out["finePercent"] != "2.00" || out["name"] != "CP#v0000" {
		t.Fatalf("default charges: %d %v", status, out)
	}
}
