package statement

import (
	"context"
	"fmt"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/partiql"
	"lastro/ddblocal/internal/txn"
	"lastro/ddblocal/internal/wire"
)

type batchStatementRequest struct {
	Statement                           *string    `json:"Statement"`
	Parameters                          []*av.Wire `json:"Parameters"`
	ConsistentRead                      *bool      `json:"ConsistentRead"`
	ReturnValuesOnConditionCheckFailure string     `json:"ReturnValuesOnConditionCheckFailure"`
}

type batchExecuteStatementInput struct {
	Statements             []*batchStatementRequest `json:"Statements"`
	ReturnConsumedCapacity string                   `json:"ReturnConsumedCapacity"`
}

type batchStatementError struct {
	Code    string         `json:"Code"`
	Message string         `json:"Message,omitempty"`
	Item    map[string]any `json:"Item,omitempty"`
}

type batchStatementResponse struct {
	Error     *batchStatementError `json:"Error,omitempty"`
	TableName string               `json:"TableName,omitempty"`
	Item      av.Item              `json:"Item,omitempty"`
}

type executeTransactionInput struct {
	TransactStatements     []*batchStatementRequest `json:"TransactStatements"`
	ClientRequestToken     *string                  `json:"ClientRequestToken"`
	ReturnConsumedCapacity string                   `json:"ReturnConsumedCapacity"`
}

// tableUsages accumulates capacity per table, in order of first use.
type tableUsages struct {
	order []string
	m     map[string]*engine.Usage
	tx    bool
}

func (tu *tableUsages) get(name string, read bool) *engine.Usage {
	if tu.m == nil {
		tu.m = map[string]*engine.Usage{}
	}
	u := tu.m[name]
	if u == nil {
		u = engine.NewUsage(name, read)
		u.Tx = tu.tx
		tu.m[name] = u
		tu.order = append(tu.order, name)
	}
	return u
}

func (tu *tableUsages) add(o *engine.Usage) {
	u := tu.get(o.Table, o.Read)
	u.AddTable(o.Base)
	for name, units := range o.Indexes {
		u.AddIndex(name, o.Local[name], units)
	}
}

func (s *Store) reportAll(tu *tableUsages, mode string) []*wire.ConsumedCapacity {
	var caps []*wire.ConsumedCapacity
	for _, name := range tu.order {
		if cc := s.Report(tu.m[name], mode); cc != nil {
			caps = append(caps, cc)
		}
	}
	return caps
}

// BatchExecuteStatement answers the BatchExecuteStatement operation.
func (s *Store) BatchExecuteStatement(ctx context.Context, body []byte) (any, error) {
	var in batchExecuteStatementInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.ListLength("statements", in.Statements == nil, len(in.Statements), wire.MaxBatchStatements)
	c.ReturnConsumedCapacity(in.ReturnConsumedCapacity)
	for i, r := range in.Statements {
		if r == nil {
			c.NotNull(fmt.Sprintf("statements.%d.member", i+1), true)
			continue
		}
		c.Statement(fmt.Sprintf("statements.%d.member.statement", i+1), r.Statement)
		c.Parameters(fmt.Sprintf("statements.%d.member.parameters", i+1), r.Parameters)
		c.ReturnValuesOnConditionCheckFailure(r.ReturnValuesOnConditionCheckFailure)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	var usages tableUsages
	responses := make([]batchStatementResponse, len(in.Statements))
	for i, r := range in.Statements {
		resp, err := s.batchStatement(r, &usages)
		if err != nil {
			ae := asAPIError(err)
			if ae.Status >= 500 {
				return nil, err
			}
			// A statement that reached its table names it, even failed.
			resp = batchStatementResponse{TableName: resp.TableName,
				Error: &batchStatementError{Code: errorCode(ae), Message: ae.Message, Item: ae.Item}}
		}
		responses[i] = resp
	}
	out := map[string]any{"Responses": responses}
	if caps := s.reportAll(&usages, in.ReturnConsumedCapacity); caps != nil {
		out["ConsumedCapacity"] = caps
	}
	return out, nil
}

const msgBatchSelectKey = "Select statements within BatchExecuteStatement must specify the primary key in the where clause."

// batchStatement runs one statement of a batch on its own.
func (s *Store) batchStatement(r *batchStatementRequest, usages *tableUsages) (batchStatementResponse, error) {
	var resp batchStatementResponse
	params, err := parseParams(r.Parameters)
	if err != nil {
		return resp, err
	}
	st, err := parseStatement(*r.Statement, params)
	if err != nil {
		return resp, err
	}
	switch st.Kind {
	case partiql.Exists:
		return resp, wire.Validation("EXISTS can only be used in ExecuteTransaction write requests.")
	case partiql.Select:
		g, err := s.planGet(st, params, msgBatchSelectKey, msgBatchSelectKey)
		if err != nil {
			return resp, err
		}
		it, err := s.Read(g.skey)
		if err != nil {
			return resp, err
		}
		consistent := r.ConsistentRead != nil && *r.ConsistentRead
		usages.get(g.d.Name, true).AddTable(engine.ReadUnits(engine.SizeOf(it), consistent))
		resp.TableName = g.d.Name
		if it != nil {
			resp.Item = g.q.project(it)
		}
		return resp, nil
	}
	w, err := s.planWrite(st, params)
	if err != nil {
		return resp, err
	}
	resp.TableName = w.d.Name
	res, err := s.runWrite(w, r.ReturnValuesOnConditionCheckFailure)
	if err != nil {
		return resp, err
	}
	usages.add(res.usage)
	resp.Item = res.item
	return resp, nil
}

const (
	msgTxSelectKey    = "Select statements within ExecuteTransaction must specify the primary key in the where clause."
	msgTxIndexRead    = "Reads on indices are not supported within transactions."
	msgTxIndexWrite   = "Operations on indices are not supported in transactions"
	msgTxReturning    = "RETURNING clause is not supported in ExecuteTransaction."
	msgTxReadAndWrite = "ExecuteTransaction API does not support both read and write operations in the same request."
)

// ExecuteTransaction runs up to 100 PartiQL statements all or none. It is
// one long function on purpose: its checks run in the order DynamoDB
// reports violations, the first refusal is the wire contract, and the
// sequence reads top to bottom in one place.
func (s *Store) ExecuteTransaction(ctx context.Context, body []byte) (out any, err error) {
	var in executeTransactionInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.ListLength("transactStatements", in.TransactStatements == nil, len(in.TransactStatements), txn.MaxTransactItems)
	c.ReturnConsumedCapacity(in.ReturnConsumedCapacity)
	if tok := in.ClientRequestToken; tok != nil && (len(*tok) < 1 || len(*tok) > 36) {
		c.Add("Value '%s' at 'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36, Member must have length greater than or equal to 1", *tok)
	}
	for i, r := range in.TransactStatements {
		if r == nil {
			c.NotNull(fmt.Sprintf("transactStatements.%d.member", i+1), true)
			continue
		}
		c.Statement(fmt.Sprintf("transactStatements.%d.member.statement", i+1), r.Statement)
		c.Parameters(fmt.Sprintf("transactStatements.%d.member.parameters", i+1), r.Parameters)
		c.ReturnValuesOnConditionCheckFailure(r.ReturnValuesOnConditionCheckFailure)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	var token *engine.TxToken
	if tok := in.ClientRequestToken; tok != nil {
		token = &engine.TxToken{Token: *tok, Hash: engine.CanonicalHash(body), Shape: func(out map[string]any) { out["Responses"] = []any{} }}
		replay, err := s.Tokens.Begin(token.Token, token.Hash, body, s.Now())
		if err != nil {
			return nil, err
		}
		if replay != nil {
			return s.replayTransaction(&in, replay), nil
		}
		defer func() { s.FinishToken(token, out) }()
	}
	// Parameters are converted for the whole request first; their errors
	// name no statement.
	params := make([][]*av.Value, len(in.TransactStatements))
	for i, r := range in.TransactStatements {
		p, err := parseParams(r.Parameters)
		if err != nil {
			return nil, err
		}
		params[i] = p
	}
	inStatement := func(i int, err error) error {
		if ae, ok := err.(*wire.APIError); ok && ae.Type == "ValidationException" {
			return wire.Validation("Validation failed in TransactStatements[%d]: %s", i, ae.Message)
		}
		return err
	}
	stmts := make([]*partiql.Statement, len(in.TransactStatements))
	reads, writes := 0, 0
	for i, r := range in.TransactStatements {
		st, err := parseStatement(*r.Statement, params[i])
		if err != nil {
			return nil, inStatement(i, err)
		}
		if st.Returning != partiql.ReturnNone {
			return nil, inStatement(i, wire.Validation(msgTxReturning))
		}
		if st.Kind == partiql.Select {
			reads++
		} else {
			writes++
		}
		stmts[i] = st
	}
	if reads > 0 && writes > 0 {
		return nil, wire.Validation(msgTxReadAndWrite)
	}
	var resp any
	if reads > 0 {
		resp, err = s.transactionReads(stmts, params, inStatement, in.ReturnConsumedCapacity)
	} else {
		resp, err = s.transactionWrites(stmts, params, in.TransactStatements, inStatement, in.ReturnConsumedCapacity, token)
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// replayTransaction answers a retried write transaction (same
// ClientRequestToken, same body) without applying it again. DynamoDB then
// reports the capacity of reading the items instead of writing them: a
// transactional read, twice the consistent read units, per statement. A
// retried read transaction, or one whose statements no longer plan (its
// table was deleted since), gets the first response back unchanged.
func (s *Store) replayTransaction(in *executeTransactionInput, stored any) any {
	mode := in.ReturnConsumedCapacity
	if mode != "TOTAL" && mode != "INDEXES" {
		return stored
	}
	usages := tableUsages{tx: true}
	for _, r := range in.TransactStatements {
		params, err := parseParams(r.Parameters)
		if err != nil {
			return stored
		}
		st, err := parseStatement(*r.Statement, params)
		if err != nil || st.Kind == partiql.Select || st.Index != "" {
			return stored
		}
		w, err := s.planWrite(st, params)
		if err != nil {
			return stored
		}
		it, err := s.Read(w.d.BaseKey(w.key))
		if err != nil {
			return stored
		}
		usages.get(w.d.Name, true).AddTable(engine.ReadUnits(engine.SizeOf(it), true) * 2)
	}
	out := map[string]any{"Responses": []any{}}
	if caps := s.reportAll(&usages, mode); caps != nil {
		out["ConsumedCapacity"] = caps
	}
	return out
}

// transactionReads runs a transaction of SELECTs as TransactGetItems does:
// one consistent snapshot, each read charged double.
func (s *Store) transactionReads(stmts []*partiql.Statement, params [][]*av.Value, inStatement func(int, error) error, mode string) (any, error) {
	gets := make([]*pqGet, len(stmts))
	seen := map[string]bool{}
	for i, st := range stmts {
		g, err := s.planGet(st, params[i], msgTxIndexRead, msgTxSelectKey)
		if err != nil {
			return nil, inStatement(i, err)
		}
		if seen[string(g.skey)] {
			return nil, wire.Validation("Transaction request cannot include multiple operations on one item")
		}
		seen[string(g.skey)] = true
		gets[i] = g
	}
	v := s.DB.Acquire()
	defer v.Release()
	usages := tableUsages{tx: true}
	responses := make([]map[string]any, len(gets))
	for i, g := range gets {
		it, err := engine.GetFrom(v, g.skey)
		if err != nil {
			return nil, err
		}
		usages.get(g.d.Name, true).AddTable(engine.ReadUnits(engine.SizeOf(it), true) * 2)
		responses[i] = map[string]any{}
		if it != nil {
			responses[i]["Item"] = g.q.project(it)
		}
	}
	out := map[string]any{"Responses": responses}
	if caps := s.reportAll(&usages, mode); caps != nil {
		out["ConsumedCapacity"] = caps
	}
	return out, nil
}

// transactionWrites runs INSERT, UPDATE, DELETE and EXISTS statements as
// one TransactWriteItems.
func (s *Store) transactionWrites(stmts []*partiql.Statement, params [][]*av.Value, reqs []*batchStatementRequest,
	inStatement func(int, error) error, mode string, token *engine.TxToken) (any, error) {
	ops := make([]*txn.TxOp, len(stmts))
	seen := map[string]bool{}
	for i, st := range stmts {
		if st.Index != "" {
			if _, err := s.Lookup(&st.Table); err != nil {
				return nil, err
			}
			return nil, inStatement(i, wire.Validation(msgTxIndexWrite))
		}
		w, err := s.planWrite(st, params[i])
		if err != nil {
			return nil, inStatement(i, err)
		}
		op := w.txOp()
		op.Rv = reqs[i].ReturnValuesOnConditionCheckFailure
		if seen[string(op.Skey)] {
			return nil, wire.Validation("Transaction request cannot include multiple operations on one item")
		}
		seen[string(op.Skey)] = true
		ops[i] = op
	}
	resp, err := s.RunTx(ops, mode, token)
	if err != nil {
		// An INSERT whose key exists fails as a duplicate, not a condition.
		if ae, ok := err.(*wire.APIError); ok && ae.Type == "TransactionCanceledException" {
			reasons := ae.Reasons
			for i, st := range stmts {
				if st.Kind == partiql.Insert && i < len(reasons) && reasons[i].Code == "ConditionalCheckFailed" {
					reasons[i] = wire.CancellationReason{Code: "DuplicateItem", Message: duplicateItem().Message}
				}
			}
			return nil, txn.TxCanceled(reasons)
		}
		return nil, err
	}
	out, _ := resp.(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	out["Responses"] = []any{}
	return out, nil
}
