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
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/signature"
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
	tokens  map[string]time.Time
	hooks   map[string]string // chave -> webhook URL
	paid    map[string]*delivery
	nextLoc int64
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
	return &Sandbox{o: o, base: "http://sandbox.invalid", charges: map[string]*record{}, locs: map[string]string{}, tokens: map[string]time.Time{},
		hooks: map[string]string{}, paid: map[string]*delivery{}}
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
	mux.HandleFunc("PUT /{kind}/{txid}", s.authed(s.put))
	mux.HandleFunc("GET /{kind}/{txid}", s.authed(s.get))
	mux.HandleFunc("PATCH /{kind}/{txid}", s.authed(s.patch))
	mux.HandleFunc("PUT /webhook/{chave}", s.authed(s.putWebhook))
	mux.HandleFunc("GET /webhook/{chave}", s.authed(s.getWebhook))
	mux.HandleFunc("GET /qr/v2/{id}", s.location)
	mux.HandleFunc("POST /sandbox/pay", s.operator(s.pay))
	mux.HandleFunc("POST /sandbox/pay-batch", s.operator(s.payBatch))
	mux.HandleFunc("POST /sandbox/redeliver", s.operator(s.redeliver))
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
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "https://pix.bcb.gov.br/api/v2/error/" + strings.ReplaceAll(title, " ", ""),
		"title": title, "status": status, "detail": detail})
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
	tok := randomHex(24)
	s.mu.Lock()
	// Tokens expire by the wall clock, as the client's oauth2 package
	// reckons it: a frozen or manual business clock must not expire them.
	now := time.Now()
	if len(s.tokens) >= maxTokens {
		s.expireTokens(now)
	}
	s.tokens[tok] = now.Add(time.Hour)
	s.mu.Unlock()
	answer(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "scope": r.PostFormValue("scope")})
}

// expireTokens drops the expired tokens and, if the map is still full,
// the ones that expire first; s.mu is held.
func (s *Sandbox) expireTokens(now time.Time) {
	for tok, until := range s.tokens {
		if !now.Before(until) {
			delete(s.tokens, tok)
		}
	}
	for len(s.tokens) >= maxTokens {
		var oldest string
		var at time.Time
		for tok, until := range s.tokens {
			if oldest == "" || until.Before(at) {
				oldest, at = tok, until
			}
		}
		delete(s.tokens, oldest)
	}
}

func (s *Sandbox) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		until, known := s.tokens[tok]
		s.mu.Unlock()
		if !ok || !known || !time.Now().Before(until) {
			problem(w, http.StatusUnauthorized, "Nao Autorizado", "a valid bearer token from /oauth/token is required")
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
	txid := r.PathValue("txid")
	if !txidPattern.MatchString(txid) {
		problem(w, http.StatusBadRequest, "Cobranca Invalida", "txid must be 26-35 alphanumerics")
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		problem(w, http.StatusRequestEntityTooLarge, "Cobranca Invalida", fmt.Sprintf("the body is over %d bytes", MaxBody))
		return
	}
	var in psp.CobPayload
	if err := json.Unmarshal(raw, &in); err != nil {
		problem(w, http.StatusBadRequest, "Cobranca Invalida", "the body is not a charge")
		return
	}
	if err := s.validate(kind, &in); err != nil {
		problem(w, http.StatusBadRequest, "Cobranca Invalida", err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := string(kind) + "/" + txid
	now := s.o.Clock.Now()
	rec := s.charges[key]
	if rec != nil && rec.p.Status != psp.StatusActive {
		problem(w, http.StatusConflict, "Cobranca Nao Alteravel", "the charge is "+rec.p.Status)
		return
	}
	// The payments are the PSP's to list, never the caller's to write.
	in.TxID, in.Status, in.Pix = txid, psp.StatusActive, nil
	if rec == nil {
		s.nextLoc++
		id := randomHex(16)
		in.Loc = &psp.Loc{ID: s.nextLoc, Location: strings.SplitN(s.base, "://", 2)[1] + "/qr/v2/" + id, TipoCob: string(kind)}
		s.locs[id] = key
		rec = &record{kind: kind, created: now, locID: id}
		s.charges[key] = rec
		s.order = append(s.order, key)
	} else {
		in.Loc, in.Revisao = rec.p.Loc, rec.p.Revisao+1
	}
	in.Location = in.Loc.Location
	in.Calendario.Criacao = rec.created.UTC().Format(time.RFC3339)
	if kind == psp.Cob && in.Calendario.Expiracao == 0 {
		in.Calendario.Expiracao = 86400
	}
	if kind == psp.CobV && in.Calendario.ValidadeAposVencimento == 0 {
		in.Calendario.ValidadeAposVencimento = 30
	}
	code := brcode.Code{Dynamic: true, URL: in.Location, Name: s.o.Name, City: s.o.City}
	if kind == psp.Cob {
		// A cobv's amount depends on the day it is paid: its code leaves
		// field 54 out and the app reads the amount at the location.
		code.AmountCents, _ = psp.ParseValor(in.Valor.Original)
	}
	if in.PixCopiaECola, err = brcode.Build(code); err != nil {
		problem(w, http.StatusInternalServerError, "Erro Interno", "could not build the BR Code")
		return
	}
	rec.p = in
	s.bytes += len(raw) - rec.size
	rec.size = len(raw)
	s.evict(key)
	status := http.StatusCreated
	if in.Revisao > 0 {
		status = http.StatusOK
	}
	answer(w, status, in)
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

// validate checks what the API requires of a cob or cobv body.
func (s *Sandbox) validate(kind psp.Kind, in *psp.CobPayload) error {
	cents, err := psp.ParseValor(in.Valor.Original)
	if err != nil || cents <= 0 {
		return errors.New("valor.original must be a positive amount like 123.45")
	}
	if in.Chave == "" || len(in.Chave) > 77 {
		return errors.New("chave is required")
	}
	if in.Calendario.Expiracao < 0 || in.Calendario.ValidadeAposVencimento < 0 {
		return errors.New("calendario: negative period")
	}
	if kind == psp.Cob {
		if in.Valor.Multa != nil || in.Valor.Juros != nil || in.Calendario.DataDeVencimento != "" {
			return errors.New("a cob has no due date, fine or interest")
		}
		return nil
	}
	if _, err := calendar.Parse(in.Calendario.DataDeVencimento); err != nil {
		return errors.New("calendario.dataDeVencimento must be YYYY-MM-DD")
	}
	for name, m := range map[string]*psp.Modalidade{"multa": in.Valor.Multa, "juros": in.Valor.Juros} {
		if m == nil {
			continue
		}
		if _, err := percent(m.ValorPerc); err != nil {
			return fmt.Errorf("valor.%s.valorPerc: %v", name, err)
		}
		if name == "multa" && m.Modalidade != 1 && m.Modalidade != psp.FinePercent {
			return errors.New("valor.multa.modalidade must be 1 or 2")
		}
		if name == "juros" && (m.Modalidade < 1 || m.Modalidade > 8) {
			return errors.New("valor.juros.modalidade must be 1-8")
		}
	}
	return nil
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
	answer(w, http.StatusOK, rec.p)
}

func (s *Sandbox) patch(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Status != psp.StatusRemoved {
		problem(w, http.StatusBadRequest, "Cobranca Invalida", "the sandbox only patches status to "+psp.StatusRemoved)
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
		problem(w, http.StatusBadRequest, "Cobranca Nao Alteravel", "the charge is "+rec.p.Status)
		return
	}
	rec.p.Status = in.Status
	rec.p.Revisao++
	answer(w, http.StatusOK, rec.p)
}

func (s *Sandbox) putWebhook(w http.ResponseWriter, r *http.Request) {
	var in psp.WebhookPayload
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || !(strings.HasPrefix(in.WebhookURL, "https://") || strings.HasPrefix(in.WebhookURL, "http://")) {
		problem(w, http.StatusBadRequest, "Webhook Invalido", "webhookUrl must be an http(s) URL")
		return
	}
	if p := s.o.WebhookPrefix; p != "" && !strings.HasPrefix(in.WebhookURL, p) {
		problem(w, http.StatusBadRequest, "Webhook Invalido", "this sandbox posts notices only to the engine's own receiver")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, known := s.hooks[r.PathValue("chave")]; !known && len(s.hooks) >= s.o.MaxCharges {
		problem(w, http.StatusServiceUnavailable, "Servico Indisponivel", "the sandbox holds as many webhooks as it keeps")
		return
	}
	s.hooks[r.PathValue("chave")] = in.WebhookURL
	w.WriteHeader(http.StatusNoContent)
}

func (s *Sandbox) getWebhook(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	u, ok := s.hooks[r.PathValue("chave")]
	s.mu.Unlock()
	if !ok {
		problem(w, http.StatusNotFound, "Webhook Nao Encontrado", "no webhook for this key")
		return
	}
	answer(w, http.StatusOK, map[string]string{"webhookUrl": u, "chave": r.PathValue("chave")})
}

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
	answer(w, http.StatusOK, rec.p)
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
		s.paid[payments[i].EndToEndID] = &delivery{chave: payments[i].Chave, notice: psp.Notice{Pix: payments[i : i+1]}}
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
	hook := s.hooks[d.chave]
	s.mu.Unlock()
	out := &Paid{Payment: d.notice.Pix[0], Payments: d.notice.Pix}
	if hook == "" {
		return nil, bad("no webhook registered for the charge's key (PUT /webhook/{chave})")
	}
	out.WebhookURL = strings.TrimSuffix(hook, "/") + "/pix"
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
