package debtor

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/tenant"
)

// keyNamer is a sealer that names the key its messages are wrapped under
// (pii.ESDK).
type keyNamer interface {
	Current() string
	KeyOf(ciphertext []byte) string
}

// ErrSealerKeys is returned when the sealer cannot name its keys, so
// nothing can be re-sealed.
var ErrSealerKeys = errors.New("debtor: the sealer does not name its keys")

// ResealProfile re-wraps the personal data of debtor dk of t under the
// key that seals now when another key of the ring wrapped them: one
// UpdateItem of the PROFILE's pii, conditioned on the version and the
// ciphertext read (a concurrent change wins and the read is retried).
// The data are the same, so the version stays and a client's PATCH in
// flight is not refused. It reports the key that had wrapped them (""
// for a profile with none: erased, or gone) and whether it wrote; with dry
// set it only reports (docs/adr/0083).
func (s *Service) ResealProfile(ctx context.Context, t *tenant.Tenant, dk string, dry bool) (was string, wrote bool, err error) {
	kn, ok := s.sealer.(keyNamer)
	if !ok {
		return "", false, ErrSealerKeys
	}
	pk := keys.Debtor(t.ID, dk)
	key := kit.Key{PK: pk, SK: keys.ProfileSK}
	for range 5 {
		it, err := s.db(t).Get(ctx, key, true)
		if err != nil {
			return "", false, fmt.Errorf("read profile: %w", err)
		}
		if it == nil {
			return "", false, nil
		}
		var rec profileItem
		if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
			return "", false, fmt.Errorf("decode profile: %w", err)
		}
		if rec.ErasedAt != "" || len(rec.PII) == 0 {
			return "", false, nil
		}
		was = kn.KeyOf(rec.PII)
		if was == kn.Current() || dry {
			return was, false, nil
		}
		owner := pii.Owner{Tenant: t.ID, Partition: pk}
		plain, err := s.sealer.Open(ctx, rec.PII, owner)
		if err != nil {
			return "", false, fmt.Errorf("open profile: %w", err)
		}
		sealed, err := s.sealer.Seal(ctx, plain, owner)
		if err != nil {
			return "", false, err
		}
		upd := expression.Set(expression.Name("pii"), expression.Value(sealed))
		cond := expression.Name("version").Equal(expression.Value(rec.Version)).
			And(expression.Name("pii").Equal(expression.Value(rec.PII)))
		_, err = s.db(t).Update(kit.Within(ctx, "debtor.reseal"), key, upd, &cond, "")
		if errors.Is(err, kit.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return "", false, fmt.Errorf("reseal profile: %w", err)
		}
		return was, true, nil
	}
	return "", false, errs.E(errs.Conflict, "profile_changed", "the profile kept changing; retry")
}
