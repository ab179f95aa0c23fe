package stream

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/contract/regua"
)

// buckets are the portfolio's partitions whose counters the consumer
// keeps, in order of delinquency.
var buckets = [...]string{regua.BucketD001_030, regua.BucketD031_060, regua.BucketD061_090, regua.BucketD091_PLUS}

// seedItem says whether a stream's bucket counters were counted from the
// portfolio index, PK SYS, SK SEED#<streamLabel> (ADR 0079).
type seedItem struct {
	Seeded   bool   `dynamodbav:"seeded"`
	SeededAt string `dynamodbav:"seededAt"`
	Why      string `dynamodbav:"why"`
}

func seedKey(s kit.Stream) kit.Key { return kit.Key{PK: keys.System, SK: keys.CountersSeed(s.Label)} }

// seeded reports whether the counters of s may move by deltas. They may
// not until a count from the index has set them: a consumer that starts
// without history (no seed item: the stream was never read, or was read
// before the counters existed) or whose checkpoint was trimmed cannot add
// the records it never saw. With no tenant lister (Config.Tenants) the
// consumer trusts the stream to hold the whole history, as a job on a new
// table may.
func (c *Consumer) seeded(ctx context.Context, s kit.Stream) (bool, error) {
	if c.cfg.Tenants == nil {
		return true, nil
	}
	it, err := c.db.Get(ctx, seedKey(s), true)
	if err != nil {
		return false, fmt.Errorf("stream: read counters seed: %w", err)
	}
	if it == nil {
		return false, nil
	}
	var si seedItem
	if err := attributevalue.UnmarshalMap(it, &si); err != nil {
		return false, fmt.Errorf("stream: decode counters seed: %w", err)
	}
	return si.Seeded, nil
}

// unseed marks the counters of s as untrusted: records were lost to the
// stream's retention, so the next pass that reads every shard recounts.
func (c *Consumer) unseed(ctx context.Context, s kit.Stream, why string) error {
	if c.cfg.Tenants == nil {
		return nil
	}
	if err := c.putSeed(ctx, s, seedItem{Why: why}); err != nil {
		return fmt.Errorf("stream: mark counters for a recount: %w", err)
	}
	return nil
}

// putSeed writes the seed item of s.
func (c *Consumer) putSeed(ctx context.Context, s kit.Stream, si seedItem) error {
	it, err := attributevalue.MarshalMap(si)
	if err != nil {
		return err
	}
	key := seedKey(s)
	it["PK"], it["SK"] = &types.AttributeValueMemberS{Value: key.PK}, &types.AttributeValueMemberS{Value: key.SK}
	return c.db.Put(ctx, it, nil)
}

// reseed sets every tenant's bucket counters to what the portfolio index
// holds — one keyed Query per bucket, paged, keys only read (the index's
// sort key is the balance) — then marks the counters of s seeded. It runs
// after a pass that read every shard to its end without moving counters,
// so the count and the records read agree but for writes made while it
// counts (ADR 0079 says what that window costs).
func (c *Consumer) reseed(ctx context.Context, s kit.Stream) error {
	tenants, err := c.cfg.Tenants(ctx)
	if err != nil {
		return fmt.Errorf("stream: list tenants for the recount: %w", err)
	}
	now := keys.Timestamp(c.cfg.Clock.Now())
	for _, tid := range tenants {
		for _, b := range buckets {
			if err := ctx.Err(); err != nil {
				return err
			}
			n, cents, err := c.count(ctx, tid, b)
			if err != nil {
				return err
			}
			name, val := expression.Name, expression.Value
			upd := expression.Set(name("contracts"), val(n)).Set(name("outstandingCents"), val(cents)).
				Set(name("updatedAt"), val(now)).Set(name("recountedAt"), val(now)).Set(name("type"), val(summaryType)).
				Set(name("tenantId"), val(tid)).Set(name("bucket"), val(b))
			if _, err := c.db.Update(ctx, kit.Key{PK: keys.Tenant(tid), SK: keys.BucketSummary(b)}, upd, nil, types.ReturnValueNone); err != nil {
				return fmt.Errorf("stream: write recounted counters: %w", err)
			}
		}
	}
	if err := c.putSeed(ctx, s, seedItem{Seeded: true, SeededAt: now, Why: "recounted from the portfolio index"}); err != nil {
		return fmt.Errorf("stream: mark counters seeded: %w", err)
	}
	c.cfg.Logger.Info("stream bucket counters recounted from the portfolio index", "tenants", len(tenants))
	return nil
}

// count is one bucket's contracts and balance as the portfolio index
// holds them.
func (c *Consumer) count(ctx context.Context, tenantID, bucket string) (n, cents int64, err error) {
	db := c.cfg.Kit.Tenant(tenantID, nil)
	q := kit.Query{Index: table.Portfolio, Partition: keys.Bucket(tenantID, bucket)}
	for cursor := ""; ; {
		page, err := db.QueryPage(ctx, q, cursor)
		if err != nil {
			return 0, 0, fmt.Errorf("stream: count bucket: %w", err)
		}
		for _, it := range page.Items {
			v, ok := it["outstandingCents"].(*types.AttributeValueMemberN)
			if !ok {
				return 0, 0, errors.New("stream: portfolio entry without a balance")
			}
			x, err := strconv.ParseInt(v.Value, 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("stream: portfolio entry balance: %w", err)
			}
			n++
			cents += x
		}
		if page.Next == "" {
			return n, cents, nil
		}
		cursor = page.Next
	}
}
