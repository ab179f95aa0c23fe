package debtor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/agenda/regua"
	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/collections/secret"
	"lastro/collections/table"
	"lastro/collections/web"
	"lastro/contract"
	"lastro/ddblocal/ddbtest"
	"lastro/policy"
	"lastro/tenant"
)

var bg = context.Background()

// The test's "now": 2026-09-24 09:00 in São Paulo.
var testNow = time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)

type fixture struct {
	s        *Service
	c        *contract.Service
	kit      *kit.Kit
	tenants  *tenant.Service
	policies *policy.Service
	clock    *clock.Manual
}

func newFixture(t testing.TB, tenantIDs ...string) *fixture {
	t.Helper()
	db := ddbtest.New(t)
	if _, err := table.Ensure(bg, db, "lastro"); err != nil {
		t.Fatal(err)
	}
	k := kit.New(db, "lastro")
	key := secret.Random(32)
	box, _ := secret.New(key)
	c := clock.NewManual(testNow)
	tenants := tenant.NewService(k, box, c, 16)
	for _, id := range tenantIDs {
		if _, err := tenants.Create(bg, tenant.CreateInput{TenantID: id, Name: "Test " + id}); err != nil {
			t.Fatal(err)
		}
	}
	sealer, err := pii.NewLocal(bg, key)
	if err != nil {
		t.Fatal(err)
	}
	pol := policy.NewService(k, tenants, c)
	return &fixture{s: NewService(Deps{Kit: k, Tenants: tenants, Sealer: sealer, Clock: c}),
		c: contract.NewService(contract.Deps{Kit: k, Tenants: tenants, Policies: pol, Clock: c}), kit: k, tenants: tenants, policies: pol, clock: c}
}

func (f *fixture) tenant(t testing.TB, id string) *tenant.Tenant {
	t.Helper()
	f.tenants.Invalidate(id)
	tn, err := f.tenants.Get(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

// items returns every item of a debtor's partition (consistent).
func (f *fixture) items(t *testing.T, tn *tenant.Tenant, dk string) []kit.Item {
	t.Helper()
	var out []kit.Item
	cursor := ""
	for {
		p, err := f.kit.Tenant(tn.ID, tn.CursorKey()).QueryPage(bg, kit.Query{Partition: keys.Debtor(tn.ID, dk), Consistent: true}, cursor)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Items...)
		if cursor = p.Next; cursor == "" {
			return out
		}
	}
}

func code(err error) string { _, c, _ := errs.Public(err); return c }

var actor = Actor{Role: "operator", RequestID: "req-1"}

func monthly(first string, n int, principal, interest int64) []contract.InstallmentInput {
	d := calendar.MustParse(first)
	out := make([]contract.InstallmentInput, n)
	for i := range out {
		out[i] = contract.InstallmentInput{Seq: i + 1, DueDate: d.AddMonths(i).String(), PrincipalCents: contract.Cents(principal), InterestCents: contract.Cents(interest)}
	}
	return out
}

func (f *fixture) register(t testing.TB, tn *tenant.Tenant, doc string) string {
	t.Helper()
	r, err := f.s.Register(bg, tn, RegisterInput{Document: doc, Name: "Pessoa Sintética", Phone: "+55 11 90000-0001", Email: "p@example.test"}, actor)
	if err != nil {
		t.Fatal(err)
	}
	return r.DebtorKey
}

func TestRegisterLookupReveal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-a", "t-b")
	a, b := f.tenant(t, "t-a"), f.tenant(t, "t-b")
	r, err := f.s.Register(bg, a, RegisterInput{Document: "529.982.247-25", Name: "  Pessoa   Sintética ", Phone: "(11) 90000-0001"}, actor)
	if err != nil || !r.Created || ValidKey(r.DebtorKey) != nil {
		t.Fatalf("register: %v %+v", err, r)
	}
	again, err := f.s.Register(bg, a, RegisterInput{Document: "52998224725", Name: "Outro Nome"}, actor)
	if err != nil || again.Created || again.DebtorKey != r.DebtorKey {
		t.Fatalf("same document again: %v %+v", err, again)
	}
	other, err := f.s.Register(bg, b, RegisterInput{Document: "52998224725", Name: "Pessoa"}, actor)
	if err != nil || other.DebtorKey == r.DebtorKey {
		t.Fatalf("same CPF in another tenant must get another key: %v %+v", err, other)
	}
	found, err := f.s.Lookup(bg, a, LookupInput{Document: "529 982 247 25"})
	if err != nil || found.DebtorKey != r.DebtorKey {
		t.Fatalf("lookup: %v %+v", err, found)
	}
	if _, err := f.s.Lookup(bg, a, LookupInput{Document: "111.444.777-35"}); code(err) != "debtor_not_found" {
		t.Fatalf("lookup of an unregistered document: %v", err)
	}
	if _, err := f.s.Lookup(bg, a, LookupInput{Document: "111.444.777-36"}); code(err) != "invalid_document" {
		t.Fatalf("lookup of an invalid document: %v", err)
	}
	f.clock.Advance(time.Minute)
	rev, err := f.s.Reveal(bg, a, r.DebtorKey, RevealInput{Reason: "OMBUDSMAN"}, Actor{Role: "compliance", RequestID: "req-9"})
	if err != nil || rev.Document != "529.982.247-25" || rev.DocumentType != "CPF" {
		t.Fatalf("reveal: %v %+v", err, rev)
	}
	if _, err := f.s.Reveal(bg, a, r.DebtorKey, RevealInput{Reason: "CURIOSITY"}, actor); code(err) != "invalid_reason" {
		t.Fatalf("bad reason: %v", err)
	}
	if _, err := f.s.Reveal(bg, a, "0000000000000000", RevealInput{}, actor); code(err) != "debtor_not_found" {
		t.Fatalf("reveal unknown: %v", err)
	}
	// The partition: PROFILE, the registration and the reveal events.
	v, err := f.s.View(bg, a, r.DebtorKey, DefaultViewLimit, "")
	if err != nil || v.Profile == nil || v.Profile.MaskedDocument != "***.982.247-**" || !v.Profile.HasPhone || v.Profile.HasEmail || len(v.Events) != 2 {
		t.Fatalf("view: %v %+v", err, v)
	}
	if v.Events[0].EventType != EvDocumentRevealed || v.Events[0].Details["reason"] != "OMBUDSMAN" || v.Events[0].ActorRole != "compliance" || v.Events[1].EventType != EvDebtorRegistered {
		t.Fatalf("events latest first: %+v", v.Events)
	}
}

func TestRegisterRejectsBadInputAndWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-a")
	a := f.tenant(t, "t-a")
	for _, tt := range []struct {
		in   RegisterInput
		code string
	}{
		{RegisterInput{Document: "529.982.247-24", Name: "X"}, "invalid_document"},
		{RegisterInput{Document: "11.222.333/0001-80", Name: "X"}, "invalid_document"},
		{RegisterInput{Document: "", Name: "X"}, "invalid_document"},
		{RegisterInput{Document: "52998224725", Name: "  "}, "invalid_name"},
		{RegisterInput{Document: "52998224725", Name: "X\x00"}, "invalid_name"},
		{RegisterInput{Document: "52998224725", Name: "X", Phone: "12"}, "invalid_phone"},
		{RegisterInput{Document: "52998224725", Name: "X", Phone: "+55 11 9abc"}, "invalid_phone"},
		{RegisterInput{Document: "52998224725", Name: "X", Email: "Nome <x@example.com>"}, "invalid_email"},
		{RegisterInput{Document: "52998224725", Name: "X", Email: "not-an-email"}, "invalid_email"},
	} {
		if _, err := f.s.Register(bg, a, tt.in, actor); code(err) != tt.code || !errs.Is(err, errs.Invalid) {
			t.Errorf("%+v: %v, want %s", tt.in, err, tt.code)
		}
	}
	secretKey, _ := a.DebtorKeySecret(a.KeyVersion)
	if n := len(f.items(t, a, Key(secretKey, "52998224725"))); n != 0 {
		t.Fatalf("%d items written by rejected registrations", n)
	}
}

func TestForcedKeyCollisionIsAConflictNotAMerge(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-a")
	a := f.tenant(t, "t-a")
	// Test-only hook: every document maps to the same key.
	f.s.keyOf = func([]byte, string) string { return "00000000000000aa" }
	first := f.register(t, a, "52998224725")
	_, err := f.s.Register(bg, a, RegisterInput{Document: "111.444.777-35", Name: "Outra Pessoa"}, actor)
	if code(err) != "debtor_key_collision" || !errs.Is(err, errs.Conflict) {
		t.Fatalf("collision: %v", err)
	}
	if _, err := f.s.Lookup(bg, a, LookupInput{Document: "11144477735"}); code(err) != "debtor_key_collision" {
		t.Fatalf("lookup of the colliding document: %v", err)
	}
	rev, err := f.s.Reveal(bg, a, first, RevealInput{}, actor)
	if err != nil || rev.Document != "529.982.247-25" {
		t.Fatalf("the first debtor is intact: %v %+v", err, rev)
	}
	if n := len(f.items(t, a, first)); n != 3 { // PROFILE, registration, reveal
		t.Fatalf("%d items: the collision wrote something", n)
	}
}

func TestContractCreationCurrentAndDelinquent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-a")
	a := f.tenant(t, "t-a")
	dk := f.register(t, a, "52998224725")
	cur, err := f.c.Create(bg, a, dk, contract.Input{ContractID: "C-CUR", ProductCode: "CREDIARIO_12X", Installments: monthly("2026-10-10", 12, 41230, 7560)}, actor)
	if err != nil || cur.Status != contract.StatusActive || cur.Bucket != nil || *cur.NextAction != policy.DueCheck || *cur.NextActionDate != "2026-10-14" ||
		cur.OutstandingCents != 12*(41230+7560) || cur.ChargesPolicy != "CP#v0000" || cur.DunningPolicy != "DP#v0000" || cur.Transactions != 1 {
		t.Fatalf("current contract: %v %+v", err, cur)
	}
	// Policies change after the first contract: it keeps the old versions.
	if _, _, err := f.policies.PutCharges(bg, a, policy.ChargesInput{FinePercent: "1.00", LateInterestMonthlyPercent: "1.00"}); err != nil {
		t.Fatal(err)
	}
	a = f.tenant(t, "t-a")
	del, err := f.c.Create(bg, a, dk, contract.Input{ContractID: "C-OLD", ProductCode: "CDC_24X", Installments: monthly("2026-08-10", 12, 10000, 500)}, actor)
	if err != nil || del.Status != contract.StatusInCollection || *del.OldestOverdueDueDate != "2026-08-10" || del.DaysPastDue != 45 ||
		*del.Bucket != regua.BucketD031_060 || *del.NextAction != "SMS_D45" || *del.NextActionDate != "2026-09-24" || del.ChargesPolicy != "CP#v0001" {
		t.Fatalf("delinquent contract: %v %+v", err, del)
	}
	tn := f.kit.Tenant(a.ID, a.CursorKey())
	s := func(it kit.Item, name string) string {
		if v, ok := it[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	h, _ := tn.Get(bg, kit.Key{PK: keys.Debtor(a.ID, dk), SK: keys.Contract("C-OLD")}, true)
	shard := contract.Shard("C-OLD", a.Shards)
	if s(h, "GSI1PK") != keys.Agenda(a.ID, "2026-09-24", shard) || s(h, "GSI1SK") != "SMS_D45#C-OLD" || s(h, "GSI2PK") != keys.Bucket(a.ID, regua.BucketD031_060) ||
		s(h, "tenantId") != a.ID || s(h, "nextActionDate") != "2026-09-24" || s(h, "chargesPolicy") != "CP#v0001" || s(h, "type") != "CONTRACT" {
		t.Fatalf("header keys: %v", h)
	}
	c, _ := tn.Get(bg, kit.Key{PK: keys.Debtor(a.ID, dk), SK: keys.Contract("C-CUR")}, true)
	if s(c, "GSI2PK") != "" || s(c, "bucket") != "" || s(c, "chargesPolicy") != "CP#v0000" {
		t.Fatalf("a current contract is not in the portfolio and kept its policy: %v", c)
	}
	in, _ := tn.Get(bg, kit.Key{PK: keys.Debtor(a.ID, dk), SK: keys.Installment("C-OLD", 2)}, true)
	// Lateness is derived from today on every read, never stored.
	if s(in, "status") != contract.InstOpen || s(in, "originalDueDate") != "2026-09-10" || s(in, "dueDate") != "2026-09-10" {
		t.Fatalf("instalment 2: %v", in)
	}
	in, _ = tn.Get(bg, kit.Key{PK: keys.Debtor(a.ID, dk), SK: keys.Installment("C-OLD", 3)}, true)
	if s(in, "status") != contract.InstOpen {
		t.Fatalf("instalment 3 (due 2026-10-10) is open: %v", in)
	}
}

func TestContractRejectsBadInputAndWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-a")
	a := f.tenant(t, "t-a")
	dk := f.register(t, a, "52998224725")
	ok := func() contract.Input {
		return contract.Input{ContractID: "C-1", ProductCode: "CREDIARIO_12X", Installments: monthly("2026-10-10", 3, 1000, 100)}
	}
	if _, err := f.c.Create(bg, a, dk, ok(), actor); err != nil {
		t.Fatal(err)
	}
	before := len(f.items(t, a, dk))
	tests := []struct {
		name string
		dk   string
		mod  func(*contract.Input)
		code string
	}{
		{"duplicate contract id", dk, func(*contract.Input) {}, "contract_exists"},
		{"unknown debtor", "00000000000000ff", func(c *contract.Input) { c.ContractID = "C-2" }, "debtor_not_found"},
		{"malformed debtor key", "T#x", func(c *contract.Input) { c.ContractID = "C-2" }, "invalid_debtor_key"},
		{"hash in contract id", dk, func(c *contract.Input) { c.ContractID = "C#2" }, "invalid_contract_id"},
		{"empty contract id", dk, func(c *contract.Input) { c.ContractID = "" }, "invalid_contract_id"},
		{"65-char contract id", dk, func(c *contract.Input) { c.ContractID = fmt.Sprintf("%065d", 1) }, "invalid_contract_id"},
		{"bad product", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.ProductCode = "crediário" }, "invalid_product_code"},
		{"no instalments", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments = nil }, "invalid_installments"},
		{"1000 instalments", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments = monthly("2026-10-10", 1000, 1, 0) }, "too_many_installments"},
		{"negative cents", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[1].PrincipalCents = "-100" }, "invalid_amount"},
		{"fractional cents", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[1].InterestCents = "12.5" }, "invalid_amount"},
		{"exponent cents", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[1].InterestCents = "1e3" }, "invalid_amount"},
		{"string cents", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[1].InterestCents = `"100"` }, "invalid_amount"},
		{"missing cents", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[1].InterestCents = "" }, "invalid_amount"},
		{"zero instalment", dk, func(c *contract.Input) {
			c.ContractID = "C-2"
			c.Installments[1].PrincipalCents, c.Installments[1].InterestCents = "0", "0"
		}, "invalid_amount"},
		{"impossible date", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[0].DueDate = "2026-02-30" }, "invalid_date"},
		{"instant as date", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[0].DueDate = "2026-10-10T00:00:00Z" }, "invalid_date"},
		{"seq zero", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[0].Seq = 0 }, "invalid_seq"},
		{"seq 1000", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[0].Seq = 1000 }, "invalid_seq"},
		{"seq twice", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[1].Seq = 1 }, "duplicate_seq"},
		{"other currency", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Currency = "USD" }, "invalid_currency"},
	}
	for _, tt := range tests {
		in := ok()
		tt.mod(&in)
		if _, err := f.c.Create(bg, a, tt.dk, in, actor); code(err) != tt.code {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
		}
	}
	if after := len(f.items(t, a, dk)); after != before {
		t.Fatalf("%d items before, %d after rejected creations", before, after)
	}
	if n := len(f.items(t, a, "00000000000000ff")); n != 0 {
		t.Fatalf("%d items written for an unknown debtor", n)
	}
}

func TestLargeContractInChunksHeaderLast(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-a")
	a := f.tenant(t, "t-a")
	dk := f.register(t, a, "52998224725")
	in := contract.Input{ContractID: "C-BIG", ProductCode: "CONSIGNADO", Installments: monthly("2026-10-05", 999, 100, 1)}
	out, err := f.c.Create(bg, a, dk, in, actor)
	if err != nil || out.Installments != 999 || out.Transactions != 11 {
		t.Fatalf("999 instalments: %v %+v", err, out)
	}
	// PROFILE + registration event + header + creation event + 999 instalments.
	if n := len(f.items(t, a, dk)); n != 4+999 {
		t.Fatalf("%d items", n)
	}
	page, err := f.c.Installments(bg, a, dk, "C-BIG", "all", web.MaxLimit, "")
	if err != nil || len(page.Items) != 999 || page.Items[998].Seq != 999 {
		t.Fatalf("AP02 over 999: %v %d", err, len(page.Items))
	}
	// Simulate a creation that died before its last transaction: drop the
	// header and the event. A retry of the same request resumes; another
	// body for the same id is refused while the orphans are there.
	tn := f.kit.Tenant(a.ID, a.CursorKey())
	pk := keys.Debtor(a.ID, dk)
	if err := tn.Delete(bg, kit.Key{PK: pk, SK: keys.Contract("C-BIG")}, nil); err != nil {
		t.Fatal(err)
	}
	other := in
	other.Installments = monthly("2026-10-05", 150, 200, 1)
	if _, err := f.c.Create(bg, a, dk, other, actor); code(err) != "contract_creation_pending" {
		t.Fatalf("other body over orphans: %v", err)
	}
	small := contract.Input{ContractID: "C-BIG", ProductCode: "CONSIGNADO", Installments: monthly("2026-10-05", 3, 200, 1)}
	if _, err := f.c.Create(bg, a, dk, small, actor); code(err) != "contract_creation_pending" {
		t.Fatalf("small body over orphans: %v", err)
	}
	if out, err := f.c.Create(bg, a, dk, in, actor); err != nil || out.Transactions != 11 {
		t.Fatalf("resume: %v %+v", err, out)
	}
	if _, err := f.c.Create(bg, a, dk, in, actor); code(err) != "contract_exists" {
		t.Fatalf("after completion: %v", err)
	}
}

// putContacts writes contact attempts as the contact gateway will (its
// issue owns the writer); the 360 must carry them.
func putContacts(t testing.TB, f *fixture, tn *tenant.Tenant, dk string, n int) {
	t.Helper()
	db := f.kit.Tenant(tn.ID, tn.CursorKey())
	for i := range n {
		at := testNow.Add(-time.Duration(i) * time.Hour)
		it := kit.Item{
			"PK": &types.AttributeValueMemberS{Value: keys.Debtor(tn.ID, dk)}, "SK": &types.AttributeValueMemberS{Value: keys.Contact(tn.Today(at), at, fmt.Sprintf("att-%02d", i))},
			"type": &types.AttributeValueMemberS{Value: "CONTACT"}, "channel": &types.AttributeValueMemberS{Value: "SMS"},
			"template": &types.AttributeValueMemberS{Value: "SMS_D45"}, "contractId": &types.AttributeValueMemberS{Value: "C-1"},
			"outcome": &types.AttributeValueMemberS{Value: "DELIVERED"}, "at": &types.AttributeValueMemberS{Value: keys.Timestamp(at)},
		}
		if err := db.Put(bg, it, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadsAreOneQueryWithinBudget(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-a")
	a := f.tenant(t, "t-a")
	dk := f.register(t, a, "52998224725")
	if _, err := f.c.Create(bg, a, dk, contract.Input{ContractID: "C-1", ProductCode: "CREDIARIO_12X", Installments: monthly("2026-08-10", 12, 41230, 7560)}, actor); err != nil {
		t.Fatal(err)
	}
	putContacts(t, f, a, dk, 10)

	ctx, u := kit.Operation(bg, "test.view360")
	v, err := f.s.View(ctx, a, dk, DefaultViewLimit, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("360 of 1 contract × 12 instalments + 10 contacts: %.1f RRU, %d calls", u.RRU(), u.Calls(""))
	if u.Calls("Query") != 1 || u.Calls("") != 1 || u.RRU() > 4 {
		t.Fatalf("AP01: %d queries, %d calls, %.1f RRU", u.Calls("Query"), u.Calls(""), u.RRU())
	}
	if v.Profile == nil || len(v.Contracts) != 1 || len(v.Contracts[0].Installments) != 12 || len(v.Contacts) != 10 || v.NextCursor != nil {
		t.Fatalf("360: %+v", v)
	}
	c := v.Contracts[0]
	if c.DaysPastDue != 45 || *c.Bucket != regua.BucketD031_060 || len(c.Events) != 1 || c.Installments[0].Seq != 1 || !c.Installments[1].Late || c.Installments[1].DaysPastDue != 14 {
		t.Fatalf("contract in 360: %+v", c)
	}
	if v.Contacts[0]["SK"] != nil || v.Contacts[0]["channel"] != "SMS" || v.Contacts[0]["at"].(string) < v.Contacts[9]["at"].(string) {
		t.Fatalf("contacts latest first without keys: %v", v.Contacts[0])
	}

	ctx, u = kit.Operation(bg, "test.ap02")
	open, err := f.c.Installments(ctx, a, dk, "C-1", "open", web.DefaultListLimit, "")
	if err != nil || u.Calls("Query") != 1 || u.Calls("") != 1 || len(open.Items) != 12 || open.Items[0].DueDate != "2026-08-10" {
		t.Fatalf("AP02: %v %d calls, %+v", err, u.Calls(""), open)
	}
	ctx, u = kit.Operation(bg, "test.ap09")
	evs, err := f.c.Events(ctx, a, dk, "C-1", "0", web.DefaultListLimit, "")
	if err != nil || u.Calls("Query") != 1 || u.Calls("") != 1 || len(evs.Items) != 1 || evs.Items[0].EventType != contract.EvContractCreated {
		t.Fatalf("AP09: %v %d calls %+v", err, u.Calls(""), evs)
	}
	if e, err := f.c.Events(bg, a, dk, "C-1", "7", web.DefaultListLimit, ""); err != nil || len(e.Items) != 0 {
		t.Fatalf("AP09 seq 7: %v %+v", err, e)
	}
	for _, tt := range []struct {
		name string
		err  func() error
		code string
	}{
		{"360 unknown debtor", func() error { _, err := f.s.View(bg, a, "00000000000000ff", 10, ""); return err }, "debtor_not_found"},
		{"AP02 unknown contract", func() error { _, err := f.c.Installments(bg, a, dk, "C-9", "open", 10, ""); return err }, "contract_not_found"},
		{"AP02 bad status", func() error { _, err := f.c.Installments(bg, a, dk, "C-1", "late", 10, ""); return err }, "invalid_status"},
		{"AP09 unknown contract", func() error { _, err := f.c.Events(bg, a, dk, "C-9", "0", 10, ""); return err }, "contract_not_found"},
		{"AP09 bad seq", func() error { _, err := f.c.Events(bg, a, dk, "C-1", "1000", 10, ""); return err }, "invalid_seq"},
		{"AP09 bad contract id", func() error { _, err := f.c.Events(bg, a, dk, "C#1", "0", 10, ""); return err }, "invalid_contract_id"},
	} {
		if err := tt.err(); code(err) != tt.code {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	// Paginated 360: pages of 5 items cover the partition once.
	seen, cursor := 0, ""
	headers := map[string]bool{}
	for page := 0; page < 20; page++ {
		v, err := f.s.View(bg, a, dk, 5, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range v.Contracts {
			seen += len(c.Installments) + len(c.Events)
			if c.Status == "" || c.OutstandingCents == 0 {
				t.Errorf("page %d shows contract %s without its header's facts: %+v", page, c.ContractID, c.Facts)
			}
			headers[c.ContractID] = true
		}
		seen += len(v.Contacts) + len(v.Events)
		if v.Profile != nil {
			seen++
		}
		if v.NextCursor == nil {
			break
		}
		cursor = *v.NextCursor
	}
	seen += len(headers)
	if want := 1 + 1 + 1 + 12 + 1 + 10; seen != want {
		t.Fatalf("paginated 360 saw %d items, want %d", seen, want)
	}
}

func TestTenantExtraHolidaysMoveTheAgenda(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-a")
	a := f.tenant(t, "t-a")
	dk := f.register(t, a, "52998224725")
	in := func(id string) contract.Input {
		return contract.Input{ContractID: id, ProductCode: "P", Installments: []contract.InstallmentInput{{Seq: 1, DueDate: "2026-10-09", PrincipalCents: contract.Cents(100), InterestCents: contract.Cents(0)}}}
	}
	// Friday Oct 9 is payable that day; Monday Oct 12 is a national holiday.
	out, err := f.c.Create(bg, a, dk, in("C-1"), actor)
	if err != nil || *out.NextActionDate != "2026-10-13" {
		t.Fatalf("national calendar: %v %+v", err, out)
	}
	if _, err := f.tenants.SetHolidays(bg, a, tenant.HolidaysInput{Dates: []string{"2026-10-09", "2026-10-09", "2027-01-25"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.tenants.SetHolidays(bg, a, tenant.HolidaysInput{Dates: []string{"2026-02-30"}}); code(err) != "invalid_date" {
		t.Fatalf("bad date: %v", err)
	}
	if _, err := f.tenants.SetHolidays(bg, a, tenant.HolidaysInput{}); code(err) != "tenant_changed" {
		t.Fatalf("stale tenant version: %v", err)
	}
	a = f.tenant(t, "t-a")
	if len(a.Holidays) != 2 || !a.Calendar().IsHoliday(calendar.MustParse("2026-10-09")) {
		t.Fatalf("holidays: %v", a.Holidays)
	}
	// With the tenant's holiday on Friday, it is payable on Tuesday 13.
	out, err = f.c.Create(bg, a, dk, in("C-2"), actor)
	if err != nil || *out.NextActionDate != "2026-10-14" {
		t.Fatalf("tenant calendar: %v %+v", err, out)
	}
}
