package tenant

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
)

// ErrNoTenant is Reseal's answer for a tenant id with no TENANT item (an
// offboarded tenant whose directory entry went first).
var ErrNoTenant = errors.New("tenant: no such tenant")

// Reseal re-seals tenant id's secrets under the data key that seals now
// when another key of the ring sealed them, with one UpdateItem
// conditioned on the item's version and the sealed value read (a
// concurrent change wins and the read is retried). The secrets are the
// same, so the version stays. It reports the key that had sealed them and
// whether it wrote; with dry set it only reports (docs/adr/0083).
func (s *Service) Reseal(ctx context.Context, id string, dry bool) (was string, wrote bool, err error) {
	pk := keys.Tenant(id)
	db := s.kit.Tenant(id, nil)
	for range 5 {
		it, err := db.Get(ctx, kit.Key{PK: pk, SK: keys.TenantSK}, true)
		if err != nil {
			return "", false, fmt.Errorf("read tenant: %w", err)
		}
		if it == nil {
			return "", false, ErrNoTenant
		}
		var rec record
		if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
			return "", false, fmt.Errorf("decode tenant: %w", err)
		}
		raw, key, err := s.box.OpenKey(rec.Secrets, []byte(pk))
		if err != nil {
			return "", false, fmt.Errorf("open tenant secrets of %s: %w", id, err)
		}
		if key == s.box.Current() || dry {
			return key, false, nil
		}
		upd := expression.Set(expression.Name("secrets"), expression.Value(s.box.Seal(raw, []byte(pk))))
		cond := expression.Name("version").Equal(expression.Value(rec.Version)).
			And(expression.Name("secrets").Equal(expression.Value(rec.Secrets)))
		_, err = db.Update(ctx, kit.Key{PK: pk, SK: keys.TenantSK}, upd, &cond, "")
		if errors.Is(err, kit.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return "", false, fmt.Errorf("reseal tenant secrets: %w", err)
		}
		s.Invalidate(id)
		return key, true, nil
	}
	return "", false, errs.E(errs.Conflict, "tenant_changed", "the tenant kept changing; retry")
}
