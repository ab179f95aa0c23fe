package sandbox_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"lastro/psp/sandbox"
)

// TestMoneyMovingRoutesNeedTheOperatorToken: pay, pay-batch and
// redeliver refuse a request without the operator token, with a wrong
// one, and with the OAuth2 token of the Pix API routes, before reading
// what it asks; the charge stays unpaid.
func TestMoneyMovingRoutesNeedTheOperatorToken(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	const txid = "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF"
	if status, _ := a.do(t, http.MethodPut, "/cob/"+txid, `{"valor":{"original":"10.00"},"chave":"k"}`); status != http.StatusCreated {
		t.Fatalf("cob: %d", status)
	}
	for _, path := range []string{"/sandbox/pay", "/sandbox/pay-batch", "/sandbox/redeliver"} {
		for _, token := range []string{"", "wrong", a.token, a.sb.ClientSecret()} {
			req, _ := http.NewRequest(http.MethodPost, a.url+path, strings.NewReader(`{"txid":"`+txid+`"}`))
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s with token %q: %d, want 401", path, token, resp.StatusCode)
			}
		}
	}
	if status, cob := a.do(t, http.MethodGet, "/cob/"+txid, ""); status != http.StatusOK || cob.Status != "ATIVA" {
		t.Fatalf("after the refusals: %d %s, want ATIVA", status, cob.Status)
	}
}

// TestNoPublicClientSecret: two sandboxes built without credentials get
// different, unguessable client secrets and operator tokens, so the
// client id alone opens nothing.
func TestNoPublicClientSecret(t *testing.T) {
	t.Parallel()
	a, b := sandbox.New(sandbox.Options{}), sandbox.New(sandbox.Options{})
	if a.ClientSecret() == b.ClientSecret() || a.OperatorToken() == b.OperatorToken() || len(a.ClientSecret()) < 32 || len(a.OperatorToken()) < 32 {
		t.Fatalf("secrets %q %q, tokens %q %q", a.ClientSecret(), b.ClientSecret(), a.OperatorToken(), b.OperatorToken())
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	for _, secret := range []string{"", "lastro-sandbox-secret", b.ClientSecret()} {
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {sandbox.DefaultClientID}, "client_secret": {secret}}
		resp, err := http.PostForm(srv.URL+"/oauth/token", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("secret %q: %d, want 401", secret, resp.StatusCode)
		}
	}
}

// TestWebhookOnlyUnderItsPrefix: with a prefix set, as serve sets the
// engine's receiver, a webhook elsewhere is refused and none is kept.
func TestWebhookOnlyUnderItsPrefix(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Options{WebhookPrefix: "http://127.0.0.1:8080/v1/webhooks/"})
	a := serveAPI(t, sb)
	for _, u := range []string{"http://169.254.169.254/latest", "https://attacker.example/v1/webhooks/t-1", "http://127.0.0.1:8080/admin"} {
		if status, _ := a.do(t, http.MethodPut, "/webhook/k", fmt.Sprintf(`{"webhookUrl":%q}`, u)); status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", u, status)
		}
	}
	if status, _ := a.do(t, http.MethodGet, "/webhook/k", ""); status != http.StatusNotFound {
		t.Fatalf("a refused webhook was kept: %d", status)
	}
	if status, _ := a.do(t, http.MethodPut, "/webhook/k", `{"webhookUrl":"http://127.0.0.1:8080/v1/webhooks/t-1"}`); status != http.StatusOK {
		t.Fatalf("the engine's own receiver: %d", status)
	}
}

// TestStateIsBounded: past MaxCharges the oldest charges are forgotten
// (their locations too), and a body over MaxBody is refused unread.
func TestStateIsBounded(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Options{MaxCharges: 5})
	a := serveAPI(t, sb)
	txid := func(i int) string { return fmt.Sprintf("Ab3dE6gH9jK2mN5pQ8sT1vW4yZ%06d", i) }
	for i := range 8 {
		if status, _ := a.do(t, http.MethodPut, "/cob/"+txid(i), `{"valor":{"original":"1.00"},"chave":"k"}`); status != http.StatusCreated {
			t.Fatalf("cob %d: %d", i, status)
		}
	}
	for i := range 8 {
		status, _ := a.do(t, http.MethodGet, "/cob/"+txid(i), "")
		if want := map[bool]int{true: http.StatusNotFound, false: http.StatusOK}[i < 3]; status != want {
			t.Errorf("cob %d: %d, want %d", i, status, want)
		}
	}
	huge := `{"valor":{"original":"1.00"},"chave":"k","solicitacaoPagador":"` + strings.Repeat("x", sandbox.MaxBody) + `"}`
	if status, _ := a.do(t, http.MethodPut, "/cob/"+txid(9), huge); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over %d bytes: %d, want 413", sandbox.MaxBody, status)
	}
	bytesBound := sandbox.New(sandbox.Options{MaxBytes: 2000})
	b := serveAPI(t, bytesBound)
	big := `{"valor":{"original":"1.00"},"chave":"k","infoAdicionais":[{"nome":"n","valor":"` + strings.Repeat("y", 900) + `"}]}`
	for i := range 4 {
		if status, _ := b.do(t, http.MethodPut, "/cob/"+txid(i), big); status != http.StatusCreated {
			t.Fatalf("big cob %d: %d", i, status)
		}
	}
	if status, _ := b.do(t, http.MethodGet, "/cob/"+txid(0), ""); status != http.StatusNotFound {
		t.Fatalf("past MaxBytes the oldest charge is still kept: %d", status)
	}
	if status, _ := b.do(t, http.MethodGet, "/cob/"+txid(3), ""); status != http.StatusOK {
		t.Fatalf("the newest charge: %d", status)
	}
}
