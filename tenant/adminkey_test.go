package tenant_test

import (
	"net/http"
	"testing"

	"lastro/engine/enginetest"
)

// TestAdminIssuesAKeyForAnExistingTenant: a tenant that lost its keys
// gets a new one from the admin, which works at once; only the admin
// token may, an unknown tenant is 404 and a malformed id or role 400,
// each writing nothing.
func TestAdminIssuesAKeyForAnExistingTenant(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	k := env.CreateTenant(t, "t-lost")
	status, out := env.Do(t, http.MethodPost, "/v1/tenants/t-lost/keys", enginetest.AdminToken, `{"role":"supervisor"}`)
	key, _ := out["apiKey"].(string)
	if status != http.StatusCreated || out["role"] != "supervisor" || key == "" {
		t.Fatalf("issue: %d %v", status, out)
	}
	if status, out := env.Do(t, http.MethodGet, "/v1/tenant/keys", key, ""); status != http.StatusOK {
		t.Fatalf("the new key: %d %v", status, out)
	}
	for _, tt := range []struct {
		path, token, body string
		want              int
		code              string
	}{
		{"/v1/tenants/t-lost/keys", k["supervisor"], `{"role":"supervisor"}`, http.StatusForbidden, ""},
		{"/v1/tenants/t-nobody/keys", enginetest.AdminToken, `{"role":"supervisor"}`, http.StatusNotFound, "tenant_not_found"},
		{"/v1/tenants/T_BAD/keys", enginetest.AdminToken, `{"role":"supervisor"}`, http.StatusBadRequest, "invalid_tenant_id"},
		{"/v1/tenants/t-lost/keys", enginetest.AdminToken, `{"role":"admin"}`, http.StatusBadRequest, "invalid_role"},
	} {
		status, out := env.Do(t, http.MethodPost, tt.path, tt.token, tt.body)
		if status != tt.want || (tt.code != "" && enginetest.ErrorCode(out) != tt.code) {
			t.Errorf("%s with %s: %d %v, want %d %s", tt.path, tt.body, status, out, tt.want, tt.code)
		}
	}
	_, list := env.Do(t, http.MethodGet, "/v1/tenant/keys", key, "")
	if items, _ := list["items"].([]any); len(items) != 4 {
		t.Fatalf("keys after the refusals: %d, want the 3 created with the tenant and the 1 issued", len(items))
	}
}
