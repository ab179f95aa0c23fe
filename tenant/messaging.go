package tenant

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/url"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/secret"
)

// MessagingSecret signs the messages the contact gateway posts to the
// tenant's messaging provider ("" until SetMessaging).
func (t *Tenant) MessagingSecret() string { return t.secrets.Messaging }

// MessagingInput configures the tenant's messaging provider webhook.
type MessagingInput struct {
	URL string `json:"url"`
}

// MessagingConfigured is the answer of SetMessaging: the only time the
// signing secret is shown.
type MessagingConfigured struct {
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

// MessagingView is the answer of GET /v1/tenant/messaging.
type MessagingView struct {
	URL        string `json:"url,omitempty"`
	Configured bool   `json:"configured"`
}

// validURL reports whether raw is an absolute URL the engine can post
// to: a host, no fragment, a port a connection can use. What it may point
// at is the egress policy's (checkURL).
func validURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || len(raw) > 2048 || u.Host == "" || u.Fragment != "" {
		return false
	}
	// url.Parse takes any digits as a port: one past 65535 is never
	// reachable, and would fail at every send instead of here.
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	return true
}

// checkURL validates a URL the engine will dial for the tenant: its
// shape (code, msg when it is not a URL) then the egress policy
// (egress.Code: https, no credentials, no internal host), so a webhook
// cannot be aimed at loopback or the metadata service (docs/adr/0055).
func (s *Service) checkURL(raw, code, msg string) error {
	if !validURL(raw) {
		return errs.E(errs.Invalid, code, "%s", msg)
	}
	return s.opts.Egress.CheckURL(raw)
}

// validMessagingURL accepts https, or http to a loopback host, without
// credentials: the rule for a URL the engine does not dial itself (the
// PSP's webhookUrl, which the PSP calls).
func validMessagingURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || !validURL(raw) || u.User != nil {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		ip := net.ParseIP(u.Hostname())
		return u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback())
	}
	return false
}

// SetMessaging points the tenant's outgoing messages at its provider's
// webhook and issues a fresh signing secret, sealed with the other tenant
// secrets (a new call rotates it). Conditioned on the tenant's version.
func (s *Service) SetMessaging(ctx context.Context, t *Tenant, in MessagingInput) (*MessagingConfigured, error) {
	if err := s.checkURL(in.URL, "invalid_messaging_url", "url must be an absolute https URL of at most 2048 characters, without a fragment"); err != nil {
		return nil, err
	}
	sec := t.secrets
	sec.Messaging = "msgsec_" + hex.EncodeToString(secret.Random(32))
	raw, err := json.Marshal(sec)
	if err != nil {
		return nil, err
	}
	upd := expression.Set(expression.Name("messagingUrl"), expression.Value(in.URL)).
		Set(expression.Name("secrets"), expression.Value(s.box.Seal(raw, []byte(keys.Tenant(t.ID)))))
	if err := s.setVersioned(ctx, t, "messaging", upd); err != nil {
		return nil, err
	}
	return &MessagingConfigured{URL: in.URL, Secret: sec.Messaging}, nil
}
