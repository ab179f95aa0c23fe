package tenant

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/secret"
)

// Webhook secret rotation overlaps (docs/adr/0022).
const (
	DefaultWebhookOverlap = time.Hour
	MaxWebhookOverlap     = 7 * 24 * time.Hour
)

// WebhookSecrets are the secrets a webhook signed at now may use: the
// current one and, until its overlap ends, the one it replaced. The end
// of the overlap is sealed with the secrets, so every instance stops
// accepting the old secret at the same instant, whatever it has cached.
func (t *Tenant) WebhookSecrets(now time.Time) []string {
	out := []string{t.secrets.Webhook}
	if t.secrets.WebhookPrevious != "" && now.Before(t.secrets.WebhookPreviousUntil) {
		out = append(out, t.secrets.WebhookPrevious)
	}
	return out
}

// RotateInput is the body of POST /v1/tenant/webhook-secret/rotate.
type RotateInput struct {
	// OverlapSeconds is how long the replaced secret keeps verifying
	// webhooks (0: it stops at once); default 3600, at most 604800.
	OverlapSeconds *int `json:"overlapSeconds,omitempty"`
}

// Rotated is the answer to a rotation: the only time the new secret is
// shown, and until when the old one still verifies (null: no longer).
type Rotated struct {
	WebhookSecret      string  `json:"webhookSecret"`
	PreviousValidUntil *string `json:"previousValidUntil"`
}

func (in RotateInput) overlap() (time.Duration, error) {
	if in.OverlapSeconds == nil {
		return DefaultWebhookOverlap, nil
	}
	d := time.Duration(*in.OverlapSeconds) * time.Second
	if *in.OverlapSeconds < 0 || d > MaxWebhookOverlap {
		return 0, errs.E(errs.Invalid, "invalid_overlap", "overlapSeconds must be 0-%d", int(MaxWebhookOverlap.Seconds()))
	}
	return d, nil
}

func newWebhookSecret() string { return "whsec_" + hex.EncodeToString(secret.Random(32)) }

// RotateWebhookSecret replaces the tenant's webhook secret with a new one,
// sealed like the others in the TENANT item. The old secret keeps
// verifying for the overlap (a secret replaced earlier and still in its
// own overlap stops: only one previous secret is kept). The write is
// conditioned on the TENANT item's version; a concurrent change of the
// tenant makes it re-read and try again.
func (s *Service) RotateWebhookSecret(ctx context.Context, t *Tenant, in RotateInput) (*Rotated, error) {
	overlap, err := in.overlap()
	if err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "tenant.webhook.rotate")
	pk := keys.Tenant(t.ID)
	for range 5 {
		cur, err := s.load(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		now := s.clock.Now().UTC()
		sec := cur.secrets
		sec.WebhookPrevious, sec.WebhookPreviousUntil = "", time.Time{}
		out := &Rotated{WebhookSecret: newWebhookSecret()}
		if overlap > 0 {
			until := now.Add(overlap)
			sec.WebhookPrevious, sec.WebhookPreviousUntil = cur.secrets.Webhook, until
			u := keys.Timestamp(until)
			out.PreviousValidUntil = &u
		}
		sec.Webhook = out.WebhookSecret
		raw, err := json.Marshal(sec)
		if err != nil {
			return nil, err
		}
		upd := expression.Set(expression.Name("secrets"), expression.Value(s.box.Seal(raw, []byte(pk)))).
			Set(expression.Name("version"), expression.Name("version").Plus(expression.Value(1))).
			Set(expression.Name("updatedAt"), expression.Value(keys.Timestamp(now)))
		cond := expression.Name("version").Equal(expression.Value(cur.Version))
		_, err = s.kit.Tenant(t.ID, nil).Update(ctx, kit.Key{PK: pk, SK: keys.TenantSK}, upd, &cond, "")
		if errors.Is(err, kit.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("rotate webhook secret: %w", err)
		}
		s.Invalidate(t.ID)
		return out, nil
	}
	return nil, errs.E(errs.Conflict, "tenant_changed", "the tenant kept changing; retry")
}
