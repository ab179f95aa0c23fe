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

func TestSetEventsWebhook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := ddbtest.New(t)
	if _, err := table.Ensure(ctx, db, "lastro"); err != nil {
		t.Fatal(err)
	}
	box, _ := secret.New(secret.Random(32))
	s := NewService(kit.New(db, "lastro"), box, clock.NewManual(time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)), 16)
	if _, err := s.Create(ctx, CreateInput{TenantID: "t-evt", Name: "Evt"}); err != nil {
		t.Fatal(err)
	}
	tn, err := s.Get(ctx, "t-evt")
	if err != nil || tn.EventsURL != "" || tn.EventsWebhookSecret() != "" {
		t.Fatalf("fresh tenant: %v %q", err, tn.EventsURL)
	}
	for _, bad := range []string{"", "ftp://x.example/a", "http://bank.example/events", "https://user:pw@bank.example/", "not a url", "https:///path", "https://bank.example/#frag"} {
		if _, err := s.SetEventsWebhook(ctx, tn, EventsWebhookInput{URL: bad}); !errs.Is(err, errs.Invalid) {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
	out, err := s.SetEventsWebhook(ctx, tn, EventsWebhookInput{URL: "https://bank.example/events"})
	if err != nil || len(out.Secret) != len("evtsec_")+64 || out.Secret == tn.WebhookSecret() {
		t.Fatalf("set: %+v %v", out, err)
	}
	if _, err := s.SetEventsWebhook(ctx, tn, EventsWebhookInput{URL: "https://other.example/"}); !errs.Is(err, errs.Conflict) {
		t.Fatalf("stale write: %v", err)
	}
	got, err := s.Get(ctx, "t-evt")
	if err != nil || got.EventsURL != "https://bank.example/events" || got.EventsWebhookSecret() != out.Secret {
		t.Fatalf("reloaded: %v %q", err, got.EventsURL)
	}
	// The other secrets and settings survive the reseal.
	if sec, ok := got.DebtorKeySecret(1); !ok || string(sec) != string(must(tn.DebtorKeySecret(1))) ||
		got.WebhookSecret() != tn.WebhookSecret() || got.MessagingURL != "" {
		t.Fatal("resealing lost the other secrets")
	}
	// Plain http to loopback is an operator's opt-in (egress), not a default.
	if _, err := s.SetEventsWebhook(ctx, got, EventsWebhookInput{URL: "http://127.0.0.1:9/events"}); !errs.Is(err, errs.Invalid) {
		t.Fatalf("loopback http accepted by the strict policy: %v", err)
	}
	again, err := s.SetEventsWebhook(ctx, got, EventsWebhookInput{URL: "https://bank.example/events/v2"})
	if err != nil {
		t.Fatalf("set again: %v", err)
	}
	if again.Secret == out.Secret {
		t.Error("a new call kept the old secret; it must rotate it")
	}
}
