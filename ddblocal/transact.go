package ddblocal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"lastro/ddblocal/internal/av"
)

const maxTransactItems = 100

// txOp is one action of a TransactWriteItems request, validated.
type txOp struct {
	kind  string // ConditionCheck, Put, Delete, Update
	table *string
	t     *table
	key   av.Item
	item  av.Item // Put
	x     writeExprs
	rv    string // ReturnValuesOnConditionCheckFailure
	skey  []byte
}

// The kinds of action, in the order DynamoDB's model lists them.
var txKinds = []string{"ConditionCheck", "Put", "Delete", "Update"}

func (ti *transactWriteItem) actions() map[string]*transactOp {
	return map[string]*transactOp{"ConditionCheck": ti.ConditionCheck, "Put": ti.Put, "Delete": ti.Delete, "Update": ti.Update}
}

func (s *Store) transactWriteItems(ctx context.Context, body []byte) (out any, err error) {
	var in transactWriteItemsInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	// A bad ClientRequestToken is reported alone, ahead of everything else.
	if tok := in.ClientRequestToken; tok != nil && len(*tok) > 36 {
		return nil, validation("1 validation error detected: Value at 'ClientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36")
	} else if tok != nil && len(*tok) == 0 {
		return nil, validation("1 validation error detected: Value at 'ClientRequestToken' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	var c constraints
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	c.returnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	transactItemsLength(&c, body, in.TransactItems == nil, len(in.TransactItems))
	for i, ti := range in.TransactItems {
		if ti == nil {
			continue
		}
		for _, kind := range txKinds {
			o := ti.actions()[kind]
			if o == nil {
				continue
			}
			member := fmt.Sprintf("transactItems.%d.member.%s%s", i+1, strings.ToLower(kind[:1]), kind[1:])
			c.itemTableName(member+".tableName", o.TableName)
			switch kind {
			case "Put":
				c.notNull(member+".item", o.Item == nil)
			case "Update":
				c.notNull(member+".key", o.Key == nil)
				c.notNull(member+".updateExpression", o.UpdateExpression == nil)
			case "ConditionCheck":
				c.notNull(member+".key", o.Key == nil)
				c.notNull(member+".conditionExpression", o.ConditionExpression == nil)
			default:
				c.notNull(member+".key", o.Key == nil)
			}
			c.enum(member+".returnValuesOnConditionCheckFailure", o.ReturnValuesOnConditionCheckFailure, "ALL_OLD", "NONE")
		}
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	var token *txToken
	if tok := in.ClientRequestToken; tok != nil {
		token = &txToken{token: *tok, hash: canonicalHash(body)}
		if replay, err := s.tokens.begin(token.token, token.hash, body, s.now()); err != nil || replay != nil {
			return replay, err
		}
		defer func() { s.finishToken(token, out) }()
	}
	// First every action is validated on its own, before any table is
	// looked up: a malformed expression on a later action wins over a
	// missing table on an earlier one.
	ops := make([]*txOp, len(in.TransactItems))
	for i, ti := range in.TransactItems {
		op, err := parseTxOp(ti)
		if err != nil {
			return nil, err
		}
		ops[i] = op
	}
	// Then the tables and keys. Some key problems cancel the transaction
	// (the first one found is its ValidationError reason); others, and
	// duplicate targets, fail the whole request.
	var invalid *apiError
	invalidAt := -1
	seen := map[string]bool{}
	for i, op := range ops {
		t, err := s.lookup(op.table)
		if err != nil {
			return nil, err
		}
		op.t = t
		d := t.def.Load()
		if op.kind == "Put" {
			op.key = keyOf(d, op.item)
			err = checkItemKeys(d, op.item)
		} else {
			err = matchKey(d, op.key)
		}
		if err == nil {
			err = op.x.upd.checkKeys(d)
		}
		if err != nil {
			ae, ok := err.(*apiError)
			if !ok || !ae.cancels {
				return nil, err
			}
			if invalid == nil {
				invalid, invalidAt = ae, i
			}
			continue
		}
		op.skey = d.baseKey(op.key)
		if seen[string(op.skey)] {
			return nil, validation("Transaction request cannot include multiple operations on one item")
		}
		seen[string(op.skey)] = true
	}
	if invalid != nil {
		reasons := noneReasons(len(ops))
		reasons[invalidAt] = cancellationReason{Code: "ValidationError", Message: invalid.Message}
		return nil, txCanceled(reasons)
	}
	resp, err := s.runTx(ops, in.ReturnConsumedCapacity, token)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// transactItemsLength checks the length of a TransactItems member,
// echoing the list as DynamoDB does.
func transactItemsLength(c *constraints, body []byte, null bool, n int) {
	switch {
	case null:
		c.notNull("transactItems", true)
	case n == 0:
		c.add("Value '[]' at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1")
	case n > maxTransactItems:
		var raw struct {
			TransactItems json.RawMessage `json:"TransactItems"`
		}
		var dump bytes.Buffer
		if json.Unmarshal(body, &raw) == nil {
			json.Compact(&dump, raw.TransactItems)
		}
		c.add("Value '%s' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to %d", dump.String(), maxTransactItems)
	}
}

func noneReasons(n int) []cancellationReason {
	reasons := make([]cancellationReason, n)
	for i := range reasons {
		reasons[i] = cancellationReason{Code: "None"}
	}
	return reasons
}

// parseTxOp validates one action without looking at any table: its shape,
// attribute values, item size and expressions.
func parseTxOp(ti *transactWriteItem) (*txOp, error) {
	if ti == nil {
		return nil, validation("The action or operation requested is invalid. Verify that the action is typed correctly.")
	}
	var n int
	var o *transactOp
	op := &txOp{}
	for _, kind := range txKinds {
		if x := ti.actions()[kind]; x != nil {
			n++
			o, op.kind = x, kind
		}
	}
	switch {
	case n == 0:
		return nil, validation("The action or operation requested is invalid. Verify that the action is typed correctly.")
	case n > 1:
		return nil, validation("TransactItems can only contain one of Check, Put, Update or Delete")
	}
	op.table, op.rv = o.TableName, o.ReturnValuesOnConditionCheckFailure
	ea := exprArgs{names: o.ExpressionAttributeNames, values: o.ExpressionAttributeValues, older: true, ifNone: "ConditionExpression is null"}
	if op.kind == "Update" {
		present(&ea.present, "UpdateExpression", o.UpdateExpression != nil)
		ea.ifNone = "UpdateExpression and ConditionExpression are null"
	}
	present(&ea.present, "ConditionExpression", o.ConditionExpression != nil)
	var err error
	if op.kind == "Put" {
		if op.item, err = av.ItemFromWire(o.Item); err != nil {
			return nil, avError(err)
		}
		if err := checkItemSize(op.item); err != nil {
			return nil, err
		}
	} else if op.key, err = keyFromWire(o.Key); err != nil {
		return nil, err
	}
	if err := ea.params(); err != nil {
		return nil, err
	}
	if op.x, err = parseWriteExprs(ea, o.ConditionExpression, nil, nil, o.UpdateExpression, nil); err != nil {
		return nil, err
	}
	return op, nil
}

// runTx applies validated actions all or none.
//
// A transaction with a ClientRequestToken that changes items records the
// token, with its response, in the same batch (tokens.go): a retry after
// a crash that kept the commit is answered, not applied again.
func (s *Store) runTx(ops []*txOp, returnCapacity string, token *txToken) (any, error) {
	// The items a transaction writes may add up to 4 MB at most; a larger
	// one is refused before any lock is taken or condition evaluated.
	total := 0
	for _, op := range ops {
		total += sizeOf(op.item)
	}
	if total > maxTxItemBytes {
		return nil, validation("Transaction request cannot be larger than 4 MB")
	}
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
			s.db.Locks.Release(k)
		}
	}()
	for _, i := range order {
		if s.injectFor("TransactWriteItems", ops[i].t.def.Load().Name, FaultTransactionConflict) || !s.db.Locks.Acquire(keys[i], true) {
			reasons := noneReasons(len(ops))
			reasons[i] = cancellationReason{Code: "TransactionConflict", Message: "Transaction is ongoing for the item"}
			return nil, txCanceled(reasons)
		}
		held = append(held, keys[i])
	}
	reasons := noneReasons(len(ops))
	failed := false
	changes := make([]*change, 0, len(ops))
	usages := map[string]*usage{}
	var usageOrder []string
	for i, op := range ops {
		d := op.t.def.Load()
		old, err := s.get(op.skey)
		if err != nil {
			return nil, err
		}
		u := usages[d.Name]
		if u == nil {
			u = newTxUsage(d.Name, false)
			usages[d.Name] = u
			usageOrder = append(usageOrder, d.Name)
		}
		if !op.x.cond.eval(old) {
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
			u.addCheck(old)
			continue
		case "Put":
			new = op.item
			if err := checkItemKeys(d, new); err != nil {
				return nil, err
			}
		case "Update":
			n, err := op.x.upd.apply(d, op.key, old)
			if err != nil {
				ae, ok := err.(*apiError)
				if !ok || strings.HasPrefix(ae.Message, msgUpdateEmptyIndexKey) {
					return nil, err
				}
				failed = true
				reasons[i] = cancellationReason{Code: "ValidationError", Message: ae.Message}
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
	if len(changes) > 0 {
		var extra []kv
		if token != nil {
			rec, err := token.record(out, s.now())
			if err != nil {
				return nil, err
			}
			extra = append(extra, rec)
		}
		if err := s.write(changes, extra...); err != nil {
			return nil, err
		}
		if token != nil {
			token.stored = true
		}
	}
	for _, name := range usageOrder {
		s.meter.add(usages[name])
	}
	return out, nil
}

// maxTxItemBytes is the limit on the aggregate size of a transaction's
// items.
const maxTxItemBytes = 4 << 20

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
	transactItemsLength(&c, body, in.TransactItems == nil, len(in.TransactItems))
	for i, ti := range in.TransactItems {
		if ti == nil || ti.Get == nil {
			c.notNull(fmt.Sprintf("transactItems.%d.member.get", i+1), true)
			continue
		}
		member := fmt.Sprintf("transactItems.%d.member.get", i+1)
		c.itemTableName(member+".tableName", ti.Get.TableName)
		c.notNull(member+".key", ti.Get.Key == nil)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	type get struct {
		table *string
		t     *table
		key   av.Item
		skey  []byte
		proj  projector
	}
	// Every Get is validated on its own before any table is looked up.
	gets := make([]get, len(in.TransactItems))
	for i, ti := range in.TransactItems {
		g := ti.Get
		ea := exprArgs{names: g.ExpressionAttributeNames}
		present(&ea.present, "ProjectionExpression", g.ProjectionExpression != nil)
		key, err := keyFromWire(g.Key)
		if err != nil {
			return nil, err
		}
		if err := ea.params(); err != nil {
			return nil, err
		}
		proj, err := parseProjection(ea, g.ProjectionExpression, nil)
		if err != nil {
			return nil, err
		}
		gets[i] = get{table: g.TableName, key: key, proj: proj}
	}
	// A key that does not match its table's schema cancels the
	// transaction, as in TransactWriteItems.
	seen := map[string]bool{}
	var invalid *apiError
	invalidAt := -1
	for i := range gets {
		g := &gets[i]
		t, err := s.lookup(g.table)
		if err != nil {
			return nil, err
		}
		d := t.def.Load()
		if err := matchKey(d, g.key); err != nil {
			ae, ok := err.(*apiError)
			if !ok || !ae.cancels {
				return nil, err
			}
			if invalid == nil {
				invalid, invalidAt = ae, i
			}
			continue
		}
		g.t, g.skey = t, d.baseKey(g.key)
		if seen[string(g.skey)] {
			return nil, validation("Transaction request cannot include multiple operations on one item")
		}
		seen[string(g.skey)] = true
	}
	if invalid != nil {
		reasons := noneReasons(len(gets))
		reasons[invalidAt] = cancellationReason{Code: "ValidationError", Message: invalid.Message}
		return nil, txCanceled(reasons)
	}
	v := s.db.Acquire()
	defer v.Release()
	responses := make([]map[string]any, len(gets))
	usages := map[string]*usage{}
	var names []string
	for i, g := range gets {
		it, err := getFrom(v, g.skey)
		if err != nil {
			return nil, err
		}
		name := g.t.def.Load().Name
		u := usages[name]
		if u == nil {
			u = newTxUsage(name, true)
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
		if cc := s.report(usages[n], in.ReturnConsumedCapacity); cc != nil {
			caps = append(caps, cc)
		}
	}
	if caps != nil {
		out["ConsumedCapacity"] = caps
	}
	return out, nil
}
