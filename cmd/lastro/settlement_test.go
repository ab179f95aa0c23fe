package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"lastro/collections/clock"
	"lastro/settlement"
)

// settlementNow is Thursday 2026-09-24, 09:00 in São Paulo.
const settlementNow = "2026-09-24T12:00:00Z"

// newTestEngineAt is newTestEngine with the clock frozen at now (a
// *clock.Manual the test can move).
func newTestEngineAt(t *testing.T, now string) (*testEngine, *clock.Manual) {
	t.Helper()
	logs := &syncBuffer{}
	cfg, _, err := loadConfig("test", nil, func(k string) string {
		return map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": "admin-secret-token", "LASTRO_NOW": now}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := newEngine(context.Background(), cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() {
		srv.Close()
		e.Close()
	})
	return &testEngine{engine: e, url: srv.URL, logs: logs}, e.clock.(*clock.Manual)
}

// deliver posts a settlement webhook signed at the engine's now, as a
// provider would; it returns an error instead of failing the test so
// goroutines can use it.
func (te *testEngine) deliver(tenantID, secret, body string, signedAt time.Time, client *http.Client) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, te.url+"/v1/webhooks/"+tenantID+"/settlements", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	ts := signedAt.Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(settlement.TimestampHeader, strconv.FormatInt(ts, 10))
	req.Header.Set(settlement.SignatureHeader, settlement.Sign(secret, ts, []byte(body)))
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func webhookBody(settlementID, chargeID string, amount int64, paidAt string) string {
	return fmt.Sprintf(`{"settlementId":%q,"chargeId":%q,"amountCents":%d,"paidAt":%q}`, settlementID, chargeID, amount, paidAt)
}

// lateContractHTTP registers a debtor and a contract of three instalments
// (900.00 + 100.00) due 2026-09-10, 10-10 and 11-10, the first 14 days
// late on the engine's today; it returns the debtor key.
func lateContractHTTP(t *testing.T, te *testEngine, op, doc, contractID string) string {
	t.Helper()
	status, out := te.do(t, "POST", "/v1/debtors", op, `{"document":"`+doc+`","name":"Pessoa Sintética"}`)
	if status != 201 && status != 200 {
		t.Fatalf("register: %d %v", status, out)
	}
	dk := out["debtorKey"].(string)
	signLateContract(t, te, op, dk, contractID)
	return dk
}

// signLateContract signs lateContractHTTP's contract for a registered debtor.
func signLateContract(t *testing.T, te *testEngine, op, dk, contractID string) {
	t.Helper()
	body := `{"contractId":"` + contractID + `","productCode":"CREDIARIO_12X","installments":[` +
		`{"seq":1,"dueDate":"2026-09-10","principalCents":90000,"interestCents":10000},` +
		`{"seq":2,"dueDate":"2026-10-10","principalCents":90000,"interestCents":10000},` +
		`{"seq":3,"dueDate":"2026-11-10","principalCents":90000,"interestCents":10000}]}`
	if status, out := te.do(t, "POST", "/v1/debtors/"+dk+"/contracts", op, body); status != 201 {
		t.Fatalf("contract: %d %v", status, out)
	}
}

func chargeHTTP(t *testing.T, te *testEngine, op, dk, contractID string, seq int, method string) map[string]any {
	t.Helper()
	status, out := te.do(t, "POST", "/v1/charges", op, fmt.Sprintf(`{"debtorKey":%q,"contractId":%q,"seq":%d,"method":%q}`, dk, contractID, seq, method))
	if status != 201 {
		t.Fatalf("charge %s %d: %d %v", contractID, seq, status, out)
	}
	return out
}

// cpfs are valid synthetic CPFs.
func cpf(n int) string {
	base := fmt.Sprintf("%09d", 200000000+n*7919)
	digit := func(s string, w int) byte {
		sum := 0
		for i := range s {
			sum += int(s[i]-'0') * (w - i)
		}
		r := sum * 10 % 11
		if r == 10 {
			r = 0
		}
		return byte('0' + r)
	}
	d1 := digit(base, 10)
	return base + string(d1) + string(digit(base+string(d1), 11))
}

var txidPattern = regexp.MustCompile(`^[A-Za-z0-9]{26,35}$`)

func TestChargesAndSettlementOverHTTP(t *testing.T) {
	t.Parallel()
	te, _ := newTestEngineAt(t, settlementNow)
	keys := te.createTenant(t, "t-pay")
	op, sup := keys["operator"], keys["supervisor"]
	dk := lateContractHTTP(t, te, op, cpf(1), "C-1")

	// A Pix charge: txid, amount due today (1000.00 + 2 % + 14 days of 1 %
	// a month), valid until the end of the day in São Paulo.
	body := fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":1,"method":"PIX"}`, dk)
	status, first := te.raw(t, "POST", "/v1/charges", op, body, "Idempotency-Key", "chg-1")
	ch := jsonOf(t, first)
	if status != 201 || !txidPattern.MatchString(ch["chargeId"].(string)) || ch["amountCents"] != float64(102467) ||
		ch["expiresAt"] != "2026-09-25T09:00:00-03:00" || ch["computedFor"] != "2026-09-24" || ch["daysLate"] != float64(14) {
		t.Fatalf("PIX charge: %d %s", status, first)
	}
	// Idempotency-Key: the retry returns the first charge, not a second txid.
	status, again := te.raw(t, "POST", "/v1/charges", op, body, "Idempotency-Key", "chg-1")
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
		if status, out := te.do(t, "POST", "/v1/charges", op, tt.body); status != tt.status || errorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want %d %s", tt.body, status, out, tt.status, tt.code)
		}
	}

	// The provider pays the Pix charge.
	chargeID := ch["chargeId"].(string)
	now := time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)
	status, res, err := te.deliver("t-pay", keys["webhook"], webhookBody("stl-1", chargeID, 102467, "2026-09-24T09:00:00-03:00"), now, nil)
	if err != nil || status != 200 || jsonOf(t, res)["status"] != "applied" || jsonOf(t, res)["contractStatus"] != "ACTIVE" {
		t.Fatalf("webhook: %d %s %v", status, res, err)
	}
	status, view := te.do(t, "GET", "/v1/debtors/"+dk, op, "")
	c := view["contracts"].([]any)[0].(map[string]any)
	if status != 200 || c["status"] != "ACTIVE" || c["bucket"] != nil || c["nextAction"] != "DUE_CHECK" || c["outstandingCents"] != float64(200000) {
		t.Fatalf("360 after payment: %d %v", status, c)
	}
	// An unknown charge is recorded and listed for the supervisor.
	status, res, _ = te.deliver("t-pay", keys["webhook"], webhookBody("stl-2", "UNKNOWN1", 5000, "2026-09-24T08:16:00-03:00"), now, nil)
	if status != 200 || jsonOf(t, res)["status"] != "unmatched" {
		t.Fatalf("unmatched: %d %s", status, res)
	}
	status, list := te.do(t, "GET", "/v1/settlements/unmatched?limit=10", sup, "")
	items, _ := list["items"].([]any)
	if status != 200 || len(items) != 1 || items[0].(map[string]any)["settlementId"] != "stl-2" || list["nextCursor"] != nil {
		t.Fatalf("unmatched list: %d %v", status, list)
	}
	if status, _ := te.do(t, "GET", "/v1/settlements/unmatched", op, ""); status != 403 {
		t.Fatalf("operator reads the suspense list: %d", status)
	}
}

// TestWebhookBadInputWritesNothing: every refused webhook is a 4xx, never
// a 5xx, and leaves the table exactly as it was.
func TestWebhookBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	te, _ := newTestEngineAt(t, settlementNow)
	keys := te.createTenant(t, "t-pay")
	other := te.createTenant(t, "t-other")
	dk := lateContractHTTP(t, te, keys["operator"], cpf(2), "C-1")
	chargeID := chargeHTTP(t, te, keys["operator"], dk, "C-1", 1, "PIX")["chargeId"].(string)
	now := time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)
	good := webhookBody("stl-1", chargeID, 102467, "2026-09-24T09:00:00-03:00")
	before := scanAll(t, te)

	send := func(tenantID, body string, headers map[string]string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, te.url+"/v1/webhooks/"+tenantID+"/settlements", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, jsonOf(t, string(raw))
	}
	signed := func(secret, body string, at time.Time) map[string]string {
		return map[string]string{settlement.TimestampHeader: strconv.FormatInt(at.Unix(), 10),
			settlement.SignatureHeader: settlement.Sign(secret, at.Unix(), []byte(body))}
	}
	sig := signed(keys["webhook"], good, now)
	tests := []struct {
		name, tenant, body string
		headers            map[string]string
		status             int
		code               string
	}{
		{"no signature", "t-pay", good, nil, 401, "invalid_signature"},
		{"no timestamp", "t-pay", good, map[string]string{settlement.SignatureHeader: sig[settlement.SignatureHeader]}, 401, "invalid_signature"},
		{"old timestamp", "t-pay", good, signed(keys["webhook"], good, now.Add(-301*time.Second)), 401, "invalid_signature"},
		{"an hour old replay", "t-pay", good, signed(keys["webhook"], good, now.Add(-time.Hour)), 401, "invalid_signature"},
		{"forged", "t-pay", good, map[string]string{settlement.TimestampHeader: sig[settlement.TimestampHeader], settlement.SignatureHeader: "v1=" + strings.Repeat("ab", 32)}, 401, "invalid_signature"},
		{"another tenant's secret", "t-pay", good, signed(other["webhook"], good, now), 401, "invalid_signature"},
		{"signed for another tenant", "t-other", good, sig, 401, "invalid_signature"},
		{"body changed after signing", "t-pay", strings.Replace(good, "102467", "1", 1), sig, 401, "invalid_signature"},
		{"an API key is no signature", "t-pay", good, map[string]string{"Authorization": "Bearer " + keys["operator"]}, 401, "invalid_signature"},
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
		{"missing field", webhookBody("stl-1", chargeID, 1, "x")[:strings.Index(webhookBody("stl-1", chargeID, 1, "x"), `,"paidAt"`)] + "}", "missing_field"},
		{"bad paidAt", webhookBody("stl-1", chargeID, 1, "2026-09-24"), "invalid_paid_at"},
		{"settlement id unfit for a key", webhookBody("stl#1", chargeID, 1, "2026-09-24T09:00:00-03:00"), "invalid_settlement_id"},
		{"charge id unfit for a key", webhookBody("stl-1", "T#x", 1, "2026-09-24T09:00:00-03:00"), "invalid_charge_id"},
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
		if status != tt.status || errorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want %d %s", tt.name, status, out, tt.status, tt.code)
		}
	}
	if after := scanAll(t, te); !reflect.DeepEqual(after, before) {
		t.Fatalf("refused webhooks wrote: %d items before, %d after", len(before), len(after))
	}
	// And the good one still applies.
	if status, out := send("t-pay", good, sig); status != 200 || out["status"] != "applied" {
		t.Fatalf("good webhook: %d %v", status, out)
	}
	if bytes.Contains([]byte(te.logs.String()), []byte("52998224725")) {
		t.Fatal("a refused body reached the logs")
	}
}
