package debtor_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/pii/piitest"
	"lastro/engine/enginetest"
)

// itemKey names an item by its primary key.
func itemKey(it kit.Item) string {
	pk, _ := it["PK"].(*types.AttributeValueMemberS)
	sk, _ := it["SK"].(*types.AttributeValueMemberS)
	if pk == nil || sk == nil {
		return ""
	}
	return pk.Value + "|" + sk.Value
}

func itemJSON(t *testing.T, it kit.Item) string {
	t.Helper()
	var m map[string]any
	if err := attributevalue.UnmarshalMap(it, &m); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestDataReportAndErasure runs the debtor's LGPD rights end to end on two
// tenants holding the same person: the report lists every item of the
// debtor with the profile decrypted; erasure waits for the contracts to
// close and the retention to run out, then leaves no personal datum of
// that debtor readable in the table, the report, the API or the outbox,
// every other item (balances, settlements, events) unchanged, and the
// other tenant's copy untouched.
func TestDataReportAndErasure(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	ta, ka := env.Tenant(t, "t-a")
	tb, kb := env.Tenant(t, "t-b")
	call := func(method, path, token, body string, want int) map[string]any {
		t.Helper()
		status, out := env.Do(t, method, path, token, body)
		if status != want {
			t.Fatalf("%s %s: %d %v", method, path, status, out)
		}
		return out
	}
	subject := `{"document":"529.982.247-25","name":"` + piitest.Name + `","phone":"` + piitest.Phone + `","email":"` + piitest.Email + `","uf":"SP"}`
	dk := call("POST", "/v1/debtors", ka["operator"], subject, 201)["debtorKey"].(string)
	dkB := call("POST", "/v1/debtors", kb["operator"], subject, 201)["debtorKey"].(string)
	base := "/v1/debtors/" + dk
	call("POST", base+"/contracts", ka["operator"], `{"contractId":"C-1","productCode":"CREDIARIO_12X","installments":[
		{"seq":1,"dueDate":"2026-07-10","principalCents":90000,"interestCents":10000},
		{"seq":2,"dueDate":"2026-08-10","principalCents":90000,"interestCents":10000},
		{"seq":3,"dueDate":"2026-11-10","principalCents":90000,"interestCents":10000}]}`, 201)
	charge := call("POST", "/v1/charges", ka["operator"], `{"debtorKey":"`+dk+`","contractId":"C-1","seq":1,"method":"PIX"}`, 201)
	env.Clock.Advance(10 * time.Minute)
	body := enginetest.WebhookBody("stl-1", charge["chargeId"].(string), int64(charge["amountCents"].(float64)), "2026-09-24T09:05:00-03:00")
	if status, out, err := env.Deliver(ta.ID, ka["webhook"], body, env.Clock.Now(), nil); err != nil || status != 200 {
		t.Fatalf("settlement: %d %s %v", status, out, err)
	}
	call("POST", base+"/contracts/C-1/promises", ka["operator"], `{"promisedDate":"2026-09-30","amountCents":100000}`, 201)
	env.Do(t, "POST", base+"/contacts", ka["operator"], `{"channel":"SMS","template":"MANUAL_SMS","contractId":"C-1"}`)

	// The report is compliance's.
	if status, _ := env.Do(t, "GET", base+"/data-report", ka["operator"], ""); status != http.StatusForbidden {
		t.Fatalf("operator's data report: %d, want 403", status)
	}
	if status, out := env.Do(t, "GET", base+"/data-report?reason=GOSSIP", ka["compliance"], ""); status != 400 || enginetest.ErrorCode(out) != "invalid_reason" {
		t.Fatalf("bad reason: %d %v", status, out)
	}
	status, raw := env.Raw(t, "GET", base+"/data-report", ka["compliance"], "")
	if status != 200 {
		t.Fatalf("data report: %d %s", status, raw)
	}
	var rep struct {
		EventID string `json:"eventId"`
		Profile struct {
			Document, Name, Phone, Email, UF, ErasedAt string
		} `json:"profile"`
		Contracts []struct {
			ContractID   string           `json:"contractId"`
			Header       map[string]any   `json:"header"`
			Installments []map[string]any `json:"installments"`
			Charges      []map[string]any `json:"charges"`
			Promises     []map[string]any `json:"promises"`
		} `json:"contracts"`
		Contacts []map[string]any `json:"contacts"`
		Events   []struct {
			EventID, EventType string
		} `json:"events"`
		Items int `json:"items"`
	}
	if err := json.Unmarshal([]byte(raw), &rep); err != nil {
		t.Fatal(err)
	}
	p := rep.Profile
	if p.Document != "529.982.247-25" || p.Name != piitest.Name || p.Email != piitest.Email || p.Phone == "" || p.UF != "SP" {
		t.Fatalf("report profile not decrypted: %+v", p)
	}
	if n := len(env.Partition(t, ta, dk)); rep.Items != n {
		t.Fatalf("report holds %d items, the debtor has %d", rep.Items, n)
	}
	if len(rep.Contracts) != 1 || rep.Contracts[0].Header == nil || len(rep.Contracts[0].Installments) != 3 ||
		len(rep.Contracts[0].Charges) != 1 || len(rep.Contracts[0].Promises) != 1 || len(rep.Contacts) == 0 {
		t.Fatalf("report contracts/contacts: %+v %d contacts", rep.Contracts, len(rep.Contacts))
	}
	audited := false
	for _, e := range rep.Events {
		audited = audited || (e.EventType == "DataReportIssued" && e.EventID == rep.EventID)
	}
	if !audited {
		t.Fatalf("the report does not list its own audit event: %+v", rep.Events)
	}

	// Erasure waits for the contracts to close, then for the retention.
	erase := func(want int) map[string]any {
		t.Helper()
		return call("POST", base+"/erasure", ka["compliance"], "", want)
	}
	if out := erase(422); enginetest.ErrorCode(out) != "debtor_has_open_contracts" {
		t.Fatalf("erasure with an open contract: %v", out)
	}
	call("POST", base+"/contracts/C-1/write-off", ka["supervisor"], `{"reason":"UNCOLLECTIBLE"}`, 200)
	if out := erase(422); enginetest.ErrorCode(out) != "retention_not_elapsed" {
		t.Fatalf("erasure within the retention: %v", out)
	}
	before := map[string]kit.Item{}
	for _, it := range env.ScanAll(t) {
		if k := itemKey(it); k != keys.Debtor(ta.ID, dk)+"|"+keys.ProfileSK {
			before[k] = it
		}
	}
	outboxBefore := len(env.Outbox(t))

	env.Clock.Set(time.Date(2031, 10, 1, 12, 0, 0, 0, time.UTC)) // 5 years and a week after the write-off
	done := erase(200)
	if done["alreadyErased"] != false || done["eventId"] == "" {
		t.Fatalf("erasure: %v", done)
	}
	if again := erase(200); again["alreadyErased"] != true {
		t.Fatalf("second erasure: %v", again)
	}
	// A correction cannot bring personal data, or a state, back.
	for _, body := range []string{`{"version":1,"phone":"+55 11 91234-5678"}`, `{"version":1,"uf":"RJ"}`} {
		if out := call("PATCH", base, ka["operator"], body, 422); enginetest.ErrorCode(out) != "personal_data_erased" {
			t.Fatalf("patch of an erased profile: %v", out)
		}
	}

	// Every item but the profile is as it was: balances, instalments,
	// settlements, charges, events. New items are audit events only.
	after := env.ScanAll(t)
	seen, phones := 0, 0
	isPhone := func(k string) bool {
		return strings.HasPrefix(k, keys.TenantPrefix(ta.ID)+"PHONE#") && strings.HasSuffix(k, "|"+keys.LookupEntry(dk))
	}
	for k := range before {
		if isPhone(k) {
			phones++ // the phone's lookup entry goes with the phone (ADR 0084)
		}
	}
	if phones != 1 {
		t.Fatalf("%d phone lookup entries before the erasure, want 1", phones)
	}
	for _, it := range after {
		k := itemKey(it)
		if isPhone(k) {
			t.Errorf("the phone's lookup entry %s survived the erasure", k)
		}
		if old, ok := before[k]; ok {
			seen++
			if !reflect.DeepEqual(old, it) {
				t.Errorf("%s changed by the erasure", k)
			}
			continue
		}
		if strings.HasPrefix(k, keys.Debtor(ta.ID, dk)+"|"+keys.ProfileSK) {
			if _, ok := it["pii"]; ok {
				t.Error("the erased profile still holds its sealed data")
			}
			continue
		}
		if typ, _ := it["type"].(*types.AttributeValueMemberS); typ == nil || typ.Value != "EVENT" {
			t.Errorf("the erasure wrote %s", k)
		}
	}
	if seen != len(before)-phones {
		t.Errorf("%d of %d items survived the erasure", seen, len(before)-phones)
	}
	// Nothing of the person is readable in tenant t-a's items.
	for _, it := range after {
		if strings.HasPrefix(itemKey(it), keys.TenantPrefix(ta.ID)) || itemKey(it) == keys.Tenant(ta.ID)+"|"+keys.TenantSK {
			if leaks := piitest.Leaks(itemJSON(t, it)); leaks != nil {
				t.Errorf("%s holds %v after the erasure", itemKey(it), leaks)
			}
		}
	}
	status, raw = env.Raw(t, "GET", base+"/data-report", ka["compliance"], "")
	if status != 200 || piitest.Leaks(raw) != nil || !strings.Contains(raw, `"erasedAt"`) {
		t.Fatalf("report after erasure: %d %v %s", status, piitest.Leaks(raw), raw)
	}
	for _, path := range []string{base, base + "/contacts?date=2026-09-24"} {
		if status, raw := env.Raw(t, "GET", path, ka["compliance"], ""); piitest.Leaks(raw) != nil {
			t.Errorf("GET %s after erasure: %d %v", path, status, piitest.Leaks(raw))
		}
	}
	if status, out := env.Do(t, "POST", base+"/reveal", ka["compliance"], ""); status != 422 || enginetest.ErrorCode(out) != "personal_data_erased" {
		t.Fatalf("reveal after erasure: %d %v", status, out)
	}
	if status, out := env.Do(t, "POST", "/v1/debtors/lookup", ka["operator"], `{"document":"52998224725"}`); status != 422 || enginetest.ErrorCode(out) != "personal_data_erased" {
		t.Fatalf("lookup after erasure: %d %v", status, out)
	}
	// From now on nothing is sent to the person.
	env.Do(t, "POST", base+"/contacts", ka["operator"], `{"channel":"SMS","template":"MANUAL_SMS","contractId":"C-1"}`)
	for _, line := range env.Outbox(t)[outboxBefore:] {
		raw, _ := json.Marshal(line)
		if leaks := piitest.Leaks(string(raw)); leaks != nil {
			t.Errorf("outbox after erasure: %v", leaks)
		}
	}
	if leaks := piitest.Leaks(env.Logs.String()); leaks != nil {
		t.Errorf("logs: %v", leaks)
	}
	// The other tenant's copy of the same person is untouched.
	if out := call("POST", "/v1/debtors/"+dkB+"/reveal", kb["compliance"], "", 200); out["document"] != "529.982.247-25" {
		t.Fatalf("t-b reveal: %v", out)
	}
	_ = tb
}

// TestRetentionPolicy covers the policy's bounds and its version
// condition.
func TestRetentionPolicy(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	_, k := env.Tenant(t, "t-r")
	if status, out := env.Do(t, "GET", "/v1/retention", k["compliance"], ""); status != 200 || out["yearsAfterClosure"] != float64(5) || out["version"] != float64(0) {
		t.Fatalf("default: %d %v", status, out)
	}
	tests := []struct {
		name, body string
		want       int
		code       string
	}{
		{"below the legal minimum", `{"yearsAfterClosure":4}`, 422, "invalid_retention"},
		{"not a number", `{"yearsAfterClosure":"seven"}`, 400, ""},
		{"first version", `{"yearsAfterClosure":7,"version":0}`, 200, ""},
		{"stale version", `{"yearsAfterClosure":8,"version":0}`, 409, "version_conflict"},
		{"next version", `{"yearsAfterClosure":8,"version":1}`, 200, ""},
	}
	for _, tt := range tests { // in order: each builds on the last
		status, out := env.Do(t, "PUT", "/v1/retention", k["compliance"], tt.body)
		if status != tt.want || (tt.code != "" && enginetest.ErrorCode(out) != tt.code) {
			t.Errorf("%s: %d %v", tt.name, status, out)
		}
	}
	if status, out := env.Do(t, "GET", "/v1/retention", k["compliance"], ""); status != 200 || out["yearsAfterClosure"] != float64(8) || out["version"] != float64(2) {
		t.Fatalf("after changes: %d %v", status, out)
	}
}
