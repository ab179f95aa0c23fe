package ddblocal

import (
	"context"
	"fmt"

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
	s.db.Locks.Acquire(string(skey), false)
	defer s.db.Locks.Release(string(skey))
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
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	attributesToGet(&c, "attributesToGet", in.AttributesToGet)
	c.itemTableName("tableName", in.TableName)
	c.notNull("key", in.Key == nil)
	if err := c.err(); err != nil {
		return nil, err
	}
	ea := exprArgs{names: in.ExpressionAttributeNames}
	present(&ea.present, "ProjectionExpression", in.ProjectionExpression != nil)
	present(&ea.legacy, "AttributesToGet", in.AttributesToGet != nil)
	if err := ea.params(); err != nil {
		return nil, err
	}
	key, err := keyFromWire(in.Key)
	if err != nil {
		return nil, currentWording(err, in.Key)
	}
	proj, err := parseProjection(ea, in.ProjectionExpression, in.AttributesToGet)
	if err != nil {
		return nil, err
	}
	t, err := s.lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	d := t.def.Load()
	if err := matchKey(d, key); err != nil {
		return nil, err
	}
	it, err := s.read(d.baseKey(key))
	if err != nil {
		return nil, err
	}
	consistent := in.ConsistentRead != nil && *in.ConsistentRead
	u := newUsage(d.Name, true)
	u.addTable(readUnits(sizeOf(it), consistent))
	out := getItemOutput{ConsumedCapacity: s.report(u, in.ReturnConsumedCapacity)}
	if it != nil {
		item := proj.apply(it)
		out.Item = &item
	}
	return &out, nil
}

// getItemOutput is GetItem's response. Item is a pointer so that an item
// none of whose attributes the projection names still answers "Item": {},
// as DynamoDB does, while a missing item has no Item member.
type getItemOutput struct {
	Item             *av.Item          `json:"Item,omitempty"`
	ConsumedCapacity *consumedCapacity `json:"ConsumedCapacity,omitempty"`
}

// MarshalJSON appends the item as it is (ADR 0053).
func (o getItemOutput) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 256), '{')
	if o.Item != nil {
		b = append(b, `"Item":`...)
		b = av.AppendItemJSON(b, *o.Item)
	}
	b, err := appendMember(b, "ConsumedCapacity", o.ConsumedCapacity)
	return append(b, '}'), err
}

// attributesToGet checks the length constraint of an AttributesToGet member.
func attributesToGet(c *constraints, member string, names []string) {
	if names != nil && len(names) == 0 {
		c.add("Value '[]' at '%s' failed to satisfy constraint: Member must have length greater than or equal to 1", member)
	}
}

// projector applies a ProjectionExpression or AttributesToGet (nil: all).
type projector struct{ p *expr.Projection }

func (p projector) apply(it av.Item) av.Item {
	if p.p == nil {
		return it
	}
	return p.p.Apply(it)
}

// parseProjection validates the names map of a read that only has a
// projection, and parses it. The caller has already run ea.params.
func parseProjection(ea exprArgs, pe *string, attrsToGet []string) (projector, error) {
	if attrsToGet != nil {
		p, err := legacyProjection(attrsToGet)
		return projector{p}, err
	}
	a, err := ea.attrs()
	if err != nil {
		return projector{}, err
	}
	var p *expr.Projection
	if pe != nil {
		if p, err = expr.ParseProjection(*pe, a); err != nil {
			return projector{}, exprError(err)
		}
	}
	if err := a.CheckUnused(); err != nil {
		return projector{}, exprError(err)
	}
	return projector{p}, nil
}

// writeArgs gathers the expression members of PutItem and DeleteItem.
func writeArgs(p exprParams, ce *string, expected map[string]*expectedAttr) exprArgs {
	ea := exprArgs{names: p.ExpressionAttributeNames, values: p.ExpressionAttributeValues}
	present(&ea.present, "ConditionExpression", ce != nil)
	present(&ea.legacy, "Expected", expected != nil)
	return ea
}

// frontEnd runs the checks DynamoDB's newer front end reports alone when
// a PutItem, UpdateItem or DeleteItem carries its required members (the
// item or key: hasRequired): an empty table name, then an unknown
// ConditionalOperator.
func (o *writeOptions) frontEnd(table *string, hasRequired bool) error {
	if err := emptyTableName(table, hasRequired); err != nil {
		return err
	}
	return unknownConditionalOperator(o.ConditionalOperator, table != nil, hasRequired)
}

// checkWriteReturnValues refuses the ReturnValues PutItem and DeleteItem do
// not support.
func checkWriteReturnValues(rv string) error {
	if rv != "" && rv != "NONE" && rv != "ALL_OLD" {
		return validation("ReturnValues can only be ALL_OLD or NONE")
	}
	return nil
}

// putItem, deleteItem and updateItem apply the validation envelope once,
// to the error their request validation classified (see requestError).
func (s *Store) putItem(ctx context.Context, body []byte) (any, error) {
	out, err := s.putItemRequest(ctx, body)
	return out, s.envelope(err)
}

func (s *Store) deleteItem(ctx context.Context, body []byte) (any, error) {
	out, err := s.deleteItemRequest(ctx, body)
	return out, s.envelope(err)
}

func (s *Store) updateItem(ctx context.Context, body []byte) (any, error) {
	out, err := s.updateItemRequest(ctx, body)
	return out, s.envelope(err)
}

func (s *Store) putItemRequest(ctx context.Context, body []byte) (any, error) {
	var in putItemInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := in.frontEnd(in.TableName, in.Item != nil); err != nil {
		return nil, err
	}
	var c constraints
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	c.itemTableName("tableName", in.TableName)
	c.notNull("item", in.Item == nil)
	c.conditionalOperator(in.ConditionalOperator)
	c.returnValues(in.ReturnValues)
	c.returnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	c.returnValuesOnConditionCheckFailure(in.ReturnValuesOnConditionCheckFailure)
	if err := c.err(); err != nil {
		return nil, err
	}
	// Request validation (see requestError).
	ea := writeArgs(in.exprParams, in.ConditionExpression, in.Expected)
	ea.ifNone = s.noExpression("ConditionExpression is null")
	if err := ea.params(); err != nil {
		return nil, requestError(err)
	}
	item, err := av.ItemFromWire(in.Item)
	if err != nil {
		return nil, requestError(s.valueWording(avError(err), in.Item))
	}
	if err := checkWriteReturnValues(in.ReturnValues); err != nil {
		return nil, requestError(err)
	}
	if err := checkItemSize(item); err != nil {
		return nil, err
	}
	x, err := parseWriteExprs(ea, in.ConditionExpression, in.Expected, in.ConditionalOperator, nil, nil)
	if err != nil {
		return nil, requestError(s.valueWording(err, in.ExpressionAttributeValues, expectedWires(in.Expected)))
	}
	t, err := s.lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	if err := checkItemKeys(t.def.Load(), item); err != nil {
		return nil, err
	}
	d, old, _, err := s.mutate(t, keyOf(t.def.Load(), item), func(d *tableDef, old av.Item) (av.Item, error) {
		if err := checkItemKeys(d, item); err != nil {
			return nil, err
		}
		if !x.cond.eval(old) {
			return nil, conditionFailure(old, in.ReturnValuesOnConditionCheckFailure)
		}
		return item, nil
	})
	if err != nil {
		return nil, s.failedWrite(err, d, old)
	}
	return s.replaceOutput(d, old, item, item, in.ReturnConsumedCapacity, in.ReturnValues, in.ReturnItemCollectionMetrics), nil
}

func (s *Store) deleteItemRequest(ctx context.Context, body []byte) (any, error) {
	var in deleteItemInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := in.frontEnd(in.TableName, in.Key != nil); err != nil {
		return nil, err
	}
	var c constraints
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	c.itemTableName("tableName", in.TableName)
	c.returnValues(in.ReturnValues)
	c.returnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	c.notNull("key", in.Key == nil)
	c.conditionalOperator(in.ConditionalOperator)
	c.returnValuesOnConditionCheckFailure(in.ReturnValuesOnConditionCheckFailure)
	if err := c.err(); err != nil {
		return nil, err
	}
	ea := writeArgs(in.exprParams, in.ConditionExpression, in.Expected)
	ea.ifNone = s.noExpression("ConditionExpression is null")
	if err := ea.params(); err != nil {
		return nil, requestError(err)
	}
	key, err := keyFromWire(in.Key)
	if err != nil {
		return nil, requestError(s.valueWording(err, in.Key))
	}
	if err := checkWriteReturnValues(in.ReturnValues); err != nil {
		return nil, requestError(err)
	}
	x, err := parseWriteExprs(ea, in.ConditionExpression, in.Expected, in.ConditionalOperator, nil, nil)
	if err != nil {
		return nil, requestError(s.valueWording(err, in.ExpressionAttributeValues, expectedWires(in.Expected)))
	}
	t, err := s.lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	if err := matchKey(t.def.Load(), key); err != nil {
		return nil, err
	}
	d, old, _, err := s.mutate(t, key, func(d *tableDef, old av.Item) (av.Item, error) {
		if !x.cond.eval(old) {
			return old, conditionFailure(old, in.ReturnValuesOnConditionCheckFailure)
		}
		return nil, nil
	})
	if err != nil {
		return nil, s.failedWrite(err, d, old)
	}
	return s.replaceOutput(d, old, nil, key, in.ReturnConsumedCapacity, in.ReturnValues, in.ReturnItemCollectionMetrics), nil
}

// replaceOutput answers a PutItem or DeleteItem that wrote new (nil for a
// delete) over old: its capacity, the old item for ALL_OLD (the only
// ReturnValues they accept) and the item collection metrics of key.
func (s *Store) replaceOutput(d *tableDef, old, new, key av.Item, returnCapacity, returnValues, metrics string) *itemOutput {
	u := newUsage(d.Name, false)
	u.addWrite(d, old, new, 1)
	out := &itemOutput{ConsumedCapacity: s.report(u, returnCapacity)}
	if returnValues == "ALL_OLD" && old != nil {
		out.Attributes = old
	}
	out.ItemCollection = s.collectionMetrics(d, key, metrics)
	return out
}

func (s *Store) updateItemRequest(ctx context.Context, body []byte) (any, error) {
	var in updateItemInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := in.frontEnd(in.TableName, in.Key != nil); err != nil {
		return nil, err
	}
	// The older layer lists an unknown ReturnValues with the other member
	// constraints instead.
	if !s.older() {
		if err := updateReturnValues(in.ReturnValues, in.TableName != nil, in.Key != nil); err != nil {
			return nil, err
		}
	}
	var c constraints
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	c.itemTableName("tableName", in.TableName)
	c.returnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	c.returnValues(in.ReturnValues)
	c.conditionalOperator(in.ConditionalOperator)
	c.notNull("key", in.Key == nil)
	c.returnValuesOnConditionCheckFailure(in.ReturnValuesOnConditionCheckFailure)
	if err := c.err(); err != nil {
		return nil, err
	}
	ea := exprArgs{names: in.ExpressionAttributeNames, values: in.ExpressionAttributeValues}
	present(&ea.present, "UpdateExpression", in.UpdateExpression != nil)
	present(&ea.present, "ConditionExpression", in.ConditionExpression != nil)
	present(&ea.legacy, "AttributeUpdates", in.AttributeUpdates != nil)
	present(&ea.legacy, "Expected", in.Expected != nil)
	ea.ifNone = s.noExpression("UpdateExpression and ConditionExpression are null")
	if err := ea.params(); err != nil {
		return nil, requestError(err)
	}
	key, err := keyFromWire(in.Key)
	if err != nil {
		return nil, requestError(s.valueWording(err, in.Key))
	}
	x, err := parseWriteExprs(ea, in.ConditionExpression, in.Expected, in.ConditionalOperator, in.UpdateExpression, in.AttributeUpdates)
	if err != nil {
		return nil, requestError(s.valueWording(err, in.ExpressionAttributeValues, expectedWires(in.Expected), updateWires(in.AttributeUpdates)))
	}
	t, err := s.lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	if err := matchKey(t.def.Load(), key); err != nil {
		return nil, err
	}
	if err := x.upd.checkKeys(t.def.Load()); err != nil {
		return nil, err
	}
	d, old, new, err := s.mutate(t, key, func(d *tableDef, old av.Item) (av.Item, error) {
		if !x.cond.eval(old) {
			return old, conditionFailure(old, in.ReturnValuesOnConditionCheckFailure)
		}
		n, err := x.upd.apply(d, key, old)
		if err != nil {
			return nil, err
		}
		return n, x.upd.checkStatementSize(in.UpdateExpression, n)
	})
	if err != nil {
		return nil, s.failedWrite(err, d, old)
	}
	u := newUsage(d.Name, false)
	u.addWrite(d, old, new, 1)
	out := itemOutput{ConsumedCapacity: s.report(u, in.ReturnConsumedCapacity)}
	switch in.ReturnValues {
	case "ALL_OLD":
		out.Attributes = old
	case "ALL_NEW":
		out.Attributes = new
	case "UPDATED_OLD":
		out.Attributes = x.upd.updated(old)
	case "UPDATED_NEW":
		out.Attributes = x.upd.updated(new)
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

// expectedWires gathers the values of a legacy Expected member, to word
// their errors.
func expectedWires(expected map[string]*expectedAttr) map[string]*av.Wire {
	out := map[string]*av.Wire{}
	for name, e := range expected {
		if e == nil {
			continue
		}
		if e.Value != nil {
			out[name] = e.Value
		}
		for i, v := range e.AttributeValueList {
			out[fmt.Sprintf("%s[%d]", name, i)] = v
		}
	}
	return out
}

// updateWires gathers the values of a legacy AttributeUpdates member.
func updateWires(updates map[string]*attributeUpdate) map[string]*av.Wire {
	out := map[string]*av.Wire{}
	for name, u := range updates {
		if u != nil && u.Value != nil {
			out[name] = u.Value
		}
	}
	return out
}
