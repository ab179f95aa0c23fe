package debtor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"

	"lastro/collections/errs"
	"lastro/collections/keys"
)

// KeyLen is the debtor key's length in hex characters (64 bits): docs/design.md#debtor-key
// section 3 weighs it against collisions, which registration detects.
const KeyLen = 16

// Key is the debtor key of a normalised document under a tenant secret:
// hex(HMAC-SHA256(secret, digits))[:16]. Deterministic (no index is needed
// to find a debtor), not reversible without the secret, and different in
// every tenant for the same person.
func Key(secret []byte, digits string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(digits))
	return hex.EncodeToString(m.Sum(nil))[:KeyLen]
}

// ValidKey validates a debtor key taken from a request before it goes
// into a table key.
func ValidKey(k string) error {
	if !keys.ValidDebtorKey(k) {
		return errs.E(errs.Invalid, "invalid_debtor_key", "debtorKey must be 16 lower-case hex characters")
	}
	return nil
}
