package tenant_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"lastro/collections/egress"
	"lastro/collections/errs"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

// forbiddenURLs are what a tenant may not point the engine at by
// default: plain http, loopback (v4, v6, by name), the metadata service
// and a private address.
var forbiddenURLs = []string{
	"http://bank.example/hook",
	"http://127.0.0.1:9/hook",
	"https://127.0.0.1/hook",
	"https://[::1]/hook",
	"https://[::ffff:127.0.0.1]/hook",
	"https://169.254.169.254/latest/meta-data/",
	"https://10.0.0.1/hook",
	"https://localhost/hook",
	"https://api.localhost/hook",
	"https://user:s3cr3t@bank.example/hook",
}

// TestTenantURLsFollowTheEgressPolicy: over the API, the events webhook
// and the PSP's base and token URLs set to a forbidden destination are
// 400 url_not_allowed, without echoing the URL, and change nothing; the
// messaging webhook (no route of its own) is refused alike by its setter.
func TestTenantURLsFollowTheEgressPolicy(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	k := env.CreateTenant(t, "t-egress")
	sup := k["supervisor"]
	psp := func(base, token string) string {
		return fmt.Sprintf(`{"baseUrl":%q,"tokenUrl":%q,"clientId":"client","clientSecret":"very-secret","chave":"0f6b3c1e-2d4a-4e8b-9c7d-5a1f2e3b4c5d"}`,
			base, token)
	}
	refused := func(what string, status int, raw string) {
		t.Helper()
		out := enginetest.JSON(t, raw)
		if status != http.StatusBadRequest || enginetest.ErrorCode(out) != egress.Code || strings.Contains(raw, "s3cr3t") ||
			strings.Contains(raw, "meta-data") || strings.Contains(raw, "very-secret") {
			t.Errorf("%s: %d %s", what, status, raw)
		}
	}
	for _, u := range forbiddenURLs {
		status, raw := env.Raw(t, http.MethodPut, "/v1/tenant/events-webhook", sup, `{"url":"`+u+`"}`)
		refused("events webhook "+u, status, raw)
		status, raw = env.Raw(t, http.MethodPut, "/v1/tenant/psp", sup, psp(u, ""))
		refused("PSP base URL "+u, status, raw)
		status, raw = env.Raw(t, http.MethodPut, "/v1/tenant/psp", sup, psp("https://pix.psp.example/api/v2", u))
		refused("PSP token URL "+u, status, raw)
	}
	ctx := context.Background()
	tn, err := env.Tenants.Get(ctx, "t-egress")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range forbiddenURLs {
		_, err := env.Tenants.SetMessaging(ctx, tn, tenant.MessagingInput{URL: u})
		if status, code, msg := errs.Public(err); status != http.StatusBadRequest || code != egress.Code || strings.Contains(msg, "s3cr3t") {
			t.Errorf("messaging webhook %s: %d %s %s", u, status, code, msg)
		}
	}
	// Nothing was stored: no URL, no secret, no PSP, the version unmoved.
	env.Tenants.Invalidate("t-egress")
	got, err := env.Tenants.Get(ctx, "t-egress")
	if err != nil {
		t.Fatal(err)
	}
	if got.EventsURL != "" || got.EventsWebhookSecret() != "" || got.MessagingURL != "" || got.MessagingSecret() != "" ||
		got.PSP() != nil || got.Version != tn.Version {
		t.Fatalf("a refused URL changed the tenant: %+v", got)
	}
	if status, out := env.Do(t, http.MethodGet, "/v1/tenant/psp", sup, ""); status != http.StatusOK || out["configured"] != false {
		t.Fatalf("psp after the refusals: %d %v", status, out)
	}
	// A public https URL is still accepted.
	if status, out := env.Do(t, http.MethodPut, "/v1/tenant/events-webhook", sup, `{"url":"https://bank.example/events"}`); status != http.StatusOK {
		t.Fatalf("a public URL: %d %v", status, out)
	}
}

// TestLoopbackIsAnExplicitOptIn: with the operator's loopback allowed,
// plain http to a loopback host is accepted (a local stand-in), while
// http off this machine and the metadata service stay refused.
func TestLoopbackIsAnExplicitOptIn(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t, enginetest.Egress(egress.New(egress.AllowLoopback())))
	k := env.CreateTenant(t, "t-loop")
	for u, want := range map[string]int{
		"http://127.0.0.1:9/events":                 http.StatusOK,
		"http://localhost:9/events":                 http.StatusOK,
		"https://[::1]:9/events":                    http.StatusOK,
		"http://bank.example/events":                http.StatusBadRequest,
		"https://169.254.169.254/latest/meta-data/": http.StatusBadRequest,
		"https://10.0.0.1/events":                   http.StatusBadRequest,
	} {
		if status, out := env.Do(t, http.MethodPut, "/v1/tenant/events-webhook", k["supervisor"], `{"url":"`+u+`"}`); status != want {
			t.Errorf("%s: %d %v, want %d", u, status, out, want)
		}
	}
}
