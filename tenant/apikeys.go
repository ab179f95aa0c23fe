package tenant

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
)

// KeyIDLength is how many hex digits of an API key's SHA-256 name it in
// the key endpoints: 64 bits, unique within a tenant for any number of
// keys it will hold, and useless for finding the key (192 random bits).
const KeyIDLength = 16

var keyIDPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

// apiKeyPrefix starts the sort key of every API key item.
var apiKeyPrefix = keys.APIKey("")

// KeyInfo is an API key as listed: never the key, never its full hash.
type KeyInfo struct {
	KeyID     string  `json:"keyId"`
	Role      string  `json:"role"`
	CreatedAt string  `json:"createdAt"`
	RevokedAt *string `json:"revokedAt"`
}

// KeyPage is a page of a tenant's API keys, revoked ones included.
type KeyPage struct {
	Items      []KeyInfo `json:"items"`
	NextCursor *string   `json:"nextCursor"`
}

// NewKeyInput is the body of POST /v1/tenant/keys.
type NewKeyInput struct {
	Role string `json:"role"`
}

// NewKey is a created API key: the only time the key itself is shown.
type NewKey struct {
	KeyID     string `json:"keyId"`
	Role      string `json:"role"`
	CreatedAt string `json:"createdAt"`
	APIKey    string `json:"apiKey"`
}

func (r apiKeyRecord) hash() string { return strings.TrimPrefix(r.SK, apiKeyPrefix) }

func (r apiKeyRecord) info() KeyInfo {
	k := KeyInfo{KeyID: r.hash()[:KeyIDLength], Role: r.Role, CreatedAt: r.CreatedAt}
	if r.RevokedAt != "" {
		at := r.RevokedAt
		k.RevokedAt = &at
	}
	return k
}

func (r apiKeyRecord) active() bool { return r.RevokedAt == "" }

func (s *Service) keyQuery(t *Tenant, limit int32) kit.Query {
	return kit.Query{Partition: keys.Tenant(t.ID), Sort: kit.BeginsWith(apiKeyPrefix), Limit: limit, Consistent: true}
}

// ListKeys pages through the tenant's API keys (one consistent Query on
// the tenant's partition), revoked ones included with their revokedAt.
func (s *Service) ListKeys(ctx context.Context, t *Tenant, limit int32, cursor string) (*KeyPage, error) {
	ctx = kit.Within(ctx, "tenant.keys")
	page, err := s.kit.Tenant(t.ID, t.CursorKey()).QueryPage(ctx, s.keyQuery(t, limit), cursor)
	if err != nil {
		return nil, err
	}
	out := &KeyPage{Items: []KeyInfo{}}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	for _, it := range page.Items {
		var rec apiKeyRecord
		if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
			return nil, fmt.Errorf("decode API key: %w", err)
		}
		out.Items = append(out.Items, rec.info())
	}
	return out, nil
}

// allKeys reads every API key item of the tenant.
func (s *Service) allKeys(ctx context.Context, t *Tenant) ([]apiKeyRecord, error) {
	db := s.kit.Tenant(t.ID, t.CursorKey())
	var out []apiKeyRecord
	cursor := ""
	for {
		page, err := db.QueryPage(ctx, s.keyQuery(t, 0), cursor)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			var rec apiKeyRecord
			if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
				return nil, fmt.Errorf("decode API key: %w", err)
			}
			out = append(out, rec)
		}
		if cursor = page.Next; cursor == "" {
			return out, nil
		}
	}
}

// CreateKey adds an API key of a role to the tenant and returns it, the
// only time it is shown. It works at once on this instance (even if the
// same key had missed before) and on the others at their first lookup.
func (s *Service) CreateKey(ctx context.Context, t *Tenant, in NewKeyInput) (*NewKey, error) {
	valid := false
	for _, r := range keyRoles() {
		valid = valid || string(r) == in.Role
	}
	if !valid {
		return nil, errs.E(errs.Invalid, "invalid_role", "role must be operator, supervisor or compliance")
	}
	ctx = kit.Within(ctx, "tenant.key.create")
	key := s.newAPIKey(t.ID)
	h := hashKey(key)
	rec := apiKeyRecord{PK: keys.Tenant(t.ID), SK: keys.APIKey(h), Type: "APIKEY", TenantID: t.ID, Role: in.Role,
		CreatedAt: keys.Timestamp(s.clock.Now())}
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return nil, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	if err := s.kit.Tenant(t.ID, nil).Write(ctx, kit.PutAction(item, &notExists)); err != nil {
		return nil, fmt.Errorf("create API key: %w", err)
	}
	s.forgetKey(h)
	return &NewKey{KeyID: h[:KeyIDLength], Role: rec.Role, CreatedAt: rec.CreatedAt, APIKey: key}, nil
}

var (
	errKeyNotFound       = errs.E(errs.NotFound, "key_not_found", "no API key with this keyId")
	errLastSupervisorKey = errs.E(errs.Conflict, "last_supervisor_key",
		"this is the tenant's last active supervisor key: create another supervisor key before revoking it")
)

// RevokeKey revokes the tenant's API key keyID: it is 401 on this
// instance's next request and on the others' within KeyCacheTTL
// (docs/adr/0022). Revoking a revoked key answers it as it is. The last
// active supervisor key is refused (409): the tenant could no longer
// manage its keys. The refusal holds under concurrency: the revocation
// is a transaction that also checks another supervisor key is still
// active, so two revocations racing for the last two cannot both commit.
func (s *Service) RevokeKey(ctx context.Context, t *Tenant, keyID string) (*KeyInfo, error) {
	if !keyIDPattern.MatchString(keyID) {
		return nil, errs.E(errs.Invalid, "invalid_key_id", "keyId must be %d lowercase hex digits", KeyIDLength)
	}
	ctx = kit.Within(ctx, "tenant.key.revoke")
	db := s.kit.Tenant(t.ID, nil)
	active := expression.AttributeExists(expression.Name("PK")).And(expression.AttributeNotExists(expression.Name("revokedAt")))
	for range 5 {
		all, err := s.allKeys(ctx, t)
		if err != nil {
			return nil, err
		}
		var target *apiKeyRecord
		var other *apiKeyRecord // another active supervisor key
		for i := range all {
			r := &all[i]
			switch {
			case strings.HasPrefix(r.hash(), keyID):
				target = r
			case r.Role == roleSupervisor && r.active() && other == nil:
				other = r
			}
		}
		if target == nil {
			return nil, errKeyNotFound
		}
		if !target.active() {
			info := target.info()
			return &info, nil
		}
		at := keys.Timestamp(s.clock.Now())
		revoke := kit.UpdateAction(kit.Key{PK: target.PK, SK: target.SK},
			expression.Set(expression.Name("revokedAt"), expression.Value(at)), &active)
		actions := []kit.Action{revoke}
		if target.Role == roleSupervisor {
			if other == nil {
				return nil, errLastSupervisorKey
			}
			actions = append(actions, kit.CheckAction(kit.Key{PK: other.PK, SK: other.SK}, active))
		}
		err = db.Transact(ctx, actions...)
		if errors.Is(err, kit.ErrConditionFailed) || errors.Is(err, kit.ErrConflict) {
			continue // revoked meanwhile, or the other supervisor key was: decide again
		}
		if err != nil {
			return nil, fmt.Errorf("revoke API key: %w", err)
		}
		s.forgetKey(target.hash())
		target.RevokedAt = at
		info := target.info()
		return &info, nil
	}
	return nil, errs.E(errs.Conflict, "keys_changed", "the tenant's API keys kept changing; retry")
}

// roleSupervisor is the supervisor role's name as stored on key items
// (web.Supervisor on the HTTP side): a tenant keeps at least one.
const roleSupervisor = "supervisor"
