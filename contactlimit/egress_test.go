package contactlimit_test

import (
	"context"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"lastro/collections/clock"
	"lastro/collections/egress"
	"lastro/contactlimit"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

// TestWebhookSendsNothingWhereThePolicyRefuses: the messaging sender
// dials through its egress policy. A provider URL on loopback (set while
// the operator allowed it) is refused by a strict sender, and a public
// name that resolves to loopback only when dialled (DNS rebinding) is
// refused before a connection: the attempt is FAILED url_not_allowed
// at once (no retry changes it) and the provider receives nothing.
func TestWebhookSendsNothingWhereThePolicyRefuses(t *testing.T) {
	t.Parallel()
	rebind := egress.Resolver(func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	for _, tc := range []struct {
		name   string
		url    func(srv *httptest.Server) string
		policy *egress.Policy
	}{
		{"loopback URL, strict sender", func(srv *httptest.Server) string { return srv.URL + "/hook" }, nil},
		{"a name rebound to loopback", func(srv *httptest.Server) string {
			return "https://provider.example:" + srv.URL[strings.LastIndexByte(srv.URL, ':')+1:] + "/hook"
		}, egress.New(rebind)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, enginetest.Egress(loopback))
			p := &provider{}
			srv := httptest.NewServer(p)
			t.Cleanup(srv.Close)
			if _, err := f.Tenants.SetMessaging(bg, f.t, tenant.MessagingInput{URL: tc.url(srv)}); err != nil {
				t.Fatal(err)
			}
			f.reload(t)
			g := f.gateway(contactlimit.Deps{Sender: &contactlimit.Webhook{Clock: clock.System{}, Logger: f.Log, Attempts: 3,
				BaseDelay: time.Millisecond, Egress: tc.policy}, Addresses: addresses{}})
			a, err := g.Send(bg, f.t, claimAt(f.debtor(t, ""), thursday10))
			if err == nil || a.Outcome != contactlimit.OutcomeFailed || a.OutcomeDetail != egress.Code {
				t.Fatalf("send: %+v %v", a, err)
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.calls != 0 {
				t.Fatalf("the provider got %d requests", p.calls)
			}
			if strings.Contains(f.Logs.String(), "retrying") {
				t.Fatal("a refused destination was retried")
			}
			noPersonalData(t, f.Logs.String())
		})
	}
}
