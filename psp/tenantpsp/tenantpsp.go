// Package tenantpsp resolves each tenant's PSP: the BACEN Pix API client
// of the provider the tenant configured (PUT /v1/tenant/psp), or, when it
// configured none, the same client pointed at the engine's sandbox PSP —
// the local default, like the embedded store (ADR 0038). Either way the
// engine's webhook is registered with the PSP before the first charge.
package tenantpsp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/uuid"

	"lastro/collections/egress"
	"lastro/psp"
	"lastro/psp/bacen"
	"lastro/tenant"
)

// Sandbox is where the engine's sandbox PSP is and how to reach it.
type Sandbox struct {
	URL          string // the sandbox's base URL
	ClientID     string
	ClientSecret string
	// WebhookBase is the engine's own base URL: a tenant's webhook is
	// WebhookBase + "/v1/webhooks/{tenantId}" (the PSP appends "/pix").
	WebhookBase string
}

// Directory hands out tenants' PSP clients, built once per tenant
// version (a new configuration bumps the version).
type Directory struct {
	tenants *tenant.Service
	egress  *egress.Policy // a tenant's PSP is dialled through it; the sandbox is not
	mu      sync.Mutex
	sandbox *Sandbox
	clients map[string]entry
	keys    map[string]string // a sandbox Pix key -> its tenant
}

type entry struct {
	version int
	psp     psp.PSP
}

// New returns a directory with no sandbox: tenants without a configured
// PSP get none (their Pix charges carry no BR Code). Tenants' own PSPs
// are dialled through policy (nil: the strict one, docs/adr/0055).
func New(tenants *tenant.Service, policy *egress.Policy) *Directory {
	return &Directory{tenants: tenants, egress: policy, clients: map[string]entry{}, keys: map[string]string{}}
}

// UseSandbox makes the sandbox the PSP of tenants that configured none.
func (d *Directory) UseSandbox(s Sandbox) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sandbox = &s
	clear(d.clients)
}

// SandboxKey is a tenant's Pix key at the sandbox: a random-key-shaped
// UUID derived from the tenant id, so it says nothing about anyone.
func SandboxKey(tenantID string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("lastro-sandbox-pix-key:"+tenantID)).String()
}

// WebhookURL is the engine's webhook for a tenant under base.
func WebhookURL(base, tenantID string) string {
	return strings.TrimSuffix(base, "/") + "/v1/webhooks/" + tenantID
}

// For returns t's PSP, nil when it has none.
func (d *Directory) For(ctx context.Context, t *tenant.Tenant) (psp.PSP, error) {
	d.mu.Lock()
	e, ok := d.clients[t.ID]
	sb := d.sandbox
	d.mu.Unlock()
	if ok && e.version == t.Version {
		return e.psp, nil
	}
	var cfg bacen.Config
	var hook string
	if p := t.PSP(); p != nil {
		cfg = bacen.Config{BaseURL: p.BaseURL, TokenURL: p.TokenURL, ClientID: p.ClientID, ClientSecret: p.ClientSecret, CertPEM: p.CertPEM,
			KeyPEM: p.KeyPEM, RootCAsPEM: p.RootCAsPEM, Chave: p.Chave, Egress: d.egress}
		hook = p.WebhookURL
	} else if sb != nil {
		// The operator's own sandbox, on the API's loopback address: not a
		// URL any tenant chose, so not under the egress policy.
		cfg = bacen.Config{BaseURL: sb.URL, ClientID: sb.ClientID, ClientSecret: sb.ClientSecret, Chave: SandboxKey(t.ID), Trusted: true}
		hook = WebhookURL(sb.WebhookBase, t.ID)
		d.mu.Lock()
		d.keys[cfg.Chave] = t.ID
		d.mu.Unlock()
	} else {
		return nil, nil
	}
	c, err := bacen.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", psp.ErrRejected, err)
	}
	// Registered before the first charge, so no payment of it can be
	// notified nowhere; a tenant that registers its webhook with the PSP
	// itself leaves webhookUrl empty.
	if hook != "" {
		if err := c.RegisterWebhook(ctx, hook); err != nil {
			return nil, fmt.Errorf("register the webhook: %w", err)
		}
	}
	d.mu.Lock()
	d.clients[t.ID] = entry{version: t.Version, psp: c}
	d.mu.Unlock()
	return c, nil
}

// ErrUnknownKey is SecretFor's answer for a Pix key no tenant uses at the sandbox.
var ErrUnknownKey = errors.New("tenantpsp: unknown sandbox Pix key")

// ErrOwnPSP is SecretFor's answer for a tenant that configured its own
// PSP: the sandbox is no longer its PSP, so it signs nothing for it.
var ErrOwnPSP = errors.New("tenantpsp: the tenant has its own PSP; the sandbox signs nothing for it")

// SecretFor is the webhook secret of the tenant whose sandbox Pix key is
// chave: the in-process sandbox signs each tenant's webhooks with it,
// only while the sandbox is that tenant's PSP (never once it configured
// its own, docs/adr/0054-sandbox-psp-is-a-demo-tool.md).
func (d *Directory) SecretFor(ctx context.Context, chave string) (string, error) {
	d.mu.Lock()
	id, ok := d.keys[chave]
	d.mu.Unlock()
	if !ok {
		return "", ErrUnknownKey
	}
	t, err := d.tenants.Get(ctx, id)
	if err != nil {
		return "", err
	}
	if t.PSP() != nil {
		return "", ErrOwnPSP
	}
	return t.WebhookSecret(), nil
}
