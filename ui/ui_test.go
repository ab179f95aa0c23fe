package ui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"lastro/charges"
	"lastro/contract"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

var bg = context.Background()

// seeded is a fixture engine with a tenant holding a portfolio: n
// contracts in D031_060 (one per debtor, distinct balances), one debtor
// registered under a script-bearing name, and another tenant's debtor.
type seeded struct {
	*enginetest.Env
	t        *tenant.Tenant
	keys     enginetest.Keys
	dks      []string          // debtor keys, contract i belongs to dks[i]
	contract map[string]string // contract id → debtor key
	xssDK    string
	otherDK  string
}

const xssName = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>`

func seed(t *testing.T, n int) *seeded {
	t.Helper()
	env := enginetest.New(t)
	tn, k := env.Tenant(t, "t-ui")
	s := &seeded{Env: env, t: tn, keys: k, contract: map[string]string{}}
	for i := range n {
		dk := s.register(t, tn, "Pessoa Sintética")
		id := fmt.Sprintf("C-UI-%03d", i)
		// First due 2026-08-10: 45 days late on the fixture's today.
		in := contract.Input{ContractID: id, ProductCode: "CREDIARIO_2X", Installments: enginetest.Monthly("2026-08-10", 2, int64(10000+i*1000), 500)}
		if _, err := env.Contracts.Create(bg, tn, dk, in, contract.Actor{Role: "operator"}); err != nil {
			t.Fatalf("create %s: %v", id, err)
		}
		s.dks = append(s.dks, dk)
		s.contract[id] = dk
	}
	s.xssDK = s.register(t, tn, xssName)
	in := contract.Input{ContractID: "C-XSS", ProductCode: "CREDIARIO_2X", Installments: enginetest.Monthly("2026-08-10", 1, 5000, 0)}
	if _, err := env.Contracts.Create(bg, tn, s.xssDK, in, contract.Actor{Role: "operator"}); err != nil {
		t.Fatal(err)
	}
	other, _ := env.Tenant(t, "t-ui-other")
	s.otherDK = s.register(t, other, "Outra Pessoa")
	return s
}

func (s *seeded) register(t *testing.T, tn *tenant.Tenant, name string) string {
	t.Helper()
	r, err := s.Debtors.Register(bg, tn, debtor.RegisterInput{Document: s.CPF(), Name: name, Phone: "+55 11 90000-0003"}, debtor.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	return r.DebtorKey
}

// suspend issues a charge on contract id's first instalment and delivers
// a settlement naming an unknown charge: it lands in suspense. It returns
// the settlement id and the real charge id.
func (s *seeded) suspend(t *testing.T, id string, cents int64) (string, string) {
	t.Helper()
	ch, err := s.Charges.Issue(bg, s.t, charges.Input{DebtorKey: s.contract[id], ContractID: id, Seq: 1, Method: "PIX"})
	if err != nil {
		t.Fatal(err)
	}
	body := enginetest.WebhookBody("stl-ui-1", "unknown-charge-1", cents, "2026-09-24T08:30:00-03:00")
	status, out, err := s.Deliver(s.t.ID, s.keys["webhook"], body, s.Clock.Now(), nil)
	if err != nil || status != http.StatusOK || !strings.Contains(out, "unmatched") {
		t.Fatalf("deliver: %d %s %v", status, out, err)
	}
	return "stl-ui-1", ch.ChargeID
}

// client is a cookie-keeping HTTP client that does not follow redirects.
func (s *seeded) client(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func post(t *testing.T, c *http.Client, u string, form url.Values) (*http.Response, string) {
	t.Helper()
	resp, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, html string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no CSRF field in %q", html)
	}
	return m[1]
}

// login logs c in with key through the form and returns the landing
// page's location.
func (s *seeded) login(t *testing.T, c *http.Client, key string) string {
	t.Helper()
	_, html := get(t, c, s.URL+"/ui/login")
	resp, body := post(t, c, s.URL+"/ui/login", url.Values{"csrf": {csrfOf(t, html)}, "key": {key}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	return resp.Header.Get("Location")
}
