// Package sandbox is a stand-in PSP: an HTTP server implementing the
// subset of the Central Bank's Pix API the engine uses (cob, cobv,
// webhook, an OAuth2 client-credentials token endpoint), which builds
// valid BR Codes whose location points at itself, computes a cobv's late
// amount by the API's own rules, and "pays" a charge on request by
// posting BACEN's webhook ({"pix": [...]}) to the registered URL + "/pix",
// signed with the engine's HMAC headers — or, asked to, without posting
// it, leaving the payment to be found by GET (pix[]). `lastro psp sandbox` runs it
// alone; `lastro serve` runs it in process as the local default.
//
// It moves money in the engine's books, so nothing it does is open
// (docs/adr/0054-sandbox-psp-is-a-demo-tool.md): the Pix API routes take
// an OAuth2 token whose client secret is random per process unless given,
// the money-moving routes (pay, pay-batch, redeliver) take an operator
// token, webhooks go only under an allowed prefix, and its state is
// bounded in count and bytes.
package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/signature"
	"lastro/debtor"
	"lastro/pix/brcode"
	"lastro/psp"
)

// DefaultClientID is the OAuth2 client id the sandbox accepts when Options
// leave it empty. There is no default secret: an empty one is generated.
const DefaultClientID = "lastro-sandbox"

// Default bounds of the sandbox's state.
const (
	DefaultMaxCharges = 10_000
	DefaultMaxBytes   = 32 << 20
	// MaxBody bounds one request's body: a cob is a few hundred bytes.
	MaxBody = 64 << 10
	// maxWebhookAnswer bounds what is kept of the receiver's answer.
	maxWebhookAnswer = 4 << 10
	// maxTokens bounds the live OAuth2 tokens: a client that asks for
	// more than this in an hour gets the oldest ones expired.
	maxTokens = 1_000
)

// Options configure a sandbox.
type Options struct {
	// ClientID and ClientSecret are the OAuth2 client it accepts; an
	// empty secret is generated (ClientSecret tells it).
	ClientID, ClientSecret string
	// OperatorToken is the bearer token of the money-moving routes
	// (/sandbox/pay, /sandbox/pay-batch, /sandbox/redeliver); empty: one
	// is generated (OperatorToken tells it).
	OperatorToken string
	// WebhookPrefix, when set, is the only URL prefix a webhook may be
	// registered under: in process, the engine's own receiver, so the
	// sandbox posts signed notices nowhere else.
	WebhookPrefix string
	// MaxCharges and MaxBytes bound the charges kept (0: the defaults);
	// past either, the oldest are forgotten.
	MaxCharges, MaxBytes int
	// WebhookSecret signs every webhook, unless SecretFor gives one for
	// the charge's Pix key (in process, each tenant's own secret).
	WebhookSecret string
	SecretFor     func(ctx context.Context, chave string) (string, error)
	Clock         clock.Clock    // nil: the system clock
	Location      *time.Location // civil dates (due dates, lateness); nil: America/Sao_Paulo
	Client        *http.Client   // posts the webhooks; nil: a 10 s client
	Name, City    string         // the receiver in the BR Code
	// RefuseCobV makes the sandbox a PSP that offers no cobv: PUT
	// /cobv/{txid} answers 403 AcessoNegado, as a PSP does to a receiver
	// whose contract does not include charges with a due date.
	RefuseCobV bool
	// AutoSettleRefunds settles each refund (DEVOLVIDO) right after
	// answering it EM_PROCESSAMENTO, and posts the payment's notice with
	// its devolucoes, as a PSP does within seconds; false: a refund stays
	// in process until SettleRefund (or POST /sandbox/settle-refund).
	AutoSettleRefunds bool
}

// receiver is the sandbox's receiver, as its cobv answers name it
// (recebedor): a synthetic company with valid check digits.
func receiver() psp.Recebedor {
	return psp.Recebedor{CNPJ: "11222333000181", Nome: "LASTRO SANDBOX", Logradouro: "Rua de Teste, 1", Cidade: "Sao Paulo",
		UF: "SP", CEP: "01001000"}
}

// Sandbox is the stand-in PSP. Its state lives in memory.
type Sandbox struct {
	o       Options
	muxOnce sync.Once
	mux     *http.ServeMux
	mu      sync.Mutex
	base    string // scheme://host of the sandbox, for locations
	// charges by kind + "/" + txid; locs maps a location id to the same key.
	charges map[string]*record
	order   []string // charge keys, oldest first, for eviction
	bytes   int      // the charges' sizes, summed
	locs    map[string]string
	tokens  map[string]grant
	hooks   map[string]hook // chave -> its webhook
	paid    map[string]*delivery
	nextLoc int64
}

// grant is a live OAuth2 token: until when, and the scopes it carries.
type grant struct {
	until  time.Time
	scopes []string
}

// hook is a registered webhook.
type hook struct {
	url     string
	created time.Time
}

// Scopes are the OAuth2 scopes the sandbox serves; a token asked with no
// scope gets them all (the server's default, RFC 6749 section 3.3).
func Scopes() []string {
	return []string{"cob.write", "cob.read", "cobv.write", "cobv.read", "webhook.write", "webhook.read", "pix.write", "pix.read"}
}

type record struct {
	kind    psp.Kind
	p       psp.CobPayload
	created time.Time
	locID   string
	size    int      // the body it was created or last changed with
	e2e     []string // its payments' endToEndIds, forgotten with it
}

type delivery struct {
	chave  string
	notice psp.Notice
	rec    *record // the charge paid
}

// New returns a sandbox; SetBaseURL tells it where it is served.
func New(o Options) *Sandbox {
	if o.ClientID == "" {
		o.ClientID = DefaultClientID
	}
	if o.ClientSecret == "" {
		o.ClientSecret = "sbx_" + randomHex(24)
	}
	if o.OperatorToken == "" {
		o.OperatorToken = "sbxop_" + randomHex(24)
	}
	if o.MaxCharges <= 0 {
		o.MaxCharges = DefaultMaxCharges
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Clock == nil {
		o.Clock = clock.System{}
	}
	if o.Location == nil {
		o.Location, _ = time.LoadLocation("America/Sao_Paulo")
		if o.Location == nil {
			o.Location = time.FixedZone("BRT", -3*3600)
		}
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Name == "" {
		o.Name, o.City = "LASTRO SANDBOX", "SAO PAULO"
	}
	return &Sandbox{o: o, base: "http://sandbox.invalid", charges: map[string]*record{}, locs: map[string]string{}, tokens: map[string]grant{},
		hooks: map[string]hook{}, paid: map[string]*delivery{}}
}

// ClientSecret is the OAuth2 client secret the sandbox accepts (with
// Options.ClientID): the engine's to know, nobody else's.
func (s *Sandbox) ClientSecret() string { return s.o.ClientSecret }

// OperatorToken is the bearer token the money-moving routes take.
func (s *Sandbox) OperatorToken() string { return s.o.OperatorToken }

// SetBaseURL records the URL the sandbox is reached at (scheme and host):
// the charges' locations point there.
func (s *Sandbox) SetBaseURL(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.base = strings.TrimSuffix(u, "/")
}

// Handler is the sandbox's HTTP API.
func (s *Sandbox) Handler() http.Handler {
	return http.MaxBytesHandler(s.routes(), MaxBody)
}

// Route is the route pattern r matches ("" for none), for access logs:
// the pattern, never the path, since a real Pix key can be a CPF.
func (s *Sandbox) Route(r *http.Request) string {
	_, pattern := s.routes().Handler(r)
	return pattern
}

// routes is the sandbox's mux, built once.
func (s *Sandbox) routes() *http.ServeMux {
	s.muxOnce.Do(func() { s.mux = s.newMux() })
	return s.mux
}

func (s *Sandbox) newMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth/token", s.token)
	mux.HandleFunc("PUT /{kind}/{txid}", s.authed(".write", s.put))
	mux.HandleFunc("GET /{kind}/{txid}", s.authed(".read", s.get))
	mux.HandleFunc("PATCH /{kind}/{txid}", s.authed(".write", s.patch))
	mux.HandleFunc("PUT /webhook/{chave}", s.authed("webhook.write", s.putWebhook))
	mux.HandleFunc("GET /webhook/{chave}", s.authed("webhook.read", s.getWebhook))
	mux.HandleFunc("PUT /pix/{e2eid}/devolucao/{id}", s.authed("pix.write", s.putRefund))
	mux.HandleFunc("GET /pix/{e2eid}/devolucao/{id}", s.authed("pix.read", s.getRefund))
	mux.HandleFunc("GET /qr/v2/{id}", s.location)
	mux.HandleFunc("POST /sandbox/pay", s.operator(s.pay))
	mux.HandleFunc("POST /sandbox/pay-batch", s.operator(s.payBatch))
	mux.HandleFunc("POST /sandbox/redeliver", s.operator(s.redeliver))
	mux.HandleFunc("POST /sandbox/settle-refund", s.operator(s.settleRefund))
	return mux
}

// operator guards a money-moving route: only the operator's token opens
// it (constant time), since a payment here is applied by the engine.
func (s *Sandbox) operator(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !equal(tok, s.o.OperatorToken) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="lastro-sandbox"`)
			problem(w, http.StatusUnauthorized, "Nao Autorizado", "the sandbox's operator token is required (Authorization: Bearer ...)")
			return
		}
		h(w, r)
	}
}

// problem writes the API's error shape (RFC 7807).
func problem(w http.ResponseWriter, status int, title, detail string) {
	problemOf(w, status, strings.ReplaceAll(title, " ", ""), title, detail, nil)
}

// violation is one of a refusal's violacoes: why, and which property.
type violation struct {
	Razao       string `json:"razao"`
	Propriedade string `json:"propriedade,omitempty"`
}

// invalid is a refusal that names what was refused, as the API's
// OperacaoInvalida errors do.
type invalid struct {
	kind       string // CobOperacaoInvalida, CobVOperacaoInvalida, PixDevolucaoInvalida...
	violations []violation
}

func (e *invalid) Error() string {
	var parts []string
	for _, v := range e.violations {
		parts = append(parts, v.Propriedade+": "+v.Razao)
	}
	return strings.Join(parts, "; ")
}

func refuse(kind, property, format string, a ...any) *invalid {
	return &invalid{kind: kind, violations: []violation{{Razao: fmt.Sprintf(format, a...), Propriedade: property}}}
}

// problemOf writes the API's Problema: type, title, status, detail and,
// when any, violacoes.
func problemOf(w http.ResponseWriter, status int, kind, title, detail string, vs []violation) {
	body := map[string]any{"type": "https://pix.bcb.gov.br/api/v2/error/" + kind, "title": title, "status": status, "detail": detail}
	if len(vs) > 0 {
		body["violacoes"] = vs
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// refused writes an invalid refusal (400).
func refused(w http.ResponseWriter, e *invalid) {
	problemOf(w, http.StatusBadRequest, e.kind, "Requisição inválida", "the request does not follow the Pix API", e.violations)
}

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func (s *Sandbox) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	if r.PostFormValue("grant_type") != "client_credentials" {
		answer(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	if !equal(id, s.o.ClientID) || !equal(secret, s.o.ClientSecret) {
		answer(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	scopes := strings.Fields(r.PostFormValue("scope"))
	for _, sc := range scopes {
		if !slices.Contains(Scopes(), sc) {
			answer(w, http.StatusBadRequest, map[string]string{"error": "invalid_scope"})
			return
		}
	}
	if len(scopes) == 0 {
		scopes = Scopes()
	}
	tok := randomHex(24)
	s.mu.Lock()
	// Tokens expire by the wall clock, as the client's oauth2 package
	// reckons it: a frozen or manual business clock must not expire them.
	now := time.Now()
	if len(s.tokens) >= maxTokens {
		s.expireTokens(now)
	}
	s.tokens[tok] = grant{until: now.Add(time.Hour), scopes: scopes}
	s.mu.Unlock()
	answer(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "scope": strings.Join(scopes, " ")})
}

// expireTokens drops the expired tokens and, if the map is still full,
// the ones that expire first; s.mu is held.
func (s *Sandbox) expireTokens(now time.Time) {
	for tok, g := range s.tokens {
		if !now.Before(g.until) {
			delete(s.tokens, tok)
		}
	}
	for len(s.tokens) >= maxTokens {
		var oldest string
		var at time.Time
		for tok, g := range s.tokens {
			if oldest == "" || g.until.Before(at) {
				oldest, at = tok, g.until
			}
		}
		delete(s.tokens, oldest)
	}
}

// authed guards a Pix API route: a live token carrying the route's scope
// (one starting with "." is the kind's: cob.write or cobv.write...),
// else 403 AcessoNegado, as the API's security section has it.
func (s *Sandbox) authed(scope string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		g, known := s.tokens[tok]
		s.mu.Unlock()
		if !ok || !known || !time.Now().Before(g.until) {
			problem(w, http.StatusUnauthorized, "Nao Autorizado", "a valid bearer token from /oauth/token is required")
			return
		}
		need := scope
		if strings.HasPrefix(scope, ".") {
			kind, ok := kindOf(r)
			if !ok {
				problem(w, http.StatusNotFound, "Nao Encontrado", "unknown resource")
				return
			}
			need = string(kind) + scope
		}
		if !slices.Contains(g.scopes, need) {
			problem(w, http.StatusForbidden, "AcessoNegado", "the token does not carry the scope "+need)
			return
		}
		h(w, r)
	}
}

var txidPattern = regexp.MustCompile(`^[a-zA-Z0-9]{26,35}$`)

func kindOf(r *http.Request) (psp.Kind, bool) {
	switch k := psp.Kind(r.PathValue("kind")); k {
	case psp.Cob, psp.CobV:
		return k, true
	}
	return "", false
}

func (s *Sandbox) put(w http.ResponseWriter, r *http.Request) {
	kind, ok := kindOf(r)
	if !ok {
		problem(w, http.StatusNotFound, "Nao Encontrado", "unknown resource")
		return
	}
	if kind == psp.CobV && s.o.RefuseCobV {
		problem(w, http.StatusForbidden, "AcessoNegado", "this receiver's contract does not include charges with a due date (cobv)")
		return
	}
	opInvalid := operationInvalid(kind)
	txid := r.PathValue("txid")
	if !txidPattern.MatchString(txid) {
		refused(w, refuse(opInvalid, "txid", "txid must be 26-35 letters and digits"))
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		problem(w, http.StatusRequestEntityTooLarge, "Cobranca Invalida", fmt.Sprintf("the body is over %d bytes", MaxBody))
		return
	}
	var in cobRequest
	if err := json.Unmarshal(raw, &in); err != nil {
		refused(w, refuse(opInvalid, string(kind), "the body is not a charge"))
		return
	}
	now := s.o.Clock.Now()
	if e := s.validate(kind, &in, calendar.Of(now, s.o.Location)); e != nil {
		refused(w, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := string(kind) + "/" + txid
	rec := s.charges[key]
	if rec != nil && rec.p.Status != psp.StatusActive {
		refused(w, refuse(opInvalid, string(kind)+".status", "the charge exists and is %s, not ATIVA: it cannot be changed", rec.p.Status))
		return
	}
	p := in.payload(kind)
	// The payments are the PSP's to list, never the caller's to write.
	p.TxID, p.Status = txid, psp.StatusActive
	if rec == nil {
		s.nextLoc++
		id := randomHex(16)
		p.Loc = &psp.Loc{ID: s.nextLoc, TxID: txid, Location: strings.SplitN(s.base, "://", 2)[1] + "/qr/v2/" + id, TipoCob: string(kind),
			Criacao: now.UTC().Format(time.RFC3339)}
		s.locs[id] = key
		rec = &record{kind: kind, created: now, locID: id}
		s.charges[key] = rec
		s.order = append(s.order, key)
	} else {
		p.Loc, p.Revisao = rec.p.Loc, rec.p.Revisao+1
	}
	p.Location = p.Loc.Location
	p.Calendario.Criacao = rec.created.UTC().Format(time.RFC3339)
	code := brcode.Code{Dynamic: true, URL: p.Location, Name: s.o.Name, City: s.o.City}
	if kind == psp.Cob {
		// A cobv's amount depends on the day it is paid: its code leaves
		// field 54 out and the app reads the amount at the location.
		code.AmountCents, _ = psp.ParseValor(p.Valor.Original)
	} else {
		recv := receiver()
		p.Recebedor = &recv
	}
	if p.PixCopiaECola, err = brcode.Build(code); err != nil {
		problem(w, http.StatusInternalServerError, "Erro Interno", "could not build the BR Code")
		return
	}
	rec.p = p
	s.bytes += len(raw) - rec.size
	rec.size = len(raw)
	s.evict(key)
	// 201 for a new charge and for a new revision alike: the API's PUT
	// answers only 201 (PATCH is its revision route, with 200).
	answer(w, http.StatusCreated, s.shown(rec))
}

// cobvAnswer is a cobv as the sandbox answers it. The API's CobVGerada
// takes DadosRecebedor, whose schema requires logradouro, cidade, uf and
// cep on the charge object itself as well as in recebedor: the receiver's
// address is repeated at the top level so the answer follows the schema
// as written.
type cobvAnswer struct {
	psp.CobPayload
	Logradouro string `json:"logradouro"`
	Cidade     string `json:"cidade"`
	UF         string `json:"uf"`
	CEP        string `json:"cep"`
}

// shown is rec as the API answers it; s.mu is held.
func (s *Sandbox) shown(rec *record) any {
	if rec.kind != psp.CobV {
		return rec.p
	}
	r := receiver()
	return cobvAnswer{CobPayload: rec.p, Logradouro: r.Logradouro, Cidade: r.Cidade, UF: r.UF, CEP: r.CEP}
}

// operationInvalid is the API's error type for a refused cob or cobv.
func operationInvalid(kind psp.Kind) string {
	if kind == psp.CobV {
		return "CobVOperacaoInvalida"
	}
	return "CobOperacaoInvalida"
}

// cobRequest is a PUT body as sent: presence matters (an expiracao of 0
// is refused, an absent one takes the API's default), so the numbers
// are pointers.
type cobRequest struct {
	Calendario struct {
		Expiracao              *int   `json:"expiracao"`
		DataDeVencimento       string `json:"dataDeVencimento"`
		ValidadeAposVencimento *int   `json:"validadeAposVencimento"`
	} `json:"calendario"`
	Devedor            *psp.Devedor `json:"devedor"`
	Valor              psp.Valor    `json:"valor"`
	Chave              string       `json:"chave"`
	SolicitacaoPagador string       `json:"solicitacaoPagador"`
}

// payload is in as the charge the sandbox keeps and answers, the API's
// defaults filled in (expiracao 86400 s, validadeAposVencimento 30 days).
func (in *cobRequest) payload(kind psp.Kind) psp.CobPayload {
	p := psp.CobPayload{Devedor: in.Devedor, Valor: in.Valor, Chave: in.Chave, SolicitacaoPagador: in.SolicitacaoPagador}
	if kind == psp.Cob {
		p.Calendario.Expiracao = 86400
		if in.Calendario.Expiracao != nil {
			p.Calendario.Expiracao = *in.Calendario.Expiracao
		}
		return p
	}
	p.Calendario.DataDeVencimento = in.Calendario.DataDeVencimento
	p.Calendario.ValidadeAposVencimento = 30
	if in.Calendario.ValidadeAposVencimento != nil {
		p.Calendario.ValidadeAposVencimento = *in.Calendario.ValidadeAposVencimento
	}
	return p
}

// evict forgets the oldest charges (their locations and payments too)
// while the sandbox holds more than its bounds allow, never keep, the
// charge just written; s.mu is held.
func (s *Sandbox) evict(keep string) {
	for len(s.order) > 1 && (len(s.charges) > s.o.MaxCharges || s.bytes > s.o.MaxBytes) {
		key := s.order[0]
		if key == keep {
			s.order = append(s.order[1:], key)
			continue
		}
		s.order = s.order[1:]
		rec := s.charges[key]
		if rec == nil {
			continue
		}
		delete(s.charges, key)
		delete(s.locs, rec.locID)
		for _, e := range rec.e2e {
			delete(s.paid, e)
		}
		s.bytes -= rec.size
	}
}

// validate checks what the API requires of a cob or cobv body, the
// document's schemas and the violations its error catalogue lists
// (CobOperacaoInvalida, CobVOperacaoInvalida), all of them reported.
// today is the charge's creation date, which a due date may not precede.
func (s *Sandbox) validate(kind psp.Kind, in *cobRequest, today calendar.Date) *invalid {
	e := &invalid{kind: operationInvalid(kind)}
	add := func(prop, format string, a ...any) {
		e.violations = append(e.violations, violation{Razao: fmt.Sprintf(format, a...), Propriedade: string(kind) + "." + prop})
	}
	cents, err := psp.ParseValor(in.Valor.Original)
	if !percentPattern.MatchString(in.Valor.Original) || err != nil || cents <= 0 {
		add("valor.original", `must be a positive amount with two decimals, like 123.45`)
	}
	if in.Chave == "" || len(in.Chave) > 77 {
		add("chave", "is required, at most 77 characters")
	}
	if len(in.SolicitacaoPagador) > 140 {
		add("solicitacaoPagador", "at most 140 characters")
	}
	if in.Devedor != nil {
		for _, v := range checkDevedor(*in.Devedor) {
			add("devedor"+v.Propriedade, "%s", v.Razao)
		}
	}
	if kind == psp.Cob {
		if in.Valor.Multa != nil || in.Valor.Juros != nil || in.Calendario.DataDeVencimento != "" || in.Calendario.ValidadeAposVencimento != nil {
			add("calendario", "a cob has no due date, fine or interest")
		}
		if x := in.Calendario.Expiracao; x != nil && *x <= 0 {
			add("calendario.expiracao", "must be greater than zero (seconds)")
		}
		return e.orNil()
	}
	if in.Devedor == nil {
		add("devedor", "is required on a cobv: cpf or cnpj, and nome")
	}
	if in.Calendario.Expiracao != nil {
		add("calendario.expiracao", "a cobv has a due date, not an expiracao")
	}
	if due, err := calendar.Parse(in.Calendario.DataDeVencimento); err != nil {
		add("calendario.dataDeVencimento", "must be a date, YYYY-MM-DD")
	} else if due.Before(today) {
		add("calendario.dataDeVencimento", "is before the charge's creation date")
	}
	if v := in.Calendario.ValidadeAposVencimento; v != nil && *v < 0 {
		add("calendario.validadeAposVencimento", "must not be negative")
	}
	for name, m := range map[string]*psp.Modalidade{"multa": in.Valor.Multa, "juros": in.Valor.Juros} {
		if m == nil {
			continue
		}
		if _, err := percent(m.ValorPerc); err != nil {
			add("valor."+name+".valorPerc", "%v", err)
		}
		if name == "multa" && m.Modalidade != 1 && m.Modalidade != psp.FinePercent {
			add("valor.multa.modalidade", "must be 1 or 2")
		}
		if name == "juros" && (m.Modalidade < 1 || m.Modalidade > 8) {
			add("valor.juros.modalidade", "must be 1-8")
		}
	}
	return e.orNil()
}

func (e *invalid) orNil() *invalid {
	if len(e.violations) == 0 {
		return nil
	}
	return e
}

var (
	cpfPattern  = regexp.MustCompile(`^\d{11}$`)
	cnpjPattern = regexp.MustCompile(`^[0-9A-Z]{14}$`)
)

// checkDevedor is what the API requires of a devedor: a CPF (11 digits)
// or a CNPJ (14 digits or capitals), never both, with valid check digits
// (debtor.ParseDocument, the engine's own check), and a name of at most
// 200 characters. The violations never quote the values.
func checkDevedor(d psp.Devedor) []violation {
	var vs []violation
	switch {
	case d.CPF != "" && d.CNPJ != "":
		vs = append(vs, violation{Razao: "cpf and cnpj cannot both be filled", Propriedade: ".cpf"})
	case d.CPF != "":
		if doc, err := debtor.ParseDocument(d.CPF); !cpfPattern.MatchString(d.CPF) || err != nil || doc.Type != debtor.CPF {
			vs = append(vs, violation{Razao: "is not a valid CPF (11 digits with their check digits)", Propriedade: ".cpf"})
		}
	case d.CNPJ != "":
		if doc, err := debtor.ParseDocument(d.CNPJ); !cnpjPattern.MatchString(d.CNPJ) || err != nil || doc.Type != debtor.CNPJ {
			vs = append(vs, violation{Razao: "is not a valid CNPJ (14 characters with their check digits)", Propriedade: ".cnpj"})
		}
	default:
		vs = append(vs, violation{Razao: "needs a cpf or a cnpj", Propriedade: ".cpf"})
	}
	if d.Nome == "" || len([]rune(d.Nome)) > 200 {
		vs = append(vs, violation{Razao: "nome is required, at most 200 characters", Propriedade: ".nome"})
	}
	return vs
}

var percentPattern = regexp.MustCompile(`^\d{1,10}\.\d{2}$`)

func percent(s string) (decimal.Decimal, error) {
	if !percentPattern.MatchString(s) {
		return decimal.Decimal{}, errors.New(`must match \d{1,10}\.\d{2}`)
	}
	return decimal.NewFromString(s)
}

func (s *Sandbox) find(r *http.Request) (*record, bool) {
	kind, ok := kindOf(r)
	if !ok {
		return nil, false
	}
	rec := s.charges[string(kind)+"/"+r.PathValue("txid")]
	return rec, rec != nil
}

func (s *Sandbox) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.find(r)
	if !ok {
		problem(w, http.StatusNotFound, "Cobranca Nao Encontrada", "no charge with this txid")
		return
	}
	answer(w, http.StatusOK, s.shown(rec))
}

func (s *Sandbox) patch(w http.ResponseWriter, r *http.Request) {
	kind, _ := kindOf(r)
	var in struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Status != psp.StatusRemoved {
		refused(w, refuse(operationInvalid(kind), string(kind)+".status", "the sandbox only patches status to %s", psp.StatusRemoved))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.find(r)
	if !ok {
		problem(w, http.StatusNotFound, "Cobranca Nao Encontrada", "no charge with this txid")
		return
	}
	if rec.p.Status != psp.StatusActive {
		refused(w, refuse(operationInvalid(kind), string(kind)+".status", "the charge is %s, not ATIVA: it cannot be changed", rec.p.Status))
		return
	}
	rec.p.Status = in.Status
	rec.p.Revisao++
	answer(w, http.StatusOK, s.shown(rec))
}

// putWebhook registers a Pix key's webhook. The API answers 200 with no
// body.
func (s *Sandbox) putWebhook(w http.ResponseWriter, r *http.Request) {
	var in psp.WebhookPayload
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || !(strings.HasPrefix(in.WebhookURL, "https://") || strings.HasPrefix(in.WebhookURL, "http://")) {
		refused(w, refuse("WebhookOperacaoInvalida", "webhook.webhookUrl", "must be an http(s) URL"))
		return
	}
	if p := s.o.WebhookPrefix; p != "" && !strings.HasPrefix(in.WebhookURL, p) {
		refused(w, refuse("WebhookOperacaoInvalida", "webhook.webhookUrl", "this sandbox posts notices only to the engine's own receiver"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, known := s.hooks[r.PathValue("chave")]; !known && len(s.hooks) >= s.o.MaxCharges {
		problem(w, http.StatusServiceUnavailable, "Servico Indisponivel", "the sandbox holds as many webhooks as it keeps")
		return
	}
	s.hooks[r.PathValue("chave")] = hook{url: in.WebhookURL, created: s.o.Clock.Now()}
	w.WriteHeader(http.StatusOK)
}

func (s *Sandbox) getWebhook(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h, ok := s.hooks[r.PathValue("chave")]
	s.mu.Unlock()
	if !ok {
		problem(w, http.StatusNotFound, "WebhookNaoEncontrado", "no webhook for this key")
		return
	}
	answer(w, http.StatusOK, map[string]string{"webhookUrl": h.url, "chave": r.PathValue("chave"), "cnpj": receiver().CNPJ,
		"criacao": h.created.UTC().Format(time.RFC3339)})
}

var refundIDPattern = regexp.MustCompile(`^[a-zA-Z0-9]{1,35}$`)

// paymentOf finds a payment by its endToEndId: its charge and its index
// in the charge's pix[]; s.mu is held.
func (s *Sandbox) paymentOf(e2e string) (*record, int) {
	d := s.paid[e2e]
	if d == nil || d.rec == nil {
		return nil, -1
	}
	for i, p := range d.rec.p.Pix {
		if p.EndToEndID == e2e {
			return d.rec, i
		}
	}
	return nil, -1
}

// putRefund asks a devolução of a payment: answered EM_PROCESSAMENTO,
// settled later (SettleRefund, or at once with AutoSettleRefunds). As
// the API's PixDevolucaoInvalida lists, an id already used for the
// payment is refused, and so is an amount that with the earlier refunds
// would exceed the payment.
func (s *Sandbox) putRefund(w http.ResponseWriter, r *http.Request) {
	e2e, id := r.PathValue("e2eid"), r.PathValue("id")
	var in psp.DevolucaoRequest
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		refused(w, refuse("PixDevolucaoInvalida", "devolucao", "the body is not a devolução"))
		return
	}
	cents, err := psp.ParseValor(in.Valor)
	switch {
	case !refundIDPattern.MatchString(id):
		refused(w, refuse("PixDevolucaoInvalida", "id", "must be 1-35 letters and digits"))
		return
	case err != nil || !percentPattern.MatchString(in.Valor):
		refused(w, refuse("PixDevolucaoInvalida", "devolucao.valor", "must be a positive amount with two decimals"))
		return
	case in.Natureza != "" && in.Natureza != "ORIGINAL":
		refused(w, refuse("PixDevolucaoInvalida", "devolucao.natureza", "only ORIGINAL: the sandbox has no Pix Saque or Troco"))
		return
	case len(in.Descricao) > 140:
		refused(w, refuse("PixDevolucaoInvalida", "devolucao.descricao", "at most 140 characters"))
		return
	}
	s.mu.Lock()
	rec, i := s.paymentOf(e2e)
	if rec == nil {
		s.mu.Unlock()
		problem(w, http.StatusNotFound, "PixNaoEncontrado", "no Pix with this endToEndId")
		return
	}
	p := &rec.p.Pix[i]
	paid, _ := psp.ParseValor(p.Valor)
	var before int64
	for _, d := range p.Devolucoes {
		if d.ID == id {
			s.mu.Unlock()
			refused(w, refuse("PixDevolucaoInvalida", "id", "this id was already used by another refund of the Pix"))
			return
		}
		if d.Status != psp.RefundNotDone {
			v, _ := psp.ParseValor(d.Valor)
			before += v
		}
	}
	if before+cents > paid {
		s.mu.Unlock()
		refused(w, refuse("PixDevolucaoInvalida", "devolucao.valor", "with the earlier refunds it would exceed the Pix"))
		return
	}
	now := s.o.Clock.Now()
	d := psp.Devolucao{ID: id, RtrID: rtrID(now), Valor: psp.FormatValor(cents), Natureza: "ORIGINAL", Descricao: in.Descricao,
		Horario: psp.DevolucaoHorario{Solicitacao: now.UTC().Format(time.RFC3339)}, Status: psp.RefundInProcess}
	p.Devolucoes = append(p.Devolucoes, d)
	s.mu.Unlock()
	answer(w, http.StatusCreated, d)
	if s.o.AutoSettleRefunds {
		// Detached: the refund settles after this answer, as a PSP's does.
		go func() { _, _ = s.SettleRefund(context.WithoutCancel(r.Context()), e2e, id) }()
	}
}

func (s *Sandbox) getRefund(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, i := s.paymentOf(r.PathValue("e2eid"))
	if rec != nil {
		for _, d := range rec.p.Pix[i].Devolucoes {
			if d.ID == r.PathValue("id") {
				answer(w, http.StatusOK, d)
				return
			}
		}
	}
	problem(w, http.StatusNotFound, "PixDevolucaoNaoEncontrada", "no refund with this id for the Pix")
}

// SettleRefund settles a refund in process (DEVOLVIDO, horario.liquidacao
// now) and posts the payment's notice with its devolucoes, as the API
// says a PSP does when a refund reaches a final status. A refund already
// settled is posted again (a redelivery).
func (s *Sandbox) SettleRefund(ctx context.Context, e2e, id string) (*Paid, error) {
	s.mu.Lock()
	rec, i := s.paymentOf(e2e)
	if rec == nil {
		s.mu.Unlock()
		return nil, bad("no payment with endToEndId %q", e2e)
	}
	p := &rec.p.Pix[i]
	found := false
	for j := range p.Devolucoes {
		if d := &p.Devolucoes[j]; d.ID == id {
			found = true
			if d.Status == psp.RefundInProcess {
				d.Status, d.Horario.Liquidacao = psp.RefundReturned, s.o.Clock.Now().UTC().Format(time.RFC3339)
			}
		}
	}
	if !found {
		s.mu.Unlock()
		return nil, bad("no refund %q of the payment", id)
	}
	payment := *p
	payment.Devolucoes = slices.Clone(p.Devolucoes)
	s.mu.Unlock()
	return s.deliver(ctx, &delivery{chave: payment.Chave, notice: psp.Notice{Pix: []psp.Payment{payment}}, rec: rec})
}

func (s *Sandbox) settleRefund(w http.ResponseWriter, r *http.Request) {
	var in struct {
		EndToEndID string `json:"endToEndId"`
		ID         string `json:"id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		problem(w, http.StatusBadRequest, "Requisicao Invalida", "the body is not {\"endToEndId\", \"id\"}")
		return
	}
	out, err := s.SettleRefund(r.Context(), in.EndToEndID, in.ID)
	s.reply(w, out, err)
}

// rtrID is a refund's return id as the SPI forms it: D, the ISPB (the
// sandbox's is zeros), the instant to the minute and 11 alphanumerics.
func rtrID(at time.Time) string { return "D" + endToEndID(at)[1:] }

// location serves what a banking app fetches from a dynamic BR Code's
// URL. A real PSP answers a signed JWS; the sandbox answers the charge's
// JSON, which is the JWS's payload.
func (s *Sandbox) location(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.charges[s.locs[r.PathValue("id")]]
	if rec == nil {
		problem(w, http.StatusNotFound, "Nao Encontrado", "no charge at this location")
		return
	}
	answer(w, http.StatusOK, s.shown(rec))
}

// Due is what a charge asks when paid on payDate under the Pix API's
// rules: a cob its original amount; a cobv its original amount until its
// due date, then the fine (modality 1: an amount, 2: a percent of the
// original, once) and simple interest for the calendar days past the due
// date (modality 2: percent a day; 3: percent a month, a month being 30
// days; 4: percent a year of 360 days), each rounded half-up to the cent.
// The business-day modalities (5-8) are not simulated. Expired (past
// validadeAposVencimento) is an error.
func Due(kind psp.Kind, p psp.CobPayload, payDate calendar.Date) (int64, error) {
	original, err := psp.ParseValor(p.Valor.Original)
	if err != nil {
		return 0, err
	}
	if kind == psp.Cob {
		return original, nil
	}
	due, err := calendar.Parse(p.Calendario.DataDeVencimento)
	if err != nil {
		return 0, err
	}
	late := payDate.Sub(due)
	if late <= 0 {
		return original, nil
	}
	if late > p.Calendario.ValidadeAposVencimento {
		return 0, errors.New("the charge expired: past validadeAposVencimento")
	}
	base := decimal.NewFromInt(original)
	total := original
	if m := p.Valor.Multa; m != nil {
		v, _ := percent(m.ValorPerc)
		if m.Modalidade == 1 {
			total += v.Shift(2).IntPart()
		} else {
			total += base.Mul(v).Div(decimal.NewFromInt(100)).Round(0).IntPart()
		}
	}
	if j := p.Valor.Juros; j != nil {
		v, _ := percent(j.ValorPerc)
		days := decimal.NewFromInt(int64(late))
		switch j.Modalidade {
		case 1:
			total += v.Shift(2).Mul(days).IntPart()
		case 2:
			total += base.Mul(v).Mul(days).Div(decimal.NewFromInt(100)).Round(0).IntPart()
		case 3:
			total += base.Mul(v).Mul(days).Div(decimal.NewFromInt(3000)).Round(0).IntPart()
		case 4:
			total += base.Mul(v).Mul(days).Div(decimal.NewFromInt(36000)).Round(0).IntPart()
		default:
			return 0, fmt.Errorf("juros modality %d (business days) is not simulated", j.Modalidade)
		}
	}
	return total, nil
}

// PayInput is the body of POST /sandbox/pay.
type PayInput struct {
	TxID    string `json:"txid"`
	Valor   string `json:"valor,omitempty"`   // default: what the charge asks at horario
	Horario string `json:"horario,omitempty"` // RFC 3339; default: now
	// InfoPagador is the payer's free text, passed on as is.
	InfoPagador string `json:"infoPagador,omitempty"`
	// Notify false pays without posting the webhook, as when the PSP's
	// notice is lost: the payment is only listed by GET (pix[]) and can
	// be redelivered later. Absent or true: the webhook is posted.
	Notify *bool `json:"notify,omitempty"`
}

// Paid is the answer of /sandbox/pay, /sandbox/pay-batch and
// /sandbox/redeliver: the payment (the first of a batch) and all of them.
type Paid struct {
	Payment       psp.Payment   `json:"payment"`
	Payments      []psp.Payment `json:"payments"`
	WebhookURL    string        `json:"webhookUrl"`
	WebhookStatus int           `json:"webhookStatus"`
	WebhookBody   string        `json:"webhookBody"`
}

func (s *Sandbox) pay(w http.ResponseWriter, r *http.Request) {
	var in PayInput
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		problem(w, http.StatusBadRequest, "Requisicao Invalida", "the body is not {\"txid\", \"valor\"?, \"horario\"?}")
		return
	}
	out, err := s.Pay(r.Context(), in)
	s.reply(w, out, err)
}

func (s *Sandbox) payBatch(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Payments []PayInput `json:"payments"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		problem(w, http.StatusBadRequest, "Requisicao Invalida", "the body is not {\"payments\": [{\"txid\", ...}]}")
		return
	}
	out, err := s.PayBatch(r.Context(), in.Payments)
	s.reply(w, out, err)
}

func (s *Sandbox) redeliver(w http.ResponseWriter, r *http.Request) {
	var in struct {
		EndToEndID string `json:"endToEndId"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		problem(w, http.StatusBadRequest, "Requisicao Invalida", "the body is not {\"endToEndId\"}")
		return
	}
	out, err := s.Redeliver(r.Context(), in.EndToEndID)
	s.reply(w, out, err)
}

func (s *Sandbox) reply(w http.ResponseWriter, out *Paid, err error) {
	var bad *badRequest
	switch {
	case errors.As(err, &bad):
		problem(w, http.StatusBadRequest, "Requisicao Invalida", bad.msg)
	case err != nil:
		problem(w, http.StatusBadGateway, "Webhook Falhou", err.Error())
	default:
		answer(w, http.StatusOK, out)
	}
}

type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func bad(format string, a ...any) error { return &badRequest{fmt.Sprintf(format, a...)} }

// Pay pays an active charge (cob first, then cobv, by txid): marks it
// CONCLUIDA, lists the payment on it (GET's pix[]) and posts the webhook
// unless in.Notify is false. The amount defaults to what the charge
// asks at the payment instant.
func (s *Sandbox) Pay(ctx context.Context, in PayInput) (*Paid, error) {
	return s.PayBatch(ctx, []PayInput{in})
}

// maxBatch bounds the payments of one notice.
const maxBatch = 100

// PayBatch pays several charges and posts them in one webhook, as PSPs
// batch notices: all of them or, when one cannot be paid, none.
func (s *Sandbox) PayBatch(ctx context.Context, ins []PayInput) (*Paid, error) {
	if len(ins) == 0 || len(ins) > maxBatch {
		return nil, bad("1-%d payments", maxBatch)
	}
	s.mu.Lock()
	var recs []*record
	var payments []psp.Payment
	seen := map[string]bool{}
	for _, in := range ins {
		p, rec, err := s.payment(in)
		if err == nil && seen[in.TxID] {
			err = bad("txid %q twice in one batch", in.TxID)
		}
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		seen[in.TxID] = true
		recs, payments = append(recs, rec), append(payments, p)
	}
	for _, p := range payments[1:] {
		if p.Chave != payments[0].Chave {
			s.mu.Unlock()
			return nil, bad("one notice goes to one Pix key's webhook")
		}
	}
	for i, rec := range recs {
		rec.p.Status = psp.StatusPaid
		// GET lists the payment, as the Pix API's cob answer does.
		rec.p.Pix = append(rec.p.Pix, payments[i])
		// Each payment is redelivered on its own.
		s.paid[payments[i].EndToEndID] = &delivery{chave: payments[i].Chave, notice: psp.Notice{Pix: payments[i : i+1]}, rec: rec}
		rec.e2e = append(rec.e2e, payments[i].EndToEndID)
	}
	d := &delivery{chave: payments[0].Chave, notice: psp.Notice{Pix: payments}}
	s.mu.Unlock()
	if !notify(ins) {
		return &Paid{Payment: payments[0], Payments: payments}, nil
	}
	return s.deliver(ctx, d)
}

// notify reports whether a batch's webhook is posted: unless one of
// its payments asks for none.
func notify(ins []PayInput) bool {
	for _, in := range ins {
		if in.Notify != nil && !*in.Notify {
			return false
		}
	}
	return true
}

// payment is what paying in would notify; s.mu is held.
func (s *Sandbox) payment(in PayInput) (psp.Payment, *record, error) {
	at := s.o.Clock.Now()
	if in.Horario != "" {
		var err error
		if at, err = time.Parse(time.RFC3339Nano, in.Horario); err != nil {
			return psp.Payment{}, nil, bad("horario must be RFC 3339")
		}
	}
	rec := s.charges[string(psp.Cob)+"/"+in.TxID]
	if rec == nil {
		rec = s.charges[string(psp.CobV)+"/"+in.TxID]
	}
	if rec == nil || rec.p.Status != psp.StatusActive {
		return psp.Payment{}, nil, bad("no active charge with txid %q", in.TxID)
	}
	if rec.kind == psp.Cob && at.After(rec.created.Add(time.Duration(rec.p.Calendario.Expiracao)*time.Second)) {
		return psp.Payment{}, nil, bad("the cob expired")
	}
	cents, err := Due(rec.kind, rec.p, calendar.Of(at, s.o.Location))
	if err != nil {
		return psp.Payment{}, nil, bad("%v", err)
	}
	if in.Valor != "" {
		if cents, err = psp.ParseValor(in.Valor); err != nil || cents <= 0 {
			return psp.Payment{}, nil, bad("valor must be a positive amount like 123.45")
		}
	}
	return psp.Payment{EndToEndID: endToEndID(at), TxID: in.TxID, Valor: psp.FormatValor(cents), Horario: at.UTC().Format(time.RFC3339),
		Chave: rec.p.Chave, InfoPagador: in.InfoPagador}, rec, nil
}

// Redeliver posts a payment's webhook again, as PSPs do when they did not
// get (or doubt) the receiver's acknowledgement.
func (s *Sandbox) Redeliver(ctx context.Context, endToEndID string) (*Paid, error) {
	s.mu.Lock()
	d := s.paid[endToEndID]
	s.mu.Unlock()
	if d == nil {
		return nil, bad("no payment with endToEndId %q", endToEndID)
	}
	return s.deliver(ctx, d)
}

// endToEndID is an end-to-end id as the SPI forms it: E, the payer's
// participant ISPB (8 digits; the sandbox's is zeros), the instant to the
// minute in UTC, and 11 alphanumerics: 32 characters.
func endToEndID(at time.Time) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 11)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	return "E00000000" + at.UTC().Format("200601021504") + string(b)
}

func (s *Sandbox) deliver(ctx context.Context, d *delivery) (*Paid, error) {
	s.mu.Lock()
	h := s.hooks[d.chave]
	s.mu.Unlock()
	out := &Paid{Payment: d.notice.Pix[0], Payments: d.notice.Pix}
	if h.url == "" {
		return nil, bad("no webhook registered for the charge's key (PUT /webhook/{chave})")
	}
	out.WebhookURL = strings.TrimSuffix(h.url, "/") + "/pix"
	secret := s.o.WebhookSecret
	if s.o.SecretFor != nil {
		var err error
		if secret, err = s.o.SecretFor(ctx, d.chave); err != nil {
			return nil, fmt.Errorf("webhook secret for the key: %w", err)
		}
	}
	body, err := json.Marshal(d.notice)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, out.WebhookURL, bytes.NewReader(body))
	if err != nil {
		return nil, bad("webhook URL: %v", err)
	}
	ts := s.o.Clock.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(signature.TimestampHeader, fmt.Sprint(ts))
	req.Header.Set(signature.SignatureHeader, signature.Sign(secret, ts, body))
	resp, err := s.o.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("posting the webhook: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxWebhookAnswer))
	out.WebhookStatus, out.WebhookBody = resp.StatusCode, string(raw)
	return out, nil
}
