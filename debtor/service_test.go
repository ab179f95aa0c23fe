package debtor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/contract/regua"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

var bg = context.Background()

// The test's "now": 2026-09-24 09:00 in São Paulo.
var testNow = enginetest.DefaultNow

// fixture is the engine (enginetest) with the tests' tenants created.
type fixture struct{ *enginetest.Env }

func newFixture(t testing.TB, tenantIDs ...string) *fixture {
	t.Helper()
	env := enginetest.New(t, enginetest.At(testNow))
	for _, id := range tenantIDs {
		env.Tenant(t, id)
	}
	return &fixture{env}
}

// tenant loads a tenant afresh (after a change to its settings).
func (f *fixture) tenant(t testing.TB, id string) *tenant.Tenant {
	t.Helper()
	f.Tenants.Invalidate(id)
	tn, err := f.Tenants.Get(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

// items returns every item of a debtor's partition (consistent).
func (f *fixture) items(t *testing.T, tn *tenant.Tenant, dk string) []kit.Item {
	t.Helper()
	return f.Partition(t, tn, dk)
}

func code(err error) string { _, c, _ := errs.Public(err); return c }

var actor = debtor.Actor{Role: "operator", RequestID: "req-1"}

func (f *fixture) register(t testing.TB, tn *tenant.Tenant, doc string) string {
	t.Helper()
	r, err := f.Debtors.Register(bg, tn, debtor.RegisterInput{Document: doc, Name: "Pessoa Sintética", Phone: "+55 11 90000-0001", Email: "p@example.test"}, actor)
	if err != nil {
		t.Fatal(err)
	}
	return r.DebtorKey
}

func TestRegisterLookupReveal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-a", "t-b")
	a, b := f.tenant(t, "t-a"), f.tenant(t, "t-b")
	r, err := f.Debtors.Register(bg, a, debtor.RegisterInput{Document: "529.982.247-25", Name: "  Pessoa   Sintética ", Phone: "(11) 90000-0001"}, actor)
	if err != nil || !r.Created || debtor.ValidKey(r.DebtorKey) != nil {
		t.Fatalf("register: %v %+v", err, r)
	}
	again, err := f.Debtors.Register(bg, a, debtor.RegisterInput{Document: "52998224725", Name: "Outro Nome"}, actor)
	if err != nil || again.Created || again.DebtorKey != r.DebtorKey {
		t.Fatalf("same document again: %v %+v", err, again)
	}
	other, err := f.Debtors.Register(bg, b, debtor.RegisterInput{Document: "52998224725", Name: "Pessoa"}, actor)
	if err != nil || other.DebtorKey == r.DebtorKey {
		t.Fatalf("same CPF in another tenant must get another key: %v %+v", err, other)
	}
	found, err := f.Debtors.Lookup(bg, a, debtor.LookupInput{Document: "529 982 247 25"})
	if err != nil || found.DebtorKey != r.DebtorKey {
		t.Fatalf("lookup: %v %+v", err, found)
	}
	if _, err := f.Debtors.Lookup(bg, a, debtor.LookupInput{Document: "111.444.777-35"}); code(err) != "debtor_not_found" {
		t.Fatalf("lookup of an unregistered document: %v", err)
	}
	if _, err := f.Debtors.Lookup(bg, a, debtor.LookupInput{Document: "111.444.777-36"}); code(err) != "invalid_document" {
		t.Fatalf("lookup of an invalid document: %v", err)
	}
	f.Clock.Advance(time.Minute)
	rev, err := f.Debtors.Reveal(bg, a, r.DebtorKey, debtor.RevealInput{Reason: "OMBUDSMAN"}, debtor.Actor{Role: "compliance", RequestID: "req-9"})
	if err != nil || rev.Document != "529.982.247-25" || rev.DocumentType != "CPF" {
		t.Fatalf("reveal: %v %+v", err, rev)
	}
	if _, err := f.Debtors.Reveal(bg, a, r.DebtorKey, debtor.RevealInput{Reason: "CURIOSITY"}, actor); code(err) != "invalid_reason" {
		t.Fatalf("bad reason: %v", err)
	}
	if _, err := f.Debtors.Reveal(bg, a, "0000000000000000", debtor.RevealInput{}, actor); code(err) != "debtor_not_found" {
		t.Fatalf("reveal unknown: %v", err)
	}
	// The partition: PROFILE, the registration and the reveal events.
	v, err := f.Debtors.View(bg, a, r.DebtorKey, debtor.DefaultViewLimit, "")
	if err != nil || v.Profile == nil || v.Profile.MaskedDocument != "***.982.247-**" || !v.Profile.HasPhone || v.Profile.HasEmail || len(v.Events) != 2 {
		t.Fatalf("view: %v %+v", err, v)
	}
	if v.Events[0].EventType != debtor.EvDocumentRevealed || v.Events[0].Details["reason"] != "OMBUDSMAN" || v.Events[0].ActorRole != "compliance" || v.Events[1].EventType != debtor.EvDebtorRegistered {
		t.Fatalf("events latest first: %+v", v.Events)
	}
}

func TestRegisterRejectsBadInputAndWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-a")
	a := f.tenant(t, "t-a")
	for _, tt := range []struct {
		in   debtor.RegisterInput
		code string
	}{
		{debtor.RegisterInput{Document: "529.982.247-24", Name: "X"}, "invalid_document"},
		{debtor.RegisterInput{Document: "11.222.333/0001-80", Name: "X"}, "invalid_document"},
		{debtor.RegisterInput{Document: "", Name: "X"}, "invalid_document"},
		{debtor.RegisterInput{Document: "52998224725", Name: "  "}, "invalid_name"},
		{debtor.RegisterInput{Document: "52998224725", Name: "X\x00"}, "invalid_text"},
		{debtor.RegisterInput{Document: "52998224725", Name: "X", Phone: "12"}, "invalid_phone"},
		{debtor.RegisterInput{Document: "52998224725", Name: "X", Phone: "+55 11 9abc"}, "invalid_phone"},
		{debtor.RegisterInput{Document: "52998224725", Name: "X", Email: "Nome <x@example.com>"}, "invalid_email"},
		{debtor.RegisterInput{Document: "52998224725", Name: "X", Email: "not-an-email"}, "invalid_email"},
	} {
		if _, err := f.Debtors.Register(bg, a, tt.in, actor); code(err) != tt.code || !errs.Is(err, errs.Invalid) {
			t.Errorf("%+v: %v, want %s", tt.in, err, tt.code)
		}
	}
	secretKey, _ := a.DebtorKeySecret(a.KeyVersion)
	if n := len(f.items(t, a, debtor.Key(secretKey, "52998224725"))); n != 0 {
		t.Fatalf("%d items written by rejected registrations", n)
	}
}

func TestForcedKeyCollisionIsAConflictNotAMerge(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-a")
	a := f.tenant(t, "t-a")
	// Test-only hook: every document maps to the same key.
	f.Debtors.SetKeyOf(func([]byte, string) string { return "00000000000000aa" })
	first := f.register(t, a, "52998224725")
	_, err := f.Debtors.Register(bg, a, debtor.RegisterInput{Document: "111.444.777-35", Name: "Outra Pessoa"}, actor)
	if code(err) != "debtor_key_collision" || !errs.Is(err, errs.Conflict) {
		t.Fatalf("collision: %v", err)
	}
	if _, err := f.Debtors.Lookup(bg, a, debtor.LookupInput{Document: "11144477735"}); code(err) != "debtor_key_collision" {
		t.Fatalf("lookup of the colliding document: %v", err)
	}
	rev, err := f.Debtors.Reveal(bg, a, first, debtor.RevealInput{}, actor)
	if err != nil || rev.Document != "529.982.247-25" {
		t.Fatalf("the first debtor is intact: %v %+v", err, rev)
	}
	if n := len(f.items(t, a, first)); n != 3 { // PROFILE, registration, reveal
		t.Fatalf("%d items: the collision wrote something", n)
	}
}

// putContacts writes contact attempts as the contact gateway will (its
// issue owns the writer); the 360 must carry them.
func putContacts(t testing.TB, f *fixture, tn *tenant.Tenant, dk string, n int) {
	t.Helper()
	db := f.Kit.Tenant(tn.ID, tn.CursorKey())
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

// typicalDebtor is docs/design.md#ap01-debtor-360's typical debtor: one contract of 12
// instalments, the first due 2026-08-10, and 10 contacts.
func typicalDebtor(t testing.TB) (*fixture, *tenant.Tenant, string) {
	t.Helper()
	f := newFixture(t, "t-a")
	a := f.tenant(t, "t-a")
	dk := f.register(t, a, "52998224725")
	if _, err := f.Contracts.Create(bg, a, dk, contract.Input{ContractID: "C-1", ProductCode: "CREDIARIO_12X", Installments: enginetest.Monthly("2026-08-10", 12, 41230, 7560)}, actor); err != nil {
		t.Fatal(err)
	}
	putContacts(t, f, a, dk, 10)
	return f, a, dk
}

func TestReadsAreOneQueryWithinBudget(t *testing.T) {
	t.Parallel()
	f, a, dk := typicalDebtor(t)

	ctx, u := kit.Operation(bg, "test.view360")
	v, err := f.Debtors.View(ctx, a, dk, debtor.DefaultViewLimit, "")
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

	if _, err := f.Debtors.View(bg, a, "00000000000000ff", 10, ""); code(err) != "debtor_not_found" {
		t.Errorf("360 of an unknown debtor: %v", err)
	}
	// Paginated 360: pages of 5 items cover the partition once.
	seen, cursor := 0, ""
	headers := map[string]bool{}
	for page := 0; page < 20; page++ {
		v, err := f.Debtors.View(bg, a, dk, 5, cursor)
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

// TestContactAddressInIsTheProfilesAddress: resolving an address from a
// PROFILE item already read gives what ContactAddress reads and decrypts,
// and an item that is not that debtor's PROFILE in that tenant never
// yields one.
func TestContactAddressInIsTheProfilesAddress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-a", "t-b")
	a, b := f.tenant(t, "t-a"), f.tenant(t, "t-b")
	x, y := f.register(t, a, f.CPF()), f.register(t, a, f.CPF())
	profileOf := func(tn *tenant.Tenant, dk string) kit.Item {
		it, err := f.Kit.Tenant(tn.ID, tn.CursorKey()).Get(bg, kit.Key{PK: keys.Debtor(tn.ID, dk), SK: keys.ProfileSK}, true)
		if err != nil || it == nil {
			t.Fatalf("profile of %s: %v", dk, err)
		}
		return it
	}
	item := profileOf(a, x)
	for _, tc := range []struct {
		name    string
		tn      *tenant.Tenant
		dk      string
		channel string
		want    string // "" means an error
	}{
		{"sms", a, x, "SMS", "+5511900000001"},
		{"email", a, x, "EMAIL", "p@example.test"},
		{"no address for the channel", a, x, "LETTER", ""},
		{"another debtor's key", a, y, "SMS", ""},
		{"another tenant", b, x, "SMS", ""},
		{"invalid key", a, "not-a-key", "SMS", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := f.Debtors.ContactAddressIn(bg, tc.tn, tc.dk, item, tc.channel)
			if tc.want == "" {
				if err == nil || got != "" {
					t.Fatalf("got %q, %v; want an error and no address", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			read, err := f.Debtors.ContactAddress(bg, tc.tn, tc.dk, tc.channel)
			if err != nil || read != got {
				t.Fatalf("ContactAddress %q, %v; ContactAddressIn %q", read, err, got)
			}
		})
	}
	if _, err := f.Debtors.ContactAddressIn(bg, a, x, item, "LETTER"); !errors.Is(err, debtor.ErrNoAddress) {
		t.Errorf("LETTER: %v, want ErrNoAddress", err)
	}
}
