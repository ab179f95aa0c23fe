package ui

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/csv"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"lastro/agenda"
	"lastro/arrangement"
	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/secret"
	"lastro/collections/web"
	"lastro/contactlimit"
	"lastro/contract"
	"lastro/debtor"
	"lastro/portfolio"
	"lastro/settlement"
	"lastro/tenant"
	"lastro/worklist"
)

//go:embed templates
var files embed.FS

// Cookie names. The session cookie is scoped to the pages; the login
// nonce only to the login form.
const (
	SessionCookie = "lastro_session"
	loginCookie   = "lastro_login"
)

// DefaultSessionTTL is how long a login lasts when Deps.SessionTTL is 0.
const DefaultSessionTTL = 8 * time.Hour

// PageSize is how many rows a portfolio page shows.
const PageSize = 10

// contactDays is how far back the debtor page lists contacts.
const contactDays = 7

// Deps are the services the pages read and write through: the same
// calls the API makes.
type Deps struct {
	Tenants      *tenant.Service
	Debtors      *debtor.Service
	Portfolio    *portfolio.Service
	Agenda       *agenda.Runner
	Settlement   *settlement.Service
	Arrangements *arrangement.Service
	Contacts     *contactlimit.Gateway
	Charges      *charges.Service
	Desk         *worklist.Desk
	Clock        clock.Clock
	Logger       *slog.Logger
	// DataKey derives the session-signing secret (NewSigner).
	DataKey    []byte
	SessionTTL time.Duration // 0: DefaultSessionTTL
	// ExportsDir holds the table's exports (the embedded store's export
	// folder): the dashboard's roll rates read the monthly full ones.
	ExportsDir string
}

// UI serves the web pages.
type UI struct {
	d       Deps
	sign    Signer
	pages   map[lang]map[string]*template.Template // by language, then name
	css     []byte
	exports exportCache
}

var pageNames = []string{"login", "error", "find", "portfolio", "debtor", "agenda", "suspense", "dashboard", "queue"}

// New parses the embedded templates and returns the pages.
func New(d Deps) (*UI, error) {
	if d.Tenants == nil || d.Debtors == nil || d.Portfolio == nil || d.Agenda == nil || d.Settlement == nil ||
		d.Arrangements == nil || d.Contacts == nil || d.Charges == nil || d.Desk == nil || d.Clock == nil {
		return nil, errors.New("ui: missing a service")
	}
	if len(d.DataKey) == 0 {
		return nil, errors.New("ui: no data key")
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.SessionTTL <= 0 {
		d.SessionTTL = DefaultSessionTTL
	}
	u := &UI{d: d, sign: NewSigner(d.DataKey), pages: map[lang]map[string]*template.Template{}}
	for _, l := range langs {
		pages, err := parsePages(l)
		if err != nil {
			return nil, err
		}
		u.pages[l] = pages
	}
	css, err := files.ReadFile("templates/style.css")
	if err != nil {
		return nil, err
	}
	u.css = css
	return u, nil
}

// parsePages parses every page with the template functions of l.
func parsePages(l lang) (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(l.funcs()).ParseFS(files, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("ui: parse %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// Routes registers the pages. They are public to the API's bearer
// authentication: each checks its own session cookie.
func (u *UI) Routes(srv *web.Server) {
	page := func(method, path, summary string, h echo.HandlerFunc) {
		srv.Handle(web.Doc{Method: method, Path: path, Summary: "Web page (HTML): " + summary, Public: true}, h)
	}
	sup := []string{"supervisor"}
	staff := []string{"operator", "supervisor", "compliance"}
	writers := []string{"operator", "supervisor"}
	page(http.MethodGet, "/", "redirects to the portfolio, or to the login without a session", u.home)
	page(http.MethodGet, "/ui/static/style.css", "the pages' style sheet", u.style)
	page(http.MethodGet, "/ui/lang", "switch the pages' language (?to=pt-BR|en&next=): a cookie keeps it; Portuguese without one", u.setLang)
	page(http.MethodGet, "/ui/login", "login form taking an API key", u.loginForm)
	page(http.MethodPost, "/ui/login", "log in: starts a server-side session, sets an HttpOnly cookie with its signed random id (never the key)", u.login)
	page(http.MethodPost, "/ui/logout", "log out: deletes the session, so its cookie no longer works", u.with(nil, u.logout))
	page(http.MethodGet, "/ui/portfolio", "portfolio by bucket, largest first (?bucket=&cursor=), supervisor", u.with(sup, u.portfolio))
	page(http.MethodGet, "/ui/debtors", "find a debtor by CPF/CNPJ (the keyed lookup) or debtor key (?q=)", u.with(staff, u.find))
	page(http.MethodPost, "/ui/debtors/:debtorKey/contact-card", "show the debtor's name and phone to the collector, audited", u.with(writers, u.contactCard))
	page(http.MethodPost, "/ui/debtors/:debtorKey/pix", "issue a Pix charge for the oldest open instalment of a contract and show its QR", u.with(writers, u.pix))
	page(http.MethodGet, "/ui/charges/:chargeId/slip.pdf", "a charge's printable slip (the boleto's 2ª via, or the Pix with its QR)", u.with(staff, u.slip))
	page(http.MethodGet, "/ui/charges/:chargeId/qr.png", "the QR image of a Pix charge shown on the debtor page", u.with(writers, u.qr))
	page(http.MethodGet, "/ui/queue", "the day's call list in working order (?date=), operator and supervisor", u.with(writers, u.queue))
	page(http.MethodPost, "/ui/queue/claim", "take a call task: the debtor is this collector's for 15 minutes", u.with(writers, u.claimTask))
	page(http.MethodPost, "/ui/queue/outcome", "record a call's outcome (a promise or a dispute opens its form)", u.with(writers, u.taskOutcome))
	page(http.MethodGet, "/ui/dashboard", "the supervisor's dashboard: buckets, roll rates, promises, cure rate, contacts against the cap, collectors, agenda per shard", u.with(sup, u.dashboard))
	page(http.MethodGet, "/ui/dashboard.csv", "one of the dashboard's tables as CSV (?table=buckets|promises|cure|contacts|collectors|shards)", u.with(sup, u.dashboardCSV))
	page(http.MethodGet, "/ui/debtors/:debtorKey", "the debtor's 360 page (?events=<contractId>/<seq>)", u.with(staff, u.debtor))
	page(http.MethodPost, "/ui/debtors/:debtorKey/promises", "record a promise to pay", u.with(writers, u.promise))
	page(http.MethodPost, "/ui/debtors/:debtorKey/contacts", "record a manual contact", u.with(writers, u.contact))
	page(http.MethodGet, "/ui/agenda", "the day's agenda per shard and action (?date=&shard=), supervisor", u.with(sup, u.agenda))
	page(http.MethodPost, "/ui/agenda/run", "run the day's workers now, supervisor", u.with(sup, u.runAgenda))
	page(http.MethodGet, "/ui/suspense", "unmatched settlements, supervisor", u.with(sup, u.suspense))
	page(http.MethodPost, "/ui/suspense/:settlementId/resolve", "assign a suspended settlement to a charge, supervisor", u.with(sup, u.resolve))
}

// view is what every page template gets.
type view struct {
	Session    *tenant.WebSession
	Supervisor bool
	Writer     bool           // operator or supervisor: may record and send
	Loc        *time.Location // the tenant's zone: instants are shown in it
	Lang       lang           // the pages' language: <html lang> and every text
	Here       string         // this page's address, for the language switch to come back to
	CSRF       string
	Flash      string
	Problem    string
	Data       any
}

const sessionKey = "lastro.ui.session"
const cookieKey = "lastro.ui.cookie"

func sessionOf(c echo.Context) *tenant.WebSession {
	s, _ := c.Get(sessionKey).(*tenant.WebSession)
	return s
}

// langOf is the language the user chose with the switch (its cookie),
// Portuguese without one: the browser's Accept-Language is not asked
// (ADR 0086).
func langOf(c echo.Context) lang {
	if ck, err := c.Cookie(LangCookie); err == nil {
		if l, ok := parseLang(ck.Value); ok {
			return l
		}
	}
	return portuguese
}

// here is the page to come back to after switching the language: this
// one for a GET, the debtor's page after a form posted on it, else home.
func here(c echo.Context) string {
	r := c.Request()
	if r.Method == http.MethodGet {
		return r.URL.RequestURI()
	}
	if dk := c.Param("debtorKey"); dk != "" {
		return "/ui/debtors/" + url.PathEscape(dk)
	}
	return "/"
}

func (u *UI) newView(c echo.Context, data any) view {
	v := view{Data: data, Lang: langOf(c), Here: here(c)}
	if s := sessionOf(c); s != nil {
		v.Session, v.Supervisor, v.Writer = s, s.Role == "supervisor", s.Role == "supervisor" || s.Role == "operator"
		if t, err := u.d.Tenants.From(c); err == nil {
			v.Loc = t.Location
		}
		v.CSRF = u.sign.CSRF(c.Get(cookieKey).(string))
	}
	if f, ok := flashes[c.QueryParam("flash")]; ok {
		v.Flash = v.Lang.T(f)
	}
	return v
}

// flashes are the fixed messages a redirect may name: never text from
// the request.
var flashes = map[string]string{
	"promise":  "Promessa registrada.",
	"contact":  "Contato registrado.",
	"resolved": "Pagamento aplicado à cobrança.",
	"call":     "Resultado da ligação registrado.",
	"dispute":  "Contestação informada na ligação: registre-a pela API de contestações (POST /v1/debtors/{dk}/contracts/{id}/disputes) para pausar a régua.",
}

// When writes an RFC 3339 instant in the tenant's zone, in the page's
// language (29/09/2026 14:05, 2026-09-29 14:05).
func (v view) When(ts any) string { return v.Lang.instant(v.Loc, ts) }

func (u *UI) render(c echo.Context, status int, name string, v view) error {
	var b bytes.Buffer
	if v.Lang == "" {
		v.Lang = portuguese
	}
	if err := u.pages[v.Lang][name].ExecuteTemplate(&b, "layout", v); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	return c.HTMLBlob(status, b.Bytes())
}

type errorData struct {
	Status         int
	Title, Message string
}

// fail answers err as an error page; a lost session goes to the login.
func (u *UI) fail(c echo.Context, err error) error {
	status, _, msg := errs.Public(err)
	if status == http.StatusUnauthorized {
		return u.toLogin(c)
	}
	l := langOf(c)
	if status >= 500 {
		u.d.Logger.Error("page failed", "request_id", web.RequestID(c), "route", c.Path(), "error", err.Error())
		msg = l.T("algo deu errado; tente de novo")
	}
	return u.render(c, status, "error", u.newView(c, errorData{Status: status, Title: l.T(statusTitle(status)), Message: msg}))
}

func (u *UI) toLogin(c echo.Context) error {
	next := c.Request().URL.Path
	if c.Request().Method != http.MethodGet {
		next = "/"
	}
	return c.Redirect(http.StatusSeeOther, "/ui/login?next="+url.QueryEscape(safeNext(next)))
}

// session returns the stored session the request's cookie names: a
// signed cookie whose session still exists, has not expired and whose key
// is still active (tenant.Service.Session: one consistent GetItem).
func (u *UI) session(c echo.Context) (*tenant.WebSession, string, error) {
	ck, err := c.Cookie(SessionCookie)
	if err != nil {
		return nil, "", errNoSession
	}
	cs, err := u.sign.Decode(ck.Value)
	if err != nil {
		return nil, "", errNoSession
	}
	ws, err := u.d.Tenants.Session(c.Request().Context(), cs.TenantID, cs.ID)
	if err != nil {
		return nil, "", err
	}
	return ws, ck.Value, nil
}

var errNoSession = errs.E(errs.Unauth, "no_session", "entre para abrir esta página")

// with lets a page through with a live session, of one of roles (nil:
// any role); a POST also needs the session's CSRF token, from the form
// body only: a token in the URL would sit in logs, history and Referer.
func (u *UI) with(roles []string, h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ws, cookie, err := u.session(c)
		if err != nil {
			if status, _, _ := errs.Public(err); status == http.StatusUnauthorized && err != errNoSession {
				u.clearSession(c) // ended, expired or its key revoked: drop it
			}
			return u.fail(c, err)
		}
		c.Set(sessionKey, ws)
		c.Set(cookieKey, cookie)
		web.SetPrincipal(c, web.Principal{TenantID: ws.TenantID, Role: web.Role(ws.Role)})
		if c.Request().Method == http.MethodPost && !u.sign.CheckCSRF(cookie, c.Request().PostFormValue("csrf")) {
			return u.fail(c, errs.E(errs.Permission, "csrf", "%s", langOf(c).T("o formulário expirou ou não veio deste site: recarregue a página e tente de novo")))
		}
		role := ws.Role
		if l := langOf(c); roles != nil && !slices.Contains(roles, role) {
			return u.fail(c, errs.E(errs.Permission, "forbidden", l.T("o papel %s não pode abrir esta página"), l.label(role)))
		}
		return h(c)
	}
}

func (u *UI) cookie(c echo.Context, name, value, path string, maxAge int) {
	c.SetCookie(&http.Cookie{Name: name, Value: value, Path: path, MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.IsTLS() || c.Scheme() == "https"})
}

func (u *UI) clearSession(c echo.Context) { u.cookie(c, SessionCookie, "", "/", -1) }

// setLang keeps the language chosen with the switch in a cookie for a
// year and goes back to the page it was chosen on. Lax, not Strict like
// the session: a link from elsewhere opens the pages in that language.
func (u *UI) setLang(c echo.Context) error {
	l, ok := parseLang(c.QueryParam("to"))
	if !ok {
		return u.fail(c, errs.E(errs.Invalid, "invalid_lang", "%s", langOf(c).T("idioma desconhecido: use pt-BR ou en")))
	}
	c.SetCookie(&http.Cookie{Name: LangCookie, Value: string(l), Path: "/", MaxAge: 365 * 24 * 3600, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: c.IsTLS() || c.Scheme() == "https"})
	return c.Redirect(http.StatusSeeOther, safeNext(c.QueryParam("next")))
}

func (u *UI) home(c echo.Context) error {
	ws, _, err := u.session(c)
	if err != nil {
		if status, _, _ := errs.Public(err); status != http.StatusUnauthorized {
			return u.fail(c, err)
		}
		return c.Redirect(http.StatusSeeOther, "/ui/login")
	}
	if ws.Role == "supervisor" {
		return c.Redirect(http.StatusSeeOther, "/ui/dashboard")
	}
	if ws.Role == "operator" {
		return c.Redirect(http.StatusSeeOther, "/ui/queue")
	}
	return c.Redirect(http.StatusSeeOther, "/ui/debtors")
}

func (u *UI) style(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "max-age=300")
	return c.Blob(http.StatusOK, "text/css; charset=utf-8", u.css)
}

type loginData struct{ Next string }

// loginForm sets a fresh nonce cookie and puts its HMAC in the form: the
// login's CSRF token, before any session exists.
func (u *UI) loginForm(c echo.Context) error {
	return u.showLogin(c, http.StatusOK, "")
}

func (u *UI) showLogin(c echo.Context, status int, problem string) error {
	nonce := b64.EncodeToString(secret.Random(18))
	u.cookie(c, loginCookie, nonce, "/ui/login", 3600)
	v := view{CSRF: u.sign.CSRF("login:" + nonce), Problem: problem, Data: loginData{Next: safeNext(c.FormValue("next"))}, Lang: langOf(c), Here: here(c)}
	return u.render(c, status, "login", v)
}

func (u *UI) login(c echo.Context) error {
	nc, err := c.Cookie(loginCookie)
	if err != nil || !u.sign.CheckCSRF("login:"+nc.Value, c.Request().PostFormValue("csrf")) {
		return u.showLogin(c, http.StatusForbidden, langOf(c).T("O formulário expirou ou não veio deste site: tente de novo."))
	}
	// The key from the body only: in a query string it would be logged.
	key := strings.TrimSpace(c.Request().PostFormValue("key"))
	ws, err := u.d.Tenants.StartSession(c.Request().Context(), key, tenant.ClientAddress(c), u.d.SessionTTL)
	if err != nil {
		status, _, msg := errs.Public(err)
		if status == http.StatusUnauthorized {
			msg = langOf(c).T("Esta chave de API não é válida.")
		} else if status >= 500 {
			u.d.Logger.Error("login failed", "request_id", web.RequestID(c), "error", err.Error())
			msg = langOf(c).T("algo deu errado; tente de novo")
		}
		return u.showLogin(c, status, msg)
	}
	u.cookie(c, SessionCookie, u.sign.Encode(Session{TenantID: ws.TenantID, ID: ws.ID}), "/", int(u.d.SessionTTL/time.Second))
	u.cookie(c, loginCookie, "", "/ui/login", -1)
	// "/" sends each role to its start page (home).
	return c.Redirect(http.StatusSeeOther, safeNext(c.FormValue("next")))
}

// logout deletes the stored session, so the cookie is dead even where
// the browser (or whoever copied it) keeps it.
func (u *UI) logout(c echo.Context) error {
	ws := sessionOf(c)
	if err := u.d.Tenants.EndSession(c.Request().Context(), ws.TenantID, ws.ID); err != nil {
		return u.fail(c, err)
	}
	u.clearSession(c)
	return c.Redirect(http.StatusSeeOther, "/ui/login")
}

func (u *UI) tenant(c echo.Context) (*tenant.Tenant, error) { return u.d.Tenants.From(c) }

type portfolioData struct {
	Buckets []string
	Bucket  string
	Cursor  string // the page's own cursor: not the first page
	Page    *portfolio.Page
}

func (u *UI) portfolio(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	b := c.QueryParam("bucket")
	if b == "" {
		b = portfolio.Buckets[0]
	}
	p, err := u.d.Portfolio.Page(c.Request().Context(), t, portfolio.Params{Bucket: b, Limit: PageSize, Cursor: c.QueryParam("cursor")})
	if err != nil {
		return u.fail(c, err)
	}
	return u.render(c, http.StatusOK, "portfolio", u.newView(c, portfolioData{Buckets: portfolio.Buckets, Bucket: b, Cursor: c.QueryParam("cursor"), Page: p}))
}

type agendaGroup struct {
	Shard   int
	Action  string
	Entries []agenda.Entry
}

type agendaData struct {
	Date     string
	Shard    string
	MaxShard int
	Groups   []agendaGroup
	Next     string
	Report   *agenda.Report
}

func (u *UI) agenda(c echo.Context) error { return u.showAgenda(c, nil) }

func (u *UI) showAgenda(c echo.Context, rep *agenda.Report) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	q := agenda.ListQuery{Shard: -1, Limit: 200, Date: calendar.Today(u.d.Clock.Now(), t.Location)}
	if rep != nil {
		q.Date = calendar.MustParse(rep.Date)
	} else if s := c.QueryParam("date"); s != "" {
		if q.Date, err = calendar.Parse(s); err != nil {
			return u.fail(c, errs.E(errs.Invalid, "invalid_date", "%s", langOf(c).T("a data deve ser AAAA-MM-DD")))
		}
	}
	shard := c.QueryParam("shard")
	if shard != "" && rep == nil {
		n, err := strconv.Atoi(shard)
		if err != nil || n < 0 || n >= t.Shards {
			return u.fail(c, errs.E(errs.Invalid, "invalid_shard", langOf(c).T("a fatia deve ser de 0 a %d"), t.Shards-1))
		}
		q.Shard = n
	} else {
		shard = ""
	}
	cursor := ""
	if rep == nil {
		cursor = c.QueryParam("cursor")
	}
	l, err := u.d.Agenda.List(c.Request().Context(), t, q, cursor)
	if err != nil {
		return u.fail(c, err)
	}
	d := agendaData{Date: q.Date.String(), Shard: shard, MaxShard: t.Shards - 1, Groups: groupAgenda(l.Items), Report: rep}
	if l.NextCursor != nil {
		d.Next = *l.NextCursor
	}
	return u.render(c, http.StatusOK, "agenda", u.newView(c, d))
}

func (u *UI) runAgenda(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	today := calendar.Today(u.d.Clock.Now(), t.Location)
	rep, err := u.d.Agenda.Run(c.Request().Context(), t, today, agenda.Options{})
	u.d.Agenda.YieldInterrupted(c.Request().Context(), t, rep)
	if err != nil {
		return u.fail(c, err)
	}
	return u.showAgenda(c, rep)
}

type suspenseData struct{ Page *settlement.UnmatchedPage }

func (u *UI) suspense(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	p, err := u.d.Settlement.ListUnmatched(c.Request().Context(), t, 50, c.QueryParam("cursor"))
	if err != nil {
		return u.fail(c, err)
	}
	return u.render(c, http.StatusOK, "suspense", u.newView(c, suspenseData{Page: p}))
}

func (u *UI) resolve(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	a := actor(c)
	if _, err := u.d.Settlement.Resolve(c.Request().Context(), t, c.Param("settlementId"), strings.TrimSpace(c.FormValue("chargeId")),
		settlement.Resolver{Role: a.Role, RequestID: a.RequestID}); err != nil {
		return u.fail(c, err)
	}
	return c.Redirect(http.StatusSeeOther, "/ui/suspense?flash=resolved")
}

func (u *UI) find(c echo.Context) error {
	q := strings.TrimSpace(c.QueryParam("q"))
	if q == "" {
		q = strings.TrimSpace(c.QueryParam("key")) // the old form's field
	}
	if q == "" {
		return u.render(c, http.StatusOK, "find", u.newView(c, findData{}))
	}
	if debtorKeyShape.MatchString(q) {
		return c.Redirect(http.StatusSeeOther, "/ui/debtors/"+q)
	}
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	res, err := search(c.Request().Context(), u.d.Debtors, t, q)
	if err != nil {
		return u.fail(c, err)
	}
	if len(res.Matches) == 1 && !res.More {
		return c.Redirect(http.StatusSeeOther, "/ui/debtors/"+url.PathEscape(res.Matches[0].DebtorKey))
	}
	v := u.newView(c, findData{Query: q, Matches: res.Matches, More: res.More})
	status := http.StatusOK
	switch {
	case len(res.Matches) > 0:
	case res.Problem != "":
		status, v.Problem = res.Status, langOf(c).T(res.Problem)
	case res.Tried == 0:
		status = http.StatusBadRequest
		v.Problem = langOf(c).T("Digite um CPF (11 dígitos) ou CNPJ (14), um telefone com DDD — (11) 98765-4321 —, o número de um contrato ou a chave do devedor (16 caracteres).")
	default:
		status = http.StatusNotFound
		v.Problem = langOf(c).T("Nenhum devedor encontrado. Confira o CPF/CNPJ, tente o telefone com DDD — (11) 98765-4321 ou +55 11 98765-4321 — ou o número do contrato como está no sistema de origem.")
	}
	return u.render(c, status, "find", v)
}

func (u *UI) debtor(c echo.Context) error { return u.showDebtor(c, http.StatusOK, debtorData{}, "") }

func (u *UI) showDebtor(c echo.Context, status int, extra debtorData, problem string) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	ctx := c.Request().Context()
	v, err := u.d.Debtors.View(ctx, t, c.Param("debtorKey"), debtor.DefaultViewLimit, "")
	if err != nil {
		return u.fail(c, err)
	}
	since := calendar.MustParse(v.Today).AddDays(-contactDays).String()
	d := extra
	d.View, d.ContactDays, d.Contacts = v, contactDays, recentContacts(v.Contacts, since)
	for _, cv := range v.Contracts {
		p := contractPanel{ContractView: *cv}
		for _, in := range cv.Installments {
			if contract.IsOpen(in.Status) || in.Status == "OVERDUE" {
				p.Open = append(p.Open, in)
			} else {
				p.Done = append(p.Done, in)
			}
		}
		if cv.Status != contract.StatusSettled && cv.Status != contract.StatusWrittenOff {
			if p.Due, err = u.d.Charges.Due(ctx, t, v.DebtorKey, cv.ContractID); err != nil {
				return u.fail(c, err)
			}
		}
		d.Contracts = append(d.Contracts, p)
	}
	if task := c.QueryParam("task"); task != "" {
		date, cid, _ := strings.Cut(task, "/")
		if _, err := calendar.Parse(date); err != nil || !keys.ValidIdentifier(cid) {
			return u.fail(c, errs.E(errs.Invalid, "invalid_task", "%s", langOf(c).T("a tarefa deve ser <AAAA-MM-DD>/<contrato>")))
		}
		d.TaskDate, d.TaskContract = date, cid
		d.Outcomes = outcomeOptions(t, langOf(c))
	}
	if ev := c.QueryParam("events"); ev != "" {
		cid, seq, err := parseEventsParam(ev)
		if err != nil {
			return u.fail(c, errs.Wrap(errs.Invalid, "invalid_events", err, langOf(c).T("events deve ser <contrato>/<parcela>")))
		}
		d.EventsOf = ev
		d.Events = instalmentEvents(v, cid, seq)
	}
	view := u.newView(c, d)
	if problem != "" {
		view.Problem = problem
	}
	return u.render(c, status, "debtor", view)
}

func actor(c echo.Context) contract.Actor {
	s := sessionOf(c)
	return contract.Actor{Role: s.Role, RequestID: web.RequestID(c)}
}

func (u *UI) refused(c echo.Context, formOf string, err error) error {
	status, _, msg := errs.Public(err)
	if status >= 500 || status == http.StatusUnauthorized {
		return u.fail(c, err)
	}
	form, _ := c.FormParams()
	form.Del("csrf")
	return u.showDebtor(c, status, debtorData{Form: form, FormOf: formOf}, msg)
}

func (u *UI) promise(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	cid := c.FormValue("contractId")
	l := langOf(c)
	cents, err := l.parseCents(c.FormValue("amount"))
	if err != nil {
		return u.refused(c, "promise:"+cid, errs.E(errs.Invalid, "invalid_amount", "%s", l.T("valor inválido: use reais com até dois decimais, como 150,00")))
	}
	dk := c.Param("debtorKey")
	in := arrangement.PromiseInput{PromisedDate: c.FormValue("promisedDate"), AmountCents: cents}
	if _, err := u.d.Arrangements.MakePromise(c.Request().Context(), t, dk, cid, in, actor(c)); err != nil {
		return u.refused(c, "promise:"+cid, err)
	}
	return c.Redirect(http.StatusSeeOther, "/ui/debtors/"+url.PathEscape(dk)+"?flash=promise")
}

func (u *UI) contact(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	dk := c.Param("debtorKey")
	a := actor(c)
	claim := contactlimit.Claim{DebtorKey: dk, ContractID: c.FormValue("contractId"), Channel: contactlimit.Channel(c.FormValue("channel")),
		Template: c.FormValue("template"), Action: contactlimit.ManualAction, Actor: debtor.Actor(a)}
	ctx := c.Request().Context()
	var at contactlimit.Attempt
	if u.d.Contacts.CanDeliver() {
		at, err = u.d.Contacts.Send(ctx, t, claim)
		var se *contactlimit.SendError
		if errors.As(err, &se) && at.AttemptID != "" {
			err = nil // counted, not delivered: the attempt's evidence says so
		}
	} else {
		at, err = u.d.Contacts.Claim(ctx, t, claim)
	}
	if err != nil {
		return u.refused(c, "contact", err)
	}
	if !at.Allowed {
		l := langOf(c)
		return u.refused(c, "contact", errs.E(errs.Limit, "contact_blocked",
			l.T("contato não permitido agora: %s. A tentativa ficou registrada como evidência"), l.label(string(at.Reason))))
	}
	return c.Redirect(http.StatusSeeOther, "/ui/debtors/"+url.PathEscape(dk)+"?flash=contact")
}

func (u *UI) contactCard(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	card, err := u.d.Debtors.RevealContact(c.Request().Context(), t, c.Param("debtorKey"), debtor.Actor(actor(c)))
	if err != nil {
		return u.fail(c, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return u.showDebtor(c, http.StatusOK, debtorData{Card: card}, "")
}

func (u *UI) pix(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	ctx := c.Request().Context()
	dk, cid := c.Param("debtorKey"), c.FormValue("contractId")
	due, err := u.d.Charges.Due(ctx, t, dk, cid)
	if err != nil {
		return u.refused(c, "pix", err)
	}
	if len(due.Installments) == 0 {
		return u.refused(c, "pix", errs.E(errs.Rule, "nothing_due", "%s", langOf(c).T("este contrato não tem parcela em aberto")))
	}
	seq := due.Installments[0].Seq
	ch, err := u.d.Charges.Issue(ctx, t, charges.Input{DebtorKey: dk, ContractID: cid, Seq: seq, Method: charges.PIX})
	if err != nil {
		return u.refused(c, "pix", err)
	}
	p := &pixShown{ContractID: cid, ChargeID: ch.ChargeID, CopiaECola: ch.PixCopiaECola, ExpiresAt: ch.ExpiresAt, Seq: seq, AmountCents: ch.AmountCents}
	return u.showDebtor(c, http.StatusOK, debtorData{Pix: p}, "")
}

func (u *UI) dashboard(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	d, err := u.dashboardRows(c.Request().Context(), t, langOf(c))
	if err != nil {
		return u.fail(c, err)
	}
	return u.render(c, http.StatusOK, "dashboard", u.newView(c, d))
}

// dashboardCSV is one of the dashboard's tables for a spreadsheet
// (?table=, buckets by default): codes, counts and cents, so it adds up
// without parsing reais, and rates in parts per million; the bucket's
// name in the page's language.
func (u *UI) dashboardCSV(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	lg := langOf(c)
	table := cmp.Or(c.QueryParam("table"), "buckets")
	if !slices.Contains(csvTables, table) {
		return u.fail(c, errs.E(errs.Invalid, "invalid_table", "%s", lg.Tf("table deve ser uma de: %s", strings.Join(csvTables, ", "))))
	}
	ctx := c.Request().Context()
	var d dashboardData
	if table == "buckets" {
		d, err = u.bucketRows(ctx, t)
	} else {
		d, err = u.dashboardRows(ctx, t, lg)
	}
	if err != nil {
		return u.fail(c, err)
	}
	h := c.Response().Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	name := "carteira"
	if table != "buckets" {
		name = "painel-" + table
	}
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s.csv"`, name, d.Today))
	h.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(c.Response())
	for _, row := range csvRows(table, d, lg) {
		_ = w.Write(row)
	}
	w.Flush()
	return w.Error()
}

// csvRows are a dashboard table's rows, its header first: codes and
// numbers as they are, the bucket's name in lg.
func csvRows(table string, d dashboardData, lg lang) [][]string {
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	i := func(v int) string { return strconv.Itoa(v) }
	var rows [][]string
	switch table {
	case "buckets":
		rows = append(rows, []string{"date", "bucket", "bucketName", "contracts", "outstandingCents"})
		for _, r := range d.Buckets {
			rows = append(rows, []string{d.Today, r.Code, lg.T(r.Name), n(r.Contracts), n(r.OutstandingCents)})
		}
	case "promises":
		rows = append(rows, []string{"from", "to", "made", "kept", "broken", "keptPpm"})
		for _, p := range []struct {
			from string
			f    promiseFigures
		}{{d.Today, d.PromisesToday}, {d.MonthFrom, d.PromisesMonth}} {
			rows = append(rows, []string{p.from, d.Today, n(p.f.Made), n(p.f.Kept), n(p.f.Broken), n(p.f.KeptPPM())})
		}
	case "cure":
		c := d.Cure
		rows = append(rows, []string{"from", "to", "cures", "curedCents", "delinquentAtStart", "entries", "exits", "delinquentNow", "exposed", "curePpm"},
			[]string{d.MonthFrom, d.Today, n(c.Cures), n(c.CuredCents), n(c.AtStart), n(c.Entries), n(c.Exits), n(c.Delinquent), n(c.Exposed), n(c.RatePPM)})
	case "contacts":
		rows = append(rows, []string{"date", "kind", "code", "count", "maxDailyContactsPerDebtor"})
		for _, r := range d.Contacts.Channels {
			rows = append(rows, []string{d.Today, "contacts", r.Channel, n(r.N), i(d.Contacts.Cap)})
		}
		for _, r := range d.Contacts.Refused {
			rows = append(rows, []string{d.Today, "refused", r.Reason, n(r.N), i(d.Contacts.Cap)})
		}
		rows = append(rows, []string{d.Today, "joined", "JOINED", n(d.Contacts.Joined), i(d.Contacts.Cap)})
	case "collectors":
		rows = append(rows, []string{"date", "operatorId", "claimed", "working", "callbacks", "done", "outcome", "count"})
		for _, r := range d.Collectors {
			base := []string{d.Today, r.Operator, i(r.Claimed), i(r.Working), i(r.Callbacks), i(r.Done)}
			if len(r.Outcomes) == 0 {
				rows = append(rows, append(slices.Clone(base), "", "0"))
			}
			for _, o := range r.Outcomes {
				rows = append(rows, append(slices.Clone(base), o.Outcome, i(o.N)))
			}
		}
	case "shards":
		rows = append(rows, []string{"date", "shard", "started", "finished", "executed", "waiting", "due"})
		for _, p := range d.Shards {
			rows = append(rows, []string{d.Today, i(p.Shard), strconv.FormatBool(p.Started), strconv.FormatBool(p.Finished), i(p.Executed), n(p.Waiting), n(p.Due())})
		}
	}
	return rows
}

// qr is a Pix charge's QR for the debtor page's <img>: the same image as
// GET /v1/charges/{id}/qr.png, behind the page's session.
func (u *UI) qr(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	png, err := u.d.Charges.QR(c.Request().Context(), t, c.Param("chargeId"))
	if err != nil {
		return u.fail(c, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "image/png", png)
}

// holder names the collector of a session on the tasks it takes and the
// outcomes it records: the API key id the session logged in with (never
// the key, never a name), the same across the collector's logins, so the
// dashboard counts each collector's calls (ADR 0085).
func holder(c echo.Context) string { return sessionOf(c).KeyID }

func (u *UI) queue(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	date := calendar.Today(u.d.Clock.Now(), t.Location)
	if s := c.QueryParam("date"); s != "" {
		if date, err = calendar.Parse(s); err != nil {
			return u.fail(c, errs.E(errs.Invalid, "invalid_date", "%s", langOf(c).T("a data deve ser AAAA-MM-DD")))
		}
	}
	tasks, err := u.d.Desk.Queue(c.Request().Context(), t, date.String())
	if err != nil {
		return u.fail(c, err)
	}
	d := queueData{Date: date.String(), Me: holder(c), Now: keys.Timestamp(u.d.Clock.Now()), Tasks: tasks}
	return u.render(c, http.StatusOK, "queue", u.newView(c, d))
}

// claimTask takes a task and opens its debtor with the outcome form.
func (u *UI) claimTask(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	date, dk, cid := c.FormValue("date"), c.FormValue("debtorKey"), c.FormValue("contractId")
	if err := u.d.Desk.Claim(c.Request().Context(), t, date, dk, cid, holder(c)); err != nil {
		if errors.Is(err, worklist.ErrOutsideWindow) {
			// What to do, in the collector's language: the API's message
			// is English.
			l := langOf(c)
			return u.render(c, http.StatusConflict, "error", u.newView(c, errorData{Status: http.StatusConflict, Title: l.T("Fora da janela de contato"),
				Message: l.T("O devedor está fora da janela de contato agora (fuso, horário, dias e feriados do estado dele). Ligue quando a janela abrir ou atenda outra ligação da fila.")}))
		}
		return u.fail(c, err)
	}
	q := url.Values{"task": {date + "/" + cid}}
	return c.Redirect(http.StatusSeeOther, "/ui/debtors/"+url.PathEscape(dk)+"?"+q.Encode()+"#call")
}

// taskOutcome records the call's result; a promise opens the promise
// form of the contract, a dispute says where to record it.
func (u *UI) taskOutcome(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	date, dk, cid, outcome := c.FormValue("date"), c.Param("debtorKey"), c.FormValue("contractId"), c.FormValue("outcome")
	if dk == "" {
		dk = c.FormValue("debtorKey")
	}
	var at time.Time
	if s := strings.TrimSpace(c.FormValue("callbackAt")); s != "" {
		if at, err = time.ParseInLocation("2006-01-02T15:04", s, t.Location); err != nil {
			return u.refused(c, "call", errs.E(errs.Invalid, "invalid_callback", "%s", langOf(c).T("informe o dia e a hora do retorno")))
		}
	}
	if err := u.d.Desk.Record(c.Request().Context(), t, date, dk, cid, holder(c), outcome, at); err != nil {
		return u.fail(c, err)
	}
	code, _ := t.OutcomeCode(outcome)
	switch code.Kind {
	case worklist.OutcomePromise:
		return u.showDebtor(c, http.StatusOK, debtorData{FormOf: "promise:" + cid}, "")
	case worklist.OutcomeDispute:
		return c.Redirect(http.StatusSeeOther, "/ui/debtors/"+url.PathEscape(dk)+"?flash=dispute")
	}
	return c.Redirect(http.StatusSeeOther, "/ui/queue?flash=call")
}

// slip is a charge's printable PDF (GET /v1/charges/{id}/slip.pdf behind
// the page's session): the boleto's 2ª via, or the Pix with its QR.
func (u *UI) slip(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	pdf, err := u.d.Charges.Slip(c.Request().Context(), t, c.Param("chargeId"))
	if err != nil {
		return u.fail(c, err)
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", `inline; filename="cobranca.pdf"`)
	return c.Blob(http.StatusOK, "application/pdf", pdf)
}
