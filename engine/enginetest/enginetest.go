// Package enginetest is the one test fixture of the whole engine: an
// in-memory embedded store reached in process through the real SDK client,
// the engine wired on it by engine.New with a manual clock, its API behind
// a loopback test server, and helpers for tenants, requests, signed
// webhooks and synthetic documents. Tests of any package (external test
// packages included) use it instead of wiring the engine themselves.
package enginetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lastro/agenda"
	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/egress"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/secret"
	"lastro/collections/signature"
	"lastro/contactlimit"
	"lastro/contract"
	"lastro/ddblocal"
	"lastro/debtor"
	"lastro/engine"
	"lastro/psp/psptest"
	"lastro/psp/sandbox"
	"lastro/psp/tenantpsp"
	"lastro/tenant"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
)

// DefaultNow is the fixture's instant unless At says otherwise: Thursday
// 2026-09-24, 09:00 in São Paulo, a business day.
var DefaultNow = time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)

// AdminToken is the fixture engine's admin token.
const AdminToken = "admin-secret-token"

// Table is the fixture's table name.
const Table = "lastro"

type options struct {
	now     time.Time
	dataDir string
	shards  int
	owner   string
	shared  *Env
	auth    tenant.Options
	sandbox bool
	egress  *egress.Policy
	sbOpts  func(*sandbox.Options)
	sbWrap  func(http.Handler) http.Handler
	keys    []secret.Key
}

// Option changes the fixture.
type Option func(*options)

// At starts the manual clock at now.
func At(now time.Time) Option { return func(o *options) { o.now = now } }

// DataDir keeps the store on disk in dir (Pebble with synced commits, as
// lastro serve runs) instead of in memory.
func DataDir(dir string) Option { return func(o *options) { o.dataDir = dir } }

// Shards sets the agenda shards of new tenants (default 16).
func Shards(n int) Option { return func(o *options) { o.shards = n } }

// SharedWith runs the engine on other's store with other's data key: two
// engine instances on one store, as two processes on one DynamoDB table.
// The store stays open when this engine closes (other owns it).
func SharedWith(other *Env) Option { return func(o *options) { o.shared = other } }

// DataKeys runs the engine on a ring of data keys, the first sealing and
// the others only opening (a rotation, docs/adr/0083); with SharedWith,
// other's key is LegacyKey(other).
func DataKeys(current secret.Key, old ...secret.Key) Option {
	return func(o *options) { o.keys = append([]secret.Key{current}, old...) }
}

// LegacyKey is env's data key under the legacy id, what an engine that
// never rotated seals with.
func LegacyKey(env *Env) secret.Key { return secret.Key{ID: secret.LegacyKeyID, Bytes: env.key} }

// Owner names the engine instance on agenda leases (two engines on one
// store run the scheduler side by side).
func Owner(name string) Option { return func(o *options) { o.owner = name } }

// Auth tunes the engine's tenant and key caches and its failure limit
// (short windows to watch them expire, a small burst to reach it).
func Auth(o tenant.Options) Option { return func(opts *options) { opts.auth = o } }

// Egress is the engine's outbound policy (default: the strict one). A
// test whose tenant points a webhook or a PSP at an httptest server opts
// in to loopback here: egress.New(egress.AllowLoopback()).
func Egress(p *egress.Policy) Option { return func(o *options) { o.egress = p } }

// PixSandbox runs the sandbox PSP beside the engine, over HTTP, as the
// PSP of every tenant (what lastro serve does by default): Pix charges get
// a BR Code, and Env.Sandbox pays them.
func PixSandbox() Option { return func(o *options) { o.sandbox = true } }

// SandboxOptions changes the sandbox PSP's options (PixSandbox only).
func SandboxOptions(edit func(*sandbox.Options)) Option { return func(o *options) { o.sbOpts = edit } }

// SandboxWrap puts wrap around the sandbox PSP's handler (PixSandbox
// only): a recording PSP that checks every call against the Pix API
// document (psp/psptest), say.
func SandboxWrap(wrap func(http.Handler) http.Handler) Option {
	return func(o *options) { o.sbWrap = wrap }
}

// Env is a running engine for a test.
type Env struct {
	*engine.Engine
	Store       *ddblocal.Store // the embedded store (faults, sweeps)
	StoreClient *http.Client    // reaches the store in process (for other SDK clients, e.g. DynamoDB Streams)
	Clock       *clock.Manual
	URL         string       // the API's base URL
	HTTP        *http.Client // client for URL
	Logs        *Logs        // every log line of the engine
	Dir         string       // a temporary folder for the files below
	OutboxPath  string       // contact messages sent (JSON lines)
	BureauPath  string       // credit-bureau records (JSON lines)
	// Sandbox is the sandbox PSP at SandboxURL (PixSandbox only).
	Sandbox    *sandbox.Sandbox
	SandboxURL string
	// PSPRecorder is the recording PSP in front of the sandbox (New with
	// PixSandbox, when the Pix API document is present), nil otherwise.
	PSPRecorder *psptest.Recorder
	sbSrv       *httptest.Server

	srv       *httptest.Server
	key       []byte // the data key (SharedWith passes it on)
	ownsStore bool
	mu        sync.Mutex
	rng       *rand.Rand
	used      map[string]bool
}

// New starts an engine for t; it stops when the test ends. With
// PixSandbox and no SandboxWrap, the sandbox sits behind the recording
// PSP of psp/psptest when the Central Bank's Pix API document is beside
// the repository: every call the engine makes to it, and every answer,
// is checked against the document (Env.PSPRecorder).
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var rec *psptest.Recorder
	if o.sandbox && o.sbWrap == nil {
		if spec := psptest.LoadIfPresent(t); spec != nil {
			opts = append(opts, SandboxWrap(func(h http.Handler) http.Handler { rec = spec.Strict(t, "", h); return rec }))
		}
	}
	env, err := Open(opts...)
	if err != nil {
		t.Fatalf("enginetest: %v", err)
	}
	env.PSPRecorder = rec
	t.Cleanup(func() {
		if err := env.Close(); err != nil {
			t.Errorf("enginetest: close: %v", err)
		}
	})
	return env
}

// Open starts an engine outside a test's lifetime (a benchmark's fixture
// built once per process); Close stops it.
func Open(opts ...Option) (*Env, error) {
	o := options{now: DefaultNow, shards: 16}
	for _, opt := range opts {
		opt(&o)
	}
	var st *ddblocal.Store
	key := secret.Random(32)
	clk := clock.NewManual(o.now)
	if o.shared != nil {
		st, key = o.shared.Store, o.shared.key
	} else {
		var err error
		// The store's TTL runs on the fixture's manual clock, as serve runs
		// it on the engine's: a test's "today" is the store's today.
		if st, err = ddblocal.Open(ddblocal.Options{Dir: o.dataDir, Now: clk.Now}); err != nil {
			return nil, err
		}
	}
	closeStore := func() {
		if o.shared == nil {
			st.Close()
		}
	}
	env := &Env{Store: st, StoreClient: kit.InProcess(st.Handler()), Clock: clk, Logs: &Logs{},
		rng: rand.New(rand.NewPCG(uint64(o.now.UnixNano()), 0x1a57)), used: map[string]bool{}, key: key, ownsStore: o.shared == nil}
	var err error
	if env.Dir, err = os.MkdirTemp("", "lastro-enginetest-"); err != nil {
		closeStore()
		return nil, err
	}
	env.OutboxPath, env.BureauPath = filepath.Join(env.Dir, "outbox.jsonl"), filepath.Join(env.Dir, "bureau.jsonl")
	keyID, oldKeys := "", []secret.Key(nil)
	if len(o.keys) > 0 {
		key, keyID, oldKeys = o.keys[0].Bytes, o.keys[0].ID, o.keys[1:]
	}
	env.Engine, err = engine.New(context.Background(), engine.Deps{
		DB: kit.NewEmbeddedClient(kit.InProcessEndpoint, env.StoreClient), Table: Table, Clock: env.Clock,
		Logger: slog.New(slog.NewJSONHandler(env.Logs, nil)), DataKey: key, DataKeyID: keyID, OldDataKeys: oldKeys, AdminToken: AdminToken, Shards: o.shards,
		Sender: contactlimit.NewOutbox(env.OutboxPath), Bureau: agenda.NewFileBureau(env.BureauPath), Owner: o.owner,
		Auth: o.auth, Egress: o.egress,
	})
	if err != nil {
		closeStore()
		os.RemoveAll(env.Dir)
		return nil, err
	}
	env.srv = httptest.NewServer(env.Handler())
	env.URL, env.HTTP = env.srv.URL, env.srv.Client()
	if o.sandbox {
		sbo := sandbox.Options{Clock: env.Clock, SecretFor: env.PSPs.SecretFor}
		if o.sbOpts != nil {
			o.sbOpts(&sbo)
		}
		env.Sandbox = sandbox.New(sbo)
		var h http.Handler = env.Sandbox.Handler()
		if o.sbWrap != nil {
			h = o.sbWrap(h)
		}
		env.sbSrv = httptest.NewServer(h)
		env.SandboxURL = env.sbSrv.URL
		env.Sandbox.SetBaseURL(env.SandboxURL)
		env.PSPs.UseSandbox(tenantpsp.Sandbox{URL: env.SandboxURL, ClientID: sandbox.DefaultClientID, ClientSecret: env.Sandbox.ClientSecret(),
			WebhookBase: env.URL})
	}
	return env, nil
}

// SandboxPost posts body to the sandbox PSP's path (PixSandbox only) with
// its operator token, as the demo's operator does, and returns the answer.
func (e *Env) SandboxPost(path, body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, e.SandboxURL+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.Sandbox.OperatorToken())
	return http.DefaultClient.Do(req)
}

// Close stops the API server and the store.
func (e *Env) Close() error {
	e.srv.Close()
	if e.sbSrv != nil {
		e.sbSrv.Close()
	}
	var err error
	if e.ownsStore {
		err = e.Store.Close()
	}
	return errors.Join(err, os.RemoveAll(e.Dir))
}

// Logs collects log output from concurrent requests.
type Logs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything logged so far.
func (l *Logs) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// Raw sends a request with a bearer token (when not empty), a JSON content
// type and extra header name/value pairs; it returns the status and the
// body as received.
func (e *Env) Raw(t testing.TB, method, path, token, body string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// Do is Raw with the body decoded as a JSON object (nil when empty); a
// body that is not JSON fails the test.
func (e *Env) Do(t testing.TB, method, path, token, body string, headers ...string) (int, map[string]any) {
	t.Helper()
	status, raw := e.Raw(t, method, path, token, body, headers...)
	if raw == "" {
		return status, nil
	}
	return status, JSON(t, raw)
}

// JSON decodes a JSON object or fails the test.
func JSON(t testing.TB, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not a JSON object: %q", body)
	}
	return m
}

// ErrorCode is the code of an answer in the error shape, or "" when the
// answer is not in it (no code or no message).
func ErrorCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	code, _ := e["code"].(string)
	msg, _ := e["message"].(string)
	if code == "" || msg == "" {
		return ""
	}
	return code
}

// Keys are a tenant's credentials as its creation answered them: the API
// key of each role ("operator", "supervisor", "compliance") and the
// webhook secret under "webhook".
type Keys map[string]string

// CreateTenant creates tenant id through the admin API and returns its keys.
func (e *Env) CreateTenant(t testing.TB, id string) Keys {
	t.Helper()
	status, out := e.Do(t, http.MethodPost, "/v1/tenants", AdminToken, `{"tenantId":"`+id+`","name":"Crediário `+id+`"}`)
	if status != http.StatusCreated {
		t.Fatalf("create tenant %s: %d %v", id, status, out)
	}
	keys := Keys{}
	for role, k := range out["apiKeys"].(map[string]any) {
		keys[role] = k.(string)
	}
	keys["webhook"] = out["webhookSecret"].(string)
	return keys
}

// Tenant creates tenant id through the service (no HTTP) and returns it
// loaded, as services take it, with its keys.
func (e *Env) Tenant(t testing.TB, id string) (*tenant.Tenant, Keys) {
	t.Helper()
	ctx := context.Background()
	created, err := e.Tenants.Create(ctx, tenant.CreateInput{TenantID: id, Name: "Crediário " + id})
	if err != nil {
		t.Fatalf("create tenant %s: %v", id, err)
	}
	tn, err := e.Tenants.Get(ctx, id)
	if err != nil {
		t.Fatalf("load tenant %s: %v", id, err)
	}
	keys := Keys{"webhook": created.WebhookSecret}
	for role, k := range created.APIKeys {
		keys[role] = k
	}
	return tn, keys
}

// WebhookHeaders are the signature headers of body signed with secret at
// signedAt (name/value pairs, as Raw takes them).
func WebhookHeaders(secret, body string, signedAt time.Time) []string {
	ts := signedAt.Unix()
	return []string{signature.TimestampHeader, strconv.FormatInt(ts, 10),
		signature.SignatureHeader, signature.Sign(secret, ts, []byte(body))}
}

// Deliver posts a settlement webhook for tenantID signed with secret at
// signedAt, as a payment provider does, with client (nil: the env's). It
// returns an error instead of failing the test, so goroutines can use it.
func (e *Env) Deliver(tenantID, secret, body string, signedAt time.Time, client *http.Client) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, e.URL+"/v1/webhooks/"+tenantID+"/settlements", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	h := WebhookHeaders(secret, body, signedAt)
	req.Header.Set(h[0], h[1])
	req.Header.Set(h[2], h[3])
	if client == nil {
		client = e.HTTP
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// WebhookBody is a settlement notification's body.
func WebhookBody(settlementID, chargeID string, amountCents int64, paidAt string) string {
	return fmt.Sprintf(`{"settlementId":%q,"chargeId":%q,"amountCents":%d,"paidAt":%q}`, settlementID, chargeID, amountCents, paidAt)
}

// CPF returns a valid synthetic CPF (digits only) from debtor.GenerateCPF,
// a different one on every call of this env.
func (e *Env) CPF() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		d := debtor.GenerateCPF(e.rng).Digits()
		if !e.used[d] {
			e.used[d] = true
			return d
		}
	}
}

// ScanAll reads every item of the table (a maintenance scan, as an export
// would).
func (e *Env) ScanAll(t testing.TB) []kit.Item {
	t.Helper()
	var items []kit.Item
	if err := e.Kit.MaintenanceScan(context.Background(), "test-audit", 0, 1, func(it kit.Item) error {
		items = append(items, it)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return items
}

// Partition reads every item of a debtor's partition, strongly
// consistent, page after page.
func (e *Env) Partition(t testing.TB, tn *tenant.Tenant, dk string) []kit.Item {
	t.Helper()
	var out []kit.Item
	cursor := ""
	for {
		p, err := e.Kit.Tenant(tn.ID, tn.CursorKey()).QueryPage(context.Background(), kit.Query{Partition: keys.Debtor(tn.ID, dk), Consistent: true}, cursor)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Items...)
		if cursor = p.Next; cursor == "" {
			return out
		}
	}
}

// Monthly is a contract's n instalments of principal + interest cents,
// due monthly from first (YYYY-MM-DD), seq 1 to n.
func Monthly(first string, n int, principalCents, interestCents int64) []contract.InstallmentInput {
	d := calendar.MustParse(first)
	out := make([]contract.InstallmentInput, n)
	for i := range out {
		out[i] = contract.InstallmentInput{Seq: i + 1, DueDate: d.AddMonths(i).String(),
			PrincipalCents: contract.Cents(principalCents), InterestCents: contract.Cents(interestCents)}
	}
	return out
}

// saoPaulo is the tests' tenant zone (no daylight saving since 2019).
var saoPaulo = time.FixedZone("BRT", -3*3600)

// SaoPaulo is a wall-clock instant in São Paulo: the tests' tenants' zone.
func SaoPaulo(date string, hour, minute int) time.Time {
	d := calendar.MustParse(date)
	return time.Date(d.Year(), d.Month(), d.Day(), hour, minute, 0, 0, saoPaulo)
}

// ContractIDs returns the contract ids of the headers on the first page of
// q (an agenda or portfolio partition, say) in tn.
func (e *Env) ContractIDs(t testing.TB, tn *tenant.Tenant, q kit.Query) []string {
	t.Helper()
	p, err := e.Kit.Tenant(tn.ID, tn.CursorKey()).QueryPage(context.Background(), q, "")
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, it := range p.Items {
		var h contract.Header
		if err := attributevalue.UnmarshalMap(it, &h); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, h.ContractID)
	}
	return ids
}

// JSONLines reads a JSON-lines file (the outbox, the bureau file) into
// one map per line, in order; none when the file does not exist yet.
func JSONLines(t testing.TB, path string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for line := range bytes.Lines(raw) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: line %q: %v", filepath.Base(path), line, err)
		}
		out = append(out, m)
	}
	return out
}

// Outbox is the contact messages this engine sent, in order.
func (e *Env) Outbox(t testing.TB) []map[string]any {
	t.Helper()
	return JSONLines(t, e.OutboxPath)
}
