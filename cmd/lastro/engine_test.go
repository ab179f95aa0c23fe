package main

import (
	"context"
	"strings"
	"testing"

	"lastro/collections/clock"
	"lastro/engine/enginetest"
)

// newTestEngine is the shared fixture (enginetest) for this package's
// tests: the engine on an in-memory embedded store, reached in process.
func newTestEngine(t *testing.T) *enginetest.Env { return enginetest.New(t) }

// newTestEngineAt is newTestEngine; it also returns the manual clock the
// test moves (the fixture starts it at enginetest.DefaultNow).
func newTestEngineAt(t *testing.T) (*enginetest.Env, *clock.Manual) {
	te := enginetest.New(t)
	return te, te.Clock
}

func TestTenantWalkthrough(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	keys := te.CreateTenant(t, "t-demo")
	for _, role := range []string{"operator", "supervisor", "compliance"} {
		status, out := te.Do(t, "GET", "/v1/tenant", keys[role], "")
		if status != 200 || out["tenantId"] != "t-demo" || out["timezone"] != "America/Sao_Paulo" || out["shards"] != float64(16) {
			t.Fatalf("%s GET /v1/tenant: %d %v", role, status, out)
		}
	}
	if !strings.HasPrefix(keys["webhook"], "whsec_") {
		t.Fatalf("webhook secret %q", keys["webhook"])
	}
	// API keys and secrets never reach the logs.
	for _, secret := range keys {
		if strings.Contains(te.Logs.String(), secret) {
			t.Fatal("a secret was logged")
		}
	}
}

func TestAuthErrors(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	a := te.CreateTenant(t, "t-a")
	te.CreateTenant(t, "t-b")
	forged := a["operator"][:len(a["operator"])-4] + "beef"
	tests := []struct {
		name, method, path, token, body string
		status                          int
		code                            string
	}{
		{"no key", "GET", "/v1/tenant", "", "", 401, "unauthenticated"},
		{"unknown key", "GET", "/v1/tenant", forged, "", 401, "unauthenticated"},
		{"malformed key", "GET", "/v1/tenant", "not-a-key", "", 401, "unauthenticated"},
		{"key naming another tenant", "GET", "/v1/tenant", strings.Replace(a["operator"], "t-a", "t-b", 1), "", 401, "unauthenticated"},
		{"tenant key on admin route", "POST", "/v1/tenants", a["supervisor"], `{"tenantId":"t-x","name":"x"}`, 403, "forbidden"},
		{"admin token on tenant route", "GET", "/v1/tenant", enginetest.AdminToken, "", 403, "forbidden"},
		{"unknown route", "GET", "/v1/nothing", a["operator"], "", 404, "route_not_found"},
		{"known route, wrong method", "DELETE", "/v1/tenant", a["operator"], "", 405, "method_not_allowed"},
		{"body over 1 MiB", "POST", "/v1/debtors", a["operator"], `{"name":"` + strings.Repeat("x", 1<<20) + `"}`, 413, "body_too_large"},
	}
	for _, tt := range tests {
		status, out := te.Do(t, tt.method, tt.path, tt.token, tt.body)
		if status != tt.status || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want %d %s", tt.name, status, out, tt.status, tt.code)
		}
	}
	// The other tenant's key sees its own tenant, never t-a.
	status, out := te.Do(t, "GET", "/v1/tenant", a["compliance"], "")
	if status != 200 || out["tenantId"] != "t-a" {
		t.Fatalf("own tenant: %d %v", status, out)
	}
}

func TestCreateTenantRejectsBadInputAndChangesNothing(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	te.CreateTenant(t, "t-ok")
	tests := []struct {
		name, body string
		status     int
		code       string
	}{
		{"malformed JSON", `{"tenantId":`, 400, "invalid_json"},
		{"unknown field", `{"tenantId":"t1","name":"x","plan":"gold"}`, 400, "invalid_json"},
		{"array", `[]`, 400, "invalid_json"},
		{"empty body", ``, 400, "invalid_json"},
		{"uppercase id", `{"tenantId":"T1","name":"x"}`, 400, "invalid_tenant_id"},
		{"hash in id", `{"tenantId":"t#1","name":"x"}`, 400, "invalid_tenant_id"},
		{"one char id", `{"tenantId":"t","name":"x"}`, 400, "invalid_tenant_id"},
		{"33 char id", `{"tenantId":"` + strings.Repeat("a", 33) + `","name":"x"}`, 400, "invalid_tenant_id"},
		{"leading dash", `{"tenantId":"-t1","name":"x"}`, 400, "invalid_tenant_id"},
		{"no name", `{"tenantId":"t1"}`, 400, "invalid_name"},
		{"bad zone", `{"tenantId":"t1","name":"x","timezone":"Mars/Olympus"}`, 400, "invalid_timezone"},
		{"existing", `{"tenantId":"t-ok","name":"again"}`, 409, "tenant_exists"},
	}
	for _, tt := range tests {
		status, out := te.Do(t, "POST", "/v1/tenants", enginetest.AdminToken, tt.body)
		if status != tt.status || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want %d %s", tt.name, status, out, tt.status, tt.code)
		}
	}
	// Nothing was written for the rejected ids.
	for _, id := range []string{"t1", "T1"} {
		if _, err := te.Tenants.Get(context.Background(), id); err == nil {
			t.Errorf("tenant %s exists after a rejected creation", id)
		}
	}
}

func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	status, doc := te.Do(t, "GET", "/openapi.json", "", "")
	if status != 200 || doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi: %d %v", status, doc["openapi"])
	}
	paths := doc["paths"].(map[string]any)
	n := 0
	for _, r := range te.Web.Echo.Routes() {
		if r.Method == "echo_route_not_found" {
			continue
		}
		n++
		p, _ := openAPIPathOf(r.Path)
		ops, ok := paths[p].(map[string]any)
		if !ok || ops[strings.ToLower(r.Method)] == nil {
			t.Errorf("route %s %s is not in /openapi.json", r.Method, r.Path)
		}
	}
	if n < 5 {
		t.Fatalf("only %d routes walked", n)
	}
}

func openAPIPathOf(p string) (string, bool) {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") {
			parts[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(parts, "/"), true
}

func TestHealth(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		if status, _ := te.Do(t, "GET", p, "", ""); status != 200 {
			t.Errorf("%s: %d", p, status)
		}
	}
}
