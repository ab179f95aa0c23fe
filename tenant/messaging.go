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

// validMessagingURL accepts https, or http to a loopback host (a local
// provider stand-in); the URL carries no credentials.
func validMessagingURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || len(raw) > 2048 || u.Host == "" || u.User != nil || u.Fragment != "" {
		return false
	}
	// url.Parse takes any digits as a port: one past 65535 is never
	// reachable, and would fail at every send instead of here.
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
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
	if !validMessagingURL(in.URL) {
		return nil, errs.E(errs.Invalid, "invalid_messaging_url", "url must be https (http only to a loopback host), without credentials")
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
