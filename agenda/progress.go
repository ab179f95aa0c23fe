package agenda

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/tenant"
)

// ShardProgress is one shard's day of agenda as the dashboard shows it
// (ADR 0085): what the day's run executed so far (its checkpoint's
// counts) and what is still in the date's agenda partition.
type ShardProgress struct {
	Shard    int  `json:"shard"`
	Started  bool `json:"started"`  // a run of the date took the shard
	Finished bool `json:"finished"` // and finished it
	Executed int  `json:"executed"` // actions the date's run executed, every partition it read
	// Waiting are the entries still in the date's partition: not run yet,
	// or waiting for a contact window that opens later today.
	Waiting int64 `json:"waiting"`
}

// Due is what the shard had for the day: executed plus still waiting.
func (p ShardProgress) Due() int64 { return int64(p.Executed) + p.Waiting }

// Progress is date's agenda per shard: one Query of the date's run items
// (RUN#<date>#, every shard's checkpoint) and, per shard, one Query with
// Select COUNT of the date's GSI1 partition — 1 + shards keyed reads,
// none of them a Scan.
func (r *Runner) Progress(ctx context.Context, t *tenant.Tenant, date calendar.Date) ([]ShardProgress, error) {
	ctx = kit.Within(ctx, "agenda.progress")
	db := r.db(t)
	out := make([]ShardProgress, max(t.Shards, 1))
	for i := range out {
		out[i].Shard = i
	}
	q := kit.Query{Partition: keys.Tenant(t.ID), Sort: kit.BeginsWith(keys.RunsOn(date.String()))}
	for cursor := ""; ; {
		page, err := db.QueryPage(ctx, q, cursor)
		if err != nil {
			return nil, fmt.Errorf("agenda: read the day's runs: %w", err)
		}
		for _, it := range page.Items {
			var run runItem
			if err := attributevalue.UnmarshalMap(it, &run); err != nil {
				return nil, fmt.Errorf("agenda: decode run: %w", err)
			}
			shard := shardOfRun(it)
			if shard < 0 || shard >= len(out) {
				continue
			}
			p := &out[shard]
			p.Started, p.Finished = true, run.Finished
			for _, n := range run.Executed {
				p.Executed += n
			}
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	for i := range out {
		n, err := db.Count(ctx, kit.Query{Index: table.Agenda, Partition: keys.Agenda(t.ID, date.String(), i)})
		if err != nil {
			return nil, fmt.Errorf("agenda: count shard %d: %w", i, err)
		}
		out[i].Waiting = n
	}
	return out, nil
}

// shardOfRun reads the shard of a run item from its sort key
// (RUN#<date>#<shard2>); -1 when it is not one.
func shardOfRun(it kit.Item) int {
	var k struct {
		SK string `dynamodbav:"SK"`
	}
	if err := attributevalue.UnmarshalMap(it, &k); err != nil {
		return -1
	}
	p, err := keys.Parse(keys.SK, k.SK)
	if err != nil || len(p.Parts) == 0 || !strings.EqualFold(p.Parts[0].Prefix, "RUN") {
		return -1
	}
	var n int
	if _, err := fmt.Sscanf(p.Parts[0].Fields["shard"], "%d", &n); err != nil {
		return -1
	}
	return n
}
