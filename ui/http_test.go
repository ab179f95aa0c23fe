package ui_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"lastro/ui"
)

func TestPagesWithoutSessionRedirectToLogin(t *testing.T) {
	t.Parallel()
	s := seed(t, 1)
	tests := []struct{ method, path string }{
		{http.MethodGet, "/"},
		{http.MethodGet, "/ui/portfolio?bucket=D031_060"},
		{http.MethodGet, "/ui/debtors/" + s.dks[0]},
		{http.MethodGet, "/ui/debtors"},
		{http.MethodGet, "/ui/agenda"},
		{http.MethodGet, "/ui/suspense"},
		{http.MethodPost, "/ui/agenda/run"},
		{http.MethodPost, "/ui/debtors/" + s.dks[0] + "/promises"},
		{http.MethodPost, "/ui/suspense/stl-1/resolve"},
	}
	c := s.client(t)
	for _, tt := range tests {
		var resp *http.Response
		if tt.method == http.MethodGet {
			resp, _ = get(t, c, s.URL+tt.path)
		} else {
			resp, _ = post(t, c, s.URL+tt.path, url.Values{})
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/login") {
			t.Errorf("%s %s: %d to %q, want 303 to the login", tt.method, tt.path, resp.StatusCode, loc)
		}
	}
	// A forged or tampered cookie is no session either.
	u, _ := url.Parse(s.URL)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: ui.SessionCookie, Value: "eyJ0IjoidC11aSJ9.AAAA", Path: "/"}})
	if resp, _ := get(t, c, s.URL+"/ui/suspense"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("forged cookie: %d, want 303", resp.StatusCode)
	}
}

func TestLoginSetsSignedCookieWithoutTheKey(t *testing.T) {
	t.Parallel()
	s := seed(t, 1)
	c := s.client(t)
	_, html := get(t, c, s.URL+"/ui/login")
	// A bad key answers the form again with 401; a missing CSRF token 403.
	if resp, body := post(t, c, s.URL+"/ui/login", url.Values{"csrf": {csrfOf(t, html)}, "key": {"lst_t-ui_" + strings.Repeat("0", 48)}}); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not valid") {
		t.Errorf("bad key: %d", resp.StatusCode)
	}
	if resp, _ := post(t, c, s.URL+"/ui/login", url.Values{"key": {s.keys["supervisor"]}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("login without CSRF: %d, want 403", resp.StatusCode)
	}
	_, html = get(t, c, s.URL+"/ui/login")
	resp, _ := post(t, c, s.URL+"/ui/login", url.Values{"csrf": {csrfOf(t, html)}, "key": {s.keys["supervisor"]}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("login: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var session *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == ui.SessionCookie {
			session = ck
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Secure {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, not Secure over plain HTTP", session)
	}
	if strings.Contains(session.Value, s.keys["supervisor"]) || strings.Contains(session.Value, "lst_") {
		t.Error("the session cookie carries the API key")
	}
	if resp, _ := get(t, c, s.URL+"/"); resp.Header.Get("Location") != "/ui/portfolio" {
		t.Errorf("GET / with a supervisor session: to %q", resp.Header.Get("Location"))
	}
	// Logging out needs the form's token and ends the session.
	_, page := get(t, c, s.URL+"/ui/suspense")
	post(t, c, s.URL+"/ui/logout", url.Values{"csrf": {csrfOf(t, page)}})
	if resp, _ := get(t, c, s.URL+"/ui/suspense"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after logout: %d, want 303 to the login", resp.StatusCode)
	}
}

func TestSessionCookieIsSecureOverTLS(t *testing.T) {
	t.Parallel()
	s := seed(t, 1)
	srv := httptest.NewTLSServer(s.Handler())
	t.Cleanup(srv.Close)
	c := srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	jar, _ := cookiejar.New(nil)
	c.Jar = jar
	_, html := get(t, c, srv.URL+"/ui/login")
	resp, _ := post(t, c, srv.URL+"/ui/login", url.Values{"csrf": {csrfOf(t, html)}, "key": {s.keys["supervisor"]}})
	secure := false
	for _, ck := range resp.Cookies() {
		secure = secure || ck.Name == ui.SessionCookie && ck.Secure && ck.HttpOnly
	}
	if resp.StatusCode != http.StatusSeeOther || !secure {
		t.Errorf("login over TLS: %d, secure session cookie %v", resp.StatusCode, secure)
	}
}

func TestFormWithoutCSRFIsRefused(t *testing.T) {
	t.Parallel()
	s := seed(t, 1)
	c := s.client(t)
	s.login(t, c, s.keys["operator"])
	path := "/ui/debtors/" + s.dks[0]
	_, page := get(t, c, s.URL+path)
	form := url.Values{"contractId": {"C-UI-000"}, "promisedDate": {"2026-09-29"}, "amount": {"150,00"}}
	for name, token := range map[string]string{"missing": "", "wrong": "AAAAAAAAAAAAAAAAAAAAAAAA"} {
		form.Set("csrf", token)
		resp, body := post(t, c, s.URL+path+"/promises", form)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "did not come from this site") {
			t.Errorf("%s token: %d, want the 403 page", name, resp.StatusCode)
		}
	}
	if _, after := get(t, c, s.URL+path); strings.Contains(after, "2026-09-29") {
		t.Fatal("a promise was recorded without the CSRF token")
	}
	form.Set("csrf", csrfOf(t, page))
	if resp, _ := post(t, c, s.URL+path+"/promises", form); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("with the token: %d", resp.StatusCode)
	}
	if _, after := get(t, c, s.URL+path); !strings.Contains(after, "2026-09-29") || !strings.Contains(after, "R$ 150,00") {
		t.Error("the promise is not on the debtor page")
	}
	// A manual contact, with the token: listed under the last days'.
	contact := url.Values{"csrf": {csrfOf(t, page)}, "contractId": {"C-UI-000"}, "channel": {"SMS"}, "template": {"MANUAL"}}
	if resp, body := post(t, c, s.URL+path+"/contacts", contact); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("contact: %d %s", resp.StatusCode, body)
	}
	if _, after := get(t, c, s.URL+path); !strings.Contains(after, "SMS · MANUAL · allowed") {
		t.Error("the contact is not on the debtor page")
	}
}

func TestRevokedKeyEndsItsSession(t *testing.T) {
	t.Parallel()
	s := seed(t, 1)
	c := s.client(t)
	s.login(t, c, s.keys["operator"])
	if resp, _ := get(t, c, s.URL+"/"); resp.Header.Get("Location") != "/ui/debtors" {
		t.Errorf("GET / with an operator session: to %q", resp.Header.Get("Location"))
	}
	if resp, _ := get(t, c, s.URL+"/ui/debtors/"+s.dks[0]); resp.StatusCode != http.StatusOK {
		t.Fatalf("debtor page: %d", resp.StatusCode)
	}
	// An operator may not open the supervisor's pages.
	if resp, _ := get(t, c, s.URL+"/ui/portfolio"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("operator on the portfolio: %d, want 403", resp.StatusCode)
	}
	keys, err := s.Tenants.ListKeys(bg, s.t, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys.Items {
		if k.Role == "operator" {
			if _, err := s.Tenants.RevokeKey(bg, s.t, k.KeyID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if resp, _ := get(t, c, s.URL+"/ui/debtors/"+s.dks[0]); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after revocation: %d, want 303 to the login", resp.StatusCode)
	}
}

func TestOtherTenantsDebtorIsNotFound(t *testing.T) {
	t.Parallel()
	s := seed(t, 1)
	c := s.client(t)
	s.login(t, c, s.keys["operator"])
	for _, dk := range []string{s.otherDK, "not-a-key"} {
		resp, body := get(t, c, s.URL+"/ui/debtors/"+dk)
		if dk == s.otherDK && (resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `id="error-status">404`)) {
			t.Errorf("another tenant's debtor: %d, want the 404 page", resp.StatusCode)
		}
		if dk != s.otherDK && resp.StatusCode != http.StatusBadRequest {
			t.Errorf("malformed key: %d, want 400", resp.StatusCode)
		}
	}
}

func TestSessionSignature(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	sg := ui.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	other := ui.NewSigner([]byte("fedcba9876543210fedcba9876543210"))
	good := sg.Encode(ui.Session{TenantID: "t-a", Role: "supervisor", Fingerprint: strings.Repeat("a", 64), Expires: now.Unix() + 60})
	p, sig, _ := strings.Cut(good, ".")
	tests := []struct {
		name   string
		signer ui.Signer
		value  string
		at     time.Time
		ok     bool
	}{
		{"valid", sg, good, now, true},
		{"expired", sg, good, now.Add(time.Minute), false},
		{"other engine's secret", other, good, now, false},
		{"payload changed", sg, p + "x." + sig, now, false},
		{"no signature", sg, p, now, false},
		{"empty", sg, "", now, false},
	}
	for _, tt := range tests {
		got, err := tt.signer.Decode(tt.value, tt.at)
		if (err == nil) != tt.ok || tt.ok && got.TenantID != "t-a" {
			t.Errorf("%s: %+v %v, want ok %v", tt.name, got, err, tt.ok)
		}
	}
	if tok := sg.CSRF(good); !sg.CheckCSRF(good, tok) || sg.CheckCSRF(good+"x", tok) || other.CheckCSRF(good, tok) {
		t.Error("the CSRF token is not bound to the session and the secret")
	}
}
