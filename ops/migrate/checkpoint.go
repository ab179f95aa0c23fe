package migrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/clock"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/ops"
)

// checkpoint is the lease and progress of one segment of a backfill (or
// of the run as a whole), SYS / JOB#migrate#<subject>: the pattern of the
// other maintenance jobs (ops, docs/adr/0076), one item per segment so
// the segments save without contending.
type checkpoint struct {
	PK         string           `dynamodbav:"PK"`
	SK         string           `dynamodbav:"SK"`
	Type       string           `dynamodbav:"type"`
	Kind       string           `dynamodbav:"kind"`
	Subject    string           `dynamodbav:"subject"`
	Owner      string           `dynamodbav:"owner"`
	LeaseUntil string           `dynamodbav:"leaseUntil"`
	Phase      string           `dynamodbav:"phase"`
	CursorPK   string           `dynamodbav:"cursorPK,omitempty"`
	CursorSK   string           `dynamodbav:"cursorSK,omitempty"`
	Segments   int32            `dynamodbav:"segments,omitempty"`
	Counts     map[string]int64 `dynamodbav:"counts,omitempty"`
	Version    int              `dynamodbav:"version"`
	UpdatedAt  string           `dynamodbav:"updatedAt"`

	db    *kit.Tenant
	clock clock.Clock
}

const (
	jobKind     = "migrate"
	phaseActive = "backfill"
	phaseDone   = "done"
)

// subject names a segment's checkpoint: <migration>.<segment>of<total>.
func subject(name string, seg, total int32) string { return fmt.Sprintf("%s.%dof%d", name, seg, total) }

// claim takes the lease of subject for owner (free, expired, finished or
// already owner's) and returns the checkpoint found.
func claim(ctx context.Context, k *kit.Kit, c clock.Clock, subj, owner string) (*checkpoint, error) {
	db := k.System()
	key := kit.Key{PK: keys.System, SK: keys.Job(jobKind, subj)}
	it, err := db.Get(ctx, key, true)
	if err != nil {
		return nil, fmt.Errorf("read migration checkpoint: %w", err)
	}
	cp := &checkpoint{PK: key.PK, SK: key.SK, Type: "JOB", Kind: jobKind, Subject: subj}
	if it != nil {
		if err := attributevalue.UnmarshalMap(it, cp); err != nil {
			return nil, fmt.Errorf("decode migration checkpoint: %w", err)
		}
		if cp.Owner != owner && cp.LeaseUntil > keys.Timestamp(c.Now()) && cp.Phase != phaseDone {
			return nil, ops.ErrLeased
		}
	}
	cp.db, cp.clock, cp.Owner = db, c, owner
	if err := cp.save(ctx, ops.LeaseTTL); err != nil {
		return nil, err
	}
	return cp, nil
}

// save writes the checkpoint and extends the lease by ttl, conditioned on
// the version read: a run that lost its lease stops at its next save. A
// ttl of 0 releases the lease (a run stopped cleanly), so the next run,
// from any host, resumes at once instead of waiting for it to expire.
func (cp *checkpoint) save(ctx context.Context, ttl time.Duration) error {
	prev := cp.Version
	cp.Version++
	cp.LeaseUntil = keys.Timestamp(cp.clock.Now().Add(ttl))
	cp.UpdatedAt = keys.Timestamp(cp.clock.Now())
	it, err := attributevalue.MarshalMap(cp)
	if err != nil {
		return err
	}
	cond := expression.AttributeNotExists(expression.Name("PK"))
	if prev > 0 {
		cond = expression.Name("version").Equal(expression.Value(prev))
	}
	if err := cp.db.Put(ctx, it, &cond); err != nil {
		cp.Version = prev
		if errors.Is(err, kit.ErrConditionFailed) {
			return ops.ErrLeased
		}
		return fmt.Errorf("save migration checkpoint: %w", err)
	}
	return nil
}

func (cp *checkpoint) count(name string, n int64) {
	if cp.Counts == nil {
		cp.Counts = map[string]int64{}
	}
	cp.Counts[name] += n
}

func (cp *checkpoint) cursor() *kit.Key {
	if cp.CursorPK == "" {
		return nil
	}
	return &kit.Key{PK: cp.CursorPK, SK: cp.CursorSK}
}

// release saves what the segment did and gives its lease up after a
// clean interruption. It reads the checkpoint again first: the save the
// interruption cut short may have landed (the store applied it, the
// client saw only the cancelled context), and this owner's state in
// memory is right either way: the cursor moves only after a whole page.
func (cp *checkpoint) release(ctx context.Context, k *kit.Kit) error {
	ctx = context.WithoutCancel(ctx)
	fresh, err := claim(ctx, k, cp.clock, cp.Subject, cp.Owner)
	if err != nil {
		return err
	}
	fresh.Phase, fresh.CursorPK, fresh.CursorSK, fresh.Counts = cp.Phase, cp.CursorPK, cp.CursorSK, cp.Counts
	*cp = *fresh
	return cp.save(ctx, 0)
}
