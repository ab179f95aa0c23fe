package kit

import (
	"context"
	"errors"
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
// retrying UnprocessedKeys with the kit's Backoff.
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
		err := t.k.retry.Retry(ctx, func(int) (bool, error) {
			out, err := t.k.api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
			if err != nil {
				return false, classify("BatchGetItem", err)
			}
			t.k.recordList(ctx, "BatchGetItem", out.ConsumedCapacity)
			items = append(items, out.Responses[t.k.table]...)
			pending = out.UnprocessedKeys
			return len(pending) > 0, nil
		})
		if errors.Is(err, ErrAttemptsExhausted) {
			return nil, errs.Wrap(errs.Transient, "throttled", fmt.Errorf("BatchGetItem: %w: keys still unprocessed after %d attempts", ErrThrottled, t.k.retry.Attempts), "store unavailable, retry")
		}
		if err != nil {
			return nil, err
		}
	}
	return items, nil
}

// BatchWrite puts and deletes many items (not atomically), retrying
// UnprocessedItems with the kit's Backoff until all are written.
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
		err := t.k.retry.Retry(ctx, func(int) (bool, error) {
			out, err := t.k.api.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
			if err != nil {
				return false, classify("BatchWriteItem", err)
			}
			t.k.recordList(ctx, "BatchWriteItem", out.ConsumedCapacity)
			pending = out.UnprocessedItems
			return len(pending) > 0, nil
		})
		if errors.Is(err, ErrAttemptsExhausted) {
			return errs.Wrap(errs.Transient, "throttled", fmt.Errorf("BatchWriteItem: %w: items still unprocessed after %d attempts", ErrThrottled, t.k.retry.Attempts), "store unavailable, retry")
		}
		if err != nil {
			return err
		}
	}
	return nil
}
