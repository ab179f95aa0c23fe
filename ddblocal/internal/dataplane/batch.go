package dataplane

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/wire"
)

// BatchGetItem reads up to 100 items across tables: the request is
// checked and planned whole, the tables looked up, then the items read
// while the response budget lasts.
func (s *Store) BatchGetItem(ctx context.Context, body []byte) (any, error) {
	var in wire.BatchGetItemInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	if err := checkBatchGetShape(&in, body); err != nil {
		return nil, err
	}
	plans, err := planBatchGet(&in)
	if err != nil {
		return nil, err
	}
	tables, err := s.lookupBatchGet(plans)
	if err != nil {
		return nil, err
	}
	return s.readBatchGet(&in, plans, tables)
}

// batchGetPlan is one table's keys and projection in a BatchGetItem.
type batchGetPlan struct {
	name       string
	keys       []av.Item
	proj       Projector
	consistent bool
}

// checkBatchGetShape checks the request's members: table names, key
// counts, projections (which may not mix expression and non-expression
// forms, even across tables).
func checkBatchGetShape(in *wire.BatchGetItemInput, body []byte) error {
	var c wire.Constraints
	requestItemsNames(&c, body, wire.SortedKeys(in.RequestItems))
	for _, name := range wire.SortedKeys(in.RequestItems) {
		if ka := in.RequestItems[name]; ka != nil {
			if len(ka.Keys) > engine.MaxBatchGetKeys {
				c.Add("Value at 'RequestItems.%s.member.Keys' failed to satisfy constraint: Member must have length less than or equal to %d", name, engine.MaxBatchGetKeys)
			}
			attributesToGet(&c, "requestItems."+name+".member.attributesToGet", ka.AttributesToGet)
		}
	}
	c.ReturnConsumedCapacity(in.ReturnConsumedCapacity)
	if err := c.Err(); err != nil {
		return err
	}
	if len(in.RequestItems) == 0 {
		return wire.Validation("The requestItems parameter is required for BatchGetItem")
	}
	// Projections may not mix expression and non-expression forms, even
	// across tables.
	var mixed engine.ExprArgs
	for _, ka := range in.RequestItems {
		if ka != nil {
			if ka.AttributesToGet != nil && len(mixed.Legacy) == 0 {
				mixed.Legacy = []string{"AttributesToGet"}
			}
			if ka.ProjectionExpression != nil && len(mixed.Present) == 0 {
				mixed.Present = []string{"ProjectionExpression"}
			}
		}
	}
	if err := mixed.Params(); err != nil {
		return err
	}
	return nil
}

// planBatchGet decodes each table's keys and projection, refusing
// duplicate keys and more than 100 in all.
func planBatchGet(in *wire.BatchGetItemInput) ([]batchGetPlan, error) {
	var plans []batchGetPlan
	total := 0
	for _, name := range wire.SortedKeys(in.RequestItems) {
		ka := in.RequestItems[name]
		if ka == nil || len(ka.Keys) == 0 {
			return nil, wire.Validation("1 validation error detected: Value at 'RequestItems.%s.member.Keys' failed to satisfy constraint: Member must have length greater than or equal to 1", name)
		}
		ea := engine.ExprArgs{Names: ka.ExpressionAttributeNames}
		engine.Present(&ea.Present, "ProjectionExpression", ka.ProjectionExpression != nil)
		engine.Present(&ea.Legacy, "AttributesToGet", ka.AttributesToGet != nil)
		if err := ea.Params(); err != nil {
			return nil, err
		}
		p := batchGetPlan{name: name, consistent: ka.ConsistentRead != nil && *ka.ConsistentRead}
		seen := map[string]bool{}
		for _, w := range ka.Keys {
			key, err := engine.KeyFromWire(w)
			if err != nil {
				return nil, wire.CurrentWording(err, w)
			}
			id := itemIdentity(key)
			if seen[id] {
				return nil, wire.Validation("Provided list of item keys contains duplicates")
			}
			seen[id] = true
			if total++; total > engine.MaxBatchGetKeys {
				return nil, wire.Validation("Too many items requested for the BatchGetItem call")
			}
			p.keys = append(p.keys, key)
		}
		proj, err := ParseProjection(ea, ka.ProjectionExpression, ka.AttributesToGet)
		if err != nil {
			return nil, err
		}
		p.proj = proj
		plans = append(plans, p)
	}
	return plans, nil
}

// lookupBatchGet finds each plan's table and checks its keys against the
// table's schema.
func (s *Store) lookupBatchGet(plans []batchGetPlan) (map[string]*engine.Table, error) {
	tables := map[string]*engine.Table{}
	for _, p := range plans {
		t, err := s.Lookup(&p.name)
		if err != nil {
			return nil, err
		}
		tables[p.name] = t
		d := t.Def.Load()
		for _, key := range p.keys {
			if err := engine.MatchKey(d, key); err != nil {
				return nil, err
			}
		}
	}
	return tables, nil
}

// readBatchGet reads the planned items. The response's items hold the
// store's budget until it is written; past it the rest of the keys are
// left unprocessed (ADR 0059).
func (s *Store) readBatchGet(in *wire.BatchGetItemInput, plans []batchGetPlan, tables map[string]*engine.Table) (any, error) {
	responses := map[string][]av.Item{}
	unprocessed := map[string]*wire.KeysAndAttributes{}
	var caps []*wire.ConsumedCapacity
	size := 0
	g := &engine.Grant{B: &s.RespBudget}
	full := false
	out := &engine.BatchGetOutput{Responses: responses, Unprocessed: unprocessed, Grant: g}
	leave := func(name string, key av.Item) {
		rest := unprocessed[name]
		if rest == nil {
			src := in.RequestItems[name]
			rest = &wire.KeysAndAttributes{ConsistentRead: src.ConsistentRead, ProjectionExpression: src.ProjectionExpression,
				ExpressionAttributeNames: src.ExpressionAttributeNames, AttributesToGet: src.AttributesToGet}
			unprocessed[name] = rest
		}
		rest.Keys = append(rest.Keys, KeyWire(key))
	}
	for _, p := range plans {
		d := tables[p.name].Def.Load()
		u := engine.NewUsage(p.name, true)
		items := []av.Item{}
		for _, key := range p.keys {
			if full || size >= engine.MaxResponseBytes || s.InjectFor("BatchGetItem", p.name, engine.FaultUnprocessed) {
				leave(p.name, key)
				continue
			}
			it, err := s.Read(d.BaseKey(key))
			if err != nil {
				g.Release()
				return nil, err
			}
			n := 0
			if it != nil {
				n = av.ItemSize(it)
				if !g.Take(int64(n)) {
					if size == 0 {
						// Nothing could be served: DynamoDB throttles
						// the whole batch then, and the SDK retries it.
						g.Release()
						return nil, &wire.APIError{Type: "ProvisionedThroughputExceededException", Status: 400,
							Message: "The level of configured provisioned throughput for one or more tables was exceeded. " +
								"Consider increasing your provisioning level with the UpdateTable API"}
					}
					full = true
					leave(p.name, key)
					continue
				}
				size += n
				items = append(items, p.proj.Apply(it))
			}
			u.AddTable(engine.ReadUnits(n, p.consistent))
		}
		if _, seen := responses[p.name]; !seen {
			out.Tables = append(out.Tables, p.name)
		}
		responses[p.name] = items
		if cc := s.Report(u, in.ReturnConsumedCapacity); cc != nil {
			caps = append(caps, cc)
		}
	}
	out.Caps = caps
	return out, nil
}

// KeyWire converts a validated key back to its wire form.
func KeyWire(key av.Item) av.WireItem {
	w := av.WireItem{}
	for k, v := range key {
		w[k] = v.ToWire()
	}
	return w
}

// batchWrite is one request of a BatchWriteItem, resolved step by step.
type batchWrite struct {
	name string
	t    *engine.Table
	key  av.Item
	item av.Item // nil: delete
	skey []byte
	w    *wire.WriteRequest
}

// BatchWriteItem puts and deletes up to 25 items across tables. Every
// request is validated before any table is read or written; then the
// items are locked in key order, written in one commit, and metered.
func (s *Store) BatchWriteItem(ctx context.Context, body []byte) (any, error) {
	var in wire.BatchWriteItemInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	if err := checkBatchWriteShape(&in, body); err != nil {
		return nil, err
	}
	ops, err := parseBatchWrites(&in)
	if err != nil {
		return nil, err
	}
	if err := s.resolveBatchWrites(ops); err != nil {
		return nil, err
	}
	unprocessed := map[string][]*wire.WriteRequest{}
	var todo []*batchWrite
	for _, o := range ops {
		if s.InjectFor("BatchWriteItem", o.name, engine.FaultUnprocessed) {
			unprocessed[o.name] = append(unprocessed[o.name], o.w)
			continue
		}
		todo = append(todo, o)
	}
	usages, err := s.applyBatchWrites(todo)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"UnprocessedItems": unprocessed}
	var caps []*wire.ConsumedCapacity
	for _, name := range wire.SortedKeys(usages) {
		if cc := s.Report(usages[name], in.ReturnConsumedCapacity); cc != nil {
			caps = append(caps, cc)
		}
	}
	if caps != nil {
		out["ConsumedCapacity"] = caps
	}
	return out, nil
}

// checkBatchWriteShape checks the request's members and sizes, in the
// order DynamoDB reports them: the enums, the table names, each table's
// list length, then the whole request's.
func checkBatchWriteShape(in *wire.BatchWriteItemInput, body []byte) error {
	var c wire.Constraints
	c.ReturnConsumedCapacity(in.ReturnConsumedCapacity)
	c.ReturnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	if len(c) == 0 {
		// A malformed table name gives way to the enums.
		requestItemsNames(&c, body, wire.SortedKeys(in.RequestItems))
	}
	for _, name := range wire.SortedKeys(in.RequestItems) {
		if n := len(in.RequestItems[name]); n > engine.MaxBatchWrites || n == 0 {
			// One violation for the whole map, echoed as its Java form.
			c.Add("Value '%s' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: "+
				"[Member must have length less than or equal to %d, Member must have length greater than or equal to 1]",
				wire.JavaWriteRequests(in.RequestItems), engine.MaxBatchWrites)
			break
		}
	}
	if err := c.Err(); err != nil {
		return err
	}
	if len(in.RequestItems) == 0 {
		return wire.Validation("The requestItems parameter is required for BatchWriteItem")
	}
	total := 0
	for _, reqs := range in.RequestItems {
		total += len(reqs)
	}
	if total > engine.MaxBatchWrites {
		return wire.Validation("Too many items requested for the BatchWriteItem call")
	}
	return nil
}

// parseBatchWrites decodes each request's item or key, tables in name
// order, before any table is looked up.
func parseBatchWrites(in *wire.BatchWriteItemInput) ([]*batchWrite, error) {
	var ops []*batchWrite
	for _, name := range wire.SortedKeys(in.RequestItems) {
		for _, w := range in.RequestItems[name] {
			if w == nil || (w.PutRequest == nil) == (w.DeleteRequest == nil) {
				return nil, wire.Validation("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
			}
			o := &batchWrite{name: name, w: w}
			if w.PutRequest != nil {
				if w.PutRequest.Item == nil {
					return nil, wire.Validation("1 validation error detected: Value null at 'requestItems.%s.member.putRequest.item' failed to satisfy constraint: Member must not be null", name)
				}
				it, err := av.ItemFromWire(w.PutRequest.Item)
				if err != nil {
					return nil, engine.AvError(err)
				}
				if err := engine.CheckItemSize(it); err != nil {
					return nil, err
				}
				o.item = it
			} else {
				if w.DeleteRequest.Key == nil {
					return nil, wire.Validation("1 validation error detected: Value null at 'requestItems.%s.member.deleteRequest.key' failed to satisfy constraint: Member must not be null", name)
				}
				key, err := engine.KeyFromWire(w.DeleteRequest.Key)
				if err != nil {
					return nil, err
				}
				o.key = key
			}
			ops = append(ops, o)
		}
	}
	return ops, nil
}

// resolveBatchWrites finds each request's table, checks its key against
// the table's schema and refuses a request naming one item twice.
func (s *Store) resolveBatchWrites(ops []*batchWrite) error {
	for _, o := range ops {
		t, err := s.Lookup(&o.name)
		if err != nil {
			return err
		}
		o.t = t
		d := t.Def.Load()
		if o.item != nil {
			o.key = engine.KeyOf(d, o.item)
			// A put's key is checked like a Key member.
			if err := engine.MatchKey(d, o.key); err != nil {
				return err
			}
			if err := engine.CheckItemKeys(d, o.item); err != nil {
				return err
			}
		} else if err := engine.MatchKey(d, o.key); err != nil {
			return err
		}
		o.skey = d.BaseKey(o.key)
	}
	seen := map[string]bool{}
	for _, o := range ops {
		if seen[string(o.skey)] {
			return wire.Validation("Provided list of item keys contains duplicates")
		}
		seen[string(o.skey)] = true
	}
	return nil
}

// applyBatchWrites locks the items in key order (so two batches never
// deadlock), writes every change in one commit and returns each table's
// usage.
func (s *Store) applyBatchWrites(todo []*batchWrite) (map[string]*engine.Usage, error) {
	sort.Slice(todo, func(i, j int) bool { return string(todo[i].skey) < string(todo[j].skey) })
	for _, o := range todo {
		s.DB.Locks.Acquire(string(o.skey), false)
	}
	defer func() {
		for _, o := range todo {
			s.DB.Locks.Release(string(o.skey))
		}
	}()
	usages := map[string]*engine.Usage{}
	var changes []*engine.Change
	for _, o := range todo {
		d := o.t.Def.Load()
		old, err := s.Get(o.skey)
		if err != nil {
			return nil, err
		}
		if o.item != nil {
			if err := engine.CheckItemKeys(d, o.item); err != nil {
				return nil, err
			}
		}
		u := usages[o.name]
		if u == nil {
			u = engine.NewUsage(o.name, false)
			usages[o.name] = u
		}
		u.AddWrite(d, old, o.item, 1)
		if old == nil && o.item == nil {
			continue
		}
		changes = append(changes, &engine.Change{T: o.t, Def: d, Key: o.skey, Old: old, New: o.item})
	}
	if len(changes) > 0 {
		if err := s.Write(changes); err != nil {
			return nil, err
		}
	}
	return usages, nil
}

// requestItemsNames checks the table names of a batch's RequestItems map,
// reporting the map as DynamoDB echoes it.
func requestItemsNames(c *wire.Constraints, body []byte, names []string) {
	for _, name := range names {
		if wire.NamePattern.MatchString(name) && len(name) >= 3 && len(name) <= 255 {
			continue
		}
		var raw struct {
			RequestItems json.RawMessage `json:"RequestItems"`
		}
		var dump bytes.Buffer
		if json.Unmarshal(body, &raw) == nil {
			json.Compact(&dump, raw.RequestItems)
		}
		c.Add("Value '%s' at 'requestItems' failed to satisfy constraint: Map keys must satisfy constraint: [Member must have length less than or equal to 255, Member must have length greater than or equal to 3, Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]", dump.String())
		return
	}
}

// itemIdentity is a canonical form of an item's values, to find duplicate
// keys before the table's schema is known.
func itemIdentity(it av.Item) string {
	var b []byte
	for _, k := range wire.SortedKeys(it) {
		b = append(b, k...)
		b = append(b, 0)
		b = av.AppendBinary(b, it[k])
	}
	return string(b)
}
