package ddblocal

import (
	"context"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/expr"
)

// mutate runs one single-item write: it locks the item, reads the current
// image, lets decide compute the new one (nil deletes; an error aborts,
// e.g. a failed condition) and commits it. The table definition is read
// after the lock is held so index changes by UpdateTable are never missed.
func (s *Store) mutate(t *table, key av.Item, decide func(d *tableDef, old av.Item) (av.Item, error)) (d *tableDef, old, new av.Item, err error) {
	d = t.def.Load()
	skey := d.baseKey(key)
	s.locks.acquire(string(skey), false)
	defer s.locks.release(string(skey))
	d = t.def.Load()
	if old, err = s.get(skey); err != nil {
		return d, nil, nil, err
	}
	if new, err = decide(d, old); err != nil {
		return d, old, nil, err
	}
	if old == nil && new == nil {
		return d, nil, nil, nil
	}
	if err := s.write([]*change{{t: t, def: d, key: skey, old: old, new: new}}); err != nil {
		return d, old, new, err
	}
	return d, old, new, nil
}

// lookup finds a table for a data-plane request.
func (s *Store) lookup(name *string) (*table, error) {
	t := s.table(*name)
	if t == nil {
		return nil, errResourceNotFound()
	}
	return t, nil
}

// conditionFailure builds the ConditionalCheckFailedException, with the
// old item when the request asked for it.
func conditionFailure(old av.Item, rv string) error {
	e := conditionalFailed()
	if rv == "ALL_OLD" && old != nil {
		e.Item = itemJSON(old)
	}
	return e
}

func itemJSON(it av.Item) map[string]any {
	m := make(map[string]any, len(it))
	for k, v := range it {
		m[k] = v
	}
	return m
}

type itemOutput struct {
	Item             av.Item           `json:"Item,omitempty"`
	Attributes       av.Item           `json:"Attributes,omitempty"`
	ConsumedCapacity *consumedCapacity `json:"ConsumedCapacity,omitempty"`
	ItemCollection   map[string]any    `json:"ItemCollectionMetrics,omitempty"`
}

func (s *Store) getItem(ctx context.Context, body []byte) (any, error) {
	var in getItemInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.tableName("tableName", in.TableName)
	c.notNull("key", in.Key == nil)
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	if err := c.err(); err != nil {
		return nil, err
	}
	ea := exprArgs{names: in.ExpressionAttributeNames, ifNone: "ProjectionExpression is null"}
	present(&ea.present, "ProjectionExpression", in.ProjectionExpression != nil)
	present(&ea.legacy, "AttributesToGet", in.AttributesToGet != nil)
	proj, err := parseProjection(ea, in.ProjectionExpression, in.AttributesToGet)
	if err != nil {
		return nil, err
	}
	t, err := s.lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	d := t.def.Load()
	key, err := parseKey(d, in.Key)
	if err != nil {
		return nil, err
	}
	it, err := s.get(d.baseKey(key))
	if err != nil {
		return nil, err
	}
	consistent := in.ConsistentRead != nil && *in.ConsistentRead
	u := newUsage(d.Name, true)
	size := 0
	if it != nil {
		size = av.ItemSize(it)
	}
	u.addTable(readUnits(size, consistent))
	out := itemOutput{ConsumedCapacity: u.response(in.ReturnConsumedCapacity)}
	if it != nil {
		out.Item = proj.apply(it)
	}
	return &out, nil
}

// projector applies a ProjectionExpression or AttributesToGet (nil: all).
type projector struct{ p *expr.Projection }

func (p projector) apply(it av.Item) av.Item {
	if p.p == nil {
		return it
	}
	return p.p.Apply(it)
}

// parseProjection validates the expression arguments of a read that only
// has a projection, and parses it.
func parseProjection(ea exprArgs, pe *string, attrsToGet []string) (projector, error) {
	a, err := ea.attrs()
	if err != nil {
		return projector{}, err
	}
	var p *expr.Projection
	switch {
	case pe != nil:
		if p, err = expr.ParseProjection(*pe, a); err != nil {
			return projector{}, exprError(err)
		}
	case attrsToGet != nil:
		if p, err = legacyProjection(attrsToGet); err != nil {
			return projector{}, err
		}
	}
	if err := a.CheckUnused(); err != nil {
		return projector{}, exprError(err)
	}
	return projector{p}, nil
}

func (s *Store) putItem(ctx context.Context, body []byte) (any, error) {
	var in putItemInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	c.tableName("tableName", in.TableName)
	c.returnValues(in.ReturnValues)
	c.returnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	c.returnValuesOnConditionCheckFailure(in.ReturnValuesOnConditionCheckFailure)
	c.notNull("item", in.Item == nil)
	if err := c.err(); err != nil {
		return nil, err
	}
	cond, err := parseWriteCondition(in.exprParams, in.ConditionExpression, in.Expected, in.ConditionalOperator, "ConditionExpression is null", nil)
	if err != nil {
		return nil, err
	}
	if in.ReturnValues != "" && in.ReturnValues != "NONE" && in.ReturnValues != "ALL_OLD" {
		return nil, validation("ReturnValues can only be ALL_OLD or NONE")
	}
	item, err := av.ItemFromWire(in.Item)
	if err != nil {
		return nil, validation("%s", err.Error())
	}
	t, err := s.lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	if err := checkItem(t.def.Load(), item); err != nil {
		return nil, err
	}
	d, old, _, err := s.mutate(t, keyOf(t.def.Load(), item), func(d *tableDef, old av.Item) (av.Item, error) {
		if err := checkItem(d, item); err != nil {
			return nil, err
		}
		if !cond.eval(old) {
			return nil, conditionFailure(old, in.ReturnValuesOnConditionCheckFailure)
		}
		return item, nil
	})
	u := newUsage(d.Name, false)
	u.addWrite(d, old, item, 1)
	if err != nil {
		return nil, withCapacity(err, u, in.ReturnConsumedCapacity)
	}
	out := itemOutput{ConsumedCapacity: u.response(in.ReturnConsumedCapacity)}
	if in.ReturnValues == "ALL_OLD" && old != nil {
		out.Attributes = old
	}
	out.ItemCollection = s.collectionMetrics(d, item, in.ReturnItemCollectionMetrics)
	return &out, nil
}

// withCapacity keeps err as is: DynamoDB does not return capacity with
// errors, but the units are consumed; the hook exists for accounting.
func withCapacity(err error, u *usage, mode string) error { return err }

func (s *Store) deleteItem(ctx context.Context, body []byte) (any, error) {
	var in deleteItemInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	c.tableName("tableName", in.TableName)
	c.returnValues(in.ReturnValues)
	c.returnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	c.returnValuesOnConditionCheckFailure(in.ReturnValuesOnConditionCheckFailure)
	c.notNull("key", in.Key == nil)
	if err := c.err(); err != nil {
		return nil, err
	}
	cond, err := parseWriteCondition(in.exprParams, in.ConditionExpression, in.Expected, in.ConditionalOperator, "ConditionExpression is null", nil)
	if err != nil {
		return nil, err
	}
	if in.ReturnValues != "" && in.ReturnValues != "NONE" && in.ReturnValues != "ALL_OLD" {
		return nil, validation("ReturnValues can only be ALL_OLD or NONE")
	}
	t, err := s.lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	key, err := parseKey(t.def.Load(), in.Key)
	if err != nil {
		return nil, err
	}
	d, old, _, err := s.mutate(t, key, func(d *tableDef, old av.Item) (av.Item, error) {
		if !cond.eval(old) {
			return old, conditionFailure(old, in.ReturnValuesOnConditionCheckFailure)
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	u := newUsage(d.Name, false)
	u.addWrite(d, old, nil, 1)
	out := itemOutput{ConsumedCapacity: u.response(in.ReturnConsumedCapacity)}
	if in.ReturnValues == "ALL_OLD" && old != nil {
		out.Attributes = old
	}
	out.ItemCollection = s.collectionMetrics(d, key, in.ReturnItemCollectionMetrics)
	return &out, nil
}

func (s *Store) updateItem(ctx context.Context, body []byte) (any, error) {
	var in updateItemInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	c.tableName("tableName", in.TableName)
	c.returnValues(in.ReturnValues)
	c.returnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	c.returnValuesOnConditionCheckFailure(in.ReturnValuesOnConditionCheckFailure)
	c.notNull("key", in.Key == nil)
	if err := c.err(); err != nil {
		return nil, err
	}
	var upd updater
	cond, err := parseWriteCondition(in.exprParams, in.ConditionExpression, in.Expected, in.ConditionalOperator,
		"UpdateExpression and ConditionExpression are null", func(ea *exprArgs) {
			present(&ea.present, "UpdateExpression", in.UpdateExpression != nil)
			present(&ea.legacy, "AttributeUpdates", in.AttributeUpdates != nil)
		}, func(a *expr.Attrs) error {
			var err error
			upd, err = parseUpdate(a, in.UpdateExpression, in.AttributeUpdates)
			return err
		})
	if err != nil {
		return nil, err
	}
	t, err := s.lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	key, err := parseKey(t.def.Load(), in.Key)
	if err != nil {
		return nil, err
	}
	if err := upd.checkKeys(t.def.Load()); err != nil {
		return nil, err
	}
	d, old, new, err := s.mutate(t, key, func(d *tableDef, old av.Item) (av.Item, error) {
		if !cond.eval(old) {
			return old, conditionFailure(old, in.ReturnValuesOnConditionCheckFailure)
		}
		return upd.apply(d, key, old)
	})
	if err != nil {
		return nil, err
	}
	u := newUsage(d.Name, false)
	u.addWrite(d, old, new, 1)
	out := itemOutput{ConsumedCapacity: u.response(in.ReturnConsumedCapacity)}
	switch in.ReturnValues {
	case "ALL_OLD":
		out.Attributes = old
	case "ALL_NEW":
		out.Attributes = new
	case "UPDATED_OLD":
		out.Attributes = upd.updated(old)
	case "UPDATED_NEW":
		out.Attributes = upd.updated(new)
	}
	if len(out.Attributes) == 0 {
		out.Attributes = nil
	}
	out.ItemCollection = s.collectionMetrics(d, key, in.ReturnItemCollectionMetrics)
	return &out, nil
}

// collectionMetrics answers ReturnItemCollectionMetrics=SIZE for tables
// with local secondary indexes.
func (s *Store) collectionMetrics(d *tableDef, key av.Item, mode string) map[string]any {
	if mode != "SIZE" {
		return nil
	}
	hasLSI := false
	for _, ix := range d.Indexes {
		hasLSI = hasLSI || ix.Local
	}
	if !hasLSI {
		return nil
	}
	return map[string]any{
		"ItemCollectionKey":   av.Item{d.Hash.Name: key[d.Hash.Name]},
		"SizeEstimateRangeGB": []float64{0, 1},
	}
}
