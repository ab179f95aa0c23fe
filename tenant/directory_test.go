package tenant_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"lastro/collections/errs"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

func TestListReturnsEveryCreatedTenantOnce(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	ctx := context.Background()
	if ids, err := env.Tenants.List(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("empty store: %v %v", ids, err)
	}
	env.Tenant(t, "t-b")
	env.CreateTenant(t, "t-a") // through the API, the same transaction
	env.Tenant(t, "t-c")
	// A second creation of t-a is a conflict and adds no entry.
	_, err := env.Tenants.Create(ctx, tenant.CreateInput{TenantID: "t-a", Name: "again"})
	if !errs.Is(err, errs.Conflict) {
		t.Fatalf("second create: %v, want a conflict", err)
	}
	if status, _ := env.Do(t, http.MethodPost, "/v1/tenants", enginetest.AdminToken, `{"tenantId":"t-c","name":"again"}`); status != http.StatusConflict {
		t.Fatalf("second create through the API: %d", status)
	}
	ids, err := env.Tenants.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"t-a", "t-b", "t-c"}; !slices.Equal(ids, want) {
		t.Fatalf("List = %v, want %v", ids, want)
	}
	// Each listed id loads.
	for _, id := range ids {
		if _, err := env.Tenants.Get(ctx, id); err != nil {
			t.Errorf("listed %s does not load: %v", id, err)
		}
	}
}
