package tenant

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
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
// webhook's: https, or http to a loopback host, without credentials.
// Conditioned on the tenant's version.
func (s *Service) SetEventsWebhook(ctx context.Context, t *Tenant, in EventsWebhookInput) (*EventsWebhookConfigured, error) {
	if !validMessagingURL(in.URL) {
		return nil, errs.E(errs.Invalid, "invalid_events_webhook_url", "url must be https (http only to a loopback host), without credentials")
	}
	sec := t.secrets
	sec.Events = "evtsec_" + hex.EncodeToString(secret.Random(32))
	raw, err := json.Marshal(sec)
	if err != nil {
		return nil, err
	}
	pk := keys.Tenant(t.ID)
	ctx, _ = kit.Operation(ctx, "tenant.events-webhook")
	upd := expression.Set(expression.Name("eventsWebhookUrl"), expression.Value(in.URL)).
		Set(expression.Name("secrets"), expression.Value(s.box.Seal(raw, []byte(pk)))).
		Set(expression.Name("version"), expression.Name("version").Plus(expression.Value(1))).
		Set(expression.Name("updatedAt"), expression.Value(keys.Timestamp(s.clock.Now())))
	cond := expression.Name("version").Equal(expression.Value(t.Version))
	_, err = s.kit.Tenant(t.ID, nil).Update(ctx, kit.Key{PK: pk, SK: keys.TenantSK}, upd, &cond, types.ReturnValueNone)
	s.Invalidate(t.ID)
	if errors.Is(err, kit.ErrConditionFailed) {
		return nil, errs.E(errs.Conflict, "tenant_changed", "the tenant changed concurrently; retry")
	}
	if err != nil {
		return nil, fmt.Errorf("set events webhook: %w", err)
	}
	return &EventsWebhookConfigured{URL: in.URL, Secret: sec.Events}, nil
}
