package tenant

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/errs"
	"lastro/collections/keys"
)

// PSPSettings is the tenant's Pix payment service provider: where its
// Pix API is, the OAuth2 client, the mutual-TLS certificate, the Pix key
// charges are paid to and the URL the PSP posts payments to. All of it is
// sealed with the other tenant secrets: the client secret and the private
// key are secrets, and a Pix key may be a CPF, a phone or an e-mail.
type PSPSettings struct {
	BaseURL      string `json:"baseUrl"`
	TokenURL     string `json:"tokenUrl,omitempty"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	CertPEM      string `json:"certPem,omitempty"`
	KeyPEM       string `json:"keyPem,omitempty"`
	RootCAsPEM   string `json:"rootCasPem,omitempty"`
	Chave        string `json:"chave"`
	WebhookURL   string `json:"webhookUrl,omitempty"`
	// CobVDisabled says the PSP (or the tenant's contract with it) takes
	// no cobv: every Pix charge is then a cob for today's quote
	// (docs/adr/0069).
	CobVDisabled bool `json:"cobvDisabled,omitempty"`
}

// PSP is the tenant's configured PSP, nil when none is (the engine's
// local default, the sandbox, serves it then).
func (t *Tenant) PSP() *PSPSettings {
	if t.secrets.PSP == nil {
		return nil
	}
	p := *t.secrets.PSP
	return &p
}

// PSPView is the PSP configuration as the API shows it: never the client
// secret, the private key or the Pix key.
type PSPView struct {
	Configured bool   `json:"configured"`
	BaseURL    string `json:"baseUrl,omitempty"`
	TokenURL   string `json:"tokenUrl,omitempty"`
	ClientID   string `json:"clientId,omitempty"`
	WebhookURL string `json:"webhookUrl,omitempty"`
	MutualTLS  bool   `json:"mutualTls"`
	CustomCAs  bool   `json:"customRootCas"`
	// CobVDisabled: every Pix charge is a cob (docs/adr/0069).
	CobVDisabled bool `json:"cobvDisabled"`
	// WebhookTLS is what verifies the PSP's webhook calls on the
	// mutual-TLS listener, when set (docs/adr/0070).
	WebhookTLS *WebhookTLSView `json:"webhookTls,omitempty"`
}

// View is what the API shows of p.
func (p *PSPSettings) View() PSPView {
	if p == nil {
		return PSPView{}
	}
	return PSPView{Configured: true, BaseURL: p.BaseURL, TokenURL: p.TokenURL, ClientID: p.ClientID, WebhookURL: p.WebhookURL,
		MutualTLS: p.CertPEM != "", CustomCAs: p.RootCAsPEM != "", CobVDisabled: p.CobVDisabled}
}

// Bounds of the PSP settings, checked before anything is parsed.
const (
	maxPEM    = 16 << 10
	maxCAs    = 64 << 10
	maxClient = 256
	maxChave  = 77 // the Pix API's limit
)

// validate checks p, its base and token URLs against the egress policy:
// the engine sends the OAuth client secret to them, so never over plain
// http nor to an internal address (docs/adr/0055).
func (p PSPSettings) validate(s *Service) error {
	bad := func(code, msg string) error { return errs.E(errs.Invalid, code, "%s", msg) }
	// The API's paths are appended to baseUrl: a query or fragment there
	// would swallow them.
	if strings.ContainsAny(p.BaseURL, "?#") {
		return bad("invalid_psp_url", "baseUrl must be an absolute https URL without a query")
	}
	if err := s.checkURL(p.BaseURL, "invalid_psp_url", "baseUrl must be an absolute https URL without a query"); err != nil {
		return err
	}
	if p.TokenURL != "" {
		if err := s.checkURL(p.TokenURL, "invalid_psp_url", "tokenUrl must be an absolute https URL without a fragment"); err != nil {
			return err
		}
	}
	if p.WebhookURL != "" && !validMessagingURL(p.WebhookURL) {
		return bad("invalid_psp_url", "webhookUrl must be https (http only to a loopback host), without credentials")
	}
	if p.ClientID == "" || len(p.ClientID) > maxClient || p.ClientSecret == "" || len(p.ClientSecret) > 4*maxClient ||
		!vschar(p.ClientID) || !vschar(p.ClientSecret) {
		return bad("invalid_psp_client", "clientId (1-256 characters) and clientSecret (1-1024) are required, in printable ASCII")
	}
	if p.Chave == "" || len(p.Chave) > maxChave {
		return bad("invalid_pix_key", "chave, the Pix key charges are paid to, is required (at most 77 characters)")
	}
	if (p.CertPEM == "") != (p.KeyPEM == "") || len(p.CertPEM) > maxPEM || len(p.KeyPEM) > maxPEM {
		return bad("invalid_psp_certificate", "certPem and keyPem go together, each at most 16 KiB of PEM")
	}
	if p.CertPEM != "" {
		if _, err := tls.X509KeyPair([]byte(p.CertPEM), []byte(p.KeyPEM)); err != nil {
			return bad("invalid_psp_certificate", "certPem and keyPem are not a PEM certificate and its private key")
		}
	}
	if len(p.RootCAsPEM) > maxCAs || (p.RootCAsPEM != "" && !x509.NewCertPool().AppendCertsFromPEM([]byte(p.RootCAsPEM))) {
		return bad("invalid_psp_root_cas", "rootCasPem must hold PEM certificates, at most 64 KiB")
	}
	return nil
}

// vschar reports whether s is OAuth2's VSCHAR (RFC 6749, appendix A):
// printable ASCII, the only characters a client id or secret may hold.
func vschar(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// SetPSP configures the tenant's PSP, sealed with the other secrets.
// A new call replaces the whole configuration. Conditioned on the
// tenant's version.
func (s *Service) SetPSP(ctx context.Context, t *Tenant, in PSPSettings) (PSPView, error) {
	if err := in.validate(s); err != nil {
		return PSPView{}, err
	}
	// The webhook's mutual-TLS trust (webhooktls.go) is kept beside, not
	// inside, the PSP settings: a new configuration keeps it.
	sec := t.secrets
	sec.PSP = &in
	raw, err := json.Marshal(sec)
	if err != nil {
		return PSPView{}, err
	}
	upd := expression.Set(expression.Name("secrets"), expression.Value(s.box.Seal(raw, []byte(keys.Tenant(t.ID)))))
	if err := s.setVersioned(ctx, t, "psp", upd); err != nil {
		return PSPView{}, err
	}
	v := in.View()
	v.WebhookTLS = sec.PSPWebhookTLS.View()
	return v, nil
}
