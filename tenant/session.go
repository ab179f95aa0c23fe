package tenant

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/keys"
	"lastro/collections/kit"
)

// KeyFingerprint is the name web sessions give an API key: the hex
// SHA-256 the key is stored under. It identifies the key item, so a
// session can be checked against it, but it authenticates nothing by
// itself (the API takes the key, whose 192 random bits it hides).
func KeyFingerprint(key string) string { return hashKey(key) }

var fingerprintPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// SignIn resolves an API key for a web login, counting failures against
// client like the API does: it returns the key's tenant, role and
// fingerprint; Unauth when the key is unknown, revoked or malformed, 429
// when client is over its failure budget.
func (s *Service) SignIn(ctx context.Context, key, client string) (tenantID, role, fingerprint string, err error) {
	o, err := s.keyOwner(ctx, key, client)
	if err != nil {
		return "", "", "", err
	}
	return o.tenantID, o.role, hashKey(key), nil
}

// CheckFingerprint re-validates a web session's key: it returns the
// role of the key named by fingerprint when the key still exists, is not
// revoked and belongs to tenantID. It shares the API keys' cache, so a
// key revoked on this instance fails at once and one revoked elsewhere
// within KeyCacheTTL.
func (s *Service) CheckFingerprint(ctx context.Context, tenantID, fingerprint string) (string, error) {
	if !ValidID(tenantID) || !fingerprintPattern.MatchString(fingerprint) {
		return "", errUnauthenticated
	}
	now := time.Now()
	s.mu.Lock()
	if c, ok := s.keys[fingerprint]; ok && now.Sub(c.at) < s.opts.KeyCacheTTL {
		s.mu.Unlock()
		if c.o.tenantID != tenantID {
			return "", errUnauthenticated
		}
		return c.o.role, nil
	}
	s.mu.Unlock()
	ctx, _ = kit.Operation(ctx, "tenant.session")
	since := s.keyEpoch()
	it, err := s.kit.Tenant(tenantID, nil).Get(ctx, kit.Key{PK: keys.Tenant(tenantID), SK: keys.APIKey(fingerprint)}, true)
	if err != nil {
		return "", fmt.Errorf("check session key: %w", err)
	}
	var rec apiKeyRecord
	if it != nil {
		if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
			return "", fmt.Errorf("decode API key: %w", err)
		}
	}
	if it == nil || rec.RevokedAt != "" || rec.TenantID != tenantID {
		s.mu.Lock()
		delete(s.keys, fingerprint)
		s.mu.Unlock()
		return "", errUnauthenticated
	}
	s.mu.Lock()
	s.cacheKey(fingerprint, keyOwner{tenantID: rec.TenantID, role: rec.Role}, now, since)
	s.mu.Unlock()
	return rec.Role, nil
}
