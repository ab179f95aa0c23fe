package tenant

import (
	"context"
	"encoding/hex"
	"encoding/json"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/keys"
	"lastro/collections/secret"
)

// EventsWebhookSecret signs the domain events the stream consumer posts
// to the tenant's events webhook ("" until SetEventsWebhook).
func (t *Tenant) EventsWebhookSecret() string { return t.secrets.Events }

// EventsWebhookInput is the body of PUT /v1/tenant/events-webhook.
type EventsWebhookInput struct {
	URL string `json:"url"`
}

// EventsWebhookConfigured is the answer of SetEventsWebhook: the only
// time the signing secret is shown.
type EventsWebhookConfigured struct {
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

// SetEventsWebhook points the tenant's domain events (docs/events/) at
// its endpoint and issues a fresh signing secret, sealed with the other
// tenant secrets (a new call rotates it). The URL rules are the messaging
// webhook's: https to a public address, without credentials (the egress
// policy, docs/adr/0055). Conditioned on the tenant's version.
func (s *Service) SetEventsWebhook(ctx context.Context, t *Tenant, in EventsWebhookInput) (*EventsWebhookConfigured, error) {
	if err := s.checkURL(in.URL, "invalid_events_webhook_url", "url must be an absolute https URL of at most 2048 characters, without a fragment"); err != nil {
		return nil, err
	}
	sec := t.secrets
	sec.Events = "evtsec_" + hex.EncodeToString(secret.Random(32))
	raw, err := json.Marshal(sec)
	if err != nil {
		return nil, err
	}
	upd := expression.Set(expression.Name("eventsWebhookUrl"), expression.Value(in.URL)).
		Set(expression.Name("secrets"), expression.Value(s.box.Seal(raw, []byte(keys.Tenant(t.ID)))))
	if err := s.setVersioned(ctx, t, "events-webhook", upd); err != nil {
		return nil, err
	}
	return &EventsWebhookConfigured{URL: in.URL, Secret: sec.Events}, nil
}
