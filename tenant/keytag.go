package tenant

import (
	"crypto/hmac"
	"encoding/hex"
	"time"

	"lastro/collections/secret"
)

// An API key is lst_<tenant>_<48 hex>: 16 random bytes, then the first 8
// bytes of a tag over the tenant and the random part under a MAC key
// derived from the data key (docs/adr/0057-api-key-tags-and-failure-limits.md).
// The tag proves, without a store read, that this engine issued the key,
// so failed attempts by others never stand between a valid key and its
// lookup. Keys issued before tags (24 random bytes) still authenticate,
// through the failure-limited path.
const (
	keyRandomBytes = 16
	keyTagBytes    = 8
	keyTagLabel    = "lastro api key tag v1"
)

// newAPIKey returns a fresh tagged key that carries its tenant.
func (s *Service) newAPIKey(tenantID string) string {
	random := hex.EncodeToString(secret.Random(keyRandomBytes))
	return "lst_" + tenantID + "_" + random + s.keyTag(tenantID, random)
}

func (s *Service) keyTag(tenantID, random string) string {
	return hex.EncodeToString(s.box.Tag(keyTagLabel, tenantID, random)[:keyTagBytes])
}

// keyTagged reports whether key, whose tenant tenantOfKey found to be
// tenantID, carries a valid tag (constant time).
func (s *Service) keyTagged(key, tenantID string) bool {
	const hexRandom, hexTag = 2 * keyRandomBytes, 2 * keyTagBytes
	if len(key) < hexRandom+hexTag {
		return false
	}
	tail := key[len(key)-hexRandom-hexTag:]
	// Under every data key of the ring: a key issued before a rotation
	// keeps its tag while the old key is kept (docs/adr/0083).
	ok := false
	for _, tag := range s.box.Tags(keyTagLabel, tenantID, tail[:hexRandom]) {
		if hmac.Equal([]byte(tail[hexRandom:]), []byte(hex.EncodeToString(tag[:keyTagBytes]))) {
			ok = true
		}
	}
	return ok
}

// tenantBucket is the failure bucket of untagged keys naming tenantID,
// apart from any address's (an address is an IP or an IPv6 /64, never
// this shape).
func tenantBucket(tenantID string) string { return "tenant:" + tenantID }

// failedKey spends a failure of an API key: untagged keys spend one of
// the address's and one of the tenant's; a tagged key that failed (it was
// revoked) spends none, since only tagged keys this engine issued get
// there and their lookups are never refused.
func (s *Service) failedKey(client, tenantID string, tagged bool, now time.Time) {
	if tagged {
		return
	}
	s.failed(client, now)
	s.failed(tenantBucket(tenantID), now)
}
