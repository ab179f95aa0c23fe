package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/secret"
)

// PreviousKeyVersions lists the debtor-key secret versions other than the
// current one, newest first: empty unless a rotation of the debtor keys
// is unfinished (docs/adr/0075), when lookups also try these.
func (t *Tenant) PreviousKeyVersions() []int {
	var out []int
	for v := range t.secrets.DebtorKeys {
		if v != t.KeyVersion {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

// RotatingDebtorKeys reports whether a debtor-key rotation is unfinished:
// older secret versions are kept only until it finishes.
func (t *Tenant) RotatingDebtorKeys() bool { return len(t.secrets.DebtorKeys) > 1 }

// BeginDebtorKeyRotation adds debtor-key secret version v+1, sealed with
// the others, and makes it current for new registrations, with one write
// conditioned on the TENANT item's version. A rotation already unfinished
// (older versions still kept) is resumed instead: no version is added.
// It returns the version the debtors move to and whether it was added now.
func (s *Service) BeginDebtorKeyRotation(ctx context.Context, id string) (target int, added bool, err error) {
	ctx = kit.Within(ctx, "tenant.debtor-keys.rotate")
	for range 5 {
		cur, err := s.load(ctx, id)
		if err != nil {
			return 0, false, err
		}
		if cur.RotatingDebtorKeys() {
			return cur.KeyVersion, false, nil
		}
		next := slices.Max(append(cur.PreviousKeyVersions(), cur.KeyVersion)) + 1
		sec := cur.secrets
		sec.DebtorKeys = map[int][]byte{cur.KeyVersion: cur.secrets.DebtorKeys[cur.KeyVersion], next: secret.Random(32)}
		err = s.writeDebtorKeys(ctx, cur, sec, next)
		if errors.Is(err, kit.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return 0, false, fmt.Errorf("begin debtor-key rotation: %w", err)
		}
		return next, true, nil
	}
	return 0, false, errs.E(errs.Conflict, "tenant_changed", "the tenant kept changing; retry")
}

// RetireDebtorKeys drops every debtor-key secret version but keep (the
// current), once a rotation has moved every debtor to it: the replaced
// secret maps no document to a key any more (docs/adr/0075). Conditioned
// on the TENANT item's version, like every change of it.
func (s *Service) RetireDebtorKeys(ctx context.Context, id string, keep int) error {
	ctx = kit.Within(ctx, "tenant.debtor-keys.retire")
	for range 5 {
		cur, err := s.load(ctx, id)
		if err != nil {
			return err
		}
		if cur.KeyVersion != keep {
			return fmt.Errorf("retire debtor keys: current version is %d, not %d", cur.KeyVersion, keep)
		}
		if !cur.RotatingDebtorKeys() {
			return nil
		}
		sec := cur.secrets
		sec.DebtorKeys = map[int][]byte{keep: cur.secrets.DebtorKeys[keep]}
		err = s.writeDebtorKeys(ctx, cur, sec, keep)
		if errors.Is(err, kit.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return fmt.Errorf("retire debtor keys: %w", err)
		}
		return nil
	}
	return errs.E(errs.Conflict, "tenant_changed", "the tenant kept changing; retry")
}

// writeDebtorKeys seals sec into the TENANT item with keyVersion current,
// conditioned on the version cur was read at.
func (s *Service) writeDebtorKeys(ctx context.Context, cur *Tenant, sec secrets, current int) error {
	if _, ok := sec.DebtorKeys[current]; !ok {
		return fmt.Errorf("no debtor-key secret version %d", current)
	}
	raw, err := json.Marshal(sec)
	if err != nil {
		return err
	}
	pk := keys.Tenant(cur.ID)
	upd := expression.Set(expression.Name("secrets"), expression.Value(s.box.Seal(raw, []byte(pk)))).
		Set(expression.Name("keyVersion"), expression.Value(current)).
		Set(expression.Name("version"), expression.Name("version").Plus(expression.Value(1))).
		Set(expression.Name("updatedAt"), expression.Value(keys.Timestamp(s.clock.Now())))
	cond := expression.Name("version").Equal(expression.Value(cur.Version))
	if _, err := s.kit.Tenant(cur.ID, nil).Update(ctx, kit.Key{PK: pk, SK: keys.TenantSK}, upd, &cond, ""); err != nil {
		return err
	}
	s.Invalidate(cur.ID)
	return nil
}
