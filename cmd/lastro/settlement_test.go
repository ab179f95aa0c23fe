package main

import (
	"bytes"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"lastro/collections/signature"
	"lastro/engine/enginetest"
)

// lateContractHTTP registers a debtor and a contract of three instalments
// (900.00 + 100.00) due 2026-09-10, 10-10 and 11-10, the first 14 days
// late on the engine's today; it returns the debtor key.
func lateContractHTTP(t *testing.T, te *enginetest.Env, op, doc, contractID string) string {
	t.Helper()
	status, out := te.Do(t, "POST", "/v1/debtors", op, `{"document":"`+doc+`","name":"Pessoa Sintética"}`)
	if status != 201 && status != 200 {
		t.Fatalf("register: %d %v", status, out)
	}
	dk := out["debtorKey"].(string)
	signLateContract(t, te, op, dk, contractID)
	return dk
}

// signLateContract signs lateContractHTTP's contract for a registered debtor.
func signLateContract(t *testing.T, te *enginetest.Env, op, dk, contractID string) {
	t.Helper()
	body := `{"contractId":"` + contractID + `","productCode":"CREDIARIO_12X","installments":[` +
		`{"seq":1,"dueDate":"2026-09-10","principalCents":90000,"interestCents":10000},` +
		`{"seq":2,"dueDate":"2026-10-10","principalCents":90000,"interestCents":10000},` +
		`{"seq":3,"dueDate":"2026-11-10","principalCents":90000,"interestCents":10000}]}`
	if status, out := te.Do(t, "POST", "/v1/debtors/"+dk+"/contracts", op, body); status != 201 {
		t.Fatalf("contract: %d %v", status, out)
	}
}

func chargeHTTP(t *testing.T, te *enginetest.Env, op, dk, contractID string, seq int, method string) map[string]any {
	t.Helper()
	status, out := te.Do(t, "POST", "/v1/charges", op, fmt.Sprintf(`{"debtorKey":%q,"contractId":%q,"seq":%d,"method":%q}`, dk, contractID, seq, method))
	if status != 201 {
		t.Fatalf("charge %s %d: %d %v", contractID, seq, status, out)
	}
	return out
}

var txidPattern = regexp.MustCompile(`^[A-Za-z0-9]{26,35}$`)

func TestChargesAndSettlementOverHTTP(t *testing.T) {
	t.Parallel()
	te, _ := newTestEngineAt(t)
	keys := te.CreateTenant(t, "t-pay")
	op, sup := keys["operator"], keys["supervisor"]
	dk := lateContractHTTP(t, te, op, te.CPF(), "C-1")

	// A Pix charge: txid, amount due today (1000.00 + 2 % + 14 days of 1 %
	// a month), valid until the end of the day in São Paulo.
	body := fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":1,"method":"PIX"}`, dk)
	status, first := te.Raw(t, "POST", "/v1/charges", op, body, "Idempotency-Key", "chg-1")
	ch := enginetest.JSON(t, first)
	if status != 201 || !txidPattern.MatchString(ch["chargeId"].(string)) || ch["amountCents"] != float64(102467) ||
		ch["expiresAt"] != "2026-09-25T09:00:00-03:00" || ch["computedFor"] != "2026-09-24" || ch["daysLate"] != float64(14) {
		t.Fatalf("PIX charge: %d %s", status, first)
	}
	// Idempotency-Key: the retry returns the first charge, not a second txid.
	status, again := te.Raw(t, "POST", "/v1/charges", op, body, "Idempotency-Key", "chg-1")
	if status != 201 || again != first {
		t.Fatalf("retried creation: %d %s, want %s", status, again, first)
	}
	// A boleto: a 17-digit nosso número.
	bo := chargeHTTP(t, te, op, dk, "C-1", 2, "BOLETO")
	if ok, _ := regexp.MatchString(`^[1-9][0-9]{16}$`, bo["chargeId"].(string)); !ok || bo["amountCents"] != float64(100000) {
		t.Fatalf("boleto: %v", bo)
	}
	for _, tt := range []struct {
		body   string
		status int
		code   string
	}{
		{fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-9","seq":1,"method":"PIX"}`, dk), 404, "contract_not_found"},
		{fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":9,"method":"PIX"}`, dk), 404, "installment_not_found"},
		{fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":1,"method":"TED"}`, dk), 400, "invalid_method"},
		{fmt.Sprintf(`{"debtorKey":%q,"contractId":"C#1","seq":1,"method":"PIX"}`, dk), 400, "invalid_contract_id"},
		{`{"debtorKey":"nope","contractId":"C-1","seq":1,"method":"PIX"}`, 400, "invalid_debtor_key"},
		{fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":1,"method":"PIX","amountCents":1}`, dk), 400, "invalid_json"},
	} {
		if status, out := te.Do(t, "POST", "/v1/charges", op, tt.body); status != tt.status || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want %d %s", tt.body, status, out, tt.status, tt.code)
		}
	}

	// The provider pays the Pix charge.
	chargeID := ch["chargeId"].(string)
	now := enginetest.DefaultNow
	status, res, err := te.Deliver("t-pay", keys["webhook"], enginetest.WebhookBody("stl-1", chargeID, 102467, "2026-09-24T09:00:00-03:00"), now, nil)
	if err != nil || status != 200 || enginetest.JSON(t, res)["status"] != "applied" || enginetest.JSON(t, res)["contractStatus"] != "ACTIVE" {
		t.Fatalf("webhook: %d %s %v", status, res, err)
	}
	status, view := te.Do(t, "GET", "/v1/debtors/"+dk, op, "")
	c := view["contracts"].([]any)[0].(map[string]any)
	if status != 200 || c["status"] != "ACTIVE" || c["bucket"] != nil || c["nextAction"] != "DUE_CHECK" || c["outstandingCents"] != float64(200000) {
		t.Fatalf("360 after payment: %d %v", status, c)
	}
	// An unknown charge is recorded and listed for the supervisor.
	status, res, _ = te.Deliver("t-pay", keys["webhook"], enginetest.WebhookBody("stl-2", "UNKNOWN1", 5000, "2026-09-24T08:16:00-03:00"), now, nil)
	if status != 200 || enginetest.JSON(t, res)["status"] != "unmatched" {
		t.Fatalf("unmatched: %d %s", status, res)
	}
	status, list := te.Do(t, "GET", "/v1/settlements/unmatched?limit=10", sup, "")
	items, _ := list["items"].([]any)
	if status != 200 || len(items) != 1 || items[0].(map[string]any)["settlementId"] != "stl-2" || list["nextCursor"] != nil {
		t.Fatalf("unmatched list: %d %v", status, list)
	}
	if status, _ := te.Do(t, "GET", "/v1/settlements/unmatched", op, ""); status != 403 {
		t.Fatalf("operator reads the suspense list: %d", status)
	}
}

// TestWebhookBadInputWritesNothing: every refused webhook is a 4xx, never
// a 5xx, and leaves the table exactly as it was.
func TestWebhookBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	te, _ := newTestEngineAt(t)
	keys := te.CreateTenant(t, "t-pay")
	other := te.CreateTenant(t, "t-other")
	dk := lateContractHTTP(t, te, keys["operator"], te.CPF(), "C-1")
	chargeID := chargeHTTP(t, te, keys["operator"], dk, "C-1", 1, "PIX")["chargeId"].(string)
	now := enginetest.DefaultNow
	good := enginetest.WebhookBody("stl-1", chargeID, 102467, "2026-09-24T09:00:00-03:00")
	before := te.ScanAll(t)

	send := func(tenantID, body string, headers map[string]string) (int, map[string]any) {
		var pairs []string
		for k, v := range headers {
			pairs = append(pairs, k, v)
		}
		// No bearer token: only the headers given (Raw sets none when empty).
		return te.Do(t, http.MethodPost, "/v1/webhooks/"+tenantID+"/settlements", "", body, pairs...)
	}
	signed := func(secret, body string, at time.Time) map[string]string {
		return map[string]string{signature.TimestampHeader: strconv.FormatInt(at.Unix(), 10),
			signature.SignatureHeader: signature.Sign(secret, at.Unix(), []byte(body))}
	}
	sig := signed(keys["webhook"], good, now)
	tests := []struct {
		name, tenant, body string
		headers            map[string]string
		status             int
		code               string
	}{
		{"no signature", "t-pay", good, nil, 401, "signature_missing"},
		{"no timestamp", "t-pay", good, map[string]string{signature.SignatureHeader: sig[signature.SignatureHeader]}, 401, "signature_missing"},
		{"old timestamp", "t-pay", good, signed(keys["webhook"], good, now.Add(-301*time.Second)), 401, "signature_stale"},
		{"an hour old replay", "t-pay", good, signed(keys["webhook"], good, now.Add(-time.Hour)), 401, "signature_stale"},
		{"forged", "t-pay", good, map[string]string{signature.TimestampHeader: sig[signature.TimestampHeader], signature.SignatureHeader: "v1=" + strings.Repeat("ab", 32)}, 401, "invalid_signature"},
		{"another tenant's secret", "t-pay", good, signed(other["webhook"], good, now), 401, "invalid_signature"},
		{"signed for another tenant", "t-other", good, sig, 401, "invalid_signature"},
		{"body changed after signing", "t-pay", strings.Replace(good, "102467", "1", 1), sig, 401, "invalid_signature"},
		{"an API key is no signature", "t-pay", good, map[string]string{"Authorization": "Bearer " + keys["operator"]}, 401, "signature_missing"},
		{"unknown tenant", "t-nobody", good, signed(keys["webhook"], good, now), 404, "tenant_not_found"},
		{"invalid tenant id", "T_PAY", good, signed(keys["webhook"], good, now), 404, "tenant_not_found"},
	}
	for _, b := range []struct{ name, body, code string }{
		{"malformed JSON", `{"settlementId":`, "invalid_json"},
		{"not an object", `[1]`, "invalid_json"},
		{"negative amount", strings.Replace(good, "102467", "-102467", 1), "invalid_amount"},
		{"zero amount", strings.Replace(good, "102467", "0", 1), "invalid_amount"},
		{"fractional amount", strings.Replace(good, "102467", "1024.67", 1), "invalid_amount"},
		{"amount as a string", strings.Replace(good, "102467", `"102467"`, 1), "invalid_amount"},
		{"unknown field", strings.Replace(good, "}", `,"document":"52998224725"}`, 1), "unknown_field"},
		{"missing field", enginetest.WebhookBody("stl-1", chargeID, 1, "x")[:strings.Index(enginetest.WebhookBody("stl-1", chargeID, 1, "x"), `,"paidAt"`)] + "}", "missing_field"},
		{"bad paidAt", enginetest.WebhookBody("stl-1", chargeID, 1, "2026-09-24"), "invalid_paid_at"},
		{"settlement id unfit for a key", enginetest.WebhookBody("stl#1", chargeID, 1, "2026-09-24T09:00:00-03:00"), "invalid_settlement_id"},
		{"charge id unfit for a key", enginetest.WebhookBody("stl-1", "T#x", 1, "2026-09-24T09:00:00-03:00"), "invalid_charge_id"},
	} {
		tests = append(tests, struct {
			name, tenant, body string
			headers            map[string]string
			status             int
			code               string
		}{b.name, "t-pay", b.body, signed(keys["webhook"], b.body, now), 400, b.code})
	}
	for _, tt := range tests {
		status, out := send(tt.tenant, tt.body, tt.headers)
		if status != tt.status || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want %d %s", tt.name, status, out, tt.status, tt.code)
		}
	}
	if after := te.ScanAll(t); !reflect.DeepEqual(after, before) {
		t.Fatalf("refused webhooks wrote: %d items before, %d after", len(before), len(after))
	}
	// And the good one still applies.
	if status, out := send("t-pay", good, sig); status != 200 || out["status"] != "applied" {
		t.Fatalf("good webhook: %d %v", status, out)
	}
	if bytes.Contains([]byte(te.Logs.String()), []byte("52998224725")) {
		t.Fatal("a refused body reached the logs")
	}
}
