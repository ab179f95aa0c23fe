package stream_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"lastro/collections/pii/piitest"
	"lastro/engine/enginetest"
	"lastro/stream"
)

// TestTranslateTheEnginesOwnItems runs the engine through a debtor with
// personal data, contracts late, paid, promised, renegotiated and written
// off, settlements matched and not, and contacts refused; then it reads
// every item the engine wrote, as a stream would deliver its insert, and
// translates it. Items written by the real code must decode (none is
// poison), their events must validate against the schemas and hold none
// of the debtor's personal data.
func TestTranslateTheEnginesOwnItems(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	tn, k := env.Tenant(t, "t-events")
	op, sup := k["operator"], k["supervisor"]
	call := func(method, path, token, body string, want int) map[string]any {
		t.Helper()
		status, out := env.Do(t, method, path, token, body)
		if status != want {
			t.Fatalf("%s %s: %d %v", method, path, status, out)
		}
		return out
	}
	reg := call("POST", "/v1/debtors", op, `{"document":"529.982.247-25","name":"`+piitest.Name+`","phone":"`+piitest.Phone+`","email":"`+piitest.Email+`"}`, 201)
	dk := reg["debtorKey"].(string)
	contract := func(id string) string {
		call("POST", "/v1/debtors/"+dk+"/contracts", op, `{"contractId":"`+id+`","productCode":"CREDIARIO_12X","installments":[
			{"seq":1,"dueDate":"2026-07-10","principalCents":90000,"interestCents":10000},
			{"seq":2,"dueDate":"2026-09-10","principalCents":90000,"interestCents":10000},
			{"seq":3,"dueDate":"2026-10-10","principalCents":90000,"interestCents":10000}]}`, 201)
		return "/v1/debtors/" + dk + "/contracts/" + id
	}
	contract("C-PAID")
	charge := call("POST", "/v1/charges", op, `{"debtorKey":"`+dk+`","contractId":"C-PAID","seq":1,"method":"PIX"}`, 201)
	amount := int64(charge["amountCents"].(float64))
	env.Clock.Advance(10 * time.Minute) // paid after the charge was issued
	body := enginetest.WebhookBody("stl-1", charge["chargeId"].(string), amount, "2026-09-24T09:05:00-03:00")
	if status, out, err := env.Deliver(tn.ID, k["webhook"], body, env.Clock.Now(), nil); err != nil || status != 200 {
		t.Fatalf("settlement: %d %s %v", status, out, err)
	}
	body = enginetest.WebhookBody("stl-2", "no-such-charge", 5000, "2026-09-24T09:06:00-03:00")
	if status, out, err := env.Deliver(tn.ID, k["webhook"], body, env.Clock.Now(), nil); err != nil || status != 200 {
		t.Fatalf("unmatched settlement: %d %s %v", status, out, err)
	}
	promised := contract("C-PROMISE")
	call("POST", promised+"/promises", op, `{"promisedDate":"2026-09-30","amountCents":100000}`, 201)
	agreed := contract("C-AGREEMENT")
	call("POST", agreed+"/agreements", op, `{"downPaymentCents":20000,"installments":4,"firstDueDate":"2026-11-10"}`, 201)
	lost := contract("C-LOST")
	call("POST", lost+"/write-off", sup, `{"reason":"UNCOLLECTIBLE"}`, 200)
	blocked := 0
	for range 6 {
		status, _ := env.Do(t, "POST", "/v1/debtors/"+dk+"/contacts", op, `{"channel":"SMS","template":"MANUAL_SMS","contractId":"C-PROMISE"}`)
		if status == http.StatusTooManyRequests {
			blocked++
		}
	}
	if blocked == 0 {
		t.Fatal("no contact was refused: the fixture does not exercise ContactBlocked")
	}

	sch := schemas(t)
	seen := map[string]int{}
	for i, it := range env.ScanAll(t) {
		evs, err := stream.Translate(stream.Record{Sequence: fmt.Sprint(i), Name: stream.Insert, New: it, At: env.Clock.Now()})
		if err != nil {
			t.Fatalf("an item the engine wrote is poison: %v", err)
		}
		for _, e := range evs {
			seen[e.Type]++
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if hits := piitest.Leaks(string(b)); hits != nil {
				t.Errorf("%s holds %v: %s", e.Type, hits, b)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch[e.Type+".v1"].Validate(inst); err != nil {
				t.Errorf("%s does not validate: %v\n%s", e.Type, err, b)
			}
			if e.Tenant != tn.ID || (e.Type != stream.SettlementUnmatched && e.DebtorKey != dk) {
				t.Errorf("%s names tenant %q debtor %q", e.Type, e.Tenant, e.DebtorKey)
			}
		}
	}
	for _, typ := range []string{stream.InstallmentOverdue, stream.BucketChanged, stream.SettlementApplied, stream.SettlementUnmatched,
		stream.AgreementSigned, stream.WrittenOff, stream.ContactBlocked} {
		if seen[typ] == 0 {
			t.Errorf("no %s from the engine's items (saw %v)", typ, seen)
		}
	}
}
