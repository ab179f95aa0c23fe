package tenant

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/errs"
	"lastro/collections/keys"
)

// WebhookTLS is how a tenant's PSP is recognised when it calls the
// engine's mutual-TLS webhook listener (docs/adr/0070): the client
// certificate it presents must chain, for client authentication, to one
// of ClientCAsPEM (the CAs the PSP's certificates are issued by), or be
// one of PinnedCertPEM (compared by the SHA-256 of the whole
// certificate). Either or both; within its validity either way. No HMAC
// is asked of a call the certificate authenticated.
type WebhookTLS struct {
	ClientCAsPEM  string `json:"clientCasPem,omitempty"`
	PinnedCertPEM string `json:"pinnedCertPem,omitempty"`
}

// WebhookTLSView is what the API shows of it: how many CAs, and the
// pinned certificates' SHA-256 fingerprints (public facts, no secret).
type WebhookTLSView struct {
	ClientCAs    int      `json:"clientCas"`
	PinnedSHA256 []string `json:"pinnedSha256"`
}

// View is what the API shows of w (nil when w is).
func (w *WebhookTLS) View() *WebhookTLSView {
	if w == nil {
		return nil
	}
	cas, _ := parseCerts(w.ClientCAsPEM)
	pinned, _ := parseCerts(w.PinnedCertPEM)
	v := &WebhookTLSView{ClientCAs: len(cas), PinnedSHA256: []string{}}
	for _, c := range pinned {
		v.PinnedSHA256 = append(v.PinnedSHA256, fingerprint(c))
	}
	return v
}

func fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return hex.EncodeToString(sum[:])
}

// maxWebhookCerts bounds the certificates of each list.
const maxWebhookCerts = 16

// parseCerts reads every CERTIFICATE block of s; anything else in it, or
// none at all in a non-empty s, is an error.
func parseCerts(s string) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	rest := []byte(s)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			return nil, errors.New("a PEM block that is not a certificate")
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 && s != "" {
		return nil, errors.New("no PEM certificate")
	}
	return out, nil
}

// validate bounds w before anything is parsed, then parses it.
func (w WebhookTLS) validate() error {
	bad := errs.E(errs.Invalid, "invalid_webhook_tls",
		"clientCasPem and pinnedCertPem must each be PEM certificates (at most 16, 64 KiB); at least one is required")
	if len(w.ClientCAsPEM) > maxCAs || len(w.PinnedCertPEM) > maxCAs || (w.ClientCAsPEM == "" && w.PinnedCertPEM == "") {
		return bad
	}
	cas, err := parseCerts(w.ClientCAsPEM)
	if err != nil || len(cas) > maxWebhookCerts {
		return bad
	}
	pinned, err := parseCerts(w.PinnedCertPEM)
	if err != nil || len(pinned) > maxWebhookCerts {
		return bad
	}
	return nil
}

// SetWebhookTLS sets how the tenant's PSP is recognised on the
// mutual-TLS webhook listener; it needs a configured PSP (the sandbox
// signs its notices with the webhook secret instead). Conditioned on the
// tenant's version.
func (s *Service) SetWebhookTLS(ctx context.Context, t *Tenant, in WebhookTLS) (WebhookTLSView, error) {
	if err := in.validate(); err != nil {
		return WebhookTLSView{}, err
	}
	sec := t.secrets
	if sec.PSP == nil {
		return WebhookTLSView{}, errs.E(errs.Rule, "psp_not_configured", "configure the tenant's PSP first (PUT /v1/tenant/psp)")
	}
	sec.PSPWebhookTLS = &in
	raw, err := json.Marshal(sec)
	if err != nil {
		return WebhookTLSView{}, err
	}
	upd := expression.Set(expression.Name("secrets"), expression.Value(s.box.Seal(raw, []byte(keys.Tenant(t.ID)))))
	if err := s.setVersioned(ctx, t, "psp_webhook_tls", upd); err != nil {
		return WebhookTLSView{}, err
	}
	return *in.View(), nil
}

// PSPView is what the API shows of the tenant's PSP settings, their
// webhook TLS trust included.
func (t *Tenant) PSPView() PSPView {
	v := t.PSP().View()
	if v.Configured {
		v.WebhookTLS = t.secrets.PSPWebhookTLS.View()
	}
	return v
}

// ErrWebhookClient is VerifyWebhookClient's refusal: it never says which
// check failed beyond this, nor anything of the certificate.
var ErrWebhookClient = errs.E(errs.Unauth, "client_certificate_refused",
	"the client certificate is not one this tenant's PSP webhook trusts")

// VerifyWebhookClient checks the certificates a client presented on the
// mutual-TLS webhook listener (the leaf first, then any intermediates)
// against the tenant's WebhookTLS at now, the engine's clock: the leaf
// pinned and within its validity, or chained to one of the tenant's CAs
// for client authentication. A tenant without WebhookTLS trusts none, so
// another tenant's certificate never opens its webhook.
func (t *Tenant) VerifyWebhookClient(chain []*x509.Certificate, now time.Time) error {
	w := t.secrets.PSPWebhookTLS
	if t.secrets.PSP == nil || w == nil || len(chain) == 0 {
		return ErrWebhookClient
	}
	leaf := chain[0]
	if now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
		return ErrWebhookClient
	}
	pinned, _ := parseCerts(w.PinnedCertPEM)
	for _, c := range pinned {
		if fingerprint(c) == fingerprint(leaf) {
			return nil
		}
	}
	cas, _ := parseCerts(w.ClientCAsPEM)
	if len(cas) == 0 {
		return ErrWebhookClient
	}
	roots, inter := x509.NewCertPool(), x509.NewCertPool()
	for _, c := range cas {
		roots.AddCert(c)
	}
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return ErrWebhookClient
	}
	return nil
}
