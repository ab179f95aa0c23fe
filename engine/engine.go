// Package engine wires the Lastro engine: given a DynamoDB client (built
// by collections/kit), a clock, a logger and its secrets, it builds every
// service and the HTTP API. It owns nothing that needs closing: the store
// behind the client belongs to the caller (cmd/lastro, or enginetest in
// tests), so the same wiring runs against DynamoDB and the embedded store.
package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"lastro/agenda"
	"lastro/arrangement"
	"lastro/charges"
	"lastro/collections/clock"
	"lastro/collections/egress"
	"lastro/collections/errs"
	"lastro/collections/idem"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/collections/secret"
	"lastro/collections/table"
	"lastro/collections/web"
	"lastro/contactlimit"
	"lastro/contract"
	"lastro/debtor"
	"lastro/policy"
	"lastro/portfolio"
	"lastro/psp"
	"lastro/psp/tenantpsp"
	"lastro/settlement"
	"lastro/settlement/returns"
	"lastro/tenant"
	"lastro/ui"
	"lastro/worklist"
)

// DB is the part of the SDK client the engine uses: the kit's item
// operations and table management. *dynamodb.Client satisfies it.
type DB interface {
	kit.API
	table.API
}

// Deps is what the engine is built from.
type Deps struct {
	DB        DB           // from kit.NewEmbeddedClient, or an SDK client for DynamoDB
	Table     string       // table name; created when missing
	Clock     clock.Clock  // nil means the system clock
	Logger    *slog.Logger // nil discards
	DataKey   []byte       // 32 bytes sealing tenant secrets
	DataKeyID string       // DataKey's id, recorded in what it seals; "" is secret.LegacyKeyID
	// OldDataKeys are the data keys a rotation keeps to open what they
	// sealed, never to seal (docs/adr/0083).
	OldDataKeys []secret.Key
	Sealer      pii.Sealer // personal data encryption; nil derives local keyrings from the data keys
	AdminToken  string     // bearer token of POST /v1/tenants; required
	Shards      int        // agenda shards of new tenants; 0 means 16
	// Sender delivers contact messages (a JSON-lines outbox locally, the
	// tenant's messaging webhook in production); nil: contacts are
	// claimed and recorded but not delivered.
	Sender contactlimit.Sender
	// Bureau takes credit-bureau inclusions and removals (a JSON-lines
	// file locally); nil: BUREAU_REPORT and BUREAU_REMOVAL wait.
	Bureau agenda.Bureau
	// Owner names this instance on agenda leases; "" generates one.
	Owner string
	// Auth tunes the tenant and API key caches and the limit on failed
	// authentications per client address (docs/adr/0022, 0023); zero
	// fields take the defaults.
	Auth tenant.Options
	// Egress is the outbound policy of every URL a tenant sets: checked
	// when set, and the tenants' PSPs are dialled through it (ADR 0055).
	// nil is the strict policy. It replaces Auth.Egress: one policy for
	// setting a URL and for dialling it.
	Egress *egress.Policy
	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// the failure limits count against (LASTRO_TRUSTED_PROXIES).
	TrustedProxies []netip.Prefix
	// ExportsDir is where the embedded store writes the table's exports:
	// the dashboard's roll rates read the monthly ones; "" shows none.
	ExportsDir string
}

// Engine is the wired engine. Its services are exported so tools (demo
// seed) and tests call them directly, through the same code as the API.
type Engine struct {
	Kit        *kit.Kit
	Web        *web.Server
	Clock      clock.Clock
	Log        *slog.Logger
	Tenants    *tenant.Service
	Idem       *idem.Store
	Policies   *policy.Service
	Debtors    *debtor.Service
	Contracts  *contract.Service
	Contacts   *contactlimit.Gateway
	Agenda     *agenda.Runner
	Charges    *charges.Service
	Settlement *settlement.Service
	// Arrangements are promises, disputes and write-off.
	Arrangements *arrangement.Service
	Portfolio    *portfolio.Service
	// Returns imports banks' CNAB 240 return files.
	Returns *returns.Service
	// PSPs are the tenants' Pix providers; UseSandbox makes the sandbox
	// PSP the default of tenants that configured none (ADR 0038).
	PSPs *tenantpsp.Directory
	// UI is the web pages (docs/adr/0031).
	UI     *ui.UI
	Sealer pii.Sealer
	// Egress is Deps.Egress: the webhook publishers and senders built
	// beside the engine (the stream's, the messaging sender) dial through it.
	Egress *egress.Policy
	// Metrics is the engine's Prometheus registry, served at /metrics;
	// the stream consumer registers its collectors on it. It is the
	// engine's own, not the process-wide default, so engines in one test
	// process do not share counters.
	Metrics *prometheus.Registry

	db    DB
	table string
}

// New wires the engine on d.DB: it creates the table when missing, then
// builds the services and registers every route.
func New(ctx context.Context, d Deps) (*Engine, error) {
	if d.DB == nil {
		return nil, errors.New("engine: no DynamoDB client")
	}
	if d.Table == "" {
		return nil, errors.New("engine: no table name")
	}
	if d.AdminToken == "" {
		return nil, errors.New("engine: no admin token")
	}
	if d.Clock == nil {
		d.Clock = clock.System{}
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Shards == 0 {
		d.Shards = 16
	}
	if d.DataKeyID == "" {
		d.DataKeyID = secret.LegacyKeyID
	}
	box, err := secret.NewRing(secret.Key{ID: d.DataKeyID, Bytes: d.DataKey}, d.OldDataKeys...)
	if err != nil {
		return nil, err
	}
	if d.Sealer == nil {
		var old []pii.LocalKey
		for _, k := range d.OldDataKeys {
			old = append(old, pii.LocalKey{ID: k.ID, DataKey: k.Bytes})
		}
		if d.Sealer, err = pii.NewLocalRing(ctx, pii.LocalKey{ID: d.DataKeyID, DataKey: d.DataKey}, old...); err != nil {
			return nil, err
		}
	}
	created, err := table.Ensure(ctx, d.DB, d.Table)
	if err != nil {
		return nil, err
	}
	if created {
		d.Logger.Info("table created", "table", d.Table)
	}
	e := &Engine{Kit: kit.New(d.DB, d.Table, kit.WithClock(d.Clock)), Clock: d.Clock, Log: d.Logger, Sealer: d.Sealer, db: d.DB, table: d.Table,
		Metrics: prometheus.NewRegistry(), Egress: d.Egress}
	d.Auth.Egress = d.Egress
	e.Metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	e.Tenants = tenant.NewService(e.Kit, box, e.Clock, d.Shards, d.Auth)
	e.Idem = idem.New(e.Kit, e.Clock)
	e.Policies = policy.NewService(e.Kit, e.Tenants, e.Clock)
	e.Debtors = debtor.NewService(debtor.Deps{Kit: e.Kit, Tenants: e.Tenants, Sealer: e.Sealer, Clock: e.Clock})
	e.Contracts = contract.NewService(contract.Deps{Kit: e.Kit, Tenants: e.Tenants, Policies: e.Policies, Clock: e.Clock, Idem: e.Idem,
		DebtorUF: e.Debtors.UF})
	e.Contacts = contactlimit.New(contactlimit.Deps{Kit: e.Kit, Tenants: e.Tenants, Policies: e.Policies, Clock: e.Clock, Logger: e.Log,
		Sender: d.Sender, Addresses: addressBook{e.Debtors}})
	e.Agenda = agenda.New(agenda.Deps{Kit: e.Kit, Tenants: e.Tenants, Policies: e.Policies, Contacts: e.Contacts, Bureau: d.Bureau,
		Clock: e.Clock, Logger: e.Log, Owner: d.Owner})
	e.PSPs = tenantpsp.New(e.Tenants, d.Egress)
	e.Charges = charges.NewService(charges.Deps{Kit: e.Kit, Tenants: e.Tenants, Policies: e.Policies, Clock: e.Clock, Idem: e.Idem,
		PSPs: e.PSPs, Debtors: e.Debtors, Sealer: e.Sealer, Payers: payers{e.Debtors}})
	e.Settlement = settlement.NewService(settlement.Deps{Kit: e.Kit, Tenants: e.Tenants, Policies: e.Policies, Clock: e.Clock,
		Charges: e.Charges})
	e.Arrangements = arrangement.NewService(arrangement.Deps{Kit: e.Kit, Tenants: e.Tenants, Policies: e.Policies, Clock: e.Clock, Idem: e.Idem,
		Charges: e.Charges})
	e.Portfolio = portfolio.NewService(portfolio.Deps{Kit: e.Kit, Tenants: e.Tenants, Clock: e.Clock})
	e.Returns = returns.NewService(returns.Deps{Tenants: e.Tenants, Settlement: e.Settlement, Charges: e.Charges})
	if e.UI, err = ui.New(ui.Deps{Tenants: e.Tenants, Debtors: e.Debtors, Portfolio: e.Portfolio, Agenda: e.Agenda, Settlement: e.Settlement,
		Arrangements: e.Arrangements, Contacts: e.Contacts, Charges: e.Charges, Desk: worklist.NewDesk(e.Kit, e.Clock, e.Policies), Clock: e.Clock, Logger: e.Log, DataKey: d.DataKey, ExportsDir: d.ExportsDir}); err != nil {
		return nil, err
	}
	e.Web = web.New(web.Options{Logger: e.Log, Title: "Lastro collections engine", TrustedProxies: d.TrustedProxies})
	e.Web.Echo.Use(e.Tenants.Authenticator(d.AdminToken))
	e.routes()
	return e, nil
}

func (e *Engine) routes() {
	e.Web.Handle(web.Doc{Method: http.MethodGet, Path: "/healthz", Summary: "Liveness", Public: true}, func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.Web.Handle(web.Doc{Method: http.MethodGet, Path: "/readyz", Summary: "Readiness: the store answers", Public: true}, e.ready)
	// Public like the probes: its series carry no tenant, debtor or
	// personal data (docs/adr/0046), and scrapers hold no API key.
	e.Web.Handle(web.Doc{Method: http.MethodGet, Path: "/metrics", Summary: "Prometheus metrics (no tenant or personal data)", Public: true},
		echo.WrapHandler(promhttp.HandlerFor(e.Metrics, promhttp.HandlerOpts{})))
	e.Tenants.Routes(e.Web)
	e.Tenants.HolidayRoutes(e.Web)
	e.Tenants.BoletoRoutes(e.Web)
	e.Policies.Routes(e.Web)
	e.Debtors.Routes(e.Web)
	e.Contracts.Routes(e.Web)
	e.Contacts.Routes(e.Web)
	e.Agenda.Routes(e.Web)
	e.Charges.Routes(e.Web)
	e.Settlement.Routes(e.Web)
	e.Returns.Routes(e.Web)
	e.Arrangements.Routes(e.Web)
	e.Portfolio.Routes(e.Web)
	e.UI.Routes(e.Web)
}

// Ready reports whether the store answers for the table.
func (e *Engine) Ready(ctx context.Context) error {
	return table.Ready(ctx, e.db, e.table)
}

func (e *Engine) ready(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := e.Ready(ctx); err != nil {
		e.Log.Warn("not ready", "error", err.Error())
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "store unavailable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}

// Handler is the engine's HTTP API.
func (e *Engine) Handler() http.Handler { return e.Web.Echo }

// MutualTLSHandler is the PSP webhook listener's API (docs/adr/0070):
// only the Pix API webhook, authenticated by the client certificate the
// listener's TLS handshake asked for (WebhookTLSConfig), in the same
// error shape as the API; its own OpenAPI document at /openapi.json.
func (e *Engine) MutualTLSHandler() http.Handler {
	srv := web.New(web.Options{Logger: e.Log, Title: "Lastro PSP webhooks over mutual TLS", BodyLimit: settlement.MaxPixBodyBytes + 1})
	e.Settlement.MutualTLSRoutes(srv)
	return srv.Echo
}

// WebhookTLSConfig is the mutual-TLS listener's TLS configuration: the
// server's certificate, TLS 1.2 at least, and a client certificate
// required of every connection. The handshake does not judge it: which
// CAs or pins are trusted depends on the tenant the call names, which
// only the request's path tells, so the handler verifies it
// (tenant.VerifyWebhookClient) on the engine's clock.
func WebhookTLSConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAnyClientCert}
}

// payers names a cobv's devedor from the debtor's sealed profile,
// opened in process for the one request to the PSP (docs/adr/0069).
type payers struct{ debtors *debtor.Service }

// maxDevedorName is the Pix API's limit on devedor.nome.
const maxDevedorName = 200

func (p payers) Payer(ctx context.Context, t *tenant.Tenant, dk string) (*psp.Devedor, error) {
	who, err := p.debtors.Payer(ctx, t, dk)
	if errs.Is(err, errs.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	name := []rune(strings.TrimSpace(who.Name))
	if len(name) == 0 {
		return nil, nil
	}
	d := &psp.Devedor{Nome: string(name[:min(len(name), maxDevedorName)])}
	if who.Document.Type == debtor.CPF {
		d.CPF = who.Document.Digits()
	} else {
		d.CNPJ = who.Document.Digits()
	}
	return d, nil
}

// addressBook resolves a contact's recipient from the debtor's encrypted
// profile, for the contact gateway's sender.
type addressBook struct{ debtors *debtor.Service }

func (a addressBook) Address(ctx context.Context, t *tenant.Tenant, dk string, ch contactlimit.Channel) (string, error) {
	return a.debtors.ContactAddress(ctx, t, dk, string(ch))
}

// AddressIn resolves the recipient from the PROFILE the claim read
// (contactlimit.ProfileAddressBook): one read per contact, not two.
func (a addressBook) AddressIn(ctx context.Context, t *tenant.Tenant, dk string, profile kit.Item, ch contactlimit.Channel) (string, error) {
	return a.debtors.ContactAddressIn(ctx, t, dk, profile, string(ch))
}
