package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"lastro/pix/brcode"
	"lastro/psp"
	"lastro/psp/sandbox"
)

// do sends one request (a JSON body, a bearer token when not empty) and
// returns the status and the raw answer.
func do(t *testing.T, method, u, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// doJSON is do with the answer decoded as a JSON object (nil when it is
// not one).
func doJSON(t *testing.T, method, u, token, body string) (int, map[string]any) {
	t.Helper()
	status, raw := do(t, method, u, token, body)
	var out map[string]any
	_ = json.Unmarshal([]byte(raw), &out)
	return status, out
}

// TestSandboxMovesNoMoneyForStrangers is finding 1, 2 and 3 of the
// attack, against the binary in its default configuration: an attacker
// who reads a debtor's QR code (the location is public, as a real PSP's)
// cannot pay the charge, batch fake payments, redeliver, re-point the
// tenant's notices, change or remove the charge, or get an OAuth2 token
// with the client id and the secret older versions published; the
// instalment stays open. The operator then pays with the admin token and
// the payment is applied once.
func TestSandboxMovesNoMoneyForStrangers(t *testing.T) {
	t.Parallel()
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken,
		"LASTRO_NOW": "2026-09-24T12:00:00Z", "LASTRO_SCHEDULER": "off"})
	api := "http://" + s.addr
	sbx := api + SandboxPrefix
	mustJSON := func(method, u, token, body string, want int) map[string]any {
		t.Helper()
		status, raw := do(t, method, u, token, body)
		var out map[string]any
		if status != want || json.Unmarshal([]byte(raw), &out) != nil {
			t.Fatalf("%d %s, want %d", status, raw, want)
		}
		return out
	}
	tn := mustJSON(http.MethodPost, api+"/v1/tenants", testAdminToken, `{"tenantId":"t-victim","name":"Vítima"}`, http.StatusCreated)
	op := tn["apiKeys"].(map[string]any)["operator"].(string)
	dk := mustJSON(http.MethodPost, api+"/v1/debtors", op, `{"document":"529.982.247-25","name":"Pessoa Sintética"}`, http.StatusCreated)["debtorKey"].(string)
	mustJSON(http.MethodPost, api+"/v1/debtors/"+dk+"/contracts", op,
		`{"contractId":"C-1","productCode":"X","installments":[{"seq":1,"dueDate":"2026-09-10","principalCents":90000,"interestCents":10000}]}`, http.StatusCreated)
	ch := mustJSON(http.MethodPost, api+"/v1/charges", op, fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":1,"method":"PIX"}`, dk), http.StatusCreated)
	code, err := brcode.Parse(fmt.Sprint(ch["pixCopiaECola"]))
	if err != nil {
		t.Fatal(err)
	}
	var at psp.CobPayload
	status, raw := do(t, http.MethodGet, "http://"+code.URL, "", "")
	if status != http.StatusOK || json.Unmarshal([]byte(raw), &at) != nil || at.TxID == "" {
		t.Fatalf("location: %d %s", status, raw)
	}
	pay := `{"txid":"` + at.TxID + `"}`
	for _, tt := range []struct{ method, path, body string }{
		{http.MethodPost, "/sandbox/pay", pay},
		{http.MethodPost, "/sandbox/pay", `{"txid":"` + at.TxID + `","notify":false}`},
		{http.MethodPost, "/sandbox/pay-batch", `{"payments":[` + pay + `]}`},
		{http.MethodPost, "/sandbox/redeliver", `{"endToEndId":"E00000000202609241200abcdefghijk"}`},
		{http.MethodPut, "/webhook/any-key", `{"webhookUrl":"http://127.0.0.1:1/steal"}`},
		{http.MethodPatch, "/cob/" + at.TxID, `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}`},
		{http.MethodPut, "/cob/" + at.TxID, `{"calendario":{"expiracao":3600},"valor":{"original":"0.01"},"chave":"k"}`},
		{http.MethodGet, "/cob/" + at.TxID, ""},
	} {
		for _, token := range []string{"", op, "lastro-sandbox-secret"} {
			if status, raw := do(t, tt.method, sbx+tt.path, token, tt.body); status != http.StatusUnauthorized {
				t.Errorf("%s %s with %q: %d %s, want 401", tt.method, tt.path, token, status, raw)
			}
		}
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"lastro-sandbox"}, "client_secret": {"lastro-sandbox-secret"}}
	resp, err := http.PostForm(sbx+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the published client secret got a token: %d", resp.StatusCode)
	}
	open := func() string {
		t.Helper()
		out := mustJSON(http.MethodGet, api+"/v1/debtors/"+dk+"/contracts/C-1/installments", op, "", http.StatusOK)
		return fmt.Sprint(out["items"].([]any)[0].(map[string]any)["status"])
	}
	if st := open(); st == "PAID" {
		t.Fatalf("the instalment was paid by the refused requests")
	}
	paid := mustJSON(http.MethodPost, sbx+"/sandbox/pay", testAdminToken, pay, http.StatusOK)
	if paid["webhookStatus"] != float64(http.StatusOK) {
		t.Fatalf("paid by the operator: %v", paid)
	}
	if st := open(); st != "PAID" {
		t.Fatalf("after the operator's payment the instalment is %s", st)
	}
}

// TestSandboxFollowsTheStore: beside a DynamoDB endpoint the sandbox is
// absent by default (404, its routes fall to the API), on is refused
// with one line, and force mounts it with a loud warning.
func TestSandboxFollowsTheStore(t *testing.T) {
	t.Parallel()
	store := startChild(t, map[string]string{}, "embedded DynamoDB store listening", "ddb", "serve", "--addr", "127.0.0.1:0", "--in-memory")
	env := func(mode string) map[string]string {
		e := map[string]string{"LASTRO_DYNAMODB_ENDPOINT": "http://" + store.addr, "LASTRO_ADMIN_TOKEN": testAdminToken,
			"LASTRO_DATA_DIR": ":memory:", "LASTRO_SCHEDULER": "off", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
			"AWS_REGION": "us-east-1"}
		if mode != "" {
			e["LASTRO_PSP_SANDBOX"] = mode
			e["LASTRO_TABLE"] = "lastro-" + mode
		}
		return e
	}
	s := startServe(t, env(""))
	for _, path := range []string{"/psp-sandbox/sandbox/pay", "/psp-sandbox/oauth/token"} {
		if status, raw := do(t, http.MethodPost, "http://"+s.addr+path, testAdminToken, `{}`); status != http.StatusNotFound {
			t.Errorf("%s beside an endpoint: %d %s, want 404", path, status, raw)
		}
	}
	code, _, stderr := runChild(t, env("on"), "serve")
	if code == 0 || !strings.Contains(stderr, "LASTRO_PSP_SANDBOX=on with LASTRO_DYNAMODB_ENDPOINT") {
		t.Fatalf("on beside an endpoint: exit %d, %s", code, stderr)
	}
	forced := startServe(t, env("force"))
	if status, raw := do(t, http.MethodPost, "http://"+forced.addr+"/psp-sandbox/sandbox/pay", "", `{}`); status != http.StatusUnauthorized {
		t.Fatalf("forced sandbox: %d %s, want its 401", status, raw)
	}
}

// TestSandboxMode: the setting against the endpoint, as a table.
func TestSandboxMode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode, endpoint  string
		mounted, forced bool
		isErr           bool
	}{
		{"auto", "", true, false, false},
		{"auto", "http://ddb", false, false, false},
		{"on", "", true, false, false},
		{"on", "http://ddb", false, false, true},
		{"off", "", false, false, false},
		{"off", "http://ddb", false, false, false},
		{"force", "", true, false, false},
		{"force", "http://ddb", true, true, false},
		{"yes", "", false, false, true},
	} {
		mounted, forced, err := sandboxMode(tt.mode, tt.endpoint)
		if mounted != tt.mounted || forced != tt.forced || (err != nil) != tt.isErr {
			t.Errorf("%s with %q: %v %v %v", tt.mode, tt.endpoint, mounted, forced, err)
		}
	}
}

// TestSandboxRequestsAreLogged: every request the sandbox answers, the
// refused ones included, leaves an access log line naming the route
// pattern and the status, never the path (a Pix key may be a CPF).
func TestSandboxRequestsAreLogged(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	sb := sandbox.New(sandbox.Options{})
	srv := httptest.NewServer(accessLog(slog.New(slog.NewJSONHandler(&logs, nil)), "sandbox", sb.Handler(), sb.Route))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/sandbox/pay", "/webhook/529.982.247-25"} {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	out := logs.String()
	if !strings.Contains(out, `"route":"POST /sandbox/pay","status":401`) || !strings.Contains(out, `"route":"POST (unmatched)","status":405`) {
		t.Fatalf("access log: %s", out)
	}
	if strings.Contains(out, "529.982.247-25") {
		t.Fatalf("a path reached the log: %s", out)
	}
}
