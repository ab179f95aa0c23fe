package contactlimit

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"lastro/collections/web"
	"lastro/tenant"
)

// server runs the gateway's routes behind the same authentication and
// error plumbing as the engine.
func (f *fixture) server(t *testing.T, g *Gateway) (url string, keys map[string]string) {
	t.Helper()
	created, err := f.tenants.Create(bg, tenant.CreateInput{TenantID: "t-http", Name: "Crediário HTTP"})
	if err != nil {
		t.Fatal(err)
	}
	f.tenants.Invalidate("t-http")
	if f.t, err = f.tenants.Get(bg, "t-http"); err != nil {
		t.Fatal(err)
	}
	srv := web.New(web.Options{Logger: f.log})
	srv.Echo.Use(f.tenants.Authenticator("admin-token"))
	g.Routes(srv)
	hs := httptest.NewServer(srv.Echo)
	t.Cleanup(hs.Close)
	return hs.URL, created.APIKeys
}

func call(t *testing.T, method, url, key, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %q", method, url, raw)
	}
	return resp.StatusCode, out
}

func TestHTTPContacts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gateway(Deps{})
	url, keys := f.server(t, g)
	dk := f.debtor(t, "")
	op, comp := keys["operator"], keys["compliance"]
	path := url + "/v1/debtors/" + dk + "/contacts"
	body := `{"channel":"SMS","template":"SMS_D5","contractId":"C-1"}`

	// 400s write nothing.
	for _, bad := range []string{`{"channel":"FAX","template":"SMS_D5","contractId":"C-1"}`, `{"channel":"SMS","template":"SMS_D5","contractId":"C#1"}`,
		`{"channel":"SMS","template":"SMS_D5"}`, `{"channel":"SMS","template":"SMS_D5","contractId":"C-1","phone":"1"}`, `not json`} {
		if status, out := call(t, http.MethodPost, path, op, bad); status != http.StatusBadRequest || out["error"] == nil {
			t.Errorf("%s: %d %v", bad, status, out)
		}
	}
	if status, _ := call(t, http.MethodPost, url+"/v1/debtors/NOT-A-KEY/contacts", op, body); status != http.StatusBadRequest {
		t.Errorf("bad debtor key: %d", status)
	}
	if status, out := call(t, http.MethodPost, url+"/v1/debtors/0123456789abcdef/contacts", op, body); status != http.StatusNotFound {
		t.Errorf("unknown debtor: %d %v", status, out)
	}
	if status, _ := call(t, http.MethodPost, path, comp, body); status != http.StatusForbidden {
		t.Errorf("compliance may not claim: %d", status)
	}

	for i := 1; i <= 3; i++ {
		status, out := call(t, http.MethodPost, path, op, body)
		if status != http.StatusCreated || out["allowed"] != true || out["attemptNumber"] != float64(i) || out["action"] != ManualAction || out["actorRole"] != "operator" {
			t.Fatalf("claim %d: %d %v", i, status, out)
		}
	}
	status, out := call(t, http.MethodPost, path, op, body)
	e, _ := out["error"].(map[string]any)
	attempt, _ := out["attempt"].(map[string]any)
	if status != http.StatusTooManyRequests || e["code"] != "contact_blocked" || e["reason"] != "LIMIT" || e["message"] == "" ||
		attempt["allowed"] != false || attempt["reason"] != "LIMIT" {
		t.Fatalf("fourth claim: %d %v", status, out)
	}

	status, out = call(t, http.MethodGet, path+"?date=2026-09-24", comp, "")
	items, _ := out["items"].([]any)
	if status != http.StatusOK || out["counter"] != float64(3) || out["maxDailyContacts"] != float64(3) || len(items) != 4 || out["nextCursor"] != nil {
		t.Fatalf("day view: %d %v", status, out)
	}
	// Today is the default date; another day is empty.
	if status, out := call(t, http.MethodGet, path, comp, ""); status != http.StatusOK || out["date"] != "2026-09-24" || out["counter"] != float64(3) {
		t.Fatalf("default date: %d %v", status, out)
	}
	if status, out := call(t, http.MethodGet, path+"?date=2026-09-23", comp, ""); status != http.StatusOK || out["counter"] != float64(0) || len(out["items"].([]any)) != 0 {
		t.Fatalf("another day: %d %v", status, out)
	}
	// Paginated with a signed cursor.
	_, page := call(t, http.MethodGet, path+"?date=2026-09-24&limit=3", comp, "")
	next, _ := page["nextCursor"].(string)
	if len(page["items"].([]any)) != 3 || next == "" {
		t.Fatalf("first page: %v", page)
	}
	if _, rest := call(t, http.MethodGet, path+"?date=2026-09-24&limit=3&cursor="+next, comp, ""); len(rest["items"].([]any)) != 1 {
		t.Fatalf("second page: %v", rest)
	}
	for _, q := range []string{"?date=2026-02-30", "?date=yesterday", "?limit=0", "?cursor=forged"} {
		if status, _ := call(t, http.MethodGet, path+q, comp, ""); status != http.StatusBadRequest {
			t.Errorf("GET %s: %d", q, status)
		}
	}
	if status, _ := call(t, http.MethodGet, path, op, ""); status != http.StatusForbidden {
		t.Errorf("operator may not read the compliance view: %d", status)
	}
	noPersonalData(t, f.logs.String())
}

func TestHTTPBlockedReasons(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gateway(Deps{})
	url, keys := f.server(t, g)
	dk := f.debtor(t, "")
	path := url + "/v1/debtors/" + dk + "/contacts"
	if err := g.SetOptOut(bg, f.t, dk, WhatsApp, true); err != nil {
		t.Fatal(err)
	}
	status, out := call(t, http.MethodPost, path, keys["operator"], `{"channel":"WHATSAPP","template":"SMS_D5","contractId":"C-1"}`)
	if e, _ := out["error"].(map[string]any); status != http.StatusTooManyRequests || e["reason"] != "OPT_OUT" {
		t.Fatalf("opt-out: %d %v", status, out)
	}
	f.clock.Set(local("2026-09-24", 21, 0))
	status, out = call(t, http.MethodPost, path, keys["operator"], `{"channel":"SMS","template":"SMS_D5","contractId":"C-1"}`)
	if e, _ := out["error"].(map[string]any); status != http.StatusTooManyRequests || e["reason"] != "WINDOW" {
		t.Fatalf("window: %d %v", status, out)
	}
	_, day := call(t, http.MethodGet, path+"?date=2026-09-24", keys["compliance"], "")
	if len(day["items"].([]any)) != 2 || day["counter"] != float64(0) {
		t.Fatalf("blocked evidence: %v", day)
	}
}
