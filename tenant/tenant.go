// Package tenant manages the lending institutions that use Lastro: their
// settings, their API keys (stored hashed, one per role) and their secrets
// (sealed with the service's data key), and authenticates every request.
package tenant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/egress"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/secret"
	"lastro/collections/text"
)

// DefaultTimeZone is the time zone of a tenant that names none.
const DefaultTimeZone = "America/Sao_Paulo"

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,31}$`)

// ValidID reports whether id is a valid tenant id: 2–32 of a-z 0-9 -,
// starting with a letter or digit.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Tenant is one institution with its opened secrets.
type Tenant struct {
	ID            string
	Name          string
	TimeZone      string
	Location      *time.Location
	Shards        int
	KeyVersion    int // current debtor-key secret version
	ChargesPolicy int // current charges policy version (0: none yet)
	DunningPolicy int // current dunning policy version (0: none yet)
	Version       int
	CreatedAt     time.Time
	Holidays      []string        // the tenant's extra non-business days (ISO dates), beyond the national ones
	MessagingURL  string          // the tenant's messaging provider webhook ("" : none); messaging.go
	EventsURL     string          // the tenant's domain-events webhook ("" : none); eventswebhook.go
	boleto        *BoletoSettings // nil: DefaultBoleto; boleto.go
	outcomeCodes  []OutcomeCode   // nil: DefaultOutcomeCodes; outcomes.go
	calendar      *calendar.Calendar
	secrets       secrets
}

// Calendar is the tenant's business calendar: national bank holidays plus
// its own extra days.
func (t *Tenant) Calendar() *calendar.Calendar {
	if t.calendar == nil {
		return calendar.National
	}
	return t.calendar
}

// CalendarIn is the tenant's calendar for a debtor in uf: the national
// bank holidays, the state's (docs/adr/0065) and the tenant's own days.
// An empty or unknown uf is the tenant's calendar.
func (t *Tenant) CalendarIn(uf string) *calendar.Calendar { return t.Calendar().In(uf) }

// secrets are sealed together in the TENANT item.
type secrets struct {
	DebtorKeys map[int][]byte `json:"debtorKeys"` // by key version
	Webhook    string         `json:"webhook"`
	Cursor     []byte         `json:"cursor"`
	Messaging  string         `json:"messaging,omitempty"` // signs messages sent to the provider
	Events     string         `json:"events,omitempty"`    // signs the domain events posted to the tenant
	// WebhookPrevious is the webhook secret a rotation replaced; it still
	// verifies until WebhookPreviousUntil (webhook.go).
	WebhookPrevious      string    `json:"webhookPrevious,omitempty"`
	WebhookPreviousUntil time.Time `json:"webhookPreviousUntil,omitzero"`
	// PSP is the tenant's Pix provider (psp.go); nil: the local default.
	PSP *PSPSettings `json:"psp,omitempty"`
	// PSPWebhookTLS recognises the PSP on the mutual-TLS webhook listener
	// (webhooktls.go); set only beside a PSP.
	PSPWebhookTLS *WebhookTLS `json:"pspWebhookTls,omitempty"`
}

// DebtorKeySecret returns the HMAC secret of a debtor-key version.
func (t *Tenant) DebtorKeySecret(version int) ([]byte, bool) {
	s, ok := t.secrets.DebtorKeys[version]
	return s, ok
}

// WebhookSecret is the secret settlement webhooks are signed with.
func (t *Tenant) WebhookSecret() string { return t.secrets.Webhook }

// CursorKey signs the tenant's pagination cursors.
func (t *Tenant) CursorKey() []byte { return t.secrets.Cursor }

// Today is the tenant's civil date now.
func (t *Tenant) Today(now time.Time) string { return now.In(t.Location).Format("2006-01-02") }

// record is the TENANT item.
type record struct {
	PK            string          `dynamodbav:"PK"`
	SK            string          `dynamodbav:"SK"`
	Type          string          `dynamodbav:"type"`
	TenantID      string          `dynamodbav:"tenantId"`
	Name          string          `dynamodbav:"name"`
	TimeZone      string          `dynamodbav:"timezone"`
	Shards        int             `dynamodbav:"shards"`
	KeyVersion    int             `dynamodbav:"keyVersion"`
	ChargesPolicy int             `dynamodbav:"chargesPolicy"`
	DunningPolicy int             `dynamodbav:"dunningPolicy"`
	Secrets       []byte          `dynamodbav:"secrets"`
	Version       int             `dynamodbav:"version"`
	CreatedAt     string          `dynamodbav:"createdAt"`
	Holidays      []string        `dynamodbav:"holidays,omitempty"`
	MessagingURL  string          `dynamodbav:"messagingUrl,omitempty"`
	EventsURL     string          `dynamodbav:"eventsWebhookUrl,omitempty"`
	Boleto        *BoletoSettings `dynamodbav:"boleto,omitempty"`
	OutcomeCodes  []OutcomeCode   `dynamodbav:"outcomeCodes,omitempty"`
}

// directoryRecord is a tenant's entry in the platform's directory of
// tenants: the id only (what jobs need to load it), never its settings.
type directoryRecord struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	TenantID  string `dynamodbav:"tenantId"`
	CreatedAt string `dynamodbav:"createdAt"`
}

type apiKeyRecord struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	TenantID  string `dynamodbav:"tenantId"`
	Role      string `dynamodbav:"role"`
	CreatedAt string `dynamodbav:"createdAt"`
	RevokedAt string `dynamodbav:"revokedAt,omitempty"`
}

// Service creates, loads and authenticates tenants.
type Service struct {
	kit    *kit.Kit
	box    *secret.Box
	clock  clock.Clock
	shards int
	opts   Options
	fails  *failureLimiter
	// adminFails limits wrong admin tokens per address, apart from the
	// API keys' budget so they spend none of a tenant's.
	adminFails *failureLimiter

	mu         sync.Mutex
	cache      map[string]cached // tenant id → tenant
	keys       map[string]cachedKey
	missTenant map[string]time.Time // tenant id → when it was not found
	missKey    map[string]time.Time // key hash → when it was unknown or revoked
	// forgets counts forgetKey calls: a lookup caches what it read only
	// when no key was forgotten while it read, so a revocation on this
	// instance is never undone by a lookup that read the item before it.
	forgets uint64
}

type cached struct {
	t  *Tenant
	at time.Time
}

type cachedKey struct {
	o  keyOwner
	at time.Time
}

// keyOwner is who an API key belongs to: its tenant and role.
type keyOwner struct{ tenantID, role string }

// Options tune the service's caches and its limit on failed
// authentications (docs/adr/0022, 0023). Zero fields take the defaults.
type Options struct {
	// TenantCacheTTL bounds how long a loaded tenant (its settings and
	// webhook secrets) is reused; default 30 s.
	TenantCacheTTL time.Duration
	// KeyCacheTTL bounds how long an authenticated API key is reused
	// without reading its item again: the window in which a key revoked
	// on another instance still works here; default 10 s.
	KeyCacheTTL time.Duration
	// MissTTL bounds how long an unknown API key or tenant is answered
	// from memory; default 5 s.
	MissTTL time.Duration
	// FailureBurst is how many failed authentications a client address
	// may make in a row before it gets 429; default 20.
	FailureBurst int
	// FailureEvery is how often a client address earns one more failed
	// attempt back; default 2 s.
	FailureEvery time.Duration
	// Egress checks the URLs a tenant sets (webhooks, PSP); nil is the
	// strict policy (docs/adr/0055).
	Egress *egress.Policy
}

// Default cache windows and failure limits.
const (
	DefaultTenantCacheTTL = 30 * time.Second
	DefaultKeyCacheTTL    = 10 * time.Second
	DefaultMissTTL        = 5 * time.Second
	DefaultFailureBurst   = 20
	DefaultFailureEvery   = 2 * time.Second
)

// maxMisses bounds each negative cache: past it, expired entries are
// swept and, if none expired, the lookup is simply not remembered.
const maxMisses = 10000

func (o Options) withDefaults() Options {
	if o.TenantCacheTTL <= 0 {
		o.TenantCacheTTL = DefaultTenantCacheTTL
	}
	if o.KeyCacheTTL <= 0 {
		o.KeyCacheTTL = DefaultKeyCacheTTL
	}
	if o.MissTTL <= 0 {
		o.MissTTL = DefaultMissTTL
	}
	if o.FailureBurst <= 0 {
		o.FailureBurst = DefaultFailureBurst
	}
	if o.FailureEvery <= 0 {
		o.FailureEvery = DefaultFailureEvery
	}
	return o
}

// NewService returns the tenant service; opts (at most one) tunes its
// caches and failure limits.
func NewService(k *kit.Kit, box *secret.Box, c clock.Clock, shards int, opts ...Options) *Service {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o = o.withDefaults()
	return &Service{kit: k, box: box, clock: c, shards: shards, opts: o,
		fails: newFailureLimiter(o.FailureBurst, o.FailureEvery, maxMisses), adminFails: newFailureLimiter(o.FailureBurst, o.FailureEvery, maxMisses),
		cache: map[string]cached{}, keys: map[string]cachedKey{}, missTenant: map[string]time.Time{}, missKey: map[string]time.Time{}}
}

// CreateInput is the body of POST /v1/tenants.
type CreateInput struct {
	TenantID string `json:"tenantId"`
	Name     string `json:"name"`
	TimeZone string `json:"timezone,omitempty"`
}

// Created is the answer to a tenant creation: the only time the API keys
// and the webhook secret are shown.
type Created struct {
	TenantID      string            `json:"tenantId"`
	APIKeys       map[string]string `json:"apiKeys"`
	WebhookSecret string            `json:"webhookSecret"`
}

func (in *CreateInput) validate() error {
	if !ValidID(in.TenantID) {
		return errs.E(errs.Invalid, "invalid_tenant_id", "tenantId must be 2-32 of a-z 0-9 -, starting with a letter or digit")
	}
	// The name opens every SMS the tenant sends: no line breaks, NUL or
	// bidi controls (collections/text).
	if err := text.Check("name", in.Name); err != nil {
		return err
	}
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" || len(in.Name) > 200 {
		return errs.E(errs.Invalid, "invalid_name", "name must be 1-200 characters")
	}
	if in.TimeZone == "" {
		in.TimeZone = DefaultTimeZone
	}
	if _, err := time.LoadLocation(in.TimeZone); err != nil || !strings.Contains(in.TimeZone, "/") {
		return errs.E(errs.Invalid, "invalid_timezone", "timezone must be an IANA zone such as America/Sao_Paulo")
	}
	return nil
}

// hashKey is how API keys are stored: never in clear.
func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// tenantOfKey extracts the tenant id an API key carries.
func tenantOfKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, "lst_")
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '_')
	if i <= 0 || len(rest)-i-1 != 48 {
		return "", false
	}
	id := rest[:i]
	return id, ValidID(id)
}

// Create registers a tenant with fresh keys and secrets; 409 when it exists.
func (s *Service) Create(ctx context.Context, in CreateInput) (*Created, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	now := s.clock.Now().UTC()
	sec := secrets{
		DebtorKeys: map[int][]byte{1: secret.Random(32)},
		Webhook:    newWebhookSecret(),
		Cursor:     secret.Random(32),
	}
	raw, err := json.Marshal(sec)
	if err != nil {
		return nil, err
	}
	pk := keys.Tenant(in.TenantID)
	rec := record{PK: pk, SK: keys.TenantSK, Type: "TENANT", TenantID: in.TenantID, Name: in.Name, TimeZone: in.TimeZone,
		Shards: s.shards, KeyVersion: 1, Secrets: s.box.Seal(raw, []byte(pk)), Version: 1, CreatedAt: keys.Timestamp(now)}
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return nil, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	entry, err := attributevalue.MarshalMap(directoryRecord{PK: keys.Directory, SK: keys.DirectoryEntry(in.TenantID), Type: "TENANT_ENTRY",
		TenantID: in.TenantID, CreatedAt: keys.Timestamp(now)})
	if err != nil {
		return nil, err
	}
	// The directory entry commits with the tenant, so every tenant is listed
	// (List) and none is listed that does not exist.
	actions := []kit.Action{kit.PutAction(item, &notExists), kit.PutAction(entry, &notExists)}
	out := &Created{TenantID: in.TenantID, APIKeys: map[string]string{}, WebhookSecret: sec.Webhook}
	for _, role := range keyRoles() {
		key := s.newAPIKey(in.TenantID)
		out.APIKeys[string(role)] = key
		ki, err := attributevalue.MarshalMap(apiKeyRecord{PK: pk, SK: keys.APIKey(hashKey(key)), Type: "APIKEY",
			TenantID: in.TenantID, Role: string(role), CreatedAt: keys.Timestamp(now)})
		if err != nil {
			return nil, err
		}
		actions = append(actions, kit.PutAction(ki, &notExists))
	}
	ctx, _ = kit.Operation(ctx, "tenant.create")
	if err := s.kit.Tenant(in.TenantID, nil).WithDirectory().Transact(ctx, actions...); err != nil {
		var tc *kit.TxCanceled
		if errors.As(err, &tc) && tc.Failed(0) {
			return nil, errs.E(errs.Conflict, "tenant_exists", "tenant %s already exists", in.TenantID)
		}
		return nil, fmt.Errorf("create tenant: %w", err)
	}
	// A webhook or key naming this tenant may have missed just before:
	// it works at once here (other instances within MissTTL).
	s.Invalidate(in.TenantID)
	for _, k := range out.APIKeys {
		s.forgetKey(hashKey(k))
	}
	return out, nil
}

// List returns the id of every tenant, in id order, from the directory of
// tenants: one strongly consistent Query (paged), never a Scan. Jobs that
// visit every tenant (the agenda scheduler, lastro worker) start here.
func (s *Service) List(ctx context.Context) ([]string, error) {
	ctx, _ = kit.Operation(ctx, "tenant.list")
	dir := s.kit.Directory()
	q := kit.Query{Partition: keys.Directory, Sort: kit.BeginsWith(keys.DirectoryPrefix), Consistent: true}
	var ids []string
	for cursor := ""; ; {
		page, err := dir.QueryPage(ctx, q, cursor)
		if err != nil {
			return nil, fmt.Errorf("list tenants: %w", err)
		}
		for _, it := range page.Items {
			var rec directoryRecord
			if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
				return nil, fmt.Errorf("decode directory entry: %w", err)
			}
			ids = append(ids, rec.TenantID)
		}
		if page.Next == "" {
			return ids, nil
		}
		cursor = page.Next
	}
}

var errTenantNotFound = errs.E(errs.NotFound, "tenant_not_found", "tenant not found")

// Get loads a tenant (cached briefly); NotFound when it does not exist. A
// tenant found missing is remembered for MissTTL, so an unknown tenant
// named again and again (a misconfigured or hostile webhook sender) costs
// one consistent read per window, not one per request.
func (s *Service) Get(ctx context.Context, id string) (*Tenant, error) {
	now := time.Now()
	s.mu.Lock()
	if c, ok := s.cache[id]; ok && now.Sub(c.at) < s.opts.TenantCacheTTL {
		s.mu.Unlock()
		return c.t, nil
	}
	if at, ok := s.missTenant[id]; ok && now.Sub(at) < s.opts.MissTTL {
		s.mu.Unlock()
		return nil, errTenantNotFound
	}
	s.mu.Unlock()
	t, err := s.load(ctx, id)
	if errs.Is(err, errs.NotFound) && ValidID(id) {
		s.mu.Lock()
		remember(s.missTenant, id, now, s.opts.MissTTL)
		s.mu.Unlock()
	}
	return t, err
}

// cachedTenant reports whether tenant id is in the cache and fresh: using
// it costs no store read.
func (s *Service) cachedTenant(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cache[id]
	return ok && time.Since(c.at) < s.opts.TenantCacheTTL
}

// Invalidate drops what this instance remembers of a tenant, found or
// not (after its settings change, or once it is created).
func (s *Service) Invalidate(id string) {
	s.mu.Lock()
	delete(s.cache, id)
	delete(s.missTenant, id)
	s.mu.Unlock()
}

// remember records a miss at now in a negative cache bounded at
// maxMisses: when full, expired entries go; when none has expired the
// miss is not remembered (the next lookup reads the store again, which
// is only what it costs without the cache).
func remember(m map[string]time.Time, k string, now time.Time, ttl time.Duration) {
	if len(m) >= maxMisses {
		for mk, at := range m {
			if now.Sub(at) >= ttl {
				delete(m, mk)
			}
		}
		if len(m) >= maxMisses {
			return
		}
	}
	m[k] = now
}

func (s *Service) load(ctx context.Context, id string) (*Tenant, error) {
	if !ValidID(id) {
		return nil, errTenantNotFound
	}
	ctx, _ = kit.Operation(ctx, "tenant.load")
	it, err := s.kit.Tenant(id, nil).Get(ctx, kit.Key{PK: keys.Tenant(id), SK: keys.TenantSK}, true)
	if err != nil {
		return nil, fmt.Errorf("load tenant: %w", err)
	}
	if it == nil {
		return nil, errTenantNotFound
	}
	var rec record
	if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
		return nil, fmt.Errorf("decode tenant: %w", err)
	}
	raw, err := s.box.Open(rec.Secrets, []byte(rec.PK))
	if err != nil {
		return nil, fmt.Errorf("open tenant secrets: %w", err)
	}
	var sec secrets
	if err := json.Unmarshal(raw, &sec); err != nil {
		return nil, fmt.Errorf("decode tenant secrets: %w", err)
	}
	loc, err := time.LoadLocation(rec.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("tenant time zone: %w", err)
	}
	created, _ := time.Parse(time.RFC3339, rec.CreatedAt)
	t := &Tenant{ID: rec.TenantID, Name: rec.Name, TimeZone: rec.TimeZone, Location: loc, Shards: rec.Shards,
		KeyVersion: rec.KeyVersion, ChargesPolicy: rec.ChargesPolicy, DunningPolicy: rec.DunningPolicy,
		Version: rec.Version, CreatedAt: created, Holidays: rec.Holidays, MessagingURL: rec.MessagingURL, EventsURL: rec.EventsURL, boleto: rec.Boleto, outcomeCodes: rec.OutcomeCodes, secrets: sec}
	if len(rec.Holidays) > 0 {
		var extra []calendar.Date
		for _, h := range rec.Holidays {
			if d, err := calendar.Parse(h); err == nil {
				extra = append(extra, d)
			}
		}
		t.calendar = calendar.New(extra...)
	}
	s.mu.Lock()
	s.cache[id] = cached{t: t, at: time.Now()}
	delete(s.missTenant, id)
	s.mu.Unlock()
	return t, nil
}

var errUnauthenticated = errs.E(errs.Unauth, "unauthenticated", "missing or invalid API key")

// keyOwner resolves an API key to its tenant and role; Unauth when the
// key is unknown, revoked or malformed. client is the caller's address
// for the failure limit ("" : not limited): a client over its budget of
// failures gets 429 instead of a store read for an untagged key, though a
// key already cached or carrying a valid tag still passes (ADR 0057).
func (s *Service) keyOwner(ctx context.Context, key, client string) (keyOwner, error) {
	now := time.Now()
	id, ok := tenantOfKey(key)
	if !ok {
		s.failed(client, now)
		return keyOwner{}, errUnauthenticated
	}
	h := hashKey(key)
	s.mu.Lock()
	if c, ok := s.keys[h]; ok && now.Sub(c.at) < s.opts.KeyCacheTTL {
		s.mu.Unlock()
		return c.o, nil
	}
	at, missed := s.missKey[h]
	missed = missed && now.Sub(at) < s.opts.MissTTL
	s.mu.Unlock()
	// A key whose tag verifies was issued by this engine (ADR 0057): it is
	// looked up whatever others sent from its address, so no one's
	// failures lock a valid key out. Only untagged keys (issued before
	// tags, or forged) are held to the failure budgets, per address and
	// per tenant they name.
	tagged := s.keyTagged(key, id)
	if !tagged {
		if err := s.overLimit(client, now); err != nil {
			return keyOwner{}, err
		}
		if err := s.overLimit(tenantBucket(id), now); err != nil {
			return keyOwner{}, err
		}
	}
	if missed {
		s.failedKey(client, id, tagged, now)
		return keyOwner{}, errUnauthenticated
	}
	ctx, _ = kit.Operation(ctx, "tenant.authenticate")
	since := s.keyEpoch()
	it, err := s.kit.Tenant(id, nil).Get(ctx, kit.Key{PK: keys.Tenant(id), SK: keys.APIKey(h)}, true)
	if err != nil {
		return keyOwner{}, fmt.Errorf("authenticate: %w", err)
	}
	var rec apiKeyRecord
	if it != nil {
		if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
			return keyOwner{}, fmt.Errorf("decode API key: %w", err)
		}
	}
	if it == nil || rec.RevokedAt != "" {
		s.mu.Lock()
		delete(s.keys, h)
		remember(s.missKey, h, now, s.opts.MissTTL)
		s.mu.Unlock()
		s.failedKey(client, id, tagged, now)
		return keyOwner{}, errUnauthenticated
	}
	o := keyOwner{tenantID: rec.TenantID, role: rec.Role}
	s.mu.Lock()
	s.cacheKey(h, o, now, since)
	delete(s.missKey, h)
	s.mu.Unlock()
	return o, nil
}

// forgetKey drops what this instance remembers of an API key, found or
// not: after it is created or revoked here, the next request reads it.
func (s *Service) forgetKey(hash string) {
	s.mu.Lock()
	delete(s.keys, hash)
	delete(s.missKey, hash)
	s.forgets++
	s.mu.Unlock()
}

// keyEpoch is the forget count a lookup starts from (cacheKey's since).
func (s *Service) keyEpoch() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forgets
}

// cacheKey remembers a key found valid by a lookup that started at epoch
// since, unless a key was forgotten meanwhile (the item it read may be
// the one just revoked); s.mu is held.
func (s *Service) cacheKey(h string, o keyOwner, now time.Time, since uint64) {
	if s.forgets == since {
		s.keys[h] = cachedKey{o: o, at: now}
	}
}
