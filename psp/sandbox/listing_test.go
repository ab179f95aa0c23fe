package sandbox_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"lastro/psp"
	"lastro/psp/sandbox"
)

// api is a sandbox behind a test server with a bearer token.
type api struct {
	sb    *sandbox.Sandbox
	url   string
	token string
}

func newAPI(t *testing.T) *api {
	t.Helper()
	return serveAPI(t, sandbox.New(sandbox.Options{WebhookSecret: "s"}))
}

// serveAPI serves sb and takes an OAuth2 token from it.
func serveAPI(t *testing.T, sb *sandbox.Sandbox) *api {
	t.Helper()
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	sb.SetBaseURL(srv.URL)
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {sandbox.DefaultClientID}, "client_secret": {sb.ClientSecret()}}
	resp, err := http.PostForm(srv.URL+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	decode(t, resp, &tok)
	return &api{sb: sb, url: srv.URL, token: tok.AccessToken}
}

func (a *api) do(t *testing.T, method, path, body string) (int, psp.CobPayload) {
	t.Helper()
	req, _ := http.NewRequest(method, a.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p psp.CobPayload
	if resp.StatusCode < 300 && resp.ContentLength != 0 {
		if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, p
}

// TestGetListsThePaymentsMade: a payment made without notifying (the
// webhook lost) is listed by GET in pix[], as the Pix API lists a cob's
// payments; a paid charge cannot be removed, a removed one cannot be paid.
func TestGetListsThePaymentsMade(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	const paid, removed = "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF", "Zz3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF"
	for _, txid := range []string{paid, removed} {
		// A caller's pix[] is ignored: only the PSP lists payments.
		body := `{"valor":{"original":"10.50"},"chave":"k","pix":[{"endToEndId":"E0","valor":"1.00","horario":"2026-09-24T12:00:00Z"}]}`
		if status, p := a.do(t, http.MethodPut, "/cob/"+txid, body); status != http.StatusCreated || len(p.Pix) != 0 {
			t.Fatalf("put %s: %d %+v", txid, status, p.Pix)
		}
	}
	no := false
	out, err := a.sb.Pay(context.Background(), sandbox.PayInput{TxID: paid, Notify: &no})
	if err != nil || out.WebhookStatus != 0 || out.WebhookURL != "" {
		t.Fatalf("pay without notifying: %+v %v", out, err)
	}
	status, p := a.do(t, http.MethodGet, "/cob/"+paid, "")
	if status != http.StatusOK || p.Status != psp.StatusPaid || len(p.Pix) != 1 || !reflect.DeepEqual(p.Pix[0], out.Payment) || p.Pix[0].Valor != "10.50" {
		t.Fatalf("get: %d %+v", status, p)
	}
	if status, _ := a.do(t, http.MethodPatch, "/cob/"+paid, `{"status":"`+psp.StatusRemoved+`"}`); status != http.StatusBadRequest {
		t.Fatalf("removing a paid charge: %d", status)
	}
	if status, p := a.do(t, http.MethodPatch, "/cob/"+removed, `{"status":"`+psp.StatusRemoved+`"}`); status != http.StatusOK || p.Status != psp.StatusRemoved {
		t.Fatalf("remove: %d %+v", status, p)
	}
	if _, err := a.sb.Pay(context.Background(), sandbox.PayInput{TxID: removed, Notify: &no}); err == nil {
		t.Fatal("a removed charge was paid")
	}
	if status, p := a.do(t, http.MethodGet, "/cob/"+removed, ""); status != http.StatusOK || p.Status != psp.StatusRemoved || len(p.Pix) != 0 {
		t.Fatalf("get removed: %d %+v", status, p)
	}
}

// raw sends a request with the token and answers the body.
func (a *api) raw(t *testing.T, method, path, body string) string {
	t.Helper()
	req, _ := http.NewRequest(method, a.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, resp.Body)
	return b.String()
}
