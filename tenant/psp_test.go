package tenant

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/secret"
	"lastro/collections/table"
	"lastro/ddblocal/ddbtest"
)

func TestSetPSP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := ddbtest.New(t)
	if _, err := table.Ensure(ctx, db, "lastro"); err != nil {
		t.Fatal(err)
	}
	k := kit.New(db, "lastro")
	box, _ := secret.New(secret.Random(32))
	s := NewService(k, box, clock.NewManual(time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)), 16)
	if _, err := s.Create(ctx, CreateInput{TenantID: "t-psp", Name: "PSP"}); err != nil {
		t.Fatal(err)
	}
	tn, err := s.Get(ctx, "t-psp")
	if err != nil || tn.PSP() != nil || tn.PSP().View().Configured {
		t.Fatalf("fresh tenant: %v %+v", err, tn.PSP())
	}
	good := PSPSettings{BaseURL: "https://pix.psp.example/api/v2", ClientID: "client", ClientSecret: "very-secret-value",
		Chave: "pessoa@example.com", WebhookURL: "https://lastro.example/v1/webhooks/t-psp"}
	for name, edit := range map[string]func(*PSPSettings){
		"http to a remote host": func(p *PSPSettings) { p.BaseURL = "http://pix.psp.example" },
		"token URL with creds":  func(p *PSPSettings) { p.TokenURL = "https://u:p@psp.example/token" },
		"bad webhook URL":       func(p *PSPSettings) { p.WebhookURL = "ftp://x" },
		"no client id":          func(p *PSPSettings) { p.ClientID = "" },
		"no client secret":      func(p *PSPSettings) { p.ClientSecret = "" },
		"no chave":              func(p *PSPSettings) { p.Chave = "" },
		"chave too long":        func(p *PSPSettings) { p.Chave = strings.Repeat("k", 78) },
		"cert without key":      func(p *PSPSettings) { p.CertPEM = "x" },
		"cert not PEM":          func(p *PSPSettings) { p.CertPEM, p.KeyPEM = "x", "y" },
		"roots not PEM":         func(p *PSPSettings) { p.RootCAsPEM = "nope" },
		"port out of range":     func(p *PSPSettings) { p.BaseURL = "https://pix.psp.example:99999/api/v2" },
		"base URL with a query": func(p *PSPSettings) { p.BaseURL = "https://pix.psp.example/api/v2?x=1" },
		"control in client id":  func(p *PSPSettings) { p.ClientID = "client\x00" },
		"non-ASCII secret":      func(p *PSPSettings) { p.ClientSecret = "segredo-ção" },
	} {
		in := good
		edit(&in)
		if _, err := s.SetPSP(ctx, tn, in); !errs.Is(err, errs.Invalid) {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
	view, err := s.SetPSP(ctx, tn, good)
	if err != nil || view != (PSPView{Configured: true, BaseURL: good.BaseURL, ClientID: "client", WebhookURL: good.WebhookURL}) {
		t.Fatalf("set: %+v %v", view, err)
	}
	if _, err := s.SetPSP(ctx, tn, good); !errs.Is(err, errs.Conflict) {
		t.Fatalf("stale write: %v", err)
	}
	got, err := s.Get(ctx, "t-psp")
	if err != nil || got.PSP() == nil || *got.PSP() != good || got.WebhookSecret() != tn.WebhookSecret() {
		t.Fatalf("reloaded: %v %+v", err, got.PSP())
	}
	// Sealed: neither the secret nor the Pix key is in the item in clear.
	item, err := k.Tenant("t-psp", nil).Get(ctx, kit.Key{PK: keys.Tenant("t-psp"), SK: keys.TenantSK}, true)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := attributevalue.UnmarshalMap(item, &m); err != nil {
		t.Fatal(err)
	}
	sealed, _ := m["secrets"].([]byte)
	raw := fmt.Sprint(m) + string(sealed)
	if len(sealed) == 0 || !strings.Contains(raw, "t-psp") {
		t.Fatalf("the item's printout does not show its values: %s", raw)
	}
	if strings.Contains(raw, "very-secret-value") || strings.Contains(raw, "pessoa@example.com") {
		t.Fatalf("the TENANT item shows the PSP secrets: %s", raw)
	}
}
