package tenant

import (
	"context"
	"testing"
	"time"

	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/kit"
	"lastro/collections/secret"
	"lastro/collections/table"
	"lastro/ddblocal/ddbtest"
)

func TestSetMessaging(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := ddbtest.New(t)
	if _, err := table.Ensure(ctx, db, "lastro"); err != nil {
		t.Fatal(err)
	}
	k := kit.New(db, "lastro")
	box, _ := secret.New(secret.Random(32))
	s := NewService(k, box, clock.NewManual(time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)), 16)
	if _, err := s.Create(ctx, CreateInput{TenantID: "t-msg", Name: "Msg"}); err != nil {
		t.Fatal(err)
	}
	tn, err := s.Get(ctx, "t-msg")
	if err != nil || tn.MessagingURL != "" || tn.MessagingSecret() != "" {
		t.Fatalf("fresh tenant: %v %q", err, tn.MessagingURL)
	}
	for _, bad := range []string{"", "ftp://x.example/a", "http://provider.example/hook", "https://user:pw@provider.example/", "not a url", "https:///path"} {
		if _, err := s.SetMessaging(ctx, tn, MessagingInput{URL: bad}); !errs.Is(err, errs.Invalid) {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
	out, err := s.SetMessaging(ctx, tn, MessagingInput{URL: "https://provider.example/hook"})
	if err != nil || out.Secret == "" {
		t.Fatalf("set: %v", err)
	}
	// A stale tenant loses the race instead of overwriting.
	if _, err := s.SetMessaging(ctx, tn, MessagingInput{URL: "https://other.example/"}); !errs.Is(err, errs.Conflict) {
		t.Fatalf("stale write: %v", err)
	}
	got, err := s.Get(ctx, "t-msg")
	if err != nil || got.MessagingURL != "https://provider.example/hook" || got.MessagingSecret() != out.Secret {
		t.Fatalf("reloaded: %v %q", err, got.MessagingURL)
	}
	// The other secrets survive the reseal.
	if sec, ok := got.DebtorKeySecret(1); !ok || string(sec) != string(must(tn.DebtorKeySecret(1))) || got.WebhookSecret() != tn.WebhookSecret() {
		t.Fatal("resealing lost the other secrets")
	}
	// Plain http to loopback is an operator's opt-in (egress), not a default.
	if _, err := s.SetMessaging(ctx, got, MessagingInput{URL: "http://127.0.0.1:9/hook"}); !errs.Is(err, errs.Invalid) {
		t.Fatalf("loopback http accepted by the strict policy: %v", err)
	}
}

func must(b []byte, _ bool) []byte { return b }
