package ddblocal

import (
	"context"
	"crypto/sha256"
	"sort"
	"strings"
	"sync"
	"time"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/expr"
)

const maxTransactItems = 100

// txOp is one action of a TransactWriteItems request, validated.
type txOp struct {
	kind string // ConditionCheck, Put, Delete, Update
	t    *table
	key  av.Item
	item av.Item // Put
	cond writeCond
	upd  updater
	rv   string // ReturnValuesOnConditionCheckFailure
	skey []byte
}

func (s *Store) transactWriteItems(ctx context.Context, body []byte) (any, error) {
	var in transactWriteItemsInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	c.returnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	c.notNull("transactItems", in.TransactItems == nil)
	if in.TransactItems != nil && (len(in.TransactItems) == 0 || len(in.TransactItems) > maxTransactItems) {
		c.add("Value '%s' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100, Member must have length greater than or equal to 1", "[...]")
	}
	if in.ClientRequestToken != nil && (len(*in.ClientRequestToken) < 1 || len(*in.ClientRequestToken) > 36) {
		c.add("Value '%s' at 'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36", *in.ClientRequestToken)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	if in.ClientRequestToken != nil {
		if replay, err := s.tokens.check(*in.ClientRequestToken, body, s.now()); err != nil || replay != nil {
			if err != nil {
				return nil, err
			}
			return replay, nil
		}
	}
	ops := make([]*txOp, len(in.TransactItems))
	seen := map[string]bool{}
	for i, ti := range in.TransactItems {
		op, err := s.parseTxOp(ti)
		if err != nil {
			return nil, err
		}
		k := string(op.skey)
		if seen[k] {
			return nil, validation("Transaction request cannot include multiple operations on one item")
		}
		seen[k] = true
		ops[i] = op
	}
	resp, err := s.runTx(ops, in.ReturnConsumedCapacity)
	if err != nil {
		return nil, err
	}
	if in.ClientRequestToken != nil {
		s.tokens.remember(*in.ClientRequestToken, body, resp, s.now())
	}
	return resp, nil
}

func (s *Store) parseTxOp(ti *transactWriteItem) (*txOp, error) {
	if ti == nil {
		return nil, validation("TransactItems can only contain one of Check, Put, Update or Delete")
	}
	var n int
	var o *transactOp
	op := &txOp{}
	for kind, x := range map[string]*transactOp{"ConditionCheck": ti.ConditionCheck, "Put": ti.Put, "Delete": ti.Delete, "Update": ti.Update} {
		if x != nil {
			n++
			o, op.kind = x, kind
		}
	}
	if n != 1 {
		return nil, validation("TransactItems can only contain one of Check, Put, Update or Delete")
	}
	var c constraints
	member := "transactItems.1.member." + strings.ToLower(op.kind[:1]) + op.kind[1:]
	c.tableName(member+".tableName", o.TableName)
	c.returnValuesOnConditionCheckFailure(o.ReturnValuesOnConditionCheckFailure)
	switch op.kind {
	case "Put":
		c.notNull(member+".item", o.Item == nil)
	case "ConditionCheck":
		c.notNull(member+".key", o.Key == nil)
		c.notNull(member+".conditionExpression", o.ConditionExpression == nil)
	case "Update":
		c.notNull(member+".key", o.Key == nil)
		c.notNull(member+".updateExpression", o.UpdateExpression == nil)
	default:
		c.notNull(member+".key", o.Key == nil)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	op.rv = o.ReturnValuesOnConditionCheckFailure
	var more func(*exprArgs)
	var parse []func(*expr.Attrs) error
	ifNone := "ConditionExpression is null"
	if op.kind == "Update" {
		ifNone = "UpdateExpression and ConditionExpression are null"
		more = func(ea *exprArgs) { present(&ea.present, "UpdateExpression", true) }
		parse = append(parse, func(a *expr.Attrs) error {
			var err error
			op.upd, err = parseUpdate(a, o.UpdateExpression, nil)
			return err
		})
	}
	cond, err := parseWriteCondition(o.exprParams, o.ConditionExpression, nil, nil, ifNone, more, parse...)
	if err != nil {
		return nil, err
	}
	op.cond = cond
	t, err := s.lookup(o.TableName)
	if err != nil {
		return nil, err
	}
	op.t = t
	d := t.def.Load()
	if op.kind == "Put" {
		it, err := av.ItemFromWire(o.Item)
		if err != nil {
			return nil, validation("%s", err.Error())
		}
		if err := checkItem(d, it); err != nil {
			return nil, err
		}
		op.item, op.key = it, keyOf(d, it)
	} else {
		key, err := parseKey(d, o.Key)
		if err != nil {
			return nil, err
		}
		op.key = key
	}
	if err := op.upd.checkKeys(d); err != nil {
		return nil, err
	}
	op.skey = d.baseKey(op.key)
	return op, nil
}

// runTx applies validated actions all or none.
func (s *Store) runTx(ops []*txOp, returnCapacity string) (any, error) {
	keys := make([]string, len(ops))
	for i, op := range ops {
		keys[i] = string(op.skey)
	}
	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return keys[order[a]] < keys[order[b]] })
	var held []string
	defer func() {
		for _, k := range held {
			s.locks.release(k)
		}
	}()
	for _, i := range order {
		if s.inject(ops[i].t.def.Load().Name, faultConflict) || !s.locks.acquire(keys[i], true) {
			reasons := make([]cancellationReason, len(ops))
			for j := range reasons {
				reasons[j] = cancellationReason{Code: "None"}
			}
			reasons[i] = cancellationReason{Code: "TransactionConflict", Message: "Transaction is ongoing for the item"}
			return nil, txCanceled(reasons)
		}
		held = append(held, keys[i])
	}
	reasons := make([]cancellationReason, len(ops))
	failed := false
	changes := make([]*change, 0, len(ops))
	usages := map[string]*usage{}
	var usageOrder []string
	for i, op := range ops {
		reasons[i] = cancellationReason{Code: "None"}
		d := op.t.def.Load()
		old, err := s.get(op.skey)
		if err != nil {
			return nil, err
		}
		u := usages[d.Name]
		if u == nil {
			u = newUsage(d.Name, false)
			usages[d.Name] = u
			usageOrder = append(usageOrder, d.Name)
		}
		if !op.cond.eval(old) {
			failed = true
			reasons[i] = cancellationReason{Code: "ConditionalCheckFailed", Message: "The conditional request failed"}
			if op.rv == "ALL_OLD" && old != nil {
				reasons[i].Item = itemJSON(old)
			}
			continue
		}
		var new av.Item
		switch op.kind {
		case "ConditionCheck":
			u.addTable(readUnits(sizeOf(old), true) * 2)
			continue
		case "Put":
			new = op.item
			if err := checkItem(d, new); err != nil {
				failed = true
				reasons[i] = cancellationReason{Code: "ValidationError", Message: err.(*apiError).Message}
				continue
			}
		case "Update":
			n, err := op.upd.apply(d, op.key, old)
			if err != nil {
				failed = true
				msg := err.Error()
				if ae, ok := err.(*apiError); ok {
					msg = ae.Message
				}
				reasons[i] = cancellationReason{Code: "ValidationError", Message: msg}
				continue
			}
			new = n
		case "Delete":
		}
		u.addWrite(d, old, new, 2)
		if old != nil || new != nil {
			changes = append(changes, &change{t: op.t, def: d, key: op.skey, old: old, new: new})
		}
	}
	if failed {
		return nil, txCanceled(reasons)
	}
	if len(changes) > 0 {
		if err := s.write(changes); err != nil {
			return nil, err
		}
	}
	out := map[string]any{}
	var caps []*consumedCapacity
	for _, name := range usageOrder {
		if cc := usages[name].response(returnCapacity); cc != nil {
			caps = append(caps, cc)
		}
	}
	if caps != nil {
		out["ConsumedCapacity"] = caps
	}
	return out, nil
}

func sizeOf(it av.Item) int {
	if it == nil {
		return 0
	}
	return av.ItemSize(it)
}

func txCanceled(reasons []cancellationReason) *apiError {
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		codes[i] = r.Code
	}
	return &apiError{Type: "TransactionCanceledException", Status: 400, Reasons: reasons,
		Message: "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]"}
}

func (s *Store) transactGetItems(ctx context.Context, body []byte) (any, error) {
	var in transactGetItemsInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	c.notNull("transactItems", in.TransactItems == nil)
	if in.TransactItems != nil && (len(in.TransactItems) == 0 || len(in.TransactItems) > maxTransactItems) {
		c.add("Value '[...]' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100, Member must have length greater than or equal to 1")
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	type get struct {
		t    *table
		key  []byte
		proj projector
	}
	gets := make([]get, len(in.TransactItems))
	seen := map[string]bool{}
	for i, ti := range in.TransactItems {
		if ti == nil || ti.Get == nil {
			return nil, validation("1 validation error detected: Value null at 'transactItems.%d.member.get' failed to satisfy constraint: Member must not be null", i+1)
		}
		g := ti.Get
		var c constraints
		c.tableName("transactItems.1.member.get.tableName", g.TableName)
		c.notNull("transactItems.1.member.get.key", g.Key == nil)
		if err := c.err(); err != nil {
			return nil, err
		}
		ea := exprArgs{names: g.ExpressionAttributeNames, ifNone: "ProjectionExpression is null"}
		present(&ea.present, "ProjectionExpression", g.ProjectionExpression != nil)
		proj, err := parseProjection(ea, g.ProjectionExpression, nil)
		if err != nil {
			return nil, err
		}
		t, err := s.lookup(g.TableName)
		if err != nil {
			return nil, err
		}
		d := t.def.Load()
		key, err := parseKey(d, g.Key)
		if err != nil {
			return nil, err
		}
		sk := d.baseKey(key)
		if seen[string(sk)] {
			return nil, validation("Transaction request cannot include multiple operations on one item")
		}
		seen[string(sk)] = true
		gets[i] = get{t: t, key: sk, proj: proj}
	}
	snap := s.db.NewSnapshot()
	defer snap.Close()
	responses := make([]map[string]any, len(gets))
	usages := map[string]*usage{}
	var names []string
	for i, g := range gets {
		it, err := getFrom(snap, g.key)
		if err != nil {
			return nil, err
		}
		name := g.t.def.Load().Name
		u := usages[name]
		if u == nil {
			u = newUsage(name, true)
			usages[name] = u
			names = append(names, name)
		}
		u.addTable(readUnits(sizeOf(it), true) * 2)
		responses[i] = map[string]any{}
		if it != nil {
			responses[i]["Item"] = g.proj.apply(it)
		}
	}
	out := map[string]any{"Responses": responses}
	var caps []*consumedCapacity
	for _, n := range names {
		if cc := usages[n].response(in.ReturnConsumedCapacity); cc != nil {
			caps = append(caps, cc)
		}
	}
	if caps != nil {
		out["ConsumedCapacity"] = caps
	}
	return out, nil
}

// tokenCache remembers ClientRequestTokens for ten minutes, as DynamoDB
// does, so a retried TransactWriteItems is answered without re-applying.
type tokenCache struct {
	mu sync.Mutex
	m  map[string]tokenEntry
}

type tokenEntry struct {
	hash [32]byte
	resp any
	at   time.Time
}

const tokenTTL = 10 * time.Minute

func (c *tokenCache) check(token string, body []byte, now time.Time) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[token]
	if !ok || now.Sub(e.at) > tokenTTL {
		return nil, nil
	}
	if e.hash != sha256.Sum256(body) {
		return nil, &apiError{Type: "IdempotentParameterMismatchException", Status: 400,
			Message: "The request uses the same client token as a previous, but non-identical request."}
	}
	return e.resp, nil
}

func (c *tokenCache) remember(token string, body []byte, resp any, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]tokenEntry{}
	}
	for k, e := range c.m {
		if now.Sub(e.at) > tokenTTL {
			delete(c.m, k)
		}
	}
	c.m[token] = tokenEntry{hash: sha256.Sum256(body), resp: resp, at: now}
}
