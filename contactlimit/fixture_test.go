package contactlimit

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"lastro/collections/clock"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/collections/secret"
	"lastro/collections/table"
	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
	"lastro/debtor"
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

// syncBuffer collects log output from concurrent goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// Synthetic personal data: none of it may reach a log line or an item
// outside the sealed PROFILE.
const (
	testPhone = "+55 11 98765-4321"
	testEmail = "pessoa.sintetica@example.test"
	testName  = "Pessoa Sintética da Silva"
)

type fixture struct {
	kit      *kit.Kit
	tenants  *tenant.Service
	policies *policy.Service
	debtors  *debtor.Service
	clock    *clock.Manual
	t        *tenant.Tenant
	logs     *syncBuffer
	log      *slog.Logger
	docs     int
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	srv := ddbtest.Start(t, ddblocal.Options{})
	db := ddbtest.NewClient(srv.URL, nil)
	if _, err := table.Ensure(bg, db, "lastro"); err != nil {
		t.Fatal(err)
	}
	k := kit.New(db, "lastro")
	key := secret.Random(32)
	box, _ := secret.New(key)
	c := clock.NewManual(thursday10)
	tenants := tenant.NewService(k, box, c, 16)
	if _, err := tenants.Create(bg, tenant.CreateInput{TenantID: "t-contact", Name: "Crediário Teste"}); err != nil {
		t.Fatal(err)
	}
	sealer, err := pii.NewLocal(bg, key)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	pol := policy.NewService(k, tenants, c)
	f := &fixture{kit: k, tenants: tenants, policies: pol, clock: c, logs: logs,
		log:     slog.New(slog.NewJSONHandler(logs, nil)),
		debtors: debtor.NewService(debtor.Deps{Kit: k, Tenants: tenants, Sealer: sealer, Clock: c})}
	f.reload(t)
	return f
}

func (f *fixture) reload(t testing.TB) {
	t.Helper()
	f.tenants.Invalidate("t-contact")
	var err error
	if f.t, err = f.tenants.Get(bg, "t-contact"); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) gateway(d Deps) *Gateway {
	d.Kit, d.Tenants, d.Policies, d.Clock, d.Logger = f.kit, f.tenants, f.policies, f.clock, f.log
	return New(d)
}

// cpf returns a valid synthetic CPF, a different one per call.
func (f *fixture) cpf() string {
	f.docs++
	base := fmt.Sprintf("%09d", 100000000+f.docs*7919)
	digit := func(s string, w int) byte {
		sum := 0
		for i := range s {
			sum += int(s[i]-'0') * (w - i)
		}
		r := sum * 10 % 11
		if r == 10 {
			r = 0
		}
		return byte('0' + r)
	}
	d1 := digit(base, 10)
	d2 := digit(base+string(d1), 11)
	return base + string(d1) + string(d2)
}

// debtor registers a debtor (optionally in a state) and returns its key.
func (f *fixture) debtor(t testing.TB, uf string) string {
	t.Helper()
	r, err := f.debtors.Register(bg, f.t, debtor.RegisterInput{Document: f.cpf(), Name: testName, Phone: testPhone, Email: testEmail, UF: uf},
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
	if _, _, err := f.policies.PutDunning(bg, f.t, policy.DunningInput{Steps: d.Steps, ContactWindow: d.ContactWindow, MaxDailyContacts: 3,
		BureauNoticeToReportDays: 15, StateWindows: states, Templates: templates}); err != nil {
		t.Fatal(err)
	}
	f.reload(t)
}

func claimAt(dk string, at time.Time) Claim {
	return Claim{DebtorKey: dk, ContractID: "C-1", Channel: SMS, Template: "SMS_D5", Action: "SMS_D5", At: at,
		Actor: debtor.Actor{Role: "worker"}}
}

// addresses is a test address book.
type addresses struct{}

func (addresses) Address(_ context.Context, _ *tenant.Tenant, _ string, ch Channel) (string, error) {
	if ch == Email {
		return testEmail, nil
	}
	return testPhone, nil
}
