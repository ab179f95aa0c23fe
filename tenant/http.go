package tenant

import (
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/web"
)

// Authenticator sets the request's principal from its bearer token: the
// admin token, or a tenant API key. A request without a token goes on
// unauthenticated (routes that need a role refuse it); a bad token is 401.
// An address that keeps sending wrong admin tokens, or untagged API keys,
// gets 429 with Retry-After before its lookups reach the store; a tagged
// key this engine issued is never refused for others' failures
// (docs/adr/0023, 0057).
func (s *Service) Authenticator(adminToken string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header.Get("Authorization")
			if h == "" {
				return next(c)
			}
			scheme, token, ok := strings.Cut(h, " ") // the scheme is case-insensitive (RFC 7235)
			if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
				return errs.E(errs.Unauth, "unauthenticated", "use Authorization: Bearer <API key>")
			}
			client := ClientAddress(c)
			if !strings.HasPrefix(token, "lst_") {
				// Not an API key's shape: an attempt at the admin token,
				// throttled per address on a budget of its own. Past it,
				// the token is not even compared, so guessing is slowed
				// (docs/adr/0057-api-key-tags-and-failure-limits.md).
				now := time.Now()
				if w := s.adminFails.wait(client, now); w > 0 {
					err := errTooManyFailures(w)
					setRetryAfter(c, err)
					return err
				}
				if adminToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(adminToken)) == 1 {
					web.SetPrincipal(c, web.Principal{Role: web.Admin})
					return next(c)
				}
				s.adminFails.fail(client, now)
				return errUnauthenticated
			}
			o, err := s.keyOwner(c.Request().Context(), token, client)
			if err != nil {
				setRetryAfter(c, err)
				return err
			}
			web.SetPrincipal(c, web.Principal{TenantID: o.tenantID, Role: web.Role(o.role)})
			return next(c)
		}
	}
}

// From returns the calling tenant of an authenticated request.
func (s *Service) From(c echo.Context) (*Tenant, error) {
	p, ok := web.PrincipalOf(c)
	if !ok || p.TenantID == "" {
		return nil, errs.E(errs.Permission, "forbidden", "a tenant API key is required")
	}
	return s.Get(c.Request().Context(), p.TenantID)
}

// Info is the answer of GET /v1/tenant.
type Info struct {
	TenantID string   `json:"tenantId"`
	Name     string   `json:"name"`
	TimeZone string   `json:"timezone"`
	Shards   int      `json:"shards"`
	Policies Policies `json:"policies"`
}

// Policies names the current policy versions (null until one exists).
type Policies struct {
	Charges *string `json:"charges"`
	Dunning *string `json:"dunning"`
}

func policyName(v int, name func(int) string) *string {
	if v == 0 {
		return nil
	}
	n := name(v)
	return &n
}

// Routes registers the tenant endpoints.
func (s *Service) Routes(srv *web.Server) {
	allRoles := []web.Role{web.Operator, web.Supervisor, web.Compliance}
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/tenants", Summary: "Create a tenant (admin token); returns its API keys and webhook secret once",
		Roles: []web.Role{web.Admin}, Request: CreateInput{}, Response: Created{}, Status: http.StatusCreated}, s.create)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/tenant", Summary: "The caller's tenant",
		Roles: allRoles, Response: Info{}}, s.info)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/tenants/:tenantId/keys",
		Summary: "Issue an API key of a role for an existing tenant (admin token): the way back in for a tenant that lost its " +
			"supervisor keys. The key is shown once; 404 for an unknown tenant",
		Roles: []web.Role{web.Admin}, Request: NewKeyInput{Role: "supervisor"}, Response: NewKey{}, Status: http.StatusCreated}, s.adminCreateKey)
	// Managing credentials is the supervisor's: operators and compliance
	// use keys, they do not mint or revoke them (docs/adr/0022).
	sup := []web.Role{web.Supervisor}
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/tenant/keys",
		Summary: "The tenant's API keys, revoked ones included: keyId (16 hex of the key's SHA-256), role, createdAt, revokedAt; never the key",
		Roles:   sup, Response: KeyPage{Items: []KeyInfo{{KeyID: "3f9a0c1d2e4b5a69", Role: "operator", CreatedAt: "2026-09-24T12:00:00.000Z"}}},
		Query: []string{"limit", "cursor"}}, s.listKeys)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/tenant/keys",
		Summary: "Create an API key of a role (operator, supervisor, compliance); the key is shown once. It works at once on this instance",
		Roles:   sup, Request: NewKeyInput{Role: "operator"}, Response: NewKey{}, Status: http.StatusCreated}, s.createKey)
	srv.Handle(web.Doc{Method: http.MethodDelete, Path: "/v1/tenant/keys/:keyId",
		Summary: "Revoke an API key: 401 at once on this instance, on every instance within the key cache window (10 s by default). " +
			"409 last_supervisor_key for the last active supervisor key; revoking a revoked key answers it unchanged",
		Roles: sup, Response: KeyInfo{}}, s.revokeKey)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/tenant/webhook-secret/rotate",
		Summary: "Replace the webhook secret (shown once); the old one keeps verifying for overlapSeconds (default 3600, 0-604800), then only the new one does",
		Roles:   sup, Request: RotateInput{}, Response: Rotated{}}, s.rotateWebhook)
	srv.Handle(web.Doc{Method: http.MethodPut, Path: "/v1/tenant/events-webhook",
		Summary: "Post the tenant's domain events (docs/events/) to url, https to a public address (docs/adr/0055), signed like the settlement " +
			"webhooks (X-Lastro-Timestamp, X-Lastro-Signature v1=HMAC-SHA256) with a fresh secret shown once; a new call rotates it",
		Roles: sup, Request: EventsWebhookInput{URL: "https://bank.example/lastro-events"},
		Response: EventsWebhookConfigured{URL: "https://bank.example/lastro-events", Secret: "evtsec_..."}, Errors: []int{http.StatusConflict}}, s.putEventsWebhook)
	srv.Handle(web.Doc{Method: http.MethodPut, Path: "/v1/tenant/messaging",
		Summary: "Deliver the tenant's contact messages (SMS, WhatsApp, e-mail...) to its messaging provider's webhook url instead of the " +
			"engine's local outbox: https to a public address (docs/adr/0055), each message signed like the settlement webhooks " +
			"(X-Lastro-Timestamp, X-Lastro-Signature v1=HMAC-SHA256) with a fresh secret shown once; a new call rotates it",
		Roles: sup, Request: MessagingInput{URL: "https://sms.provider.example/lastro"},
		Response: MessagingConfigured{URL: "https://sms.provider.example/lastro", Secret: "msgsec_..."}, Errors: []int{http.StatusConflict}}, s.putMessaging)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/tenant/messaging",
		Summary: "Where the tenant's contact messages go: its provider's url, or none (the engine's local outbox); never the secret",
		Roles:   sup, Response: MessagingView{URL: "https://sms.provider.example/lastro", Configured: true}}, s.getMessaging)
	s.pspRoutes(srv, sup)
	srv.Handle(web.Doc{Method: http.MethodPut, Path: "/v1/tenant/outcome-codes",
		Summary: "Set the codes collectors record a call's outcome with: each a code (A-Z, 0-9, _), a kind (REACHED, NO_ANSWER, WRONG_NUMBER, " +
			"REFUSED, PROMISE: opens the promise form, DISPUTE, CALLBACK: needs its time), labelPt and optionally labelEn; 1-30 codes. " +
			"Until set, one code per kind applies (default: true)",
		Roles: sup, Request: OutcomeCodesInput{Codes: DefaultOutcomeCodes()[:2]}, Response: OutcomeCodesView{Codes: DefaultOutcomeCodes()[:2]},
		Errors: []int{http.StatusConflict}}, s.putOutcomeCodes)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/tenant/outcome-codes", Summary: "The tenant's call outcome codes (default: true while they are the built-in ones)",
		Roles: allRoles, Response: OutcomeCodesView{Codes: DefaultOutcomeCodes(), Default: true}}, s.getOutcomeCodes)
}

func (s *Service) putOutcomeCodes(c echo.Context) error { return setSetting(s, c, s.SetOutcomeCodes) }

func (s *Service) getOutcomeCodes(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, OutcomeCodesView{Codes: t.OutcomeCodes(), Default: len(t.outcomeCodes) == 0})
}

func (s *Service) putMessaging(c echo.Context) error { return setSetting(s, c, s.SetMessaging) }

// setSetting is a tenant setting's PUT: the caller's tenant, the body
// bound strictly into an In, set applied, its answer 200.
func setSetting[In, Out any](s *Service, c echo.Context, set func(context.Context, *Tenant, In) (Out, error)) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	var in In
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := set(c.Request().Context(), t, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) getMessaging(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, MessagingView{URL: t.MessagingURL, Configured: t.MessagingURL != ""})
}

func (s *Service) putEventsWebhook(c echo.Context) error { return setSetting(s, c, s.SetEventsWebhook) }

func (s *Service) listKeys(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	limit, err := web.ParseLimit(c.QueryParam("limit"), web.DefaultListLimit)
	if err != nil {
		return err
	}
	out, err := s.ListKeys(c.Request().Context(), t, limit, c.QueryParam("cursor"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) createKey(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	var in NewKeyInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.CreateKey(c.Request().Context(), t, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

// adminCreateKey issues a key for the tenant the path names (the access
// log keeps the route, never the key).
func (s *Service) adminCreateKey(c echo.Context) error {
	id := c.Param("tenantId")
	if !ValidID(id) {
		return errs.E(errs.Invalid, "invalid_tenant_id", "tenantId must be 2-32 of a-z 0-9 -, starting with a letter or digit")
	}
	t, err := s.Get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	var in NewKeyInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.CreateKey(c.Request().Context(), t, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (s *Service) revokeKey(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	out, err := s.RevokeKey(c.Request().Context(), t, c.Param("keyId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) rotateWebhook(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	var in RotateInput
	if c.Request().ContentLength != 0 {
		if err := web.Bind(c, &in); err != nil {
			return err
		}
	}
	out, err := s.RotateWebhookSecret(c.Request().Context(), t, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) create(c echo.Context) error {
	var in CreateInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.Create(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (s *Service) info(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, Info{TenantID: t.ID, Name: t.Name, TimeZone: t.TimeZone, Shards: t.Shards,
		Policies: Policies{Charges: policyName(t.ChargesPolicy, keys.ChargesPolicy), Dunning: policyName(t.DunningPolicy, keys.DunningPolicy)}})
}

// Authenticate resolves an API key to its principal; Unauth when the key
// is unknown or malformed.
func (s *Service) Authenticate(ctx context.Context, key string) (web.Principal, error) {
	o, err := s.keyOwner(ctx, key, "")
	if err != nil {
		return web.Principal{}, err
	}
	return web.Principal{TenantID: o.tenantID, Role: web.Role(o.role)}, nil
}

// keyRoles are the roles a new tenant gets one API key each for.
func keyRoles() []web.Role { return []web.Role{web.Operator, web.Supervisor, web.Compliance} }

// HolidayRoutes registers the calendar endpoints of a tenant.
func (s *Service) HolidayRoutes(srv *web.Server) {
	srv.Handle(web.Doc{Method: http.MethodPut, Path: "/v1/tenant/holidays",
		Summary: "Replace the tenant's extra non-business days (municipal holidays...); national bank holidays are built in",
		Roles:   []web.Role{web.Supervisor}, Request: HolidaysInput{Dates: []string{"2027-01-25"}}, Response: HolidaysInput{}}, s.putHolidays)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/tenant/holidays", Summary: "A year's national bank holidays and the tenant's extra days (?year=)",
		Roles: []web.Role{web.Operator, web.Supervisor, web.Compliance}, Response: HolidaysView{}, Query: []string{"year"}}, s.getHolidays)
}

func (s *Service) putHolidays(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	var in HolidaysInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	if in.Dates == nil { // {} or null would replace every day with none
		return errs.E(errs.Invalid, "missing_field", "dates is required (an empty list clears the tenant's days)")
	}
	dates, err := s.SetHolidays(c.Request().Context(), t, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, HolidaysInput{Dates: dates})
}

func (s *Service) getHolidays(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	year := calendar.Today(s.clock.Now(), t.Location).Year()
	if q := c.QueryParam("year"); q != "" {
		if year, err = strconv.Atoi(q); err != nil || year < 1900 || year > 2199 {
			return errs.E(errs.Invalid, "invalid_year", "year must be 1900-2199")
		}
	}
	out := HolidaysView{Year: year, National: []HolidayView{}, Tenant: []string{}}
	for _, h := range calendar.NationalBankHolidays(year) {
		out.National = append(out.National, HolidayView{Date: h.Date.String(), Name: h.Name})
	}
	for _, d := range t.Holidays {
		if len(d) >= 4 && d[:4] == strconv.Itoa(year) {
			out.Tenant = append(out.Tenant, d)
		}
	}
	return c.JSON(http.StatusOK, out)
}

// setRetryAfter adds the Retry-After header when err is a failure-limit
// refusal.
func setRetryAfter(c echo.Context, err error) {
	var tm *tooManyFailures
	if errors.As(err, &tm) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(tm.retryAfter))
	}
}

// ClientAddress is the address a request's failures are counted against:
// the peer's IP (an IPv6 peer's /64, which one host usually owns whole).
// Forwarding headers count only when the server is told to trust them
// (echo's IPExtractor is set, behind a known proxy): otherwise a client
// would pick its own address.
func ClientAddress(c echo.Context) string {
	host := c.Request().RemoteAddr
	if c.Echo().IPExtractor != nil {
		host = c.RealIP()
	} else if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap()
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.String()
		}
	}
	return a.String()
}

// LimitFailures guards a public route that authenticates by its own means
// and names its tenant in path parameter param (the settlement webhook):
// a client over its failure budget gets 429 unless the tenant is cached
// (then the check costs no store read), and every 401 or unknown tenant
// the route answers spends one of the client's failures.
func (s *Service) LimitFailures(param string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			client := ClientAddress(c)
			if !s.cachedTenant(c.Param(param)) {
				if err := s.overLimit(client, time.Now()); err != nil {
					setRetryAfter(c, err)
					return err
				}
			}
			err := next(c)
			if isAuthFailure(err) {
				s.failed(client, time.Now())
			}
			return err
		}
	}
}

// BoletoRoutes registers the tenant's boleto settings.
func (s *Service) BoletoRoutes(srv *web.Server) {
	example := BoletoInput{Bank: "001", Convenio: "1234567", Carteira: "17"}
	srv.Handle(web.Doc{Method: http.MethodPut, Path: "/v1/tenant/boleto",
		Summary: "Set the bank agreement boletos are issued under: bank (001, Banco do Brasil: the one free-field layout so far), " +
			"convenio (7 or 8 digits) and carteira (2 digits), and the beneficiary the shipping files and slips carry (beneficiaryName, " +
			"beneficiaryDocument: the lender's CNPJ, agencia, agenciaDv, conta, contaDv). Until set, the demo settings 001/1234567/17 apply (default: true), which no bank honours",
		Roles: []web.Role{web.Supervisor}, Request: example, Response: BoletoSettings{Bank: "001", Convenio: "1234567", Carteira: "17"}, Errors: []int{http.StatusConflict}}, s.putBoleto)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/tenant/boleto", Summary: "The tenant's boleto settings (default: true while they are the demo ones)",
		Roles: []web.Role{web.Operator, web.Supervisor, web.Compliance}, Response: DefaultBoleto}, s.getBoleto)
}

func (s *Service) putBoleto(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	var in BoletoInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.SetBoleto(c.Request().Context(), t, in.Settings())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) getBoleto(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t.Boleto())
}

// pspRoutes registers GET and PUT /v1/tenant/psp (supervisor).
func (s *Service) pspRoutes(srv *web.Server, roles []web.Role) {
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/tenant/psp",
		Summary: "The tenant's Pix PSP (configured false: the engine's sandbox PSP serves it); never the client secret, private key or Pix key",
		Roles:   roles, Response: PSPView{}}, func(c echo.Context) error {
		t, err := s.From(c)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, t.PSPView())
	})
	srv.Handle(web.Doc{Method: http.MethodPut, Path: "/v1/tenant/psp",
		Summary: "Configure the tenant's Pix PSP (BACEN Pix API): base URL, OAuth2 client, mutual-TLS certificate, Pix key (chave) and the " +
			"webhook URL registered with the PSP; sealed, and never shown back",
		Roles: roles, Request: PSPSettings{BaseURL: "https://pix.psp.example/api/v2", ClientID: "client-id", ClientSecret: "client-secret",
			Chave: "7d9f0335-8dcc-4054-9bf9-0dbd61d36906", WebhookURL: "https://lastro.example/v1/webhooks/t-demo"},
		Response: PSPView{}}, func(c echo.Context) error {
		t, err := s.From(c)
		if err != nil {
			return err
		}
		var in PSPSettings
		if err := web.Bind(c, &in); err != nil {
			return err
		}
		out, err := s.SetPSP(c.Request().Context(), t, in)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, out)
	})
	srv.Handle(web.Doc{Method: http.MethodPut, Path: "/v1/tenant/psp/webhook-tls",
		Summary: "How the tenant's PSP is recognised on the mutual-TLS webhook listener (LASTRO_PSP_WEBHOOK_TLS_ADDR): its client certificate must chain, " +
			"for client authentication, to one of clientCasPem, or be one of pinnedCertPem (by SHA-256); within its validity. Calls it authenticates need no " +
			"HMAC signature. Needs a configured PSP (422 psp_not_configured); PUT /v1/tenant/psp keeps it (ADR 0070)",
		Roles: roles, Request: WebhookTLS{ClientCAsPEM: "-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n"},
		Response: WebhookTLSView{ClientCAs: 1, PinnedSHA256: []string{}}, Errors: []int{http.StatusConflict, http.StatusUnprocessableEntity}},
		func(c echo.Context) error { return setSetting(s, c, s.SetWebhookTLS) })
}
