package statement

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/partiql"
	"lastro/ddblocal/internal/wire"
)

type executeStatementInput struct {
	Statement                           *string    `json:"Statement"`
	Parameters                          []*av.Wire `json:"Parameters"`
	ConsistentRead                      *bool      `json:"ConsistentRead"`
	NextToken                           *string    `json:"NextToken"`
	ReturnConsumedCapacity              string     `json:"ReturnConsumedCapacity"`
	Limit                               *int64     `json:"Limit"`
	ReturnValuesOnConditionCheckFailure string     `json:"ReturnValuesOnConditionCheckFailure"`
}

type executeStatementOutput struct {
	Items            []av.Item              `json:"Items"`
	NextToken        string                 `json:"NextToken,omitempty"`
	LastEvaluatedKey av.Item                `json:"LastEvaluatedKey,omitempty"`
	ConsumedCapacity *wire.ConsumedCapacity `json:"ConsumedCapacity,omitempty"`
}

func duplicateItem() *wire.APIError {
	return &wire.APIError{Type: "DuplicateItemException", Message: "Duplicate primary key exists in table", Status: 400}
}

// parseParams validates a statement's Parameters.
func parseParams(ws []*av.Wire) ([]*av.Value, error) {
	out := make([]*av.Value, len(ws))
	for i, w := range ws {
		if err := paramNumbers(w); err != nil {
			return nil, err
		}
		v, err := av.FromWire(w)
		if err != nil {
			return nil, partiqlError(err)
		}
		out[i] = v
	}
	return out, nil
}

// paramNumbers refuses parameter numbers whose exponent does not fit a
// 32-bit integer: DynamoDB reads a parameter as Java's BigDecimal does and
// cannot convert them at all (an attribute value of PutItem is an
// overflow instead).
func paramNumbers(w *av.Wire) error {
	if w == nil {
		return nil
	}
	var nums []string
	if w.N != nil {
		nums = append(nums, *w.N)
	}
	if w.NS != nil {
		nums = append(nums, *w.NS...)
	}
	for _, n := range nums {
		if !exponentFits(n) {
			return wire.Validation("The parameter cannot be converted to a numeric value: %s", n)
		}
	}
	if w.L != nil {
		for _, e := range *w.L {
			if err := paramNumbers(e); err != nil {
				return err
			}
		}
	}
	if w.M != nil {
		for _, k := range wire.SortedKeys(*w.M) {
			if err := paramNumbers((*w.M)[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// exponentFits reports whether a number's exponent, and its scale (the
// digits after the point less the exponent), fit a 32-bit integer.
func exponentFits(n string) bool {
	mant, exp, ok := strings.Cut(strings.ToLower(n), "e")
	if !ok {
		return true
	}
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return !allDigits(strings.TrimLeft(exp, "+-")) // not a number at all: av reports it
	}
	frac := 0
	if _, f, ok := strings.Cut(mant, "."); ok {
		frac = len(f)
	}
	scale := int64(frac) - e
	return e >= math.MinInt32 && e <= math.MaxInt32 && scale >= math.MinInt32 && scale <= math.MaxInt32
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseStatement parses a statement and checks its parameter count.
func parseStatement(src string, params []*av.Value) (*partiql.Statement, error) {
	st, err := partiql.Parse(src)
	if err != nil {
		return nil, partiqlError(err)
	}
	if st.Params > len(params) {
		return nil, wire.Validation("Number of parameters in request and statement don't match.")
	}
	return st, nil
}

// ExecuteStatement answers the ExecuteStatement operation.
func (s *Store) ExecuteStatement(ctx context.Context, body []byte) (any, error) {
	var in executeStatementInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.Statement("statement", in.Statement)
	c.Parameters("parameters", in.Parameters)
	c.ReturnConsumedCapacity(in.ReturnConsumedCapacity)
	c.ReturnValuesOnConditionCheckFailure(in.ReturnValuesOnConditionCheckFailure)
	c.Min("limit", in.Limit, 1)
	if in.NextToken != nil && (len(*in.NextToken) < 1 || len(*in.NextToken) > 32768) {
		c.Add("Value '%s' at 'nextToken' failed to satisfy constraint: Member must have length less than or equal to 32768, Member must have length greater than or equal to 1", *in.NextToken)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	params, err := parseParams(in.Parameters)
	if err != nil {
		return nil, err
	}
	st, err := parseStatement(*in.Statement, params)
	if err != nil {
		return nil, err
	}
	consistent := in.ConsistentRead != nil && *in.ConsistentRead
	switch st.Kind {
	case partiql.Select:
		q, err := s.planSelect(st, params, consistent)
		if err != nil {
			return nil, err
		}
		var tok *pqToken
		hash := statementHash(*in.Statement, in.Parameters, consistent)
		if in.NextToken != nil {
			if tok, err = decodeToken(*in.NextToken, hash); err != nil {
				return nil, err
			}
		}
		limit := 1 << 62
		if in.Limit != nil {
			limit = int(*in.Limit)
		}
		page, err := s.runSelect(q, limit, tok)
		if err != nil {
			return nil, err
		}
		out := &executeStatementOutput{Items: page.items, ConsumedCapacity: page.usage.Response(in.ReturnConsumedCapacity)}
		if page.next != nil {
			page.next.Hash = hash
			out.NextToken = page.next.encode()
			out.LastEvaluatedKey = page.lastKey
		}
		return out, nil
	case partiql.Exists:
		return nil, wire.Validation("EXISTS can only be used in ExecuteTransaction write requests.")
	}
	w, err := s.planWrite(st, params)
	if err != nil {
		return nil, err
	}
	res, err := s.runWrite(w, in.ReturnValuesOnConditionCheckFailure)
	if err != nil {
		return nil, err
	}
	out := &executeStatementOutput{Items: []av.Item{}, ConsumedCapacity: s.Report(res.usage, in.ReturnConsumedCapacity)}
	if res.item != nil {
		out.Items = append(out.Items, res.item)
	}
	return out, nil
}

// source resolves a statement's table and index.
func (s *Store) pqSource(st *partiql.Statement) (*engine.Table, *engine.TableDef, *engine.IndexDef, error) {
	t, err := s.Lookup(&st.Table)
	if err != nil {
		return nil, nil, nil, err
	}
	d := t.Def.Load()
	if st.Index == "" {
		return t, d, nil, nil
	}
	ix := d.Index(st.Index)
	if ix == nil {
		return nil, nil, nil, wire.Validation("The table does not have the specified index")
	}
	return t, d, ix, nil
}

// keyTerms splits the top-level AND terms of a WHERE clause into the
// equalities on the named key attributes and the remaining terms.
func keyTerms(b *pqBuilder, where partiql.Expr, names []string) (map[string]*av.Value, []partiql.Expr, error) {
	key := map[string]*av.Value{}
	var rest []partiql.Expr
	for _, term := range conjuncts(where) {
		name, v, ok := equality(term, names)
		if !ok {
			rest = append(rest, term)
			continue
		}
		val, err := b.literal(v)
		if err != nil {
			return nil, nil, err
		}
		if _, dup := key[name]; dup {
			return nil, nil, wire.Validation("Multiple conditions on same key %s. Only single item Update/Insert/Delete are supported", name)
		}
		key[name] = val
	}
	return key, rest, nil
}

// conjuncts flattens the top-level ANDs of a condition.
func conjuncts(e partiql.Expr) []partiql.Expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*partiql.Binary); ok && b.Op == "AND" {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []partiql.Expr{e}
}

// equality matches name = value (either way round) on one of names.
func equality(e partiql.Expr, names []string) (string, partiql.Expr, bool) {
	b, ok := e.(*partiql.Binary)
	if !ok || b.Op != "=" {
		return "", nil, false
	}
	for _, pair := range [][2]partiql.Expr{{b.L, b.R}, {b.R, b.L}} {
		if n := simpleName(pair[0]); n != "" && partiql.IsValue(pair[1]) {
			for _, k := range names {
				if k == n {
					return n, pair[1], true
				}
			}
		}
	}
	return "", nil, false
}

// simpleName returns the attribute a one-step path names, or "".
func simpleName(e partiql.Expr) string {
	p, ok := e.(*partiql.Path)
	if !ok || len(p.Elems) != 1 || p.Elems[0].IsIndex {
		return ""
	}
	return p.Elems[0].Name
}

// andAll joins translated terms with AND.
func (b *pqBuilder) andAll(terms []partiql.Expr) (string, error) {
	s := ""
	for _, t := range terms {
		c, err := b.cond(t)
		if err != nil {
			return "", err
		}
		c = parenOr(t, c)
		if s != "" {
			s += " AND "
		}
		s += c
	}
	return s, nil
}

// fullKey extracts the primary key a single-item statement addresses and
// the condition the rest of its WHERE clause forms ("" when none).
func fullKey(b *pqBuilder, d *engine.TableDef, where partiql.Expr) (av.Item, string, error) {
	names := d.KeyNames()
	key, rest, err := keyTerms(b, where, names)
	if err != nil {
		return nil, "", err
	}
	if len(key) != len(names) {
		return nil, "", wire.Validation(wire.MsgMissingKeyInWhere)
	}
	it := av.Item(key)
	if err := engine.MatchKey(d, it); err != nil {
		return nil, "", err
	}
	cond, err := b.andAll(rest)
	if err != nil {
		return nil, "", err
	}
	return it, cond, nil
}

// errorCode is the short code BatchExecuteStatement answers an error with.
func errorCode(e *wire.APIError) string {
	switch e.Type {
	case "ValidationException":
		return "ValidationError"
	case "InternalServerError":
		return "InternalServerError"
	}
	if n := len(e.Type) - len("Exception"); n > 0 && e.Type[n:] == "Exception" {
		return e.Type[:n]
	}
	return e.Type
}

func asAPIError(err error) *wire.APIError {
	if ae, ok := err.(*wire.APIError); ok {
		return ae
	}
	return wire.Internal(fmt.Errorf("partiql: %w", err))
}
