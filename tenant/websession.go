package tenant

import (
	"context"
	"encoding/hex"
	"fmt"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/secret"
)

// sessionIDBytes is how many random bytes name a web session: 128 bits,
// so an id cannot be guessed and two logins never share one.
const sessionIDBytes = 16

var sessionIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// WebSession is a web page login as the server keeps it (docs/adr/0058):
// an item in the tenant's partition named by a random id. The browser
// holds the id only; the key's fingerprint stays in the item, so a
// revoked key still ends the sessions it opened.
type WebSession struct {
	ID       string
	TenantID string
	Role     string // the key's role, re-read on every check
	Expires  time.Time
	// KeyID names the key the session logged in with (its keyId, 16 hex
	// of its SHA-256, as GET /v1/tenant/keys lists it): the collector's
	// id on the call list and the dashboard, never a name (ADR 0085).
	KeyID string
}

// keyIDOf is a key fingerprint's keyId.
func keyIDOf(fingerprint string) string {
	if len(fingerprint) < KeyIDLength {
		return fingerprint
	}
	return fingerprint[:KeyIDLength]
}

// webSessionRecord is the stored shape of a WebSession. ExpiresAt is the
// table's TTL attribute (table.TTLAttribute), so an expired session is
// deleted by the store without a sweep; until then Session refuses it by
// its own reading of the time.
type webSessionRecord struct {
	PK          string `dynamodbav:"PK"`
	SK          string `dynamodbav:"SK"`
	Type        string `dynamodbav:"type"`
	TenantID    string `dynamodbav:"tenantId"`
	Role        string `dynamodbav:"role"`
	Fingerprint string `dynamodbav:"fingerprint"`
	CreatedAt   string `dynamodbav:"createdAt"`
	ExpiresAt   int64  `dynamodbav:"expiresAt"` // epoch seconds
}

func webSessionKey(tenantID, id string) kit.Key {
	return kit.Key{PK: keys.Tenant(tenantID), SK: keys.WebSession(id)}
}

// StartSession logs a browser in with an API key: it resolves the key
// like SignIn (failures counted against client) and stores a new session
// of ttl under a fresh random id, with one conditioned PutItem.
func (s *Service) StartSession(ctx context.Context, key, client string, ttl time.Duration) (*WebSession, error) {
	tid, role, fp, err := s.SignIn(ctx, key, client)
	if err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "tenant.session.start")
	now := s.clock.Now()
	ws := &WebSession{ID: hex.EncodeToString(secret.Random(sessionIDBytes)), TenantID: tid, Role: role, Expires: now.Add(ttl), KeyID: keyIDOf(fp)}
	k := webSessionKey(tid, ws.ID)
	rec := webSessionRecord{PK: k.PK, SK: k.SK, Type: "WEBSESSION", TenantID: tid, Role: role, Fingerprint: fp,
		CreatedAt: keys.Timestamp(now), ExpiresAt: ws.Expires.Unix()}
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return nil, err
	}
	// 128 random bits do not collide, but a put that could overwrite
	// another login's session must say it may not.
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	if err := s.kit.Tenant(tid, nil).Put(ctx, item, &notExists); err != nil {
		return nil, fmt.Errorf("start web session: %w", err)
	}
	return ws, nil
}

// Session checks a browser's session: one strongly consistent GetItem of
// the session item (1 read unit; consistent so a logout on any instance
// is seen at once), then the key it names through CheckFingerprint
// (cached for KeyCacheTTL). It returns Unauth when the id is malformed,
// the session was ended or has expired, or its key is revoked.
func (s *Service) Session(ctx context.Context, tenantID, id string) (*WebSession, error) {
	if !ValidID(tenantID) || !sessionIDPattern.MatchString(id) {
		return nil, errUnauthenticated
	}
	ctx, _ = kit.Operation(ctx, "tenant.session")
	it, err := s.kit.Tenant(tenantID, nil).Get(ctx, webSessionKey(tenantID, id), true)
	if err != nil {
		return nil, fmt.Errorf("read web session: %w", err)
	}
	if it == nil {
		return nil, errUnauthenticated
	}
	var rec webSessionRecord
	if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
		return nil, fmt.Errorf("decode web session: %w", err)
	}
	// The TTL deletes expired items late (up to days on DynamoDB): the
	// expiry is enforced here, not by the item's absence.
	expires := time.Unix(rec.ExpiresAt, 0)
	if rec.TenantID != tenantID || !s.clock.Now().Before(expires) {
		return nil, errUnauthenticated
	}
	role, err := s.CheckFingerprint(ctx, tenantID, rec.Fingerprint)
	if err != nil {
		return nil, err
	}
	return &WebSession{ID: id, TenantID: tenantID, Role: role, Expires: expires, KeyID: keyIDOf(rec.Fingerprint)}, nil
}

// EndSession deletes a session (logout): a replayed cookie then finds no
// item. Deleting an absent session is not an error, so the delete needs
// no condition: racing logouts end in the same state.
func (s *Service) EndSession(ctx context.Context, tenantID, id string) error {
	if !ValidID(tenantID) || !sessionIDPattern.MatchString(id) {
		return errUnauthenticated
	}
	ctx = kit.Within(ctx, "tenant.session.end")
	if err := s.kit.Tenant(tenantID, nil).Delete(ctx, webSessionKey(tenantID, id), nil); err != nil {
		return fmt.Errorf("end web session: %w", err)
	}
	return nil
}
