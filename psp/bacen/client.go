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
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"lastro/collections/egress"
	"lastro/psp"
)

// Scopes of the Pix API the engine asks for, one per call: a token
// carries only what its call needs (the API's security section names
// one scope per operation), so a token that leaks from one call cannot
// be replayed for another kind of call.
const (
	ScopeCobWrite     = "cob.write"
	ScopeCobRead      = "cob.read"
	ScopeCobVWrite    = "cobv.write"
	ScopeCobVRead     = "cobv.read"
	ScopeWebhookWrite = "webhook.write"
	ScopePixWrite     = "pix.write"
	ScopePixRead      = "pix.read"
)

// scope is the scope of a call on a kind's collection: cob.write,
// cobv.read...
func scope(kind psp.Kind, write bool) string {
	if write {
		return string(kind) + ".write"
	}
	return string(kind) + ".read"
}

// Config is one tenant's PSP.
type Config struct {
	// BaseURL is the Pix API root, the version included
	// ("https://pix.psp.example/api/v2"); https (Egress decides the rest).
	BaseURL string
	// TokenURL is the OAuth2 token endpoint; empty means BaseURL + "/oauth/token".
	TokenURL     string
	ClientID     string
	ClientSecret string
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
	http  *http.Client // the mutual-TLS client, no token
	cc    clientcredentials.Config
	// tokenCtx carries http to the token endpoint, and no deadline.
	tokenCtx context.Context
	mu       sync.Mutex
	sources  map[string]oauth2.TokenSource // by scope, each caching its token
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
	cc := clientcredentials.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInHeader}
	// The token sources keep this context for every token they fetch: it
	// carries the mutual-TLS client, as PSPs require it on the token
	// endpoint too, and no deadline (each request has its own timeout).
	tokenCtx := context.WithValue(context.Background(), oauth2.HTTPClient, base)
	return &Client{base: strings.TrimSuffix(cfg.BaseURL, "/"), chave: cfg.Chave, http: base, cc: cc, tokenCtx: tokenCtx,
		sources: map[string]oauth2.TokenSource{}}, nil
}

// token is a bearer token for scope, cached per scope until it expires.
func (c *Client) token(scope string) (*oauth2.Token, error) {
	c.mu.Lock()
	src, ok := c.sources[scope]
	if !ok {
		cc := c.cc
		cc.Scopes = []string{scope}
		src = cc.TokenSource(c.tokenCtx)
		c.sources[scope] = src
	}
	c.mu.Unlock()
	return src.Token()
}

// cobRequest is the body of PUT /cob/{txid} for in.
func (c *Client) cobRequest(in psp.CobInput) psp.CobRequest {
	return psp.CobRequest{Calendario: psp.Calendario{Expiracao: in.ExpirationSeconds}, Devedor: in.Debtor,
		Valor: psp.Valor{Original: psp.FormatValor(in.AmountCents)}, Chave: c.chave}
}

// CreateCob implements psp.PSP. calendario.expiracao must be positive:
// the API reads it as the charge's lifetime in seconds.
func (c *Client) CreateCob(ctx context.Context, in psp.CobInput) (*psp.Charge, error) {
	if in.ExpirationSeconds <= 0 {
		return nil, fmt.Errorf("%w: calendario.expiracao must be a positive number of seconds", psp.ErrRejected)
	}
	var out psp.CobPayload
	if err := c.do(ctx, http.MethodPut, "/cob/"+url.PathEscape(in.TxID), "/cob/{txid}", ScopeCobWrite, c.cobRequest(in), &out); err != nil {
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
	if err := c.do(ctx, http.MethodPut, "/cobv/"+url.PathEscape(in.TxID), "/cobv/{txid}", ScopeCobVWrite, body, &out); err != nil {
		return nil, err
	}
	return out.Charge(psp.CobV)
}

// CobVBody is the PUT /cobv/{txid} body for in: it refuses, before any
// call, what the API would (no devedor, a due date missing, a validity
// after it that is not positive, a rate with more than two decimals).
func CobVBody(in psp.CobVInput, chave string) (*psp.CobRequest, error) {
	if in.Debtor == nil || in.Debtor.Nome == "" || (in.Debtor.CPF == "") == (in.Debtor.CNPJ == "") {
		return nil, fmt.Errorf("%w: devedor: a cobv needs the debtor's name and a CPF or a CNPJ", psp.ErrRejected)
	}
	if in.DueDate.IsZero() {
		return nil, fmt.Errorf("%w: calendario.dataDeVencimento is required", psp.ErrRejected)
	}
	if in.ValidAfterDueDays <= 0 {
		return nil, fmt.Errorf("%w: calendario.validadeAposVencimento must be a positive number of days", psp.ErrRejected)
	}
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
	return &psp.CobRequest{Calendario: psp.Calendario{DataDeVencimento: in.DueDate.String(), ValidadeAposVencimento: in.ValidAfterDueDays},
		Devedor: in.Debtor, Valor: v, Chave: chave}, nil
}

// Get implements psp.PSP.
func (c *Client) Get(ctx context.Context, kind psp.Kind, txid string) (*psp.Charge, error) {
	var out psp.CobPayload
	if err := c.do(ctx, http.MethodGet, "/"+string(kind)+"/"+url.PathEscape(txid), "/"+string(kind)+"/{txid}", scope(kind, false), nil, &out); err != nil {
		return nil, err
	}
	return out.Charge(kind)
}

// Cancel implements psp.PSP.
func (c *Client) Cancel(ctx context.Context, kind psp.Kind, txid string) (*psp.Charge, error) {
	var out psp.CobPayload
	if err := c.do(ctx, http.MethodPatch, "/"+string(kind)+"/"+url.PathEscape(txid), "/"+string(kind)+"/{txid}", scope(kind, true),
		psp.PatchRequest{Status: psp.StatusRemoved}, &out); err != nil {
		return nil, err
	}
	return out.Charge(kind)
}

// RegisterWebhook implements psp.PSP.
func (c *Client) RegisterWebhook(ctx context.Context, webhookURL string) error {
	return c.do(ctx, http.MethodPut, "/webhook/"+url.PathEscape(c.chave), "/webhook/{chave}", ScopeWebhookWrite,
		psp.WebhookPayload{WebhookURL: webhookURL}, nil)
}

// Refund implements psp.PSP: PUT /pix/{e2eid}/devolucao/{id}, natureza
// ORIGINAL (a refund of an ordinary Pix).
func (c *Client) Refund(ctx context.Context, in psp.RefundInput) (*psp.Refund, error) {
	if in.AmountCents <= 0 {
		return nil, fmt.Errorf("%w: a refund's valor must be positive", psp.ErrRejected)
	}
	body := psp.DevolucaoRequest{Valor: psp.FormatValor(in.AmountCents), Natureza: "ORIGINAL", Descricao: in.Description}
	var out psp.Devolucao
	if err := c.do(ctx, http.MethodPut, "/pix/"+url.PathEscape(in.EndToEndID)+"/devolucao/"+url.PathEscape(in.ID), "/pix/{e2eid}/devolucao/{id}",
		ScopePixWrite, body, &out); err != nil {
		return nil, err
	}
	return out.Refund()
}

// GetRefund implements psp.PSP.
func (c *Client) GetRefund(ctx context.Context, endToEndID, id string) (*psp.Refund, error) {
	var out psp.Devolucao
	if err := c.do(ctx, http.MethodGet, "/pix/"+url.PathEscape(endToEndID)+"/devolucao/"+url.PathEscape(id), "/pix/{e2eid}/devolucao/{id}",
		ScopePixRead, nil, &out); err != nil {
		return nil, err
	}
	return out.Refund()
}

// problem is the API's error answer (RFC 7807, the API's Problema).
type problem struct {
	Type      string `json:"type"`
	Status    int    `json:"status"`
	Violacoes []struct {
		Razao       string `json:"razao"`
		Propriedade string `json:"propriedade"`
	} `json:"violacoes"`
}

// maxViolations bounds the violations kept of one refusal, and
// maxViolationText each one's texts.
const (
	maxViolations    = 10
	maxViolationText = 120
)

// violations are p's violacoes as the engine shows them: razao and
// propriedade scrubbed and bounded, never the valor refused.
func (p problem) violations() []psp.Violation {
	var out []psp.Violation
	for _, v := range p.Violacoes {
		if len(out) == maxViolations {
			break
		}
		pv := psp.Violation{Razao: psp.Scrub(v.Razao, maxViolationText), Propriedade: psp.Scrub(v.Propriedade, 60)}
		if pv.Razao != "" || pv.Propriedade != "" {
			out = append(out, pv)
		}
	}
	return out
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

// do calls the API with a token for scope. Errors name the route
// (route), never the path: the webhook's path carries the Pix key, which
// may be a CPF or an e-mail.
func (c *Client) do(ctx context.Context, method, path, route, scope string, in, out any) error {
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
	tok, err := c.token(scope)
	if err == nil {
		tok.SetAuthHeader(req)
		var resp *http.Response
		if resp, err = c.http.Do(req); err == nil {
			return c.answer(resp, method, route, out, c.sensitive(in))
		}
	}
	// The token endpoint refusing our credentials (or the scope) is the
	// tenant's configuration, not an outage.
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
		return fmt.Errorf("%w: token endpoint answered %d for scope %s", psp.ErrRejected, re.Response.StatusCode, scope)
	}
	// So is a PSP URL, a redirect or an address the egress policy
	// refuses: no retry will reach it. Only the refusal is kept: the
	// transport's text names the URL.
	if errors.Is(err, egress.ErrNotAllowed) {
		return fmt.Errorf("%w: %s %s: %w", psp.ErrRejected, method, route, egress.ErrNotAllowed)
	}
	return fmt.Errorf("%w: %s %s: %v", psp.ErrUnavailable, method, route, redact(err))
}

// sensitive are the personal values a request carried, which a PSP's
// refusal may quote back: the Pix key (a CPF, a phone or an e-mail may
// be one) and a devedor's document and each word of its name.
func (c *Client) sensitive(in any) []string {
	vals := []string{c.chave}
	var d *psp.Devedor
	switch r := in.(type) {
	case psp.CobRequest:
		d = r.Devedor
	case *psp.CobRequest:
		d = r.Devedor
	}
	if d != nil {
		vals = append(vals, d.CPF, d.CNPJ)
		vals = append(vals, strings.Fields(d.Nome)...)
	}
	return vals
}

// redactValues blanks in s every value of vals (of two characters or more),
// whatever its case.
func redactValues(s string, vals []string) string {
	for _, v := range vals {
		if len(v) < 2 {
			continue
		}
		// One pass, replacements never rescanned.
		s = regexp.MustCompile("(?i)"+regexp.QuoteMeta(v)).ReplaceAllLiteralString(s, "[redacted]")
	}
	return s
}

// answer reads the PSP's answer to method route into out; a refusal's
// texts lose the request's personal values (vals) and anything that
// looks like personal data.
func (c *Client) answer(resp *http.Response, method, route string, out any, vals []string) error {
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
		vs := p.violations()
		for i := range vs {
			vs[i].Razao, vs[i].Propriedade = redactValues(vs[i].Razao, vals), redactValues(vs[i].Propriedade, vals)
		}
		return &psp.RejectedError{Status: resp.StatusCode, Type: p.kind(), Route: method + " " + route, Violations: vs}
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
