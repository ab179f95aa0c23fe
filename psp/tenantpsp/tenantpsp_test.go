package tenantpsp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"lastro/engine/enginetest"
	"lastro/psp"
	"lastro/psp/sandbox"
	"lastro/psp/tenantpsp"
	"lastro/tenant"
)

func TestDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := enginetest.New(t)
	tn, keys := env.Tenant(t, "t-dir")
	d := tenantpsp.New(env.Tenants)
	if p, err := d.For(ctx, tn); p != nil || err != nil {
		t.Fatalf("no sandbox, no configuration: %v %v", p, err)
	}
	sb := sandbox.New(sandbox.Options{Clock: env.Clock, SecretFor: d.SecretFor})
	var registrations atomic.Int32
	h := sb.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && len(r.URL.Path) > len("/webhook/") && r.URL.Path[:len("/webhook/")] == "/webhook/" {
			registrations.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	sb.SetBaseURL(srv.URL)
	d.UseSandbox(tenantpsp.Sandbox{URL: srv.URL, ClientID: sandbox.DefaultClientID, ClientSecret: sb.ClientSecret(),
		WebhookBase: "http://engine.invalid/"})
	first, err := d.For(ctx, tn)
	if err != nil || first == nil {
		t.Fatalf("sandbox: %v %v", first, err)
	}
	again, err := d.For(ctx, tn)
	if err != nil || again != first || registrations.Load() != 1 {
		t.Fatalf("second call: same client %v, %d registrations, %v", again == first, registrations.Load(), err)
	}
	// The webhook registered is the engine's for the tenant.
	c, err := first.CreateCob(ctx, psp.CobInput{TxID: "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF", AmountCents: 100})
	if err != nil || c.Raw.Chave != tenantpsp.SandboxKey("t-dir") {
		t.Fatalf("cob: %+v %v", c, err)
	}
	if tenantpsp.SandboxKey("t-dir") == tenantpsp.SandboxKey("t-other") || len(tenantpsp.SandboxKey("t-dir")) != 36 {
		t.Fatal("sandbox keys are not one UUID per tenant")
	}
	if got := tenantpsp.WebhookURL("http://engine.invalid/", "t-dir"); got != "http://engine.invalid/v1/webhooks/t-dir" {
		t.Fatalf("webhook URL %s", got)
	}
	secret, err := d.SecretFor(ctx, tenantpsp.SandboxKey("t-dir"))
	if err != nil || secret != keys["webhook"] {
		t.Fatalf("secret: %v", err)
	}
	if _, err := d.SecretFor(ctx, "someone-else"); !errors.Is(err, tenantpsp.ErrUnknownKey) {
		t.Fatalf("unknown key: %v", err)
	}
	// A configuration (a new tenant version) builds a new client for it:
	// an unreachable PSP fails the registration, and nothing is cached.
	if _, err := env.Tenants.SetPSP(ctx, tn, tenant.PSPSettings{BaseURL: "http://127.0.0.1:1", ClientID: "c", ClientSecret: "s", Chave: "k",
		WebhookURL: "http://127.0.0.1:1/hook"}); err != nil {
		t.Fatal(err)
	}
	configured, err := env.Tenants.Get(ctx, "t-dir")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := d.For(ctx, configured); p != nil || !errors.Is(err, psp.ErrUnavailable) {
		t.Fatalf("unreachable PSP: %v %v", p, err)
	}
}
