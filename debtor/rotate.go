package debtor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/tenant"
)

// A debtor-key rotation (docs/adr/0075) moves each debtor's collection
// to the key its document has under the tenant's new secret. The PROFILE
// carries the move's marks: the copy names the key it is moving from
// (movingFrom) until the switch, the old PROFILE left behind names the
// new key (movedTo), and the copy then names the key it moved from
// (movedFrom) until the rotation finishes. Lookups follow them.

// Attributes of the PROFILE a rotation sets (profileItem).
const (
	AttrMovedTo    = "movedTo"
	AttrMovingFrom = "movingFrom"
	AttrMovedFrom  = "movedFrom"
)

// ErrMoved answers a read under a debtor key that a rotation replaced:
// the debtor is found again by document (POST /v1/debtors/lookup).
var ErrMoved = errs.E(errs.NotFound, "debtor_moved", "the debtor key was replaced by a key rotation: look the debtor up by document again")

func str(it kit.Item, attr string) string {
	if v, ok := it[attr].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// locate finds doc's debtor: its key under the current secret version
// and, while a rotation is unfinished, under the older ones, newest first
// (one more GetItem per older version, only on a miss). A copy not yet
// switched answers the old key (the old partition is still the debtor's);
// an old PROFILE that moved answers the new key. It returns "" and nil
// when nobody holds the document, errCollision when another document
// holds its key.
func (s *Service) locate(ctx context.Context, t *tenant.Tenant, doc Document) (string, kit.Item, error) {
	versions := append([]int{t.KeyVersion}, t.PreviousKeyVersions()...)
	for _, v := range versions {
		secret, ok := t.DebtorKeySecret(v)
		if !ok {
			return "", nil, fmt.Errorf("tenant %s has no debtor-key secret version %d", t.ID, v)
		}
		dk := s.keyOf(secret, doc.Digits())
		it, err := s.profile(ctx, t, dk)
		if err != nil || it == nil {
			if err != nil {
				return "", nil, err
			}
			continue
		}
		if from := str(it, AttrMovingFrom); from != "" {
			old, err := s.profile(ctx, t, from)
			if err != nil {
				return "", nil, err
			}
			if old != nil && str(old, AttrMovedTo) == "" {
				dk, it = from, old
			} else if it, err = s.profile(ctx, t, dk); err != nil || it == nil {
				return "", nil, err // switched meanwhile: the copy, read again
			}
		} else if to := str(it, AttrMovedTo); to != "" {
			if it, err = s.profile(ctx, t, to); err != nil {
				return "", nil, err
			}
			if it == nil {
				continue
			}
			dk = to
		}
		same, err := s.sameDocument(ctx, t, it, doc)
		if err != nil {
			return "", nil, err
		}
		if !same {
			return "", nil, errCollision
		}
		return dk, it, nil
	}
	return "", nil, nil
}

// profile reads dk's PROFILE, strongly consistent; nil when absent.
func (s *Service) profile(ctx context.Context, t *tenant.Tenant, dk string) (kit.Item, error) {
	return s.db(t).Get(ctx, kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.ProfileSK}, true)
}

// Rekeyed is a PROFILE prepared for its new partition by RekeyProfile.
type Rekeyed struct {
	DebtorKey string   // the key under the new secret version
	Item      kit.Item // the copy: re-sealed, keyed and marked movingFrom
	Version   int      // the old PROFILE's version, which the switch is conditioned on
	MovedTo   string   // set when the old PROFILE already moved (nothing to copy)
}

// RekeyProfile prepares the copy of the PROFILE old under the tenant's
// secret version: the key its document has under that secret, the
// personal data opened and sealed again for the new partition (the
// partition is the seal's associated data), the keyVersion, and the
// movingFrom mark. A debtor whose personal data were erased has no
// document left: its new key is the HMAC of its old key under the new
// secret, as unlinkable to a person as the old one was.
func (s *Service) RekeyProfile(ctx context.Context, t *tenant.Tenant, old kit.Item, version int) (*Rekeyed, error) {
	var rec profileItem
	if err := attributevalue.UnmarshalMap(old, &rec); err != nil {
		return nil, fmt.Errorf("decode profile: %w", err)
	}
	if rec.MovedTo != "" {
		return &Rekeyed{MovedTo: rec.MovedTo, Version: rec.Version}, nil
	}
	secret, ok := t.DebtorKeySecret(version)
	if !ok {
		return nil, fmt.Errorf("tenant %s has no debtor-key secret version %d", t.ID, version)
	}
	oldDK := rec.DebtorKey
	p, _, err := s.open(ctx, t, old)
	switch {
	case errors.Is(err, ErrErased):
		rec.DebtorKey = s.keyOf(secret, "erased:"+oldDK)
	case err != nil:
		return nil, err
	default:
		rec.DebtorKey = s.keyOf(secret, p.Document)
		plain, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		if rec.PII, err = s.sealer.Seal(ctx, plain, pii.Owner{Tenant: t.ID, Partition: keys.Debtor(t.ID, rec.DebtorKey)}); err != nil {
			return nil, err
		}
	}
	v := rec.Version
	rec.PK, rec.KeyVersion, rec.MovingFrom, rec.MovedFrom = keys.Debtor(t.ID, rec.DebtorKey), version, oldDK, ""
	it, err := marshal(rec)
	if err != nil {
		return nil, err
	}
	// The item keeps every attribute the old one had that profileItem
	// does not name (updatedAt, ...).
	for k, av := range old {
		if _, ok := it[k]; !ok && k != AttrMovedFrom {
			it[k] = av
		}
	}
	return &Rekeyed{DebtorKey: rec.DebtorKey, Item: it, Version: v}, nil
}
