package expr

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"

	"lastro/ddblocal/internal/av"
)

// validTypeName reports whether s names a type attribute_type can test.
func validTypeName(s string) bool {
	t, ok := av.ParseType(s)
	return ok && t != 0
}

// describe renders a value as DynamoDB does in BETWEEN errors:
// "AttributeValue: {N:5}".
func describe(v *av.Value) string {
	var s string
	switch v.T {
	case av.B:
		s = base64.StdEncoding.EncodeToString(v.Bin)
	default:
		s = v.Str
	}
	return "AttributeValue: {" + v.T.String() + ":" + s + "}"
}

// sizes caches the values size() returns for small sizes, so that
// evaluating size() usually allocates nothing (values are immutable and
// can be shared).
var sizes = func() (s [256]*av.Value) {
	for i := range s {
		s[i] = av.Num(strconv.Itoa(i))
	}
	return s
}()

func sizeValue(n int) *av.Value {
	if n < len(sizes) {
		return sizes[n]
	}
	return av.Num(strconv.Itoa(n))
}

// evalCond evaluates a condition against an item. Conditions never fail at
// run time: comparisons of missing attributes or of mismatched types are
// simply false, as in DynamoDB.
func evalCond(n *node, item av.Item) bool {
	switch n.kind {
	case nAnd:
		return evalCond(n.args[0], item) && evalCond(n.args[1], item)
	case nOr:
		return evalCond(n.args[0], item) || evalCond(n.args[1], item)
	case nNot:
		return !evalCond(n.args[0], item)
	case nCompare:
		l, r := evalOperand(n.args[0], item), evalOperand(n.args[1], item)
		switch n.op {
		case opEQ:
			return l != nil && r != nil && av.Same(l, r)
		case opNE:
			return !(l != nil && r != nil && av.Same(l, r))
		}
		c, ok := av.Compare(l, r)
		if !ok {
			return false
		}
		switch n.op {
		case opLT:
			return c < 0
		case opLE:
			return c <= 0
		case opGT:
			return c > 0
		}
		return c >= 0
	case nBetween:
		v := evalOperand(n.args[0], item)
		lo, hi := evalOperand(n.args[1], item), evalOperand(n.args[2], item)
		cl, ok1 := av.Compare(v, lo)
		ch, ok2 := av.Compare(v, hi)
		return ok1 && ok2 && cl >= 0 && ch <= 0
	case nIn:
		v := evalOperand(n.args[0], item)
		if v == nil {
			return false
		}
		for _, a := range n.args[1:] {
			if w := evalOperand(a, item); w != nil && av.Same(v, w) {
				return true
			}
		}
		return false
	case nFunc:
		return evalFunc(n, item)
	}
	return false
}

func evalFunc(n *node, item av.Item) bool {
	switch n.fn {
	case fnAttributeExists:
		return evalOperand(n.args[0], item) != nil
	case fnAttributeNotExists:
		return evalOperand(n.args[0], item) == nil
	case fnAttributeType:
		v, t := evalOperand(n.args[0], item), evalOperand(n.args[1], item)
		return v != nil && t != nil && t.T == av.S && v.T.String() == t.Str
	case fnBeginsWith:
		return beginsWith(evalOperand(n.args[0], item), evalOperand(n.args[1], item))
	case fnContains:
		return contains(evalOperand(n.args[0], item), evalOperand(n.args[1], item))
	}
	return false
}

// beginsWith is true when v is a string or binary starting with p, of the
// same type.
func beginsWith(v, p *av.Value) bool {
	if v == nil || p == nil || v.T != p.T {
		return false
	}
	switch v.T {
	case av.S:
		return strings.HasPrefix(v.Str, p.Str)
	case av.B:
		return bytes.HasPrefix(v.Bin, p.Bin)
	}
	return false
}

// contains is true for a substring of a string, a byte sequence within a
// binary, a member of a set of the operand's type, or an element of a
// list.
func contains(v, x *av.Value) bool {
	if v == nil || x == nil {
		return false
	}
	switch v.T {
	case av.S:
		return x.T == av.S && strings.Contains(v.Str, x.Str)
	case av.B:
		return x.T == av.B && bytes.Contains(v.Bin, x.Bin)
	case av.SS:
		return x.T == av.S && containsString(v.Strs, x.Str)
	case av.NS:
		return x.T == av.N && containsString(v.Strs, x.Str)
	case av.BS:
		if x.T != av.B {
			return false
		}
		for _, b := range v.Bins {
			if bytes.Equal(b, x.Bin) {
				return true
			}
		}
		return false
	case av.L:
		for _, e := range v.List {
			if av.Same(e, x) {
				return true
			}
		}
	}
	return false
}

func containsString(set []string, s string) bool {
	for _, e := range set {
		if e == s {
			return true
		}
	}
	return false
}

// evalOperand evaluates an operand of a condition; nil means the
// attribute is missing (or size() of something without a size).
func evalOperand(n *node, item av.Item) *av.Value {
	switch n.kind {
	case nPath:
		return n.path.lookup(item)
	case nValue:
		return n.val
	case nFunc:
		if n.fn == fnSize {
			return size(evalOperand(n.args[0], item))
		}
	}
	return nil
}

// size is the size() function: the length of a string (in UTF-16 code
// units, as DynamoDB's Java implementation counts) or a binary, or the
// number of elements of a set, list or map. Other types have no size.
func size(v *av.Value) *av.Value {
	if v == nil {
		return nil
	}
	switch v.T {
	case av.S:
		return sizeValue(javaLen(v.Str))
	case av.B:
		return sizeValue(len(v.Bin))
	case av.SS, av.NS:
		return sizeValue(len(v.Strs))
	case av.BS:
		return sizeValue(len(v.Bins))
	case av.L:
		return sizeValue(len(v.List))
	case av.M:
		return sizeValue(len(v.Map))
	}
	return nil
}
