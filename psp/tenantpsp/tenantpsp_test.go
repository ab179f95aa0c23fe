package tenantpsp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"lastro/collections/egress"
	"lastro/engine/enginetest"
	"lastro/psp"
	"lastro/psp/psptest"
	"lastro/psp/sandbox"
	"lastro/psp/tenantpsp"
	"lastro/tenant"
)

func TestDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The configured PSP below is on loopback: allowed explicitly.
	loopback := egress.New(egress.AllowLoopback())
	env := enginetest.New(t, enginetest.Egress(loopback))
	tn, keys := env.Tenant(t, "t-dir")
	d := tenantpsp.New(env.Tenants, loopback)
	if p, err := d.For(ctx, tn); p != nil || err != nil {
		t.Fatalf("no sandbox, no configuration: %v %v", p, err)
	}
	sb := sandbox.New(sandbox.Options{Clock: env.Clock, SecretFor: d.SecretFor})
	var registrations atomic.Int32
	h := strict(t, sb.Handler())
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
	c, err := first.CreateCob(ctx, psp.CobInput{TxID: "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF", AmountCents: 100, ExpirationSeconds: 3600})
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
	// Its own PSP configured, the tenant is no longer the sandbox's: the
	// sandbox gets no secret to sign a notice for it (ADR 0054).
	if secret, err := d.SecretFor(ctx, tenantpsp.SandboxKey("t-dir")); !errors.Is(err, tenantpsp.ErrOwnPSP) || secret != "" {
		t.Fatalf("secret of a tenant with its own PSP: %q %v, want ErrOwnPSP", secret, err)
	}
}

// TestATenantsPSPIsDialledThroughThePolicyAndTheSandboxIsNot: under the
// strict policy the engine's own sandbox, on plain loopback http, still
// serves tenants without a PSP (the operator configured it), while a
// tenant's PSP that the policy refuses is never called, not even for a
// token: the client is refused as a rejection.
func TestATenantsPSPIsDialledThroughThePolicyAndTheSandboxIsNot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The tenant set its PSP while the operator allowed loopback; this
	// directory (a restart with the strict policy) no longer does.
	env := enginetest.New(t, enginetest.Egress(egress.New(egress.AllowLoopback())))
	tn, _ := env.Tenant(t, "t-strict")
	d := tenantpsp.New(env.Tenants, egress.New())
	sb := sandbox.New(sandbox.Options{Clock: env.Clock, SecretFor: d.SecretFor})
	sbSrv := httptest.NewServer(strict(t, sb.Handler()))
	t.Cleanup(sbSrv.Close)
	sb.SetBaseURL(sbSrv.URL)
	d.UseSandbox(tenantpsp.Sandbox{URL: sbSrv.URL, ClientID: sandbox.DefaultClientID, ClientSecret: sb.ClientSecret(),
		WebhookBase: "http://engine.invalid/"})
	if p, err := d.For(ctx, tn); err != nil || p == nil {
		t.Fatalf("the sandbox under the strict policy: %v %v", p, err)
	}
	var hits atomic.Int32
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	t.Cleanup(own.Close)
	if _, err := env.Tenants.SetPSP(ctx, tn, tenant.PSPSettings{BaseURL: own.URL, ClientID: "c", ClientSecret: "s", Chave: "k",
		WebhookURL: own.URL + "/hook"}); err != nil {
		t.Fatal(err)
	}
	configured, err := env.Tenants.Get(ctx, "t-strict")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := d.For(ctx, configured); p != nil || !errors.Is(err, psp.ErrRejected) || !errors.Is(err, egress.ErrNotAllowed) {
		t.Fatalf("a refused PSP: %v %v", p, err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the refused PSP got %d requests", hits.Load())
	}
}

// strict puts h behind the recording PSP that checks every call against
// the Pix API document, when it is beside the repository.
func strict(t *testing.T, h http.Handler) http.Handler {
	t.Helper()
	if spec := psptest.LoadIfPresent(t); spec != nil {
		return spec.Strict(t, "", h)
	}
	return h
}
