package ddblocal

import (
	"bytes"
	"context"
	"encoding/json"
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
	requestItemsNames(&c, body, sortedKeys(in.RequestItems))
	for _, name := range sortedKeys(in.RequestItems) {
		if ka := in.RequestItems[name]; ka != nil {
			if len(ka.Keys) > maxBatchGetKeys {
				c.add("Value at 'RequestItems.%s.member.Keys' failed to satisfy constraint: Member must have length less than or equal to %d", name, maxBatchGetKeys)
			}
			attributesToGet(&c, "requestItems."+name+".member.attributesToGet", ka.AttributesToGet)
		}
	}
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	if err := c.err(); err != nil {
		return nil, err
	}
	if len(in.RequestItems) == 0 {
		return nil, validation("The requestItems parameter is required for BatchGetItem")
	}
	// Projections may not mix expression and non-expression forms, even
	// across tables.
	var mixed exprArgs
	for _, ka := range in.RequestItems {
		if ka != nil {
			if ka.AttributesToGet != nil && len(mixed.legacy) == 0 {
				mixed.legacy = []string{"AttributesToGet"}
			}
			if ka.ProjectionExpression != nil && len(mixed.present) == 0 {
				mixed.present = []string{"ProjectionExpression"}
			}
		}
	}
	if err := mixed.params(); err != nil {
		return nil, err
	}
	type plan struct {
		name       string
		keys       []av.Item
		proj       projector
		consistent bool
	}
	var plans []plan
	total := 0
	for _, name := range sortedKeys(in.RequestItems) {
		ka := in.RequestItems[name]
		if ka == nil || len(ka.Keys) == 0 {
			return nil, validation("1 validation error detected: Value at 'RequestItems.%s.member.Keys' failed to satisfy constraint: Member must have length greater than or equal to 1", name)
		}
		ea := exprArgs{names: ka.ExpressionAttributeNames}
		present(&ea.present, "ProjectionExpression", ka.ProjectionExpression != nil)
		present(&ea.legacy, "AttributesToGet", ka.AttributesToGet != nil)
		if err := ea.params(); err != nil {
			return nil, err
		}
		p := plan{name: name, consistent: ka.ConsistentRead != nil && *ka.ConsistentRead}
		seen := map[string]bool{}
		for _, w := range ka.Keys {
			key, err := keyFromWire(w)
			if err != nil {
				return nil, currentWording(err, w)
			}
			id := itemIdentity(key)
			if seen[id] {
				return nil, validation("Provided list of item keys contains duplicates")
			}
			seen[id] = true
			if total++; total > maxBatchGetKeys {
				return nil, validation("Too many items requested for the BatchGetItem call")
			}
			p.keys = append(p.keys, key)
		}
		proj, err := parseProjection(ea, ka.ProjectionExpression, ka.AttributesToGet)
		if err != nil {
			return nil, err
		}
		p.proj = proj
		plans = append(plans, p)
	}
	tables := map[string]*table{}
	for _, p := range plans {
		t, err := s.lookup(&p.name)
		if err != nil {
			return nil, err
		}
		tables[p.name] = t
		d := t.def.Load()
		for _, key := range p.keys {
			if err := matchKey(d, key); err != nil {
				return nil, err
			}
		}
	}
	responses := map[string][]av.Item{}
	unprocessed := map[string]*keysAndAttributes{}
	var caps []*consumedCapacity
	size := 0
	// The response's items hold the store's budget until it is written;
	// past it the rest of the keys are left unprocessed (ADR 0059).
	g := &grant{b: &s.respBudget}
	full := false
	out := &batchGetOutput{responses: responses, unprocessed: unprocessed, grant: g}
	leave := func(name string, key av.Item) {
		rest := unprocessed[name]
		if rest == nil {
			src := in.RequestItems[name]
			rest = &keysAndAttributes{ConsistentRead: src.ConsistentRead, ProjectionExpression: src.ProjectionExpression,
				ExpressionAttributeNames: src.ExpressionAttributeNames, AttributesToGet: src.AttributesToGet}
			unprocessed[name] = rest
		}
		rest.Keys = append(rest.Keys, keyWire(key))
	}
	for _, p := range plans {
		d := tables[p.name].def.Load()
		u := newUsage(p.name, true)
		items := []av.Item{}
		for _, key := range p.keys {
			if full || size >= maxResponseBytes || s.injectFor("BatchGetItem", p.name, FaultUnprocessed) {
				leave(p.name, key)
				continue
			}
			it, err := s.read(d.baseKey(key))
			if err != nil {
				g.release()
				return nil, err
			}
			n := 0
			if it != nil {
				n = av.ItemSize(it)
				if !g.take(int64(n)) {
					if size == 0 {
						// Nothing could be served: DynamoDB throttles
						// the whole batch then, and the SDK retries it.
						g.release()
						return nil, &apiError{Type: "ProvisionedThroughputExceededException", Status: 400,
							Message: "The level of configured provisioned throughput for one or more tables was exceeded. " +
								"Consider increasing your provisioning level with the UpdateTable API"}
					}
					full = true
					leave(p.name, key)
					continue
				}
				size += n
				items = append(items, p.proj.apply(it))
			}
			u.addTable(readUnits(n, p.consistent))
		}
		if _, seen := responses[p.name]; !seen {
			out.tables = append(out.tables, p.name)
		}
		responses[p.name] = items
		if cc := s.report(u, in.ReturnConsumedCapacity); cc != nil {
			caps = append(caps, cc)
		}
	}
	out.caps = caps
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
	if len(c) == 0 {
		// A malformed table name gives way to the enums.
		requestItemsNames(&c, body, sortedKeys(in.RequestItems))
	}
	for _, name := range sortedKeys(in.RequestItems) {
		if n := len(in.RequestItems[name]); n > maxBatchWrites || n == 0 {
			// One violation for the whole map, echoed as its Java form.
			c.add("Value '%s' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: "+
				"[Member must have length less than or equal to %d, Member must have length greater than or equal to 1]",
				javaWriteRequests(in.RequestItems), maxBatchWrites)
			break
		}
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	if len(in.RequestItems) == 0 {
		return nil, validation("The requestItems parameter is required for BatchWriteItem")
	}
	total := 0
	for _, reqs := range in.RequestItems {
		total += len(reqs)
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
	// Every request is validated before any table is read or written.
	var ops []*op
	for _, name := range sortedKeys(in.RequestItems) {
		for _, w := range in.RequestItems[name] {
			if w == nil || (w.PutRequest == nil) == (w.DeleteRequest == nil) {
				return nil, validation("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
			}
			o := &op{name: name, w: w}
			if w.PutRequest != nil {
				if w.PutRequest.Item == nil {
					return nil, validation("1 validation error detected: Value null at 'requestItems.%s.member.putRequest.item' failed to satisfy constraint: Member must not be null", name)
				}
				it, err := av.ItemFromWire(w.PutRequest.Item)
				if err != nil {
					return nil, avError(err)
				}
				if err := checkItemSize(it); err != nil {
					return nil, err
				}
				o.item = it
			} else {
				if w.DeleteRequest.Key == nil {
					return nil, validation("1 validation error detected: Value null at 'requestItems.%s.member.deleteRequest.key' failed to satisfy constraint: Member must not be null", name)
				}
				key, err := keyFromWire(w.DeleteRequest.Key)
				if err != nil {
					return nil, err
				}
				o.key = key
			}
			ops = append(ops, o)
		}
	}
	for _, o := range ops {
		t, err := s.lookup(&o.name)
		if err != nil {
			return nil, err
		}
		o.t = t
		d := t.def.Load()
		if o.item != nil {
			o.key = keyOf(d, o.item)
			// A put's key is checked like a Key member.
			if err := matchKey(d, o.key); err != nil {
				return nil, err
			}
			if err := checkItemKeys(d, o.item); err != nil {
				return nil, err
			}
		} else if err := matchKey(d, o.key); err != nil {
			return nil, err
		}
		o.skey = d.baseKey(o.key)
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
		if s.injectFor("BatchWriteItem", o.name, FaultUnprocessed) {
			unprocessed[o.name] = append(unprocessed[o.name], o.w)
			continue
		}
		todo = append(todo, o)
	}
	sort.Slice(todo, func(i, j int) bool { return string(todo[i].skey) < string(todo[j].skey) })
	for _, o := range todo {
		s.db.Locks.Acquire(string(o.skey), false)
	}
	defer func() {
		for _, o := range todo {
			s.db.Locks.Release(string(o.skey))
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
			if err := checkItemKeys(d, o.item); err != nil {
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
		if cc := s.report(usages[name], in.ReturnConsumedCapacity); cc != nil {
			caps = append(caps, cc)
		}
	}
	if caps != nil {
		out["ConsumedCapacity"] = caps
	}
	return out, nil
}

// requestItemsNames checks the table names of a batch's RequestItems map,
// reporting the map as DynamoDB echoes it.
func requestItemsNames(c *constraints, body []byte, names []string) {
	for _, name := range names {
		if namePattern.MatchString(name) && len(name) >= 3 && len(name) <= 255 {
			continue
		}
		var raw struct {
			RequestItems json.RawMessage `json:"RequestItems"`
		}
		var dump bytes.Buffer
		if json.Unmarshal(body, &raw) == nil {
			json.Compact(&dump, raw.RequestItems)
		}
		c.add("Value '%s' at 'requestItems' failed to satisfy constraint: Map keys must satisfy constraint: [Member must have length less than or equal to 255, Member must have length greater than or equal to 3, Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]", dump.String())
		return
	}
}

// itemIdentity is a canonical form of an item's values, to find duplicate
// keys before the table's schema is known.
func itemIdentity(it av.Item) string {
	var b []byte
	for _, k := range sortedKeys(it) {
		b = append(b, k...)
		b = append(b, 0)
		b = av.AppendBinary(b, it[k])
	}
	return string(b)
}
