package ui_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"lastro/tenant"
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
	if resp, body := post(t, c, s.URL+"/ui/login", url.Values{"csrf": {csrfOf(t, html)}, "key": {"lst_t-ui_" + strings.Repeat("0", 48)}}); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "não é válida") {
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
	if resp, _ := get(t, c, s.URL+"/"); resp.Header.Get("Location") != "/ui/dashboard" {
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
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "não veio deste site") {
			t.Errorf("%s token: %d, want the 403 page", name, resp.StatusCode)
		}
	}
	if _, after := get(t, c, s.URL+path); strings.Contains(after, "29/09/2026") {
		t.Fatal("a promise was recorded without the CSRF token")
	}
	form.Set("csrf", csrfOf(t, page))
	if resp, _ := post(t, c, s.URL+path+"/promises", form); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("with the token: %d", resp.StatusCode)
	}
	if _, after := get(t, c, s.URL+path); !strings.Contains(after, "29/09/2026") || !strings.Contains(after, "R$ 150,00") {
		t.Error("the promise is not on the debtor page")
	}
	// A manual contact, with the token: listed under the last days'.
	contact := url.Values{"csrf": {csrfOf(t, page)}, "contractId": {"C-UI-000"}, "channel": {"SMS"}, "template": {"MANUAL"}}
	if resp, body := post(t, c, s.URL+path+"/contacts", contact); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("contact: %d %s", resp.StatusCode, body)
	}
	if _, after := get(t, c, s.URL+path); !strings.Contains(after, "SMS · MANUAL · permitido") {
		t.Error("the contact is not on the debtor page")
	}
}

func TestRevokedKeyEndsItsSession(t *testing.T) {
	t.Parallel()
	s := seed(t, 1)
	c := s.client(t)
	s.login(t, c, s.keys["operator"])
	if resp, _ := get(t, c, s.URL+"/"); resp.Header.Get("Location") != "/ui/queue" {
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
	sg := ui.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	other := ui.NewSigner([]byte("fedcba9876543210fedcba9876543210"))
	good := sg.Encode(ui.Session{TenantID: "t-a", ID: strings.Repeat("a", 32)})
	p, sig, _ := strings.Cut(good, ".")
	tests := []struct {
		name   string
		signer ui.Signer
		value  string
		ok     bool
	}{
		{"valid", sg, good, true},
		{"other engine's secret", other, good, false},
		{"payload changed", sg, p + "x." + sig, false},
		{"no signature", sg, p, false},
		{"empty", sg, "", false},
	}
	for _, tt := range tests {
		got, err := tt.signer.Decode(tt.value)
		if (err == nil) != tt.ok || tt.ok && (got.TenantID != "t-a" || got.ID != strings.Repeat("a", 32)) {
			t.Errorf("%s: %+v %v, want ok %v", tt.name, got, err, tt.ok)
		}
	}
	if tok := sg.CSRF(good); !sg.CheckCSRF(good, tok) || sg.CheckCSRF(good+"x", tok) || other.CheckCSRF(good, tok) {
		t.Error("the CSRF token is not bound to the session and the secret")
	}
}

// sessionCookie logs a fresh client in with key and returns its session
// cookie's value.
func (s *seeded) sessionCookie(t *testing.T, key string) string {
	t.Helper()
	c := s.client(t)
	s.login(t, c, key)
	u, _ := url.Parse(s.URL + "/")
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == ui.SessionCookie {
			return ck.Value
		}
	}
	t.Fatal("no session cookie after login")
	return ""
}

// replay is a client that presents cookie as its session, as someone who
// copied it would.
func (s *seeded) replay(t *testing.T, cookie string) *http.Client {
	t.Helper()
	c := s.client(t)
	u, _ := url.Parse(s.URL)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: ui.SessionCookie, Value: cookie, Path: "/"}})
	return c
}

func TestLogoutEndsTheSessionOnTheServer(t *testing.T) {
	t.Parallel()
	s := seed(t, 1)
	c := s.client(t)
	s.login(t, c, s.keys["supervisor"])
	u, _ := url.Parse(s.URL + "/")
	var cookie string
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == ui.SessionCookie {
			cookie = ck.Value
		}
	}
	// A copy of the cookie works while the session lives...
	if resp, _ := get(t, s.replay(t, cookie), s.URL+"/ui/suspense"); resp.StatusCode != http.StatusOK {
		t.Fatalf("copied cookie before logout: %d, want 200", resp.StatusCode)
	}
	_, page := get(t, c, s.URL+"/ui/suspense")
	if resp, _ := post(t, c, s.URL+"/ui/logout", url.Values{"csrf": {csrfOf(t, page)}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	// ...and not after the logout, though it is well signed and within
	// its 8 hours: the session item is gone.
	replayed := s.replay(t, cookie)
	for _, path := range []string{"/ui/suspense", "/ui/portfolio"} {
		resp, _ := get(t, replayed, s.URL+path)
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/login") {
			t.Errorf("replayed cookie after logout on %s: %d to %q, want 303 to the login", path, resp.StatusCode, loc)
		}
	}
	if resp, _ := get(t, replayed, s.URL+"/"); resp.Header.Get("Location") != "/ui/login" {
		t.Errorf("GET / with the ended session: to %q, want the login", resp.Header.Get("Location"))
	}
	form := url.Values{"csrf": {csrfOf(t, page)}}
	if resp, _ := post(t, replayed, s.URL+"/ui/agenda/run", form); !strings.HasPrefix(resp.Header.Get("Location"), "/ui/login") {
		t.Errorf("POST with the ended session and its token: %d to %q, want the login", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestEachLoginIsItsOwnSession(t *testing.T) {
	t.Parallel()
	s := seed(t, 1)
	// The fixture's clock stands still: two logins in the same instant.
	a := s.sessionCookie(t, s.keys["supervisor"])
	b := s.sessionCookie(t, s.keys["supervisor"])
	if a == b {
		t.Fatal("two logins with one key in the same second got the same cookie")
	}
	ca, cb := s.replay(t, a), s.replay(t, b)
	_, page := get(t, ca, s.URL+"/ui/suspense")
	post(t, ca, s.URL+"/ui/logout", url.Values{"csrf": {csrfOf(t, page)}})
	if resp, _ := get(t, ca, s.URL+"/ui/suspense"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the logged-out session: %d, want 303", resp.StatusCode)
	}
	if resp, _ := get(t, cb, s.URL+"/ui/suspense"); resp.StatusCode != http.StatusOK {
		t.Errorf("the other login after the first logged out: %d, want 200", resp.StatusCode)
	}
}

func TestSessionCookieNamesNoKey(t *testing.T) {
	t.Parallel()
	s := seed(t, 1)
	key := s.keys["operator"]
	cookie := s.sessionCookie(t, key)
	payload, _, _ := strings.Cut(cookie, ".")
	body, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		t.Fatalf("cookie payload %q: %v", payload, err)
	}
	var fields map[string]any
	if err := json.Unmarshal(body, &fields); err != nil {
		t.Fatalf("cookie payload %s: %v", body, err)
	}
	fp := tenant.KeyFingerprint(key)
	if strings.Contains(string(body), fp[:tenant.KeyIDLength]) || strings.Contains(cookie, fp[:tenant.KeyIDLength]) {
		t.Errorf("the cookie carries the key's fingerprint: %s", body)
	}
	id, _ := fields["s"].(string)
	if len(fields) != 2 || fields["t"] != s.t.ID || len(id) < 32 {
		t.Errorf("cookie payload %s: want only the tenant and a 128-bit session id", body)
	}
}

func TestSessionExpiresOnTheServer(t *testing.T) {
	t.Parallel()
	s := seed(t, 1)
	c := s.replay(t, s.sessionCookie(t, s.keys["supervisor"]))
	s.Clock.Advance(ui.DefaultSessionTTL - time.Second)
	if resp, _ := get(t, c, s.URL+"/ui/suspense"); resp.StatusCode != http.StatusOK {
		t.Fatalf("a second before the session ends: %d, want 200", resp.StatusCode)
	}
	s.Clock.Advance(time.Second)
	if resp, _ := get(t, c, s.URL+"/ui/suspense"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("at the session's end: %d, want 303 to the login", resp.StatusCode)
	}
}

func TestCSRFTokenOnlyFromTheFormBody(t *testing.T) {
	t.Parallel()
	s := seed(t, 1)
	c := s.client(t)
	// The login form's token in the query string is no token.
	_, html := get(t, c, s.URL+"/ui/login")
	q := url.Values{"csrf": {csrfOf(t, html)}}.Encode()
	if resp, _ := post(t, c, s.URL+"/ui/login?"+q, url.Values{"key": {s.keys["operator"]}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("login with the token in the query string: %d, want 403", resp.StatusCode)
	}
	s.login(t, c, s.keys["operator"])
	path := "/ui/debtors/" + s.dks[0]
	_, page := get(t, c, s.URL+path)
	q = url.Values{"csrf": {csrfOf(t, page)}}.Encode()
	form := url.Values{"contractId": {"C-UI-000"}, "promisedDate": {"2026-09-29"}, "amount": {"150,00"}}
	resp, body := post(t, c, s.URL+path+"/promises?"+q, form)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "não veio deste site") {
		t.Errorf("promise with the token in the query string: %d, want the 403 page", resp.StatusCode)
	}
	if _, after := get(t, c, s.URL+path); strings.Contains(after, "29/09/2026") {
		t.Fatal("a promise was recorded with the CSRF token in the URL")
	}
}
