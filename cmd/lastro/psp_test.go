package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"lastro/pix/brcode"
	"lastro/psp"
	"lastro/psp/sandbox"
)

// TestServeMountsTheSandboxPSP: lastro serve, with no PSP configured,
// answers a Pix charge with a BR Code of the sandbox mounted on its own
// port, and the sandbox notifies the tenant's webhook there.
func TestServeMountsTheSandboxPSP(t *testing.T) {
	t.Parallel()
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken,
		"LASTRO_NOW": "2026-09-24T12:00:00Z", "LASTRO_SCHEDULER": "off"})
	api := "http://" + s.addr
	call := func(method, path, token, body string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, api+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if resp.StatusCode >= 300 || json.Unmarshal(raw, &out) != nil {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		return out
	}
	tn := call(http.MethodPost, "/v1/tenants", testAdminToken, `{"tenantId":"t-pix","name":"Pix"}`)
	op := tn["apiKeys"].(map[string]any)["operator"].(string)
	dk := call(http.MethodPost, "/v1/debtors", op, `{"document":"529.982.247-25","name":"Pessoa Sintética"}`)["debtorKey"].(string)
	call(http.MethodPost, "/v1/debtors/"+dk+"/contracts", op,
		`{"contractId":"C-1","productCode":"X","installments":[{"seq":1,"dueDate":"2026-09-10","principalCents":90000,"interestCents":10000}]}`)
	ch := call(http.MethodPost, "/v1/charges", op, fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":1,"method":"PIX"}`, dk))
	code, err := brcode.Parse(fmt.Sprint(ch["pixCopiaECola"]))
	if err != nil {
		t.Fatalf("charge %v: %v", ch, err)
	}
	if !strings.HasPrefix(code.URL, s.addr+SandboxPrefix+"/qr/v2/") || code.AmountCents != 102467 || ch["pixType"] != "cob" {
		t.Fatalf("code %+v of %v", code, ch)
	}
	resp, err := http.Get("http://" + code.URL)
	if err != nil {
		t.Fatal(err)
	}
	var at psp.CobPayload
	err = json.NewDecoder(resp.Body).Decode(&at)
	resp.Body.Close()
	if err != nil || at.TxID != ch["chargeId"] || at.Valor.Original != "1024.67" {
		t.Fatalf("location: %+v %v", at, err)
	}
	// The operator pays with the admin token, as the README says.
	req, _ := http.NewRequest(http.MethodPost, api+SandboxPrefix+"/sandbox/pay", strings.NewReader(`{"txid":"`+at.TxID+`"}`))
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var paid sandbox.Paid
	err = json.NewDecoder(resp.Body).Decode(&paid)
	resp.Body.Close()
	// The tenant's webhook on the engine's port, BACEN's path appended.
	if err != nil || paid.WebhookURL != api+"/v1/webhooks/t-pix/pix" || paid.Payment.Valor != "1024.67" || paid.Payment.TxID != at.TxID {
		t.Fatalf("paid: %+v %v", paid, err)
	}
}

// TestPSPSandboxCommand: lastro psp sandbox refuses to run without the
// webhook secret, and serves the Pix API behind its token endpoint.
func TestPSPSandboxCommand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"psp"}, {"psp", "other"}, {"psp", "sandbox"}} {
		if err := run(t.Context(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("lastro %v: no error", args)
		}
	}
	if err := run(t.Context(), []string{"psp", "sandbox"}, io.Discard, io.Discard); !strings.Contains(fmt.Sprint(err), "--webhook-secret") {
		t.Errorf("no secret: %v", err)
	}
	const clientSecret = "client-secret-0123456789abcdef012"
	s := startChild(t, map[string]string{"LASTRO_PSP_CLIENT_SECRET": clientSecret}, "sandbox PSP listening",
		"psp", "sandbox", "--addr", "127.0.0.1:0", "--webhook-secret", "whsec_x")
	resp, err := http.Get("http://" + s.addr + "/cob/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without a token: %d", resp.StatusCode)
	}
	resp, err = http.PostForm("http://"+s.addr+"/oauth/token", map[string][]string{"grant_type": {"client_credentials"},
		"client_id": {sandbox.DefaultClientID}, "client_secret": {clientSecret}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token: %d", resp.StatusCode)
	}
}
