package kit

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
)

const (
	batchGetMax   = 100
	batchWriteMax = 25
)

// BatchGet reads many items by key (any order; missing items are absent),
// retrying UnprocessedKeys with backoff.
func (t *Tenant) BatchGet(ctx context.Context, keys []Key, consistent bool) ([]Item, error) {
	for _, k := range keys {
		if err := t.guard("BatchGetItem", k.PK); err != nil {
			return nil, err
		}
	}
	var items []Item
	for start := 0; start < len(keys); start += batchGetMax {
		chunk := keys[start:min(start+batchGetMax, len(keys))]
		req := types.KeysAndAttributes{ConsistentRead: &consistent}
		for _, k := range chunk {
			req.Keys = append(req.Keys, k.av())
		}
		pending := map[string]types.KeysAndAttributes{t.k.table: req}
		for attempt := 1; len(pending) > 0; attempt++ {
			if attempt > t.k.attempts {
				return nil, errs.Wrap(errs.Transient, "throttled", fmt.Errorf("BatchGetItem: %w: keys still unprocessed after %d attempts", ErrThrottled, t.k.attempts), "store unavailable, retry")
			}
			if attempt > 1 {
				if err := t.k.backoff(ctx, attempt-1); err != nil {
					return nil, err
				}
			}
			out, err := t.k.api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
			if err != nil {
				return nil, classify("BatchGetItem", err)
			}
			t.k.recordList(ctx, "BatchGetItem", out.ConsumedCapacity)
			items = append(items, out.Responses[t.k.table]...)
			pending = out.UnprocessedKeys
		}
	}
	return items, nil
}

// BatchWrite puts and deletes many items (not atomically), retrying
// UnprocessedItems with backoff until all are written.
func (t *Tenant) BatchWrite(ctx context.Context, puts []Item, deletes []Key) error {
	var reqs []types.WriteRequest
	for _, it := range puts {
		if err := t.guard("BatchWriteItem", pkOf(it)); err != nil {
			return err
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	for _, k := range deletes {
		if err := t.guard("BatchWriteItem", k.PK); err != nil {
			return err
		}
		reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k.av()}})
	}
	for start := 0; start < len(reqs); start += batchWriteMax {
		pending := map[string][]types.WriteRequest{t.k.table: reqs[start:min(start+batchWriteMax, len(reqs))]}
		for attempt := 1; len(pending) > 0; attempt++ {
			if attempt > t.k.attempts {
				return errs.Wrap(errs.Transient, "throttled", fmt.Errorf("BatchWriteItem: %w: items still unprocessed after %d attempts", ErrThrottled, t.k.attempts), "store unavailable, retry")
			}
			if attempt > 1 {
				if err := t.k.backoff(ctx, attempt-1); err != nil {
					return err
				}
			}
			out, err := t.k.api.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
			if err != nil {
				return classify("BatchWriteItem", err)
			}
			t.k.recordList(ctx, "BatchWriteItem", out.ConsumedCapacity)
			pending = out.UnprocessedItems
		}
	}
	return nil
}
