package debtor_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/debtor"
)

func TestRegisterKeepsTheStateInClear(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-uf")
	tn := f.tenant(t, "t-uf")
	for _, bad := range []string{"rj", "XX", "R", "SPP"} {
		if _, err := f.Debtors.Register(bg, tn, debtor.RegisterInput{Document: "52998224725", Name: "Pessoa Sintética", UF: bad}, actor); code(err) != "invalid_uf" {
			t.Errorf("uf %q: %v", bad, err)
		}
	}
	if items := f.items(t, tn, "0000000000000000"); len(items) != 0 {
		t.Fatalf("refused registration wrote %d items", len(items))
	}
	r, err := f.Debtors.Register(bg, tn, debtor.RegisterInput{Document: "52998224725", Name: "Pessoa Sintética", UF: "RJ"}, actor)
	if err != nil {
		t.Fatal(err)
	}
	it, err := f.Kit.Tenant(tn.ID, tn.CursorKey()).Get(bg, kit.Key{PK: keys.Debtor(tn.ID, r.DebtorKey), SK: keys.ProfileSK}, true)
	if err != nil || it == nil {
		t.Fatalf("profile: %v", err)
	}
	var p debtor.ProfileItem
	if err := attributevalue.UnmarshalMap(it, &p); err != nil || p.UF != "RJ" || len(p.OptOut) != 0 {
		t.Fatalf("profile uf %q optOut %v: %v", p.UF, p.OptOut, err)
	}
	v, err := f.Debtors.View(bg, tn, r.DebtorKey, 10, "")
	if err != nil || v.Profile == nil || v.Profile.UF != "RJ" {
		t.Fatalf("360 profile: %v %+v", err, v)
	}
}
