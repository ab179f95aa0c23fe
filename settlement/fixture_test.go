package settlement

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/collections/secret"
	"lastro/collections/table"
	"lastro/contract"
	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
	"lastro/debtor"
	"lastro/policy"
	"lastro/tenant"
)

var bg = context.Background()

// The tests' "now": Thursday 2026-09-24, 09:00 in São Paulo.
var testNow = time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)

type fixture struct {
	store     *ddblocal.Store
	kit       *kit.Kit
	tenants   *tenant.Service
	policies  *policy.Service
	debtors   *debtor.Service
	contracts *contract.Service
	charges   *charges.Service
	s         *Service
	clock     *clock.Manual
	t         *tenant.Tenant
	docs      int
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	srv := ddbtest.Start(t, ddblocal.Options{})
	db := ddbtest.NewClient(srv.URL, nil) // the SDK's standard retries, as the engine runs
	if _, err := table.Ensure(bg, db, "lastro"); err != nil {
		t.Fatal(err)
	}
	k := kit.New(db, "lastro")
	key := secret.Random(32)
	box, _ := secret.New(key)
	c := clock.NewManual(testNow)
	tenants := tenant.NewService(k, box, c, 16)
	if _, err := tenants.Create(bg, tenant.CreateInput{TenantID: "t-pay", Name: "Test"}); err != nil {
		t.Fatal(err)
	}
	sealer, err := pii.NewLocal(bg, key)
	if err != nil {
		t.Fatal(err)
	}
	pol := policy.NewService(k, tenants, c)
	f := &fixture{store: srv.Store, kit: k, tenants: tenants, policies: pol, clock: c,
		debtors:   debtor.NewService(debtor.Deps{Kit: k, Tenants: tenants, Sealer: sealer, Clock: c}),
		contracts: contract.NewService(contract.Deps{Kit: k, Tenants: tenants, Policies: pol, Clock: c}),
		charges:   charges.NewService(charges.Deps{Kit: k, Tenants: tenants, Policies: pol, Clock: c}),
		s:         NewService(Deps{Kit: k, Tenants: tenants, Policies: pol, Clock: c})}
	f.t, err = tenants.Get(bg, "t-pay")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) db() *kit.Tenant { return f.kit.Tenant(f.t.ID, f.t.CursorKey()) }

// cpf returns a valid synthetic CPF, a different one per call.
func (f *fixture) cpf() string {
	f.docs++
	return debtor.GenerateCPF(rand.New(rand.NewPCG(uint64(f.docs), 7919))).Formatted()
}

// contract registers a debtor and signs a contract of n monthly
// instalments of 900.00 principal + 100.00 interest from first.
func (f *fixture) contract(t testing.TB, id, first string, n int) string {
	t.Helper()
	r, err := f.debtors.Register(bg, f.t, debtor.RegisterInput{Document: f.cpf(), Name: "Pessoa Sintética"}, debtor.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	d := calendar.MustParse(first)
	insts := make([]contract.InstallmentInput, n)
	for i := range insts {
		insts[i] = contract.InstallmentInput{Seq: i + 1, DueDate: d.AddMonths(i).String(), PrincipalCents: contract.Cents(90000), InterestCents: contract.Cents(10000)}
	}
	if _, err := f.contracts.Create(bg, f.t, r.DebtorKey, contract.Input{ContractID: id, ProductCode: "CREDIARIO_12X", Installments: insts}, contract.Actor{Role: "operator"}); err != nil {
		t.Fatal(err)
	}
	return r.DebtorKey
}

func (f *fixture) charge(t testing.TB, dk, contractID string, seq int) *charges.Issued {
	t.Helper()
	c, err := f.charges.Issue(bg, f.t, charges.Input{DebtorKey: dk, ContractID: contractID, Seq: seq, Method: charges.PIX})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fixture) load(t testing.TB, dk, contractID string) *contract.Contract {
	t.Helper()
	c, err := contract.Load(bg, f.db(), f.t.ID, dk, contractID)
	if err != nil || c == nil {
		t.Fatalf("load contract: %v %v", c, err)
	}
	return c
}

func (f *fixture) item(t testing.TB, pk, sk string) kit.Item {
	t.Helper()
	it, err := f.db().Get(bg, kit.Key{PK: pk, SK: sk}, true)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func (f *fixture) stl(t testing.TB, settlementID string) *stlItem {
	t.Helper()
	it := f.item(t, keys.Settlement(f.t.ID, settlementID), keys.SettlementSK)
	if it == nil {
		return nil
	}
	var s stlItem
	if err := attributevalue.UnmarshalMap(it, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// partition returns every item of a debtor's partition.
func (f *fixture) partition(t testing.TB, dk string) []kit.Item {
	t.Helper()
	var out []kit.Item
	cursor := ""
	for {
		p, err := f.db().QueryPage(bg, kit.Query{Partition: keys.Debtor(f.t.ID, dk), Consistent: true}, cursor)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Items...)
		if cursor = p.Next; cursor == "" {
			return out
		}
	}
}

// agenda returns the contract ids on the agenda of a date and shard.
func (f *fixture) agenda(t testing.TB, date string, shard int) []string {
	t.Helper()
	p, err := f.db().QueryPage(bg, kit.Query{Index: table.Agenda, Partition: keys.Agenda(f.t.ID, date, shard)}, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range p.Items {
		var h contract.Header
		_ = attributevalue.UnmarshalMap(it, &h)
		ids = append(ids, h.ContractID)
	}
	return ids
}

// portfolio returns the contract ids in a bucket.
func (f *fixture) portfolio(t testing.TB, bucket string) []string {
	t.Helper()
	p, err := f.db().QueryPage(bg, kit.Query{Index: table.Portfolio, Partition: keys.Bucket(f.t.ID, bucket)}, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range p.Items {
		var h contract.Header
		_ = attributevalue.UnmarshalMap(it, &h)
		ids = append(ids, h.ContractID)
	}
	return ids
}

func pay(settlementID, chargeID string, amount int64, paidAt time.Time) Payload {
	return Payload{SettlementID: settlementID, ChargeID: chargeID, AmountCents: amount, PaidAt: paidAt}
}
