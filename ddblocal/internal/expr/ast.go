package expr

import (
	"strings"

	"lastro/ddblocal/internal/av"
)

// nodeKind is the kind of a parse-tree node. Conditions, operands and
// update values share one node type: the grammar mixes them (a function
// call can be either a condition or an operand) and one type keeps the
// tree compact.
type nodeKind uint8

const (
	nPath    nodeKind = iota // document path operand
	nValue                   // ":value" operand
	nFunc                    // function call, condition or operand
	nCompare                 // operand comparator operand
	nBetween                 // operand BETWEEN operand AND operand
	nIn                      // operand IN (operand, ...)
	nAnd
	nOr
	nNot
	nArith // operand + operand, operand - operand (update SET only)
)

// Comparators and arithmetic operators, stored in node.op.
const (
	opEQ uint8 = iota
	opNE
	opLT
	opLE
	opGT
	opGE
	opPlus
	opMinus
)

// fnKind identifies a function. Names are case-sensitive.
type fnKind uint8

const (
	fnUnknown fnKind = iota
	fnAttributeExists
	fnAttributeNotExists
	fnAttributeType
	fnBeginsWith
	fnContains
	fnSize
	fnIfNotExists
	fnListAppend
)

var functions = map[string]fnKind{
	"attribute_exists":     fnAttributeExists,
	"attribute_not_exists": fnAttributeNotExists,
	"attribute_type":       fnAttributeType,
	"begins_with":          fnBeginsWith,
	"contains":             fnContains,
	"size":                 fnSize,
	"if_not_exists":        fnIfNotExists,
	"list_append":          fnListAppend,
}

// isUpdateFunction reports functions that only update expressions accept.
func (f fnKind) isUpdateFunction() bool { return f == fnIfNotExists || f == fnListAppend }

// rawKind tells how a path element was written.
type rawKind uint8

const (
	rawID    rawKind = iota // bare identifier
	rawName                 // "#name" placeholder
	rawIndex                // [n]
)

// rawElem is a path element as written, before placeholders are resolved.
type rawElem struct {
	kind  rawKind
	text  string // identifier, placeholder or index digits
	index int    // list index; -1 when it does not fit a Java int
}

// node is a node of the parse tree.
type node struct {
	kind   nodeKind
	op     uint8     // nCompare, nArith
	fn     fnKind    // nFunc
	name   string    // nFunc: name as written; nValue: placeholder
	args   []*node   // operands or sub-conditions
	raw    []rawElem // nPath, as written
	path   Path      // nPath, resolved by validation
	val    *av.Value // nValue, resolved by validation
	parens bool      // directly enclosed in parentheses
}

// isOperand reports nodes usable where the grammar wants an operand.
func (n *node) isOperand() bool { return n.kind <= nFunc }

// isCondition reports nodes usable where the grammar wants a condition
// (a function call is both).
func (n *node) isCondition() bool { return n.kind >= nFunc && n.kind != nArith }

// typeSet is a set of attribute types, one bit per av.Type.
type typeSet uint16

const (
	tsS       = typeSet(1) << av.S
	tsN       = typeSet(1) << av.N
	tsB       = typeSet(1) << av.B
	tsSS      = typeSet(1) << av.SS
	tsNS      = typeSet(1) << av.NS
	tsBS      = typeSet(1) << av.BS
	tsM       = typeSet(1) << av.M
	tsL       = typeSet(1) << av.L
	tsNULL    = typeSet(1) << av.NULL
	tsBOOL    = typeSet(1) << av.BOOL
	tsAll     = tsS | tsN | tsB | tsSS | tsNS | tsBS | tsM | tsL | tsNULL | tsBOOL
	tsOrdered = tsS | tsN | tsB
	tsIter    = tsS | tsB | tsSS | tsNS | tsBS | tsL | tsM
)

func typeOf(v *av.Value) typeSet { return typeSet(1) << v.T }

// allTypesString is how DynamoDB prints "any type" (the possible types of
// a document path) in operand type errors: its internal type list, in
// declaration order.
const allTypesString = "{S,SS,N,NS,B,BS,BOOL,NULL,L,M,HD,DOUBLE,FLOAT,HDS,FS,DOUBLESET,DICT,INT,DECIMAL,INTSET,DECIMALSET}"

// typeOrder is DynamoDB's declaration order of the public types.
var typeOrder = [...]av.Type{av.S, av.SS, av.N, av.NS, av.B, av.BS, av.BOOL, av.NULL, av.L, av.M}

// String renders a type set as DynamoDB does: a lone type bare, several in
// braces.
func (ts typeSet) String() string {
	if ts == tsAll {
		return allTypesString
	}
	var names []string
	for _, t := range typeOrder {
		if ts&(typeSet(1)<<t) != 0 {
			names = append(names, t.String())
		}
	}
	if len(names) == 1 {
		return names[0]
	}
	return "{" + strings.Join(names, ",") + "}"
}

// operator describes an operator or function for validation, mirroring
// DynamoDB's operator table.
type operator struct {
	name      string
	operands  int  // required number of operands
	orMore    bool // IN takes one or more after the first
	accepts   typeSet
	allowNull bool // missing attributes are acceptable operands
	returns   typeSet
}

var (
	opCompare = [...]operator{
		opEQ: {"=", 2, false, tsAll, true, tsBOOL},
		opNE: {"<>", 2, false, tsAll, true, tsBOOL},
		opLT: {"<", 2, false, tsOrdered, true, tsBOOL},
		opLE: {"<=", 2, false, tsOrdered, true, tsBOOL},
		opGT: {">", 2, false, tsOrdered, true, tsBOOL},
		opGE: {">=", 2, false, tsOrdered, true, tsBOOL},
	}
	opBetween = operator{"BETWEEN", 3, false, tsOrdered, true, tsBOOL}
	opIn      = operator{"IN", 1, true, tsAll, true, tsBOOL}
	opAnd     = operator{"AND", 2, false, tsBOOL, false, tsBOOL}
	opOr      = operator{"OR", 2, false, tsBOOL, false, tsBOOL}
	opNot     = operator{"NOT", 1, false, tsBOOL, false, tsBOOL}
	// opArith is indexed by op - opPlus.
	opArith = [...]operator{
		0:                {"+", 2, false, tsN, false, tsN},
		opMinus - opPlus: {"-", 2, false, tsN, false, tsN},
	}
	opFuncs = [...]operator{
		fnAttributeExists:    {"attribute_exists", 1, false, tsAll, true, tsBOOL},
		fnAttributeNotExists: {"attribute_not_exists", 1, false, tsAll, true, tsBOOL},
		fnAttributeType:      {"attribute_type", 2, false, tsAll, true, tsBOOL},
		fnBeginsWith:         {"begins_with", 2, false, tsS | tsB, true, tsBOOL},
		fnContains:           {"contains", 2, false, tsAll, true, tsBOOL},
		fnSize:               {"size", 1, false, tsIter, true, tsN},
		fnIfNotExists:        {"if_not_exists", 2, false, tsAll, true, tsAll},
		fnListAppend:         {"list_append", 2, false, tsL, false, tsL},
	}
)

// operatorOf returns the operator of an operator node.
func (n *node) operator() *operator {
	switch n.kind {
	case nCompare:
		return &opCompare[n.op]
	case nBetween:
		return &opBetween
	case nIn:
		return &opIn
	case nAnd:
		return &opAnd
	case nOr:
		return &opOr
	case nNot:
		return &opNot
	case nArith:
		return &opArith[n.op-opPlus]
	case nFunc:
		return &opFuncs[n.fn]
	}
	return nil
}

// possibleTypes is what validation knows of the types a node can produce.
func (n *node) possibleTypes() typeSet {
	switch n.kind {
	case nPath:
		return tsAll
	case nValue:
		return typeOf(n.val)
	}
	return n.operator().returns
}
