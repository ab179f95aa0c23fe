package contactlimit_test

import (
	"context"
	"testing"
	"time"

	"lastro/contactlimit"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/policy"
	"lastro/tenant"
)

var bg = context.Background()

// sp is the tenants' zone.
var sp = mustZone("America/Sao_Paulo")

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

// local is an instant given as São Paulo wall-clock time.
func local(date string, h, m int) time.Time {
	d, err := time.ParseInLocation("2006-01-02", date, sp)
	if err != nil {
		panic(err)
	}
	return d.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

// thursday10 is Thursday 2026-09-24, 10:00 in São Paulo: inside the window.
var thursday10 = local("2026-09-24", 10, 0)

// Synthetic personal data: none of it may reach a log line or an item
// outside the sealed PROFILE.
const (
	testPhone = "+55 11 98765-4321"
	testEmail = "pessoa.sintetica@example.test"
	testName  = "Pessoa Sintética da Silva"
)

// fixture is the engine (enginetest) with the tests' tenant loaded and
// its API keys.
type fixture struct {
	*enginetest.Env
	t    *tenant.Tenant
	keys enginetest.Keys
}

func newFixture(t testing.TB, opts ...enginetest.Option) *fixture {
	t.Helper()
	f := &fixture{Env: enginetest.New(t, append([]enginetest.Option{enginetest.At(thursday10)}, opts...)...)}
	f.t, f.keys = f.Tenant(t, "t-contact")
	return f
}

func (f *fixture) reload(t testing.TB) {
	t.Helper()
	f.Tenants.Invalidate(f.t.ID)
	var err error
	if f.t, err = f.Tenants.Get(bg, f.t.ID); err != nil {
		t.Fatal(err)
	}
}

// gateway is a contact gateway on the engine's store, clock and logger
// with the sender and address book of d (the engine's own, f.Contacts,
// delivers nothing).
func (f *fixture) gateway(d contactlimit.Deps) *contactlimit.Gateway {
	d.Kit, d.Tenants, d.Policies, d.Clock, d.Logger = f.Kit, f.Tenants, f.Policies, f.Clock, f.Log
	return contactlimit.New(d)
}

// debtor registers a debtor (optionally in a state) and returns its key.
func (f *fixture) debtor(t testing.TB, uf string) string {
	t.Helper()
	r, err := f.Debtors.Register(bg, f.t, debtor.RegisterInput{Document: f.CPF(), Name: testName, Phone: testPhone, Email: testEmail, UF: uf},
		debtor.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	return r.DebtorKey
}

// publish makes a dunning policy with the given state windows and
// templates the tenant's current one.
func (f *fixture) publish(t testing.TB, states map[string]policy.ContactWindow, templates map[string]string) {
	t.Helper()
	d := policy.DefaultDunning()
	if _, _, err := f.Policies.PutDunning(bg, f.t, policy.DunningInput{Steps: d.Steps, ContactWindow: d.ContactWindow, MaxDailyContacts: 3,
		BureauNoticeToReportDays: 15, StateWindows: states, Templates: templates}); err != nil {
		t.Fatal(err)
	}
	f.reload(t)
}

func claimAt(dk string, at time.Time) contactlimit.Claim {
	return contactlimit.Claim{DebtorKey: dk, ContractID: "C-1", Channel: contactlimit.SMS, Template: "SMS_D5", Action: "SMS_D5", At: at,
		Actor: debtor.Actor{Role: "worker"}}
}

// addresses is a test address book.
type addresses struct{}

func (addresses) Address(_ context.Context, _ *tenant.Tenant, _ string, ch contactlimit.Channel) (string, error) {
	if ch == contactlimit.Email {
		return testEmail, nil
	}
	return testPhone, nil
}
