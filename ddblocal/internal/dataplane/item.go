package dataplane

import (
	"context"
	"fmt"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/expr"
	"lastro/ddblocal/internal/wire"
)

// Mutate runs one single-item write: it locks the item, reads the current
// image, lets decide compute the new one (nil deletes; an error aborts,
// e.g. a failed condition) and commits it. The table definition is read
// after the lock is held so index changes by UpdateTable are never missed.
func (s *Store) Mutate(t *engine.Table, key av.Item, decide func(d *engine.TableDef, old av.Item) (av.Item, error)) (d *engine.TableDef, old, new av.Item, err error) {
	d = t.Def.Load()
	skey := d.BaseKey(key)
	s.DB.Locks.Acquire(string(skey), false)
	defer s.DB.Locks.Release(string(skey))
	d = t.Def.Load()
	if old, err = s.Get(skey); err != nil {
		return d, nil, nil, err
	}
	if new, err = decide(d, old); err != nil {
		return d, old, nil, err
	}
	if old == nil && new == nil {
		return d, nil, nil, nil
	}
	if err := s.Write([]*engine.Change{{T: t, Def: d, Key: skey, Old: old, New: new}}); err != nil {
		return d, old, new, err
	}
	return d, old, new, nil
}

// Lookup finds a table for a data-plane request.
func (s *Store) Lookup(name *string) (*engine.Table, error) {
	t := s.Table(*name)
	if t == nil {
		return nil, wire.ErrResourceNotFound()
	}
	return t, nil
}

// ConditionFailure builds the ConditionalCheckFailedException, with the
// old item when the request asked for it.
func ConditionFailure(old av.Item, rv string) error {
	e := wire.ConditionalFailed()
	if rv == "ALL_OLD" && old != nil {
		e.Item = ItemJSON(old)
	}
	return e
}

func ItemJSON(it av.Item) map[string]any {
	m := make(map[string]any, len(it))
	for k, v := range it {
		m[k] = v
	}
	return m
}

type itemOutput struct {
	Item             av.Item                `json:"Item,omitempty"`
	Attributes       av.Item                `json:"Attributes,omitempty"`
	ConsumedCapacity *wire.ConsumedCapacity `json:"ConsumedCapacity,omitempty"`
	ItemCollection   map[string]any         `json:"ItemCollectionMetrics,omitempty"`
}

// GetItem answers the GetItem operation.
func (s *Store) GetItem(ctx context.Context, body []byte) (any, error) {
	var in wire.GetItemInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.ReturnConsumedCapacity(in.ReturnConsumedCapacity)
	attributesToGet(&c, "attributesToGet", in.AttributesToGet)
	c.ItemTableName("tableName", in.TableName)
	c.NotNull("key", in.Key == nil)
	if err := c.Err(); err != nil {
		return nil, err
	}
	ea := engine.ExprArgs{Names: in.ExpressionAttributeNames}
	engine.Present(&ea.Present, "ProjectionExpression", in.ProjectionExpression != nil)
	engine.Present(&ea.Legacy, "AttributesToGet", in.AttributesToGet != nil)
	if err := ea.Params(); err != nil {
		return nil, err
	}
	key, err := engine.KeyFromWire(in.Key)
	if err != nil {
		return nil, wire.CurrentWording(err, in.Key)
	}
	proj, err := ParseProjection(ea, in.ProjectionExpression, in.AttributesToGet)
	if err != nil {
		return nil, err
	}
	t, err := s.Lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	d := t.Def.Load()
	if err := engine.MatchKey(d, key); err != nil {
		return nil, err
	}
	it, err := s.Read(d.BaseKey(key))
	if err != nil {
		return nil, err
	}
	consistent := in.ConsistentRead != nil && *in.ConsistentRead
	u := engine.NewUsage(d.Name, true)
	u.AddTable(engine.ReadUnits(engine.SizeOf(it), consistent))
	out := GetItemOutput{ConsumedCapacity: s.Report(u, in.ReturnConsumedCapacity)}
	if it != nil {
		item := proj.Apply(it)
		out.Item = &item
	}
	return &out, nil
}

// GetItemOutput is GetItem's response. Item is a pointer so that an item
// none of whose attributes the projection names still answers "Item": {},
// as DynamoDB does, while a missing item has no Item member.
type GetItemOutput struct {
	Item             *av.Item               `json:"Item,omitempty"`
	ConsumedCapacity *wire.ConsumedCapacity `json:"ConsumedCapacity,omitempty"`
}

// MarshalJSON appends the item as it is (ADR 0053).
func (o GetItemOutput) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 256), '{')
	if o.Item != nil {
		b = append(b, `"Item":`...)
		b = av.AppendItemJSON(b, *o.Item)
	}
	b, err := appendMember(b, "ConsumedCapacity", o.ConsumedCapacity)
	return append(b, '}'), err
}

// attributesToGet checks the length constraint of an AttributesToGet member.
func attributesToGet(c *wire.Constraints, member string, names []string) {
	if names != nil && len(names) == 0 {
		c.Add("Value '[]' at '%s' failed to satisfy constraint: Member must have length greater than or equal to 1", member)
	}
}

// Projector applies a ProjectionExpression or AttributesToGet (nil: all).
type Projector struct{ p *expr.Projection }

func (p Projector) Apply(it av.Item) av.Item {
	if p.p == nil {
		return it
	}
	return p.p.Apply(it)
}

// ParseProjection validates the names map of a read that only has a
// projection, and parses it. The caller has already run ea.params.
func ParseProjection(ea engine.ExprArgs, pe *string, attrsToGet []string) (Projector, error) {
	if attrsToGet != nil {
		p, err := engine.LegacyProjection(attrsToGet)
		return Projector{p}, err
	}
	a, err := ea.Attrs()
	if err != nil {
		return Projector{}, err
	}
	var p *expr.Projection
	if pe != nil {
		if p, err = expr.ParseProjection(*pe, a); err != nil {
			return Projector{}, engine.ExprError(err)
		}
	}
	if err := a.CheckUnused(); err != nil {
		return Projector{}, engine.ExprError(err)
	}
	return Projector{p}, nil
}

// writeArgs gathers the expression members of PutItem and DeleteItem.
func writeArgs(p wire.ExprParams, ce *string, expected map[string]*wire.ExpectedAttr) engine.ExprArgs {
	ea := engine.ExprArgs{Names: p.ExpressionAttributeNames, Values: p.ExpressionAttributeValues}
	engine.Present(&ea.Present, "ConditionExpression", ce != nil)
	engine.Present(&ea.Legacy, "Expected", expected != nil)
	return ea
}

// checkWriteReturnValues refuses the ReturnValues PutItem and DeleteItem do
// not support.
func checkWriteReturnValues(rv string) error {
	if rv != "" && rv != "NONE" && rv != "ALL_OLD" {
		return wire.Validation("ReturnValues can only be ALL_OLD or NONE")
	}
	return nil
}

// PutItem, deleteItem and updateItem apply the validation envelope once,
// to the error their request validation classified (see requestError).
func (s *Store) PutItem(ctx context.Context, body []byte) (any, error) {
	out, err := s.putItemRequest(ctx, body)
	return out, s.Envelope(err)
}

// DeleteItem answers the DeleteItem operation.
func (s *Store) DeleteItem(ctx context.Context, body []byte) (any, error) {
	out, err := s.deleteItemRequest(ctx, body)
	return out, s.Envelope(err)
}

// UpdateItem answers the UpdateItem operation.
func (s *Store) UpdateItem(ctx context.Context, body []byte) (any, error) {
	out, err := s.updateItemRequest(ctx, body)
	return out, s.Envelope(err)
}

func (s *Store) putItemRequest(ctx context.Context, body []byte) (any, error) {
	var in wire.PutItemInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	if err := in.FrontEnd(in.TableName, in.Item != nil); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.ReturnConsumedCapacity(in.ReturnConsumedCapacity)
	c.ItemTableName("tableName", in.TableName)
	c.NotNull("item", in.Item == nil)
	c.ConditionalOperator(in.ConditionalOperator)
	c.ReturnValues(in.ReturnValues)
	c.ReturnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	c.ReturnValuesOnConditionCheckFailure(in.ReturnValuesOnConditionCheckFailure)
	if err := c.Err(); err != nil {
		return nil, err
	}
	// Request validation (see requestError).
	ea := writeArgs(in.ExprParams, in.ConditionExpression, in.Expected)
	ea.IfNone = s.NoExpression("ConditionExpression is null")
	if err := ea.Params(); err != nil {
		return nil, wire.RequestError(err)
	}
	item, err := av.ItemFromWire(in.Item)
	if err != nil {
		return nil, wire.RequestError(s.ValueWording(engine.AvError(err), in.Item))
	}
	if err := checkWriteReturnValues(in.ReturnValues); err != nil {
		return nil, wire.RequestError(err)
	}
	if err := engine.CheckItemSize(item); err != nil {
		return nil, err
	}
	x, err := engine.ParseWriteExprs(ea, in.ConditionExpression, in.Expected, in.ConditionalOperator, nil, nil)
	if err != nil {
		return nil, wire.RequestError(s.ValueWording(err, in.ExpressionAttributeValues, expectedWires(in.Expected)))
	}
	t, err := s.Lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	if err := engine.CheckItemKeys(t.Def.Load(), item); err != nil {
		return nil, err
	}
	d, old, _, err := s.Mutate(t, engine.KeyOf(t.Def.Load(), item), func(d *engine.TableDef, old av.Item) (av.Item, error) {
		if err := engine.CheckItemKeys(d, item); err != nil {
			return nil, err
		}
		if !x.Cond.Eval(old) {
			return nil, ConditionFailure(old, in.ReturnValuesOnConditionCheckFailure)
		}
		return item, nil
	})
	if err != nil {
		return nil, s.FailedWrite(err, d, old)
	}
	return s.replaceOutput(d, old, item, item, in.ReturnConsumedCapacity, in.ReturnValues, in.ReturnItemCollectionMetrics), nil
}

func (s *Store) deleteItemRequest(ctx context.Context, body []byte) (any, error) {
	var in wire.DeleteItemInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	if err := in.FrontEnd(in.TableName, in.Key != nil); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.ReturnConsumedCapacity(in.ReturnConsumedCapacity)
	c.ItemTableName("tableName", in.TableName)
	c.ReturnValues(in.ReturnValues)
	c.ReturnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	c.NotNull("key", in.Key == nil)
	c.ConditionalOperator(in.ConditionalOperator)
	c.ReturnValuesOnConditionCheckFailure(in.ReturnValuesOnConditionCheckFailure)
	if err := c.Err(); err != nil {
		return nil, err
	}
	ea := writeArgs(in.ExprParams, in.ConditionExpression, in.Expected)
	ea.IfNone = s.NoExpression("ConditionExpression is null")
	if err := ea.Params(); err != nil {
		return nil, wire.RequestError(err)
	}
	key, err := engine.KeyFromWire(in.Key)
	if err != nil {
		return nil, wire.RequestError(s.ValueWording(err, in.Key))
	}
	if err := checkWriteReturnValues(in.ReturnValues); err != nil {
		return nil, wire.RequestError(err)
	}
	x, err := engine.ParseWriteExprs(ea, in.ConditionExpression, in.Expected, in.ConditionalOperator, nil, nil)
	if err != nil {
		return nil, wire.RequestError(s.ValueWording(err, in.ExpressionAttributeValues, expectedWires(in.Expected)))
	}
	t, err := s.Lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	if err := engine.MatchKey(t.Def.Load(), key); err != nil {
		return nil, err
	}
	d, old, _, err := s.Mutate(t, key, func(d *engine.TableDef, old av.Item) (av.Item, error) {
		if !x.Cond.Eval(old) {
			return old, ConditionFailure(old, in.ReturnValuesOnConditionCheckFailure)
		}
		return nil, nil
	})
	if err != nil {
		return nil, s.FailedWrite(err, d, old)
	}
	return s.replaceOutput(d, old, nil, key, in.ReturnConsumedCapacity, in.ReturnValues, in.ReturnItemCollectionMetrics), nil
}

// replaceOutput answers a PutItem or DeleteItem that wrote new (nil for a
// delete) over old: its capacity, the old item for ALL_OLD (the only
// ReturnValues they accept) and the item collection metrics of key.
func (s *Store) replaceOutput(d *engine.TableDef, old, new, key av.Item, returnCapacity, returnValues, metrics string) *itemOutput {
	u := engine.NewUsage(d.Name, false)
	u.AddWrite(d, old, new, 1)
	out := &itemOutput{ConsumedCapacity: s.Report(u, returnCapacity)}
	if returnValues == "ALL_OLD" && old != nil {
		out.Attributes = old
	}
	out.ItemCollection = s.collectionMetrics(d, key, metrics)
	return out
}

// updateItemRequest answers an UpdateItem request. It is one long function
// on purpose: its checks run in the order DynamoDB reports violations, the
// first refusal is the wire contract, and the sequence reads top to bottom
// in one place.
func (s *Store) updateItemRequest(ctx context.Context, body []byte) (any, error) {
	var in wire.UpdateItemInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	if err := in.FrontEnd(in.TableName, in.Key != nil); err != nil {
		return nil, err
	}
	// The older layer lists an unknown ReturnValues with the other member
	// constraints instead.
	if !s.Older() {
		if err := wire.UpdateReturnValues(in.ReturnValues, in.TableName != nil, in.Key != nil); err != nil {
			return nil, err
		}
	}
	var c wire.Constraints
	c.ReturnConsumedCapacity(in.ReturnConsumedCapacity)
	c.ItemTableName("tableName", in.TableName)
	c.ReturnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	c.ReturnValues(in.ReturnValues)
	c.ConditionalOperator(in.ConditionalOperator)
	c.NotNull("key", in.Key == nil)
	c.ReturnValuesOnConditionCheckFailure(in.ReturnValuesOnConditionCheckFailure)
	if err := c.Err(); err != nil {
		return nil, err
	}
	ea := engine.ExprArgs{Names: in.ExpressionAttributeNames, Values: in.ExpressionAttributeValues}
	engine.Present(&ea.Present, "UpdateExpression", in.UpdateExpression != nil)
	engine.Present(&ea.Present, "ConditionExpression", in.ConditionExpression != nil)
	engine.Present(&ea.Legacy, "AttributeUpdates", in.AttributeUpdates != nil)
	engine.Present(&ea.Legacy, "Expected", in.Expected != nil)
	ea.IfNone = s.NoExpression("UpdateExpression and ConditionExpression are null")
	if err := ea.Params(); err != nil {
		return nil, wire.RequestError(err)
	}
	key, err := engine.KeyFromWire(in.Key)
	if err != nil {
		return nil, wire.RequestError(s.ValueWording(err, in.Key))
	}
	x, err := engine.ParseWriteExprs(ea, in.ConditionExpression, in.Expected, in.ConditionalOperator, in.UpdateExpression, in.AttributeUpdates)
	if err != nil {
		return nil, wire.RequestError(s.ValueWording(err, in.ExpressionAttributeValues, expectedWires(in.Expected), updateWires(in.AttributeUpdates)))
	}
	t, err := s.Lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	if err := engine.MatchKey(t.Def.Load(), key); err != nil {
		return nil, err
	}
	if err := x.Upd.CheckKeys(t.Def.Load()); err != nil {
		return nil, err
	}
	d, old, new, err := s.Mutate(t, key, func(d *engine.TableDef, old av.Item) (av.Item, error) {
		if !x.Cond.Eval(old) {
			return old, ConditionFailure(old, in.ReturnValuesOnConditionCheckFailure)
		}
		n, err := x.Upd.Apply(d, key, old)
		if err != nil {
			return nil, err
		}
		return n, x.Upd.CheckStatementSize(in.UpdateExpression, n)
	})
	if err != nil {
		return nil, s.FailedWrite(err, d, old)
	}
	u := engine.NewUsage(d.Name, false)
	u.AddWrite(d, old, new, 1)
	out := itemOutput{ConsumedCapacity: s.Report(u, in.ReturnConsumedCapacity)}
	switch in.ReturnValues {
	case "ALL_OLD":
		out.Attributes = old
	case "ALL_NEW":
		out.Attributes = new
	case "UPDATED_OLD":
		out.Attributes = x.Upd.Updated(old)
	case "UPDATED_NEW":
		out.Attributes = x.Upd.Updated(new)
	}
	if len(out.Attributes) == 0 {
		out.Attributes = nil
	}
	out.ItemCollection = s.collectionMetrics(d, key, in.ReturnItemCollectionMetrics)
	return &out, nil
}

// collectionMetrics answers ReturnItemCollectionMetrics=SIZE for tables
// with local secondary indexes.
func (s *Store) collectionMetrics(d *engine.TableDef, key av.Item, mode string) map[string]any {
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
func expectedWires(expected map[string]*wire.ExpectedAttr) map[string]*av.Wire {
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
func updateWires(updates map[string]*wire.AttributeUpdate) map[string]*av.Wire {
	out := map[string]*av.Wire{}
	for name, u := range updates {
		if u != nil && u.Value != nil {
			out[name] = u.Value
		}
	}
	return out
}
