package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
)

// TenantDebtorsMigration is the migration (ops/migrate) that fills the
// tenant-debtors index (GSI3) every enumeration of a tenant's debtors
// reads.
const TenantDebtorsMigration = "tenant-debtors"

// ErrReadsNotSwitched is returned by a reader of a migrated index when the
// migration's last verify did not record zero differences: the index may
// miss items, so nothing may rely on it yet (docs/adr/0081, 0083).
var ErrReadsNotSwitched = errs.E(errs.Conflict, "reads_not_switched",
	"the index this needs is not verified yet: run lastro migrate verify tenant-debtors (after migrate run) until it reports 0 differences")

// readsState is a migration's verify result (SYS / JOB#reads#<name>):
// the fifth step of the RFC's order, switching reads, is allowed only
// when it records no difference and no key violation.
type readsState struct {
	PK          string `dynamodbav:"PK"`
	SK          string `dynamodbav:"SK"`
	Type        string `dynamodbav:"type"`
	Migration   string `dynamodbav:"migration"`
	Differences int64  `dynamodbav:"differences"`
	Violations  int64  `dynamodbav:"violations"`
	VerifiedAt  string `dynamodbav:"verifiedAt"`
	Version     int    `dynamodbav:"version"`
}

func readsKey(name string) kit.Key { return kit.Key{PK: keys.System, SK: keys.Job("reads", name)} }

func readState(ctx context.Context, k *kit.Kit, name string) (*readsState, error) {
	it, err := k.System().Get(ctx, readsKey(name), true)
	if err != nil || it == nil {
		return nil, err
	}
	var st readsState
	if err := attributevalue.UnmarshalMap(it, &st); err != nil {
		return nil, fmt.Errorf("decode the reads state of %s: %w", name, err)
	}
	return &st, nil
}

// RecordVerify records the result of a verify of migration name, one
// write conditioned on the version read (a concurrent verify's record is
// read again, and the last one stands).
func RecordVerify(ctx context.Context, k *kit.Kit, c clock.Clock, name string, differences, violations int64) error {
	if c == nil {
		c = clock.System{}
	}
	for range 5 {
		prev, err := readState(ctx, k, name)
		if err != nil {
			return err
		}
		key := readsKey(name)
		st := readsState{PK: key.PK, SK: key.SK, Type: "MIGRATION_READS", Migration: name, Differences: differences,
			Violations: violations, VerifiedAt: keys.Timestamp(c.Now()), Version: 1}
		cond := expression.AttributeNotExists(expression.Name("PK"))
		if prev != nil {
			st.Version = prev.Version + 1
			cond = expression.Name("version").Equal(expression.Value(prev.Version))
		}
		it, err := attributevalue.MarshalMap(st)
		if err != nil {
			return err
		}
		err = k.System().Put(ctx, it, &cond)
		if errors.Is(err, kit.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return fmt.Errorf("record the verify of %s: %w", name, err)
		}
		return nil
	}
	return errs.E(errs.Conflict, "verify_raced", "verifies of this migration kept racing; run verify again")
}

// ReadsSwitched reports whether reads may rely on migration name's index:
// its last verify recorded zero differences and zero key violations.
func ReadsSwitched(ctx context.Context, k *kit.Kit, name string) (bool, error) {
	st, err := readState(ctx, k, name)
	if err != nil {
		return false, err
	}
	return st != nil && st.Differences == 0 && st.Violations == 0, nil
}
