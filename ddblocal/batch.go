package ddblocal

import (
	"context"
	"sort"

	"lastro/ddblocal/internal/av"
)

const (
	maxBatchGetKeys  = 100
	maxBatchWrites   = 25
	maxResponseBytes = 16 << 20
)

func (s *Store) batchGetItem(ctx context.Context, body []byte) (any, error) {
	var in batchGetItemInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	c.notNull("requestItems", in.RequestItems == nil)
	if in.RequestItems != nil && len(in.RequestItems) == 0 {
		c.add("Value '{}' at 'requestItems' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	total := 0
	for _, ka := range in.RequestItems {
		if ka != nil {
			total += len(ka.Keys)
		}
	}
	if total > maxBatchGetKeys {
		return nil, validation("Too many items requested for the BatchGetItem call")
	}
	type plan struct {
		name       string
		t          *table
		keys       []av.Item
		proj       projector
		consistent bool
	}
	var plans []plan
	for _, name := range sortedKeys(in.RequestItems) {
		ka := in.RequestItems[name]
		if ka == nil || len(ka.Keys) == 0 {
			return nil, validation("1 validation error detected: Value null at 'requestItems.%s.member.keys' failed to satisfy constraint: Member must not be null", name)
		}
		var c constraints
		c.name("requestItems", name, 3)
		if err := c.err(); err != nil {
			return nil, err
		}
		ea := exprArgs{names: ka.ExpressionAttributeNames, ifNone: "ProjectionExpression is null"}
		present(&ea.present, "ProjectionExpression", ka.ProjectionExpression != nil)
		present(&ea.legacy, "AttributesToGet", ka.AttributesToGet != nil)
		proj, err := parseProjection(ea, ka.ProjectionExpression, ka.AttributesToGet)
		if err != nil {
			return nil, err
		}
		t, err := s.lookup(&name)
		if err != nil {
			return nil, err
		}
		d := t.def.Load()
		p := plan{name: name, t: t, proj: proj, consistent: ka.ConsistentRead != nil && *ka.ConsistentRead}
		seen := map[string]bool{}
		for _, w := range ka.Keys {
			key, err := parseKey(d, w)
			if err != nil {
				return nil, err
			}
			sk := string(d.baseKey(key))
			if seen[sk] {
				return nil, validation("Provided list of item keys contains duplicates")
			}
			seen[sk] = true
			p.keys = append(p.keys, key)
		}
		plans = append(plans, p)
	}
	responses := map[string][]av.Item{}
	unprocessed := map[string]*keysAndAttributes{}
	var caps []*consumedCapacity
	size := 0
	for _, p := range plans {
		d := p.t.def.Load()
		u := newUsage(p.name, true)
		items := []av.Item{}
		for i, key := range p.keys {
			if size >= maxResponseBytes || s.inject(p.name, faultUnprocessed) {
				src := in.RequestItems[p.name]
				rest := &keysAndAttributes{ConsistentRead: src.ConsistentRead, ProjectionExpression: src.ProjectionExpression,
					ExpressionAttributeNames: src.ExpressionAttributeNames, AttributesToGet: src.AttributesToGet}
				if prev := unprocessed[p.name]; prev != nil {
					rest = prev
				}
				rest.Keys = append(rest.Keys, keyWire(key))
				unprocessed[p.name] = rest
				_ = i
				continue
			}
			it, err := s.get(d.baseKey(key))
			if err != nil {
				return nil, err
			}
			n := 0
			if it != nil {
				n = av.ItemSize(it)
				size += n
				items = append(items, p.proj.apply(it))
			}
			u.addTable(readUnits(n, p.consistent))
		}
		responses[p.name] = items
		if cc := u.response(in.ReturnConsumedCapacity); cc != nil {
			caps = append(caps, cc)
		}
	}
	out := map[string]any{"Responses": responses, "UnprocessedKeys": unprocessed}
	if caps != nil {
		out["ConsumedCapacity"] = caps
	}
	return out, nil
}

// keyWire converts a validated key back to its wire form.
func keyWire(key av.Item) av.WireItem {
	w := av.WireItem{}
	for k, v := range key {
		w[k] = v.ToWire()
	}
	return w
}

func (s *Store) batchWriteItem(ctx context.Context, body []byte) (any, error) {
	var in batchWriteItemInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	c.returnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	c.notNull("requestItems", in.RequestItems == nil)
	if err := c.err(); err != nil {
		return nil, err
	}
	total := 0
	for _, reqs := range in.RequestItems {
		total += len(reqs)
		if len(reqs) == 0 || len(reqs) > maxBatchWrites {
			return nil, validation("1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]")
		}
	}
	if len(in.RequestItems) == 0 {
		return nil, validation("1 validation error detected: Value '{}' at 'requestItems' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	if total > maxBatchWrites {
		return nil, validation("Too many items requested for the BatchWriteItem call")
	}
	type op struct {
		name string
		t    *table
		key  av.Item
		item av.Item // nil: delete
		skey []byte
		w    *writeRequest
	}
	var ops []*op
	for _, name := range sortedKeys(in.RequestItems) {
		var c constraints
		c.name("requestItems", name, 3)
		if err := c.err(); err != nil {
			return nil, err
		}
		t, err := s.lookup(&name)
		if err != nil {
			return nil, err
		}
		d := t.def.Load()
		for _, w := range in.RequestItems[name] {
			if w == nil || (w.PutRequest == nil) == (w.DeleteRequest == nil) {
				return nil, validation("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
			}
			o := &op{name: name, t: t, w: w}
			if w.PutRequest != nil {
				it, err := av.ItemFromWire(w.PutRequest.Item)
				if err != nil {
					return nil, validation("%s", err.Error())
				}
				if err := checkItem(d, it); err != nil {
					return nil, err
				}
				o.item, o.key = it, keyOf(d, it)
			} else {
				key, err := parseKey(d, w.DeleteRequest.Key)
				if err != nil {
					return nil, err
				}
				o.key = key
			}
			o.skey = d.baseKey(o.key)
			ops = append(ops, o)
		}
	}
	seen := map[string]bool{}
	for _, o := range ops {
		if seen[string(o.skey)] {
			return nil, validation("Provided list of item keys contains duplicates")
		}
		seen[string(o.skey)] = true
	}
	unprocessed := map[string][]*writeRequest{}
	var todo []*op
	for _, o := range ops {
		if s.inject(o.name, faultUnprocessed) {
			unprocessed[o.name] = append(unprocessed[o.name], o.w)
			continue
		}
		todo = append(todo, o)
	}
	sort.Slice(todo, func(i, j int) bool { return string(todo[i].skey) < string(todo[j].skey) })
	for _, o := range todo {
		s.locks.acquire(string(o.skey), false)
	}
	defer func() {
		for _, o := range todo {
			s.locks.release(string(o.skey))
		}
	}()
	usages := map[string]*usage{}
	var changes []*change
	for _, o := range todo {
		d := o.t.def.Load()
		old, err := s.get(o.skey)
		if err != nil {
			return nil, err
		}
		if o.item != nil {
			if err := checkItem(d, o.item); err != nil {
				return nil, err
			}
		}
		u := usages[o.name]
		if u == nil {
			u = newUsage(o.name, false)
			usages[o.name] = u
		}
		u.addWrite(d, old, o.item, 1)
		if old == nil && o.item == nil {
			continue
		}
		changes = append(changes, &change{t: o.t, def: d, key: o.skey, old: old, new: o.item})
	}
	if len(changes) > 0 {
		if err := s.write(changes); err != nil {
			return nil, err
		}
	}
	out := map[string]any{"UnprocessedItems": unprocessed}
	var caps []*consumedCapacity
	for _, name := range sortedKeys(usages) {
		if cc := usages[name].response(in.ReturnConsumedCapacity); cc != nil {
			caps = append(caps, cc)
		}
	}
	if caps != nil {
		out["ConsumedCapacity"] = caps
	}
	return out, nil
}
