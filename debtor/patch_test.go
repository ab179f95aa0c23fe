package debtor_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/pii/piitest"
	"lastro/contract"
	"lastro/debtor"
	"lastro/engine/enginetest"
)

func ptr(s string) *string { return &s }

const street = "Travessa Quaresmeira Sintética, 321"

func TestPatchProfile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-p")
	tn := f.tenant(t, "t-p")
	r, err := f.Debtors.Register(bg, tn, debtor.RegisterInput{Document: piitest.CPFDigits, Name: piitest.Name, Phone: piitest.Phone, UF: "SP"}, actor)
	if err != nil {
		t.Fatal(err)
	}
	dk := r.DebtorKey
	if _, err := f.Contracts.Create(bg, tn, dk, contract.Input{ContractID: "C-1", ProductCode: "CDC", Installments: enginetest.Monthly("2026-10-10", 3, 10000, 0)}, actor); err != nil {
		t.Fatal(err)
	}
	if h := header(t, f, dk, "C-1"); h.UF != "SP" {
		t.Fatalf("a new contract follows the debtor's state: uf %q", h.UF)
	}
	addr := &debtor.Address{Street: street, District: "Centro", City: "Manaus", UF: "AM", PostalCode: "69005-010"}
	got, err := f.Debtors.Patch(bg, tn, dk, debtor.PatchInput{Version: 1, Email: ptr(piitest.Email), Address: addr, UF: ptr("AM"),
		OptOut: map[string]bool{"SMS": true, "CALL": false}}, actor)
	if err != nil {
		t.Fatal(err)
	}
	if !got.HasAddress || !got.HasEmail || !got.HasPhone || got.UF != "AM" || got.TimeZone != "America/Manaus" || got.TimeZoneExplicit ||
		got.Version != 2 || fmt.Sprint(got.OptOut) != "[SMS]" {
		t.Fatalf("patched profile %+v", got)
	}
	// The contracts follow the new state, with their version moved so a
	// writer that read them before re-reads.
	if h := header(t, f, dk, "C-1"); h.UF != "AM" || h.Version != 2 {
		t.Fatalf("relocated header uf %q version %d", h.UF, h.Version)
	}
	// The address is sealed: LETTER resolves it, no item holds it in clear.
	letter, err := f.Debtors.ContactAddress(bg, tn, dk, "LETTER")
	if err != nil || letter != street+", Centro, Manaus - AM, CEP 69005-010" {
		t.Fatalf("LETTER address %q, %v", letter, err)
	}
	for _, it := range f.items(t, tn, dk) {
		s := fmt.Sprint(it)
		if strings.Contains(s, "Quaresmeira") || piitest.Leaks(s) != nil {
			t.Errorf("personal data in clear in %v", it["SK"])
		}
	}
	// The event names the fields, never the values.
	ev := changeEvent(t, f, tn.ID, dk)
	if ev.EventType != debtor.EvProfileChanged || fmt.Sprint(ev.Details["fields"]) != "[email address uf optOut]" {
		t.Fatalf("event %+v", ev)
	}
	// Conditioned on the version: the old one is a 409, nothing written.
	if _, err := f.Debtors.Patch(bg, tn, dk, debtor.PatchInput{Version: 1, TimeZone: ptr("America/Eirunepe")}, actor); code(err) != "version_conflict" {
		t.Fatalf("stale version: %v", err)
	}
	got, err = f.Debtors.Patch(bg, tn, dk, debtor.PatchInput{Version: 2, TimeZone: ptr("America/Eirunepe"), Phone: ptr(""), Address: &debtor.Address{}}, actor)
	if err != nil || got.TimeZone != "America/Eirunepe" || !got.TimeZoneExplicit || got.HasPhone || got.HasAddress || got.Version != 3 {
		t.Fatalf("second patch %+v, %v", got, err)
	}
	cp, err := debtor.ReadContactProfile(bg, f.Kit.Tenant(tn.ID, tn.CursorKey()), tn.ID, dk)
	if err != nil || cp.Zone(tn.Location).String() != "America/Eirunepe" || cp.HasAddress || cp.HasPhone || !cp.HasEmail {
		t.Fatalf("contact profile %+v, %v", cp, err)
	}
	if _, err := f.Debtors.ContactAddress(bg, tn, dk, "LETTER"); code(err) != "no_contact_address" {
		t.Fatalf("removed address: %v", err)
	}
	// The same values again change nothing: no new version.
	if got, err := f.Debtors.Patch(bg, tn, dk, debtor.PatchInput{Version: 3, UF: ptr("AM")}, actor); err != nil || got.Version != 3 {
		t.Fatalf("no-op patch %+v, %v", got, err)
	}
	view, err := f.Debtors.View(bg, tn, dk, 100, "")
	if err != nil || view.Profile.Version != 3 || view.Profile.TimeZone != "America/Eirunepe" {
		t.Fatalf("360 profile %+v, %v", view.Profile, err)
	}
}

func TestPatchProfileRefusesBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-q")
	tn := f.tenant(t, "t-q")
	dk := f.register(t, tn, "529.982.247-25")
	for _, tt := range []struct {
		name string
		in   debtor.PatchInput
		want string
	}{
		{"no version", debtor.PatchInput{UF: ptr("RJ")}, "invalid_version"},
		{"nothing to change", debtor.PatchInput{Version: 1}, "empty_patch"},
		{"unknown zone", debtor.PatchInput{Version: 1, TimeZone: ptr("America/Atlantis")}, "invalid_time_zone"},
		{"an offset is no zone", debtor.PatchInput{Version: 1, TimeZone: ptr("UTC-3")}, "invalid_time_zone"},
		{"Local is no zone", debtor.PatchInput{Version: 1, TimeZone: ptr("Local")}, "invalid_time_zone"},
		{"path in the zone", debtor.PatchInput{Version: 1, TimeZone: ptr("America/../../etc/passwd")}, "invalid_time_zone"},
		{"lower-case uf", debtor.PatchInput{Version: 1, UF: ptr("sp")}, "invalid_uf"},
		{"bad phone", debtor.PatchInput{Version: 1, Phone: ptr("12")}, "invalid_phone"},
		{"bad email", debtor.PatchInput{Version: 1, Email: ptr("not an address")}, "invalid_email"},
		{"bad CEP", debtor.PatchInput{Version: 1, Address: &debtor.Address{Street: "Rua A, 1", City: "Recife", UF: "PE", PostalCode: "5000"}}, "invalid_address"},
		{"address without city", debtor.PatchInput{Version: 1, Address: &debtor.Address{Street: "Rua A, 1", UF: "PE", PostalCode: "50000-000"}}, "invalid_address"},
		{"newline in street", debtor.PatchInput{Version: 1, Address: &debtor.Address{Street: "Rua A\n1", City: "Recife", UF: "PE", PostalCode: "50000-000"}}, "invalid_text"},
		{"unknown channel", debtor.PatchInput{Version: 1, OptOut: map[string]bool{"PIGEON": true}}, "invalid_channel"},
	} {
		if _, err := f.Debtors.Patch(bg, tn, dk, tt.in, actor); code(err) != tt.want {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.want)
		}
	}
	if _, err := f.Debtors.Patch(bg, tn, "0123456789abcdef", debtor.PatchInput{Version: 1, UF: ptr("RJ")}, actor); code(err) != "debtor_not_found" {
		t.Errorf("unknown debtor: %v", err)
	}
}

func header(t *testing.T, f *fixture, dk, id string) contract.Header {
	t.Helper()
	tn := f.tenant(t, "t-p")
	it, err := f.Kit.Tenant(tn.ID, tn.CursorKey()).Get(bg, kit.Key{PK: keys.Debtor(tn.ID, dk), SK: keys.Contract(id)}, true)
	if err != nil || it == nil {
		t.Fatalf("header: %v", err)
	}
	var h contract.Header
	if err := attributevalue.UnmarshalMap(it, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

func changeEvent(t *testing.T, f *fixture, tenantID, dk string) contract.EventView {
	t.Helper()
	tn := f.tenant(t, tenantID)
	var last contract.EventView
	for _, it := range f.items(t, tn, dk) {
		var k struct {
			SK string `dynamodbav:"SK"`
		}
		_ = attributevalue.UnmarshalMap(it, &k)
		if strings.HasPrefix(k.SK, "EV#") {
			e, err := contract.DecodeEvent(it)
			if err != nil {
				t.Fatal(err)
			}
			if e.EventType == debtor.EvProfileChanged { // the clock is frozen: one instant
				last = e
			}
		}
	}
	return last
}
