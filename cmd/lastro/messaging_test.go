package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lastro/collections/signature"
)

// TestServeDeliversToTheTenantsMessagingProvider: serve routes each
// contact message by the tenant's settings — a tenant that set its
// provider (PUT /v1/tenant/messaging) gets it posted there, signed with
// the secret it was shown, and nothing in the local outbox; a tenant
// that set none gets it in the outbox. GET shows where, never the secret.
func TestServeDeliversToTheTenantsMessagingProvider(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []map[string]any
	var secret string
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if err := signature.Verify(secret, r.Header.Get(signature.TimestampHeader), r.Header.Get(signature.SignatureHeader), body, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		got = append(got, m)
	}))
	t.Cleanup(provider.Close)
	dir := t.TempDir()
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": dir, "LASTRO_ADMIN_TOKEN": testAdminToken, "LASTRO_SCHEDULER": "off",
		"LASTRO_NOW": "2026-09-24T13:00:00Z", "LASTRO_EGRESS_ALLOW": "loopback"})
	api := "http://" + s.addr
	tenantKeys := func(id string) map[string]any {
		status, raw := do(t, http.MethodPost, api+"/v1/tenants", testAdminToken, fmt.Sprintf(`{"tenantId":%q,"name":"Mensagens"}`, id))
		var out struct{ APIKeys map[string]any }
		if status != http.StatusCreated || json.Unmarshal([]byte(raw), &out) != nil {
			t.Fatalf("tenant %s: %d %s", id, status, raw)
		}
		return out.APIKeys
	}
	contact := func(op string) {
		t.Helper()
		status, raw := do(t, http.MethodPost, api+"/v1/debtors", op, `{"document":"529.982.247-25","name":"Pessoa Sintética","phone":"+5511987654321"}`)
		var reg struct{ DebtorKey string }
		if status != http.StatusCreated || json.Unmarshal([]byte(raw), &reg) != nil {
			t.Fatalf("register: %d %s", status, raw)
		}
		// A manual contact names one of the debtor's contracts.
		if status, raw := do(t, http.MethodPost, api+"/v1/debtors/"+reg.DebtorKey+"/contracts", op,
			`{"contractId":"C-1","productCode":"CREDIARIO","installments":[{"seq":1,"dueDate":"2026-10-10","principalCents":90000,"interestCents":10000}]}`); status != http.StatusCreated {
			t.Fatalf("contract: %d %s", status, raw)
		}
		if status, raw := do(t, http.MethodPost, api+"/v1/debtors/"+reg.DebtorKey+"/contacts", op,
			`{"channel":"SMS","template":"SMS_D5","contractId":"C-1"}`); status != http.StatusCreated {
			t.Fatalf("contact: %d %s", status, raw)
		}
	}
	withProvider := tenantKeys("t-msg")
	sup := withProvider["supervisor"].(string)
	if status, raw := do(t, http.MethodPut, api+"/v1/tenant/messaging", sup, `{"url":"https://10.0.0.1/sms"}`); status != http.StatusBadRequest {
		t.Fatalf("a private address: %d %s, want 400", status, raw)
	}
	status, raw := do(t, http.MethodPut, api+"/v1/tenant/messaging", sup, fmt.Sprintf(`{"url":%q}`, provider.URL+"/sms"))
	var conf struct{ URL, Secret string }
	if status != http.StatusOK || json.Unmarshal([]byte(raw), &conf) != nil || !strings.HasPrefix(conf.Secret, "msgsec_") {
		t.Fatalf("set messaging: %d %s", status, raw)
	}
	mu.Lock()
	secret = conf.Secret
	mu.Unlock()
	if status, raw := do(t, http.MethodGet, api+"/v1/tenant/messaging", sup, ""); status != http.StatusOK ||
		!strings.Contains(raw, `"configured":true`) || strings.Contains(raw, conf.Secret) {
		t.Fatalf("get messaging: %d %s", status, raw)
	}
	contact(withProvider["operator"].(string))
	contact(tenantKeys("t-outbox")["operator"].(string))

	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0]["tenantId"] != "t-msg" || got[0]["to"] != "+5511987654321" || got[0]["channel"] != "SMS" {
		t.Fatalf("the provider got %v, want t-msg's one SMS", got)
	}
	outbox, err := os.ReadFile(filepath.Join(dir, "outbox.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(outbox)), "\n"); len(lines) != 1 || !strings.Contains(lines[0], `"tenantId":"t-outbox"`) {
		t.Fatalf("the outbox holds %q, want t-outbox's one message", outbox)
	}
}
