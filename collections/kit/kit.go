// Package kit is the engine's single DynamoDB client (ADR 0004):
// a handful of keyed operations — get, queryPage with a signed cursor, put,
// update, delete, batches that retry Unprocessed*, transact — each scoped
// to one tenant, recording the capacity it consumes per business operation.
// It is deliberately not a generic repository: domain packages build their
// own keys with collections/keys and decide what to write.
//
// There is no Scan on the request path. MaintenanceScan is a separate,
// explicitly named entry point for jobs.
package kit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/table"
)

// API is the part of the DynamoDB client the kit uses; *dynamodb.Client
// satisfies it.
type API interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Item is one item as the SDK represents it.
type Item = map[string]types.AttributeValue

// Key is a primary key of the table.
type Key struct{ PK, SK string }

func (k Key) av() Item {
	return Item{"PK": &types.AttributeValueMemberS{Value: k.PK}, "SK": &types.AttributeValueMemberS{Value: k.SK}}
}

// Kit is the shared client. Use Tenant to get a handle scoped to one tenant.
type Kit struct {
	api   API
	table string
	meter *Meter
	retry Backoff // batch retries of Unprocessed* items
	clock clock.Clock
	// cursorTTL is how long a pagination cursor is accepted after it was
	// issued.
	cursorTTL time.Duration
}

// DefaultCursorTTL is a cursor's lifetime unless WithCursorTTL says
// otherwise: long enough to page through anything, short enough that a
// leaked cursor stops working the next day.
const DefaultCursorTTL = 24 * time.Hour

// Option changes a kit.
type Option func(*Kit)

// WithClock gives the kit its notion of now (cursor issue and expiry);
// the default is the system clock.
func WithClock(c clock.Clock) Option { return func(k *Kit) { k.clock = c } }

// WithCursorTTL sets how long a cursor is accepted after it was issued.
func WithCursorTTL(d time.Duration) Option { return func(k *Kit) { k.cursorTTL = d } }

// New returns a kit for table.
func New(api API, tableName string, opts ...Option) *Kit {
	k := &Kit{api: api, table: tableName, meter: NewMeter(),
		// DynamoDB returns Unprocessed* items under throttling; a second is
		// the longest single wait before a batch gives up with a 503.
		retry: Backoff{Attempts: 8, Base: 10 * time.Millisecond, Max: time.Second},
		clock: clock.System{}, cursorTTL: DefaultCursorTTL}
	for _, o := range opts {
		o(k)
	}
	if k.clock == nil {
		k.clock = clock.System{}
	}
	return k
}

// Table is the table name.
func (k *Kit) Table() string { return k.table }

// Meter returns the per-operation capacity totals since start.
func (k *Kit) Meter() *Meter { return k.meter }

// Tenant returns a handle whose every request stays inside tenant id's key
// space; cursorKey signs its pagination cursors.
func (k *Kit) Tenant(id string, cursorKey []byte) *Tenant {
	return &Tenant{k: k, id: id, prefix: "T#" + id + "#", own: "T#" + id, cursorKey: cursorKey}
}

// Directory returns a handle that reaches only the platform's directory
// of tenants (keys.Directory), the one partition outside every tenant:
// jobs that visit every tenant list them through it.
func (k *Kit) Directory() *Tenant { return &Tenant{k: k, directory: true} }

// Tenant is the kit scoped to one tenant.
type Tenant struct {
	k         *Kit
	id        string
	prefix    string // every partition of the tenant starts with it
	own       string // ... or is the tenant's own partition
	cursorKey []byte
	directory bool // the directory partition is also reachable
	system    bool // the system partition and tenants' own partitions (System)
}

// WithDirectory returns a copy of t that may also reach the directory of
// tenants, for the transaction that creates a tenant and its entry.
func (t *Tenant) WithDirectory() *Tenant {
	c := *t
	c.directory = true
	return &c
}

// ID is the tenant id.
func (t *Tenant) ID() string { return t.id }

// ErrOutsideTenant is returned when a request's partition key is not the
// caller's: the local twin of IAM's dynamodb:LeadingKeys.
var ErrOutsideTenant = errors.New("kit: partition outside the caller's tenant")

// guard refuses a partition key outside the tenant. The error names the
// operation, never the key (it may carry another tenant's data).
func (t *Tenant) guard(op, pk string) error {
	if t.directory && pk == keys.Directory {
		return nil
	}
	if t.system && (pk == keys.System || tenantOwn(pk)) {
		return nil
	}
	if t.own != "" && (pk == t.own || strings.HasPrefix(pk, t.prefix)) {
		return nil
	}
	return errs.Wrap(errs.Permission, "tenant_guard", ErrOutsideTenant, "kit: "+op+" refused: partition outside the caller's tenant")
}

func pkOf(it Item) string {
	if s, ok := it["PK"].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// Get reads one item; nil when it does not exist.
func (t *Tenant) Get(ctx context.Context, key Key, consistent bool) (Item, error) {
	if err := t.guard("GetItem", key.PK); err != nil {
		return nil, err
	}
	out, err := t.k.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &t.k.table, Key: key.av(), ConsistentRead: aws.Bool(consistent),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes,
	})
	if err != nil {
		return nil, classify("GetItem", err)
	}
	t.k.record(ctx, "GetItem", out.ConsumedCapacity)
	return out.Item, nil
}

// Put writes an item, optionally under a condition.
func (t *Tenant) Put(ctx context.Context, item Item, cond *expression.ConditionBuilder) error {
	if err := t.guard("PutItem", pkOf(item)); err != nil {
		return err
	}
	in := &dynamodb.PutItemInput{TableName: &t.k.table, Item: item, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes}
	if cond != nil {
		e, err := expression.NewBuilder().WithCondition(*cond).Build()
		if err != nil {
			return fmt.Errorf("kit: PutItem condition: %w", err)
		}
		in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.Condition(), e.Names(), e.Values()
	}
	out, err := t.k.api.PutItem(ctx, in)
	if err != nil {
		return classify("PutItem", err)
	}
	t.k.record(ctx, "PutItem", out.ConsumedCapacity)
	return nil
}

// Update applies an update expression, optionally under a condition, and
// returns the attributes asked for by rv (NONE unless the caller needs them).
func (t *Tenant) Update(ctx context.Context, key Key, upd expression.UpdateBuilder, cond *expression.ConditionBuilder, rv types.ReturnValue) (Item, error) {
	if err := t.guard("UpdateItem", key.PK); err != nil {
		return nil, err
	}
	b := expression.NewBuilder().WithUpdate(upd)
	if cond != nil {
		b = b.WithCondition(*cond)
	}
	e, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("kit: UpdateItem expression: %w", err)
	}
	if rv == "" {
		rv = types.ReturnValueNone
	}
	out, err := t.k.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &t.k.table, Key: key.av(), UpdateExpression: e.Update(), ConditionExpression: e.Condition(),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(), ReturnValues: rv,
		ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes,
	})
	if err != nil {
		return nil, classify("UpdateItem", err)
	}
	t.k.record(ctx, "UpdateItem", out.ConsumedCapacity)
	return out.Attributes, nil
}

// Delete removes an item, optionally under a condition.
func (t *Tenant) Delete(ctx context.Context, key Key, cond *expression.ConditionBuilder) error {
	if err := t.guard("DeleteItem", key.PK); err != nil {
		return err
	}
	in := &dynamodb.DeleteItemInput{TableName: &t.k.table, Key: key.av(), ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes}
	if cond != nil {
		e, err := expression.NewBuilder().WithCondition(*cond).Build()
		if err != nil {
			return fmt.Errorf("kit: DeleteItem condition: %w", err)
		}
		in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.Condition(), e.Names(), e.Values()
	}
	out, err := t.k.api.DeleteItem(ctx, in)
	if err != nil {
		return classify("DeleteItem", err)
	}
	t.k.record(ctx, "DeleteItem", out.ConsumedCapacity)
	return nil
}

// MaintenanceScan reads one segment of the whole table for a named
// maintenance job (export, migration backfill, offboarding). It is never
// called on a request path; fn sees every item of the segment.
func (k *Kit) MaintenanceScan(ctx context.Context, job string, segment, total int32, fn func(Item) error) error {
	ctx, _ = Operation(ctx, "maintenance."+job)
	p := dynamodb.NewScanPaginator(k.api, &dynamodb.ScanInput{
		TableName: &k.table, Segment: aws.Int32(segment), TotalSegments: aws.Int32(total),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return classify("Scan", err)
		}
		k.record(ctx, "Scan", out.ConsumedCapacity)
		for _, it := range out.Items {
			if err := fn(it); err != nil {
				return err
			}
		}
	}
	return nil
}

// MaintenanceScanWhere is MaintenanceScan with a FilterExpression: the
// store drops what filter rejects before answering, but charges, as
// DynamoDB does, for every item it read. It exists to measure what a
// screen built on Scan + FilterExpression would cost (lastro cost
// compare); like MaintenanceScan it is never called on a request path.
func (k *Kit) MaintenanceScanWhere(ctx context.Context, job string, filter expression.ConditionBuilder, fn func(Item) error) error {
	ctx, _ = Operation(ctx, "maintenance."+job)
	e, err := expression.NewBuilder().WithFilter(filter).Build()
	if err != nil {
		return fmt.Errorf("kit: Scan filter: %w", err)
	}
	p := dynamodb.NewScanPaginator(k.api, &dynamodb.ScanInput{
		TableName: &k.table, FilterExpression: e.Filter(), ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return classify("Scan", err)
		}
		k.record(ctx, "Scan", out.ConsumedCapacity)
		for _, it := range out.Items {
			if err := fn(it); err != nil {
				return err
			}
		}
	}
	return nil
}

// partitionOf returns the partition key value of an index query.
func partitionAttr(index string) (string, error) {
	a, ok := table.PartitionAttr[index]
	if !ok {
		return "", fmt.Errorf("kit: unknown index %q", index)
	}
	return a, nil
}
