// Package bacen is a client of the Central Bank's Pix API (v2) as PSPs
// expose it: OAuth2 client credentials for a bearer token, over mutual
// TLS with the receiver's client certificate when the PSP requires it
// (most do). It implements psp.PSP for one tenant's configuration.
package bacen

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"lastro/collections/egress"
	"lastro/psp"
)

// DefaultScopes are the Pix API scopes the engine uses.
var DefaultScopes = []string{"cob.write", "cob.read", "cobv.write", "cobv.read", "webhook.write", "webhook.read"}

// Config is one tenant's PSP.
type Config struct {
	// BaseURL is the Pix API root, the version included
	// ("https://pix.psp.example/api/v2"); https (Egress decides the rest).
	BaseURL string
	// TokenURL is the OAuth2 token endpoint; empty means BaseURL + "/oauth/token".
	TokenURL     string
	ClientID     string
	ClientSecret string
	Scopes       []string // empty means DefaultScopes
	// CertPEM and KeyPEM are the client certificate and its key for
	// mutual TLS; both empty when the PSP does not ask for one.
	CertPEM string
	KeyPEM  string
	// RootCAsPEM, when set, are the only roots trusted for the PSP's
	// server certificate (a PSP's homologation CA); empty trusts the system's.
	RootCAsPEM string
	// Chave is the tenant's Pix key the charges are paid to.
	Chave string
	// Timeout bounds each call, the token's included; 0 means 10 s.
	Timeout time.Duration
	// Egress is the outbound policy every request, the token's included,
	// and every redirect and dialled address must pass: a tenant's PSP is
	// a URL the tenant chose, and it receives the OAuth client secret
	// (docs/adr/0055). nil is the strict policy.
	Egress *egress.Policy
	// Trusted exempts the PSP from Egress: only for the engine's own
	// in-process sandbox, which the operator configured on the API's
	// loopback address, never for a URL a tenant set.
	Trusted bool
}

// Client is the Pix API of one PSP for one tenant.
type Client struct {
	base  string
	chave string
	http  *http.Client
}

var _ psp.PSP = (*Client)(nil)

// maxAnswer bounds an answer read from the PSP.
const maxAnswer = 1 << 20

// New returns a client for cfg. Nothing is called until the first request
// (the token is fetched then, and again when it expires).
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" || cfg.ClientID == "" || cfg.ClientSecret == "" || cfg.Chave == "" {
		return nil, errors.New("bacen: baseUrl, clientId, clientSecret and chave are required")
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if (cfg.CertPEM == "") != (cfg.KeyPEM == "") {
		return nil, errors.New("bacen: the client certificate and its key go together")
	}
	if cfg.CertPEM != "" {
		cert, err := tls.X509KeyPair([]byte(cfg.CertPEM), []byte(cfg.KeyPEM))
		if err != nil {
			return nil, fmt.Errorf("bacen: client certificate: %w", err)
		}
		tlsCfg.Certificates = []tls.Certificate{cert}
	}
	if cfg.RootCAsPEM != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(cfg.RootCAsPEM)) {
			return nil, errors.New("bacen: rootCAs holds no PEM certificate")
		}
		tlsCfg.RootCAs = pool
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	tokenURL := cfg.TokenURL
	if tokenURL == "" {
		tokenURL = strings.TrimSuffix(cfg.BaseURL, "/") + "/oauth/token"
	}
	var tr http.RoundTripper
	var redirect func(*http.Request, []*http.Request) error
	if cfg.Trusted {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tlsCfg
		tr = t
	} else {
		// Refused here, before a client exists: the token request would
		// carry the client secret to it. The transport checks every
		// request and address again (a redirect, a rebinding name).
		for _, u := range [...]struct{ name, url string }{{"baseUrl", cfg.BaseURL}, {"tokenUrl", tokenURL}} {
			if err := cfg.Egress.CheckURL(u.url); err != nil {
				return nil, fmt.Errorf("bacen: %s: %w", u.name, err)
			}
		}
		tr, redirect = cfg.Egress.Transport(tlsCfg), cfg.Egress.CheckRedirect
	}
	base := &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: redirect}
	scopes := cfg.Scopes
	if len(scopes) == 0 {
		scopes = DefaultScopes
	}
	cc := clientcredentials.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: tokenURL, Scopes: scopes,
		AuthStyle: oauth2.AuthStyleInHeader}
	// The token source keeps this context for every token it fetches:
	// it carries the mutual-TLS client, as PSPs require it on the token
	// endpoint too, and no deadline (each request has its own timeout).
	tokenCtx := context.WithValue(context.Background(), oauth2.HTTPClient, base)
	hc := &http.Client{Timeout: timeout, Transport: &oauth2.Transport{Source: cc.TokenSource(tokenCtx), Base: tr}, CheckRedirect: redirect}
	return &Client{base: strings.TrimSuffix(cfg.BaseURL, "/"), chave: cfg.Chave, http: hc}, nil
}

// CreateCob implements psp.PSP.
func (c *Client) CreateCob(ctx context.Context, in psp.CobInput) (*psp.Charge, error) {
	body := psp.CobPayload{Calendario: psp.Calendario{Expiracao: in.ExpirationSeconds}, Valor: psp.Valor{Original: psp.FormatValor(in.AmountCents)},
		Chave: c.chave}
	var out psp.CobPayload
	if err := c.do(ctx, http.MethodPut, "/cob/"+url.PathEscape(in.TxID), "/cob/{txid}", body, &out); err != nil {
		return nil, err
	}
	return out.Charge(psp.Cob)
}

// CreateCobV implements psp.PSP: the fine as modality 2 (percent) and the
// interest as modality 3 (percent a month, calendar days), ADR 0037.
func (c *Client) CreateCobV(ctx context.Context, in psp.CobVInput) (*psp.Charge, error) {
	body, err := CobVBody(in, c.chave)
	if err != nil {
		return nil, err
	}
	var out psp.CobPayload
	if err := c.do(ctx, http.MethodPut, "/cobv/"+url.PathEscape(in.TxID), "/cobv/{txid}", body, &out); err != nil {
		return nil, err
	}
	return out.Charge(psp.CobV)
}

// CobVBody is the PUT /cobv/{txid} body for in.
func CobVBody(in psp.CobVInput, chave string) (*psp.CobPayload, error) {
	fine, err := psp.FormatPercent(in.FinePercent)
	if err != nil {
		return nil, fmt.Errorf("%w: multa: %v", psp.ErrRejected, err)
	}
	interest, err := psp.FormatPercent(in.InterestMonthly)
	if err != nil {
		return nil, fmt.Errorf("%w: juros: %v", psp.ErrRejected, err)
	}
	v := psp.Valor{Original: psp.FormatValor(in.AmountCents)}
	if !in.FinePercent.IsZero() {
		v.Multa = &psp.Modalidade{Modalidade: psp.FinePercent, ValorPerc: fine}
	}
	if !in.InterestMonthly.IsZero() {
		v.Juros = &psp.Modalidade{Modalidade: psp.InterestMonthlyCalendarDays, ValorPerc: interest}
	}
	return &psp.CobPayload{Calendario: psp.Calendario{DataDeVencimento: in.DueDate.String(), ValidadeAposVencimento: in.ValidAfterDueDays},
		Valor: v, Chave: chave}, nil
}

// Get implements psp.PSP.
func (c *Client) Get(ctx context.Context, kind psp.Kind, txid string) (*psp.Charge, error) {
	var out psp.CobPayload
	if err := c.do(ctx, http.MethodGet, "/"+string(kind)+"/"+url.PathEscape(txid), "/"+string(kind)+"/{txid}", nil, &out); err != nil {
		return nil, err
	}
	return out.Charge(kind)
}

// Cancel implements psp.PSP.
func (c *Client) Cancel(ctx context.Context, kind psp.Kind, txid string) (*psp.Charge, error) {
	var out psp.CobPayload
	if err := c.do(ctx, http.MethodPatch, "/"+string(kind)+"/"+url.PathEscape(txid), "/"+string(kind)+"/{txid}",
		map[string]string{"status": psp.StatusRemoved}, &out); err != nil {
		return nil, err
	}
	return out.Charge(kind)
}

// RegisterWebhook implements psp.PSP.
func (c *Client) RegisterWebhook(ctx context.Context, webhookURL string) error {
	return c.do(ctx, http.MethodPut, "/webhook/"+url.PathEscape(c.chave), "/webhook/{chave}", psp.WebhookPayload{WebhookURL: webhookURL}, nil)
}

// problem is the API's error answer (RFC 7807).
type problem struct {
	Type   string `json:"type"`
	Status int    `json:"status"`
}

// kind names a problem by the last segment of its type URI (the Pix API's
// catalogue: CobOperacaoInvalida, PayloadInvalido...), never by its title
// or detail, which a PSP may fill with what it was sent: the Pix key, a
// payer's name.
func (p problem) kind() string {
	k := p.Type[strings.LastIndexByte(p.Type, '/')+1:]
	for _, r := range k {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
			return ""
		}
	}
	return truncate(k, 60)
}

// do calls the API. Errors name the route (route), never the path: the
// webhook's path carries the Pix key, which may be a CPF or an e-mail.
func (c *Client) do(ctx context.Context, method, path, route string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("%w: %v", psp.ErrRejected, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// The token endpoint refusing our credentials is the tenant's
		// configuration, not an outage.
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
			return fmt.Errorf("%w: token endpoint answered %d", psp.ErrRejected, re.Response.StatusCode)
		}
		// So is a PSP URL, a redirect or an address the egress policy
		// refuses: no retry will reach it. Only the refusal is kept: the
		// transport's text names the URL.
		if errors.Is(err, egress.ErrNotAllowed) {
			return fmt.Errorf("%w: %s %s: %w", psp.ErrRejected, method, route, egress.ErrNotAllowed)
		}
		return fmt.Errorf("%w: %s %s: %v", psp.ErrUnavailable, method, route, redact(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("%w: reading the answer: %v", psp.ErrUnavailable, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%w: %s %s", psp.ErrNotFound, method, route)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return fmt.Errorf("%w: %s %s answered %d", psp.ErrUnavailable, method, route, resp.StatusCode)
	case resp.StatusCode >= 300:
		var p problem
		_ = json.Unmarshal(raw, &p)
		return fmt.Errorf("%w: %s %s answered %d %s", psp.ErrRejected, method, route, resp.StatusCode, p.kind())
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%w: %s %s: undecodable answer: %v", psp.ErrUnavailable, method, route, err)
	}
	return nil
}

// redact keeps a transport error's kind without the URL's query (none is
// sent, but a proxy's error may echo one).
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
