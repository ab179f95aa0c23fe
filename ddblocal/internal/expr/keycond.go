package expr

import "lastro/ddblocal/internal/av"

// KeySchema is the key of the table or index a Query reads.
type KeySchema struct {
	Hash, Range         string // Range is "" when there is no sort key
	HashType, RangeType av.Type
}

// KeyCondition is a validated KeyConditionExpression: the partition key
// value and an optional condition on the sort key.
type KeyCondition struct {
	HashValue   *av.Value
	RangeOp     string // "" (none), "EQ", "LT", "LE", "GT", "GE", "BETWEEN" or "BEGINS_WITH"
	RangeValues []*av.Value
}

// KeyExpr is a KeyConditionExpression checked on its own, before it is
// matched against a key schema: DynamoDB reports its structural problems
// before it even looks the table up.
type KeyExpr struct {
	terms []keyTerm
}

// keyTerm is one condition on one attribute.
type keyTerm struct {
	attr   string
	op     string
	values []*av.Value
}

// ParseKeyCondition parses a KeyConditionExpression and matches it
// against the key schema.
func ParseKeyCondition(s string, a *Attrs, schema KeySchema) (*KeyCondition, error) {
	k, err := ParseKeyConditionExpr(s, a)
	if err != nil {
		return nil, err
	}
	return k.Bind(schema)
}

// ParseKeyConditionExpr parses and validates a KeyConditionExpression
// without a schema: it must be one or two conditions, ANDed, each on one
// top-level attribute, with =, <, <=, >, >=, BETWEEN or begins_with.
func ParseKeyConditionExpr(s string, a *Attrs) (*KeyExpr, error) {
	c, err := ParseCondition(KindKeyCondition, s, a)
	if err != nil {
		return nil, err
	}
	k := &KeyExpr{}
	if err := k.collect(c.root); err != nil {
		return nil, err
	}
	if len(k.terms) > 2 {
		return nil, &Error{Msg: "Conditions can be of length 1 or 2 only"}
	}
	return k, nil
}

var rangeOps = [...]string{opEQ: "EQ", opLT: "LT", opLE: "LE", opGT: "GT", opGE: "GE"}

// flipped is the comparison seen from the other side (":v < k" is "k > :v").
var flipped = [...]uint8{opEQ: opEQ, opNE: opNE, opLT: opGT, opLE: opGE, opGT: opLT, opGE: opLE}

func badOperator(op string) error {
	return &Error{Msg: "Invalid operator used in KeyConditionExpression: " + op}
}

// collect walks the condition top-down, left to right, with DynamoDB's
// messages (which, unlike the others, carry no "Invalid ...:" prefix).
func (k *KeyExpr) collect(n *node) error {
	switch n.kind {
	case nOr:
		return badOperator("OR")
	case nNot:
		return badOperator("NOT")
	case nIn:
		return badOperator("IN")
	case nCompare:
		if n.op == opNE {
			return badOperator("<>")
		}
	case nFunc:
		switch n.fn {
		case fnSize:
			return &Error{Msg: "KeyConditionExpressions cannot contain nested operations"}
		case fnBeginsWith:
			if n.args[0].kind != nPath {
				return &Error{Msg: "Invalid condition in KeyConditionExpression: begins_with operator must have the key attribute as its first operand"}
			}
		default:
			return badOperator(n.name)
		}
	case nBetween:
		if n.args[0].kind != nPath {
			return &Error{Msg: "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key attribute as its first operand"}
		}
	}
	attr, attrIx := "", 0
	var values []*av.Value
	for i, a := range n.args {
		switch a.kind {
		case nPath:
			if attr != "" {
				return &Error{Msg: "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"}
			}
			if a.path.Nested() {
				return &Error{Msg: "KeyConditionExpressions cannot have conditions on nested attributes"}
			}
			attr, attrIx = a.path.Top(), i
		case nValue:
			values = append(values, a.val)
		default:
			if err := k.collect(a); err != nil {
				return err
			}
		}
	}
	if n.kind == nAnd {
		return nil
	}
	if attr == "" {
		return &Error{Msg: "Invalid condition in KeyConditionExpression: No key attribute specified"}
	}
	for _, t := range k.terms {
		if t.attr == attr {
			return &Error{Msg: "KeyConditionExpressions must only contain one condition per key"}
		}
	}
	t := keyTerm{attr: attr, values: values}
	switch n.kind {
	case nCompare:
		op := n.op
		if attrIx != 0 {
			op = flipped[op]
		}
		t.op = rangeOps[op]
	case nBetween:
		t.op = "BETWEEN"
	default:
		t.op = "BEGINS_WITH"
	}
	k.terms = append(k.terms, t)
	return nil
}

func (k *KeyExpr) term(attr string) *keyTerm {
	for i := range k.terms {
		if k.terms[i].attr == attr {
			return &k.terms[i]
		}
	}
	return nil
}

func (t *keyTerm) typeMatches(want av.Type) error {
	for _, v := range t.values {
		if v.T != want {
			return &Error{Msg: "One or more parameter values were invalid: Condition parameter type does not match schema type"}
		}
	}
	return nil
}

// Bind matches the conditions against the key schema of the table or
// index, in DynamoDB's order of checks.
func (k *KeyExpr) Bind(schema KeySchema) (*KeyCondition, error) {
	unsupported := &Error{Msg: "Query key condition not supported"}
	if schema.Range == "" && len(k.terms) > 1 {
		return nil, unsupported
	}
	h := k.term(schema.Hash)
	if h == nil {
		return nil, &Error{Msg: "Query condition missed key schema element: " + schema.Hash}
	}
	if err := h.typeMatches(schema.HashType); err != nil {
		return nil, err
	}
	if h.op != "EQ" {
		return nil, unsupported
	}
	kc := &KeyCondition{HashValue: h.values[0]}
	if schema.Range == "" {
		return kc, nil
	}
	r := k.term(schema.Range)
	if r == nil {
		if len(k.terms) > 1 {
			return nil, &Error{Msg: "Query condition missed key schema element: " + schema.Range}
		}
		return kc, nil
	}
	if err := r.typeMatches(schema.RangeType); err != nil {
		return nil, err
	}
	kc.RangeOp, kc.RangeValues = r.op, r.values
	return kc, nil
}

// Match reports whether a sort key value satisfies the range condition
// (true when there is none).
func (kc *KeyCondition) Match(v *av.Value) bool {
	if kc.RangeOp == "" {
		return true
	}
	if v == nil {
		return false
	}
	if kc.RangeOp == "BEGINS_WITH" {
		return beginsWith(v, kc.RangeValues[0])
	}
	c, ok := av.Compare(v, kc.RangeValues[0])
	if !ok {
		return false
	}
	switch kc.RangeOp {
	case "EQ":
		return c == 0
	case "LT":
		return c < 0
	case "LE":
		return c <= 0
	case "GT":
		return c > 0
	case "GE":
		return c >= 0
	}
	hi, ok := av.Compare(v, kc.RangeValues[1])
	return ok && c >= 0 && hi <= 0
}
