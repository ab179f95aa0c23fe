package txn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/dataplane"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/wire"
)

const MaxTransactItems = 100

// TxOp is one action of a TransactWriteItems request, validated.
type TxOp struct {
	Kind  string // ConditionCheck, Put, Delete, Update
	Table *string
	T     *engine.Table
	Key   av.Item
	Item  av.Item // Put
	X     engine.WriteExprs
	Rv    string // ReturnValuesOnConditionCheckFailure
	Skey  []byte
}

// The kinds of action, in the order DynamoDB's model lists them.
var txKinds = []string{"ConditionCheck", "Put", "Delete", "Update"}

// TransactWriteItems applies up to 100 actions all or none. It is one long
// function on purpose: its checks run in the order DynamoDB reports
// violations, the first refusal is the wire contract, and the sequence
// reads top to bottom in one place.
func (s *Store) TransactWriteItems(ctx context.Context, body []byte) (out any, err error) {
	var in wire.TransactWriteItemsInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	// A bad ClientRequestToken is reported alone, ahead of everything else.
	if tok := in.ClientRequestToken; tok != nil && len(*tok) > 36 {
		return nil, wire.Validation("1 validation error detected: Value at 'ClientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36")
	} else if tok != nil && len(*tok) == 0 {
		return nil, wire.Validation("1 validation error detected: Value at 'ClientRequestToken' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	var c wire.Constraints
	c.ReturnConsumedCapacity(in.ReturnConsumedCapacity)
	c.ReturnItemCollectionMetrics(in.ReturnItemCollectionMetrics)
	transactItemsLength(&c, body, in.TransactItems == nil, len(in.TransactItems))
	for i, ti := range in.TransactItems {
		if ti == nil {
			continue
		}
		for _, kind := range txKinds {
			o := ti.Actions()[kind]
			if o == nil {
				continue
			}
			member := fmt.Sprintf("transactItems.%d.member.%s%s", i+1, strings.ToLower(kind[:1]), kind[1:])
			c.ItemTableName(member+".tableName", o.TableName)
			switch kind {
			case "Put":
				c.NotNull(member+".item", o.Item == nil)
			case "Update":
				c.NotNull(member+".key", o.Key == nil)
				c.NotNull(member+".updateExpression", o.UpdateExpression == nil)
			case "ConditionCheck":
				c.NotNull(member+".key", o.Key == nil)
				c.NotNull(member+".conditionExpression", o.ConditionExpression == nil)
			default:
				c.NotNull(member+".key", o.Key == nil)
			}
			c.Enum(member+".returnValuesOnConditionCheckFailure", o.ReturnValuesOnConditionCheckFailure, "ALL_OLD", "NONE")
		}
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	var token *engine.TxToken
	if tok := in.ClientRequestToken; tok != nil {
		token = &engine.TxToken{Token: *tok, Hash: engine.CanonicalHash(body)}
		if replay, err := s.Tokens.Begin(token.Token, token.Hash, body, s.Now()); err != nil || replay != nil {
			return replay, err
		}
		defer func() { s.FinishToken(token, out) }()
	}
	// First every action is validated on its own, before any table is
	// looked up: a malformed expression on a later action wins over a
	// missing table on an earlier one.
	ops := make([]*TxOp, len(in.TransactItems))
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
	var invalid *wire.APIError
	invalidAt := -1
	seen := map[string]bool{}
	for i, op := range ops {
		t, err := s.Lookup(op.Table)
		if err != nil {
			return nil, err
		}
		op.T = t
		d := t.Def.Load()
		if op.Kind == "Put" {
			op.Key = engine.KeyOf(d, op.Item)
			err = engine.CheckItemKeys(d, op.Item)
		} else {
			err = engine.MatchKey(d, op.Key)
		}
		if err == nil {
			err = op.X.Upd.CheckKeys(d)
		}
		if err != nil {
			ae, ok := err.(*wire.APIError)
			if !ok || !ae.Cancels {
				return nil, err
			}
			if invalid == nil {
				invalid, invalidAt = ae, i
			}
			continue
		}
		op.Skey = d.BaseKey(op.Key)
		if seen[string(op.Skey)] {
			return nil, wire.Validation("Transaction request cannot include multiple operations on one item")
		}
		seen[string(op.Skey)] = true
	}
	if invalid != nil {
		reasons := noneReasons(len(ops))
		reasons[invalidAt] = wire.CancellationReason{Code: "ValidationError", Message: invalid.Message}
		return nil, TxCanceled(reasons)
	}
	resp, err := s.RunTx(ops, in.ReturnConsumedCapacity, token)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// transactItemsLength checks the length of a TransactItems member,
// echoing the list as DynamoDB does.
func transactItemsLength(c *wire.Constraints, body []byte, null bool, n int) {
	switch {
	case null:
		c.NotNull("transactItems", true)
	case n == 0:
		c.Add("Value '[]' at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1")
	case n > MaxTransactItems:
		var raw struct {
			TransactItems json.RawMessage `json:"TransactItems"`
		}
		var dump bytes.Buffer
		if json.Unmarshal(body, &raw) == nil {
			json.Compact(&dump, raw.TransactItems)
		}
		c.Add("Value '%s' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to %d", dump.String(), MaxTransactItems)
	}
}

func noneReasons(n int) []wire.CancellationReason {
	reasons := make([]wire.CancellationReason, n)
	for i := range reasons {
		reasons[i] = wire.CancellationReason{Code: "None"}
	}
	return reasons
}

// parseTxOp validates one action without looking at any table: its shape,
// attribute values, item size and expressions.
func parseTxOp(ti *wire.TransactWriteItem) (*TxOp, error) {
	if ti == nil {
		return nil, wire.Validation("The action or operation requested is invalid. Verify that the action is typed correctly.")
	}
	var n int
	var o *wire.TransactOp
	op := &TxOp{}
	for _, kind := range txKinds {
		if x := ti.Actions()[kind]; x != nil {
			n++
			o, op.Kind = x, kind
		}
	}
	switch {
	case n == 0:
		return nil, wire.Validation("The action or operation requested is invalid. Verify that the action is typed correctly.")
	case n > 1:
		return nil, wire.Validation("TransactItems can only contain one of Check, Put, Update or Delete")
	}
	op.Table, op.Rv = o.TableName, o.ReturnValuesOnConditionCheckFailure
	ea := engine.ExprArgs{Names: o.ExpressionAttributeNames, Values: o.ExpressionAttributeValues, Older: true, IfNone: "ConditionExpression is null"}
	if op.Kind == "Update" {
		engine.Present(&ea.Present, "UpdateExpression", o.UpdateExpression != nil)
		ea.IfNone = "UpdateExpression and ConditionExpression are null"
	}
	engine.Present(&ea.Present, "ConditionExpression", o.ConditionExpression != nil)
	var err error
	if op.Kind == "Put" {
		if op.Item, err = av.ItemFromWire(o.Item); err != nil {
			return nil, engine.AvError(err)
		}
		if err := engine.CheckItemSize(op.Item); err != nil {
			return nil, err
		}
	} else if op.Key, err = engine.KeyFromWire(o.Key); err != nil {
		return nil, err
	}
	if err := ea.Params(); err != nil {
		return nil, err
	}
	if op.X, err = engine.ParseWriteExprs(ea, o.ConditionExpression, nil, nil, o.UpdateExpression, nil); err != nil {
		return nil, err
	}
	return op, nil
}

// RunTx applies validated actions all or none.
//
// A transaction with a ClientRequestToken that changes items records the
// token, with its response, in the same batch (tokens.go): a retry after
// a crash that kept the commit is answered, not applied again.
//
// It is one function because the item locks it takes are held from the
// first condition check to the commit: the steps share that critical
// section and its state.
func (s *Store) RunTx(ops []*TxOp, returnCapacity string, token *engine.TxToken) (any, error) {
	// The items a transaction writes may add up to 4 MB at most; a larger
	// one is refused before any lock is taken or condition evaluated.
	total := 0
	for _, op := range ops {
		total += engine.SizeOf(op.Item)
	}
	if total > maxTxItemBytes {
		return nil, wire.Validation("Transaction request cannot be larger than 4 MB")
	}
	keys := make([]string, len(ops))
	for i, op := range ops {
		keys[i] = string(op.Skey)
	}
	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return keys[order[a]] < keys[order[b]] })
	var held []string
	defer func() {
		for _, k := range held {
			s.DB.Locks.Release(k)
		}
	}()
	for _, i := range order {
		if s.InjectFor("TransactWriteItems", ops[i].T.Def.Load().Name, engine.FaultTransactionConflict) || !s.DB.Locks.Acquire(keys[i], true) {
			reasons := noneReasons(len(ops))
			reasons[i] = wire.CancellationReason{Code: "TransactionConflict", Message: "Transaction is ongoing for the item"}
			return nil, TxCanceled(reasons)
		}
		held = append(held, keys[i])
	}
	reasons := noneReasons(len(ops))
	failed := false
	changes := make([]*engine.Change, 0, len(ops))
	usages := map[string]*engine.Usage{}
	var usageOrder []string
	for i, op := range ops {
		d := op.T.Def.Load()
		old, err := s.Get(op.Skey)
		if err != nil {
			return nil, err
		}
		u := usages[d.Name]
		if u == nil {
			u = engine.NewTxUsage(d.Name, false)
			usages[d.Name] = u
			usageOrder = append(usageOrder, d.Name)
		}
		if !op.X.Cond.Eval(old) {
			failed = true
			reasons[i] = wire.CancellationReason{Code: "ConditionalCheckFailed", Message: "The conditional request failed"}
			if op.Rv == "ALL_OLD" && old != nil {
				reasons[i].Item = dataplane.ItemJSON(old)
			}
			continue
		}
		var new av.Item
		switch op.Kind {
		case "ConditionCheck":
			u.AddCheck(old)
			continue
		case "Put":
			new = op.Item
			if err := engine.CheckItemKeys(d, new); err != nil {
				return nil, err
			}
		case "Update":
			n, err := op.X.Upd.Apply(d, op.Key, old)
			if err != nil {
				ae, ok := err.(*wire.APIError)
				if !ok || strings.HasPrefix(ae.Message, engine.MsgUpdateEmptyIndexKey) {
					return nil, err
				}
				failed = true
				reasons[i] = wire.CancellationReason{Code: "ValidationError", Message: ae.Message}
				continue
			}
			new = n
		case "Delete":
		}
		u.AddWrite(d, old, new, 2)
		if old != nil || new != nil {
			changes = append(changes, &engine.Change{T: op.T, Def: d, Key: op.Skey, Old: old, New: new})
		}
	}
	if failed {
		return nil, TxCanceled(reasons)
	}
	out := map[string]any{}
	var caps []*wire.ConsumedCapacity
	for _, name := range usageOrder {
		if cc := usages[name].Response(returnCapacity); cc != nil {
			caps = append(caps, cc)
		}
	}
	if caps != nil {
		out["ConsumedCapacity"] = caps
	}
	if len(changes) > 0 {
		var extra []engine.Kv
		if token != nil {
			rec, err := token.Record(out, s.Now())
			if err != nil {
				return nil, err
			}
			extra = append(extra, rec)
		}
		if err := s.Write(changes, extra...); err != nil {
			return nil, err
		}
		if token != nil {
			token.Stored = true
		}
	}
	for _, name := range usageOrder {
		s.Meter.Add(usages[name])
	}
	return out, nil
}

// maxTxItemBytes is the limit on the aggregate size of a transaction's
// items.
const maxTxItemBytes = 4 << 20

func TxCanceled(reasons []wire.CancellationReason) *wire.APIError {
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		codes[i] = r.Code
	}
	return &wire.APIError{Type: "TransactionCanceledException", Status: 400, Reasons: reasons,
		Message: "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]"}
}

// TransactGetItems reads up to 100 items in one snapshot. It is one long
// function on purpose: its checks run in the order DynamoDB reports
// violations, the first refusal is the wire contract, and the sequence
// reads top to bottom in one place.
func (s *Store) TransactGetItems(ctx context.Context, body []byte) (any, error) {
	var in wire.TransactGetItemsInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.ReturnConsumedCapacity(in.ReturnConsumedCapacity)
	transactItemsLength(&c, body, in.TransactItems == nil, len(in.TransactItems))
	for i, ti := range in.TransactItems {
		if ti == nil || ti.Get == nil {
			c.NotNull(fmt.Sprintf("transactItems.%d.member.get", i+1), true)
			continue
		}
		member := fmt.Sprintf("transactItems.%d.member.get", i+1)
		c.ItemTableName(member+".tableName", ti.Get.TableName)
		c.NotNull(member+".key", ti.Get.Key == nil)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	type get struct {
		table *string
		t     *engine.Table
		key   av.Item
		skey  []byte
		proj  dataplane.Projector
	}
	// Every Get is validated on its own before any table is looked up.
	gets := make([]get, len(in.TransactItems))
	for i, ti := range in.TransactItems {
		g := ti.Get
		ea := engine.ExprArgs{Names: g.ExpressionAttributeNames}
		engine.Present(&ea.Present, "ProjectionExpression", g.ProjectionExpression != nil)
		key, err := engine.KeyFromWire(g.Key)
		if err != nil {
			return nil, err
		}
		if err := ea.Params(); err != nil {
			return nil, err
		}
		proj, err := dataplane.ParseProjection(ea, g.ProjectionExpression, nil)
		if err != nil {
			return nil, err
		}
		gets[i] = get{table: g.TableName, key: key, proj: proj}
	}
	// A key that does not match its table's schema cancels the
	// transaction, as in TransactWriteItems.
	seen := map[string]bool{}
	var invalid *wire.APIError
	invalidAt := -1
	for i := range gets {
		g := &gets[i]
		t, err := s.Lookup(g.table)
		if err != nil {
			return nil, err
		}
		d := t.Def.Load()
		if err := engine.MatchKey(d, g.key); err != nil {
			ae, ok := err.(*wire.APIError)
			if !ok || !ae.Cancels {
				return nil, err
			}
			if invalid == nil {
				invalid, invalidAt = ae, i
			}
			continue
		}
		g.t, g.skey = t, d.BaseKey(g.key)
		if seen[string(g.skey)] {
			return nil, wire.Validation("Transaction request cannot include multiple operations on one item")
		}
		seen[string(g.skey)] = true
	}
	if invalid != nil {
		reasons := noneReasons(len(gets))
		reasons[invalidAt] = wire.CancellationReason{Code: "ValidationError", Message: invalid.Message}
		return nil, TxCanceled(reasons)
	}
	v := s.DB.Acquire()
	defer v.Release()
	responses := make([]map[string]any, len(gets))
	usages := map[string]*engine.Usage{}
	var names []string
	for i, g := range gets {
		it, err := engine.GetFrom(v, g.skey)
		if err != nil {
			return nil, err
		}
		name := g.t.Def.Load().Name
		u := usages[name]
		if u == nil {
			u = engine.NewTxUsage(name, true)
			usages[name] = u
			names = append(names, name)
		}
		u.AddTable(engine.ReadUnits(engine.SizeOf(it), true) * 2)
		responses[i] = map[string]any{}
		if it != nil {
			responses[i]["Item"] = g.proj.Apply(it)
		}
	}
	out := map[string]any{"Responses": responses}
	var caps []*wire.ConsumedCapacity
	for _, n := range names {
		if cc := s.Report(usages[n], in.ReturnConsumedCapacity); cc != nil {
			caps = append(caps, cc)
		}
	}
	if caps != nil {
		out["ConsumedCapacity"] = caps
	}
	return out, nil
}
