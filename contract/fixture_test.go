package contract_test

import (
	"net/http"
	"testing"

	"lastro/collections/errs"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

var actor = contract.Actor{Role: "operator", RequestID: "req-1"}

// fixture is the engine (enginetest) with one tenant, "t-a", loaded as
// services take it, and its API keys.
type fixture struct {
	*enginetest.Env
	t    *tenant.Tenant
	keys enginetest.Keys
}

func newFixture(t testing.TB, opts ...enginetest.Option) *fixture {
	t.Helper()
	f := &fixture{Env: enginetest.New(t, opts...)}
	f.t, f.keys = f.Tenant(t, "t-a")
	return f
}

// reload loads the tenant afresh, after a change to its settings.
func (f *fixture) reload(t testing.TB) *tenant.Tenant {
	t.Helper()
	f.Tenants.Invalidate(f.t.ID)
	tn, err := f.Tenants.Get(t.Context(), f.t.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.t = tn
	return tn
}

// register registers a debtor with a synthetic CPF and returns its key.
func (f *fixture) register(t testing.TB) string {
	t.Helper()
	r, err := f.Debtors.Register(t.Context(), f.t, debtor.RegisterInput{Document: f.CPF(), Name: "Pessoa Sintética"}, debtor.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	return r.DebtorKey
}

// sign creates a contract of monthly instalments of 1000.00 + 100.00.
func (f *fixture) sign(t testing.TB, dk, id, first string, n int) *contract.Created {
	t.Helper()
	out, err := f.Contracts.Create(t.Context(), f.t, dk, contract.Input{ContractID: id, ProductCode: "CREDIARIO_12X", Installments: enginetest.Monthly(first, n, 100000, 10000)}, actor)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// get is a GET of the API as the tenant's operator; it fails the test
// unless the answer is 200.
func (f *fixture) get(t testing.TB, path string) map[string]any {
	t.Helper()
	status, out := f.Do(t, http.MethodGet, path, f.keys["operator"], "")
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, status, out)
	}
	return out
}

func (f *fixture) items(t testing.TB, dk string) []kit.Item {
	t.Helper()
	return f.Partition(t, f.t, dk)
}

func code(err error) string { _, c, _ := errs.Public(err); return c }
