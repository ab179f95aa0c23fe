package settlement_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/charges"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/contract"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/settlement"
	"lastro/tenant"
)

var bg = context.Background()

// The tests' "now": Thursday 2026-09-24, 09:00 in São Paulo.
var testNow = enginetest.DefaultNow

// fixture is the engine (enginetest) with the tests' tenant loaded.
type fixture struct {
	*enginetest.Env
	t *tenant.Tenant
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	env := enginetest.New(t, enginetest.At(testNow))
	tn, _ := env.Tenant(t, "t-pay")
	return &fixture{Env: env, t: tn}
}

func (f *fixture) db() *kit.Tenant { return f.Kit.Tenant(f.t.ID, f.t.CursorKey()) }

// contract registers a debtor and signs a contract of n monthly
// instalments of 900.00 principal + 100.00 interest from first.
func (f *fixture) contract(t testing.TB, id, first string, n int) string {
	t.Helper()
	r, err := f.Debtors.Register(bg, f.t, debtor.RegisterInput{Document: f.CPF(), Name: "Pessoa Sintética"}, debtor.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Contracts.Create(bg, f.t, r.DebtorKey, contract.Input{ContractID: id, ProductCode: "CREDIARIO_12X", Installments: enginetest.Monthly(first, n, 90000, 10000)}, contract.Actor{Role: "operator"}); err != nil {
		t.Fatal(err)
	}
	return r.DebtorKey
}

func (f *fixture) charge(t testing.TB, dk, contractID string, seq int) *charges.Issued {
	t.Helper()
	c, err := f.Charges.Issue(bg, f.t, charges.Input{DebtorKey: dk, ContractID: contractID, Seq: seq, Method: charges.PIX})
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

func (f *fixture) stl(t testing.TB, settlementID string) *settlement.STLItem {
	t.Helper()
	it := f.item(t, keys.Settlement(f.t.ID, settlementID), keys.SettlementSK)
	if it == nil {
		return nil
	}
	var s settlement.STLItem
	if err := attributevalue.UnmarshalMap(it, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// partition returns every item of a debtor's partition.
func (f *fixture) partition(t testing.TB, dk string) []kit.Item {
	t.Helper()
	return f.Partition(t, f.t, dk)
}

// agenda returns the contract ids on the agenda of a date and shard.
func (f *fixture) agenda(t testing.TB, date string, shard int) []string {
	t.Helper()
	return f.contractIDs(t, kit.Query{Index: table.Agenda, Partition: keys.Agenda(f.t.ID, date, shard)})
}

// portfolio returns the contract ids in a bucket.
func (f *fixture) portfolio(t testing.TB, bucket string) []string {
	t.Helper()
	return f.contractIDs(t, kit.Query{Index: table.Portfolio, Partition: keys.Bucket(f.t.ID, bucket)})
}

// contractIDs returns the contract ids of the headers on an index page.
func (f *fixture) contractIDs(t testing.TB, q kit.Query) []string {
	t.Helper()
	return f.ContractIDs(t, f.t, q)
}

func pay(settlementID, chargeID string, amount int64, paidAt time.Time) settlement.Payload {
	return settlement.Payload{SettlementID: settlementID, ChargeID: chargeID, AmountCents: amount, PaidAt: paidAt}
}
