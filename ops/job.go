// Package ops holds Lastro's maintenance jobs: tenant offboarding, the
// debtor-key rotation, the data key's re-wrap and the migrations toolkit
// (docs/adr/0075, 0076, 0078, 0083). Each job takes a lease and keeps a checkpoint in the platform's
// system partition, paces its writes, honours its context between steps
// and can be run again after an interruption to resume where it stopped.
// They are the only code besides the export that reads the whole table
// (kit.MaintenanceScan), and never on a request path.
package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
)

// LeaseTTL is how long a job's lease holds without a checkpoint: a job
// that died is taken over by the next run after it.
const LeaseTTL = 2 * time.Minute

// ErrLeased is returned when another run holds the job's lease.
var ErrLeased = errs.E(errs.Conflict, "job_leased", "another run of this job holds its lease: wait for it or for the lease to expire")

// jobItem is a job's lease and checkpoint (SYS / JOB#<kind>#<subject>).
type jobItem struct {
	PK         string           `dynamodbav:"PK"`
	SK         string           `dynamodbav:"SK"`
	Type       string           `dynamodbav:"type"`
	Kind       string           `dynamodbav:"kind"`
	Subject    string           `dynamodbav:"subject"`
	Owner      string           `dynamodbav:"owner"`
	LeaseUntil string           `dynamodbav:"leaseUntil"`
	Phase      string           `dynamodbav:"phase"`
	Cursor     string           `dynamodbav:"cursor,omitempty"`
	Counts     map[string]int64 `dynamodbav:"counts,omitempty"`
	Before     map[string]int64 `dynamodbav:"before,omitempty"`
	After      map[string]int64 `dynamodbav:"after,omitempty"`
	Note       string           `dynamodbav:"note,omitempty"` // what the job wants to keep across phases (a hash)
	Version    int              `dynamodbav:"version"`
	UpdatedAt  string           `dynamodbav:"updatedAt"`
}

// job is a held lease on one job.
type job struct {
	db    *kit.Tenant
	clock clock.Clock
	item  jobItem
}

// acquire takes the lease of job kind on subject for owner: free, expired
// or already owner's. It returns the checkpoint found (empty on a first
// run).
func acquire(ctx context.Context, k *kit.Kit, c clock.Clock, kind, subject, owner string) (*job, error) {
	db := k.System()
	key := kit.Key{PK: keys.System, SK: keys.Job(kind, subject)}
	it, err := db.Get(ctx, key, true)
	if err != nil {
		return nil, fmt.Errorf("read %s checkpoint: %w", kind, err)
	}
	j := &job{db: db, clock: c, item: jobItem{PK: key.PK, SK: key.SK, Type: "JOB", Kind: kind, Subject: subject}}
	if it != nil {
		if err := attributevalue.UnmarshalMap(it, &j.item); err != nil {
			return nil, fmt.Errorf("decode %s checkpoint: %w", kind, err)
		}
		if j.item.Owner != owner && j.item.LeaseUntil > keys.Timestamp(c.Now()) && j.item.Phase != PhaseDone {
			return nil, ErrLeased
		}
	}
	j.item.Owner = owner
	if err := j.save(ctx); err != nil {
		return nil, err
	}
	return j, nil
}

// PhaseDone is the phase of a finished job.
const PhaseDone = "done"

// save writes the checkpoint and extends the lease, conditioned on the
// version read: a run that lost its lease to another stops at its next
// save instead of working beside it.
func (j *job) save(ctx context.Context) error { return j.saveLease(ctx, LeaseTTL) }

// release saves the checkpoint with the lease given up (a clean stop), so
// the next run on any host resumes at once.
func (j *job) release(ctx context.Context) error { return j.saveLease(ctx, 0) }

func (j *job) saveLease(ctx context.Context, ttl time.Duration) error {
	prev := j.item.Version
	j.item.Version++
	j.item.LeaseUntil = keys.Timestamp(j.clock.Now().Add(ttl))
	j.item.UpdatedAt = keys.Timestamp(j.clock.Now())
	it, err := attributevalue.MarshalMap(j.item)
	if err != nil {
		return err
	}
	cond := expression.AttributeNotExists(expression.Name("PK"))
	if prev > 0 {
		cond = expression.Name("version").Equal(expression.Value(prev))
	}
	if err := j.db.Put(ctx, it, &cond); err != nil {
		j.item.Version = prev
		if errors.Is(err, kit.ErrConditionFailed) {
			return ErrLeased
		}
		return fmt.Errorf("save %s checkpoint: %w", j.item.Kind, err)
	}
	return nil
}

// advance moves the job to phase (cursor reset) and saves.
func (j *job) advance(ctx context.Context, phase string) error {
	j.item.Phase, j.item.Cursor = phase, ""
	return j.save(ctx)
}

// count adds n to a counter of the checkpoint (saved with the next save).
func (j *job) count(name string, n int64) {
	if j.item.Counts == nil {
		j.item.Counts = map[string]int64{}
	}
	j.item.Counts[name] += n
}

// set sets a counter of the checkpoint.
func (j *job) set(name string, n int64) {
	if j.item.Counts == nil {
		j.item.Counts = map[string]int64{}
	}
	j.item.Counts[name] = n
}

// Pacer spreads writes to at most PerSecond capacity units a second, so
// a maintenance job leaves the table's capacity to the engine (on-demand
// tables bill it; provisioned ones throttle the engine instead).
type Pacer struct {
	PerSecond float64 // 0: no limit
	clock     clock.Clock
	next      time.Time
}

// NewPacer returns a pacer of perSecond units on c (nil: system clock).
func NewPacer(perSecond float64, c clock.Clock) *Pacer {
	if c == nil {
		c = clock.System{}
	}
	return &Pacer{PerSecond: perSecond, clock: c}
}

// Wait blocks until units more may be spent, or ctx ends.
func (p *Pacer) Wait(ctx context.Context, units float64) error {
	if p == nil || p.PerSecond <= 0 {
		return ctx.Err()
	}
	now := p.clock.Now()
	if p.next.Before(now) {
		p.next = now
	}
	wait := p.next.Sub(now)
	p.next = p.next.Add(time.Duration(units / p.PerSecond * float64(time.Second)))
	if wait <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
