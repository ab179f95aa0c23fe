package expr

import (
	"strconv"

	"lastro/ddblocal/internal/av"
)

// The second pass validates the tree bottom-up, as DynamoDB does once its
// parse tree is built: placeholders, path depth, operand counts and types,
// and the operator-specific rules.

// resolvePath substitutes "#name" placeholders and checks the depth.
func (c *checker) resolvePath(n *node) error {
	if len(n.raw) > maxPathDepth {
		return c.fail(detail(msgPathTooDeep, "nesting levels", strconv.Itoa(len(n.raw))))
	}
	elems := make([]PathElement, len(n.raw))
	for i, e := range n.raw {
		switch e.kind {
		case rawID:
			elems[i] = PathElement{Name: e.text}
		case rawName:
			name, ok := c.attrs.name(e.text)
			if !ok {
				return c.fail(detail(msgNameMissing, "attribute name", e.text))
			}
			elems[i] = PathElement{Name: name}
		case rawIndex:
			elems[i] = PathElement{Index: e.index, IsIndex: true}
		}
	}
	n.path = Path{elems: elems}
	return nil
}

// validate checks n and its operands, children first.
func (c *checker) validate(n *node) error {
	switch n.kind {
	case nPath:
		return c.resolvePath(n)
	case nValue:
		v, ok := c.attrs.value(n.name)
		if !ok {
			return c.fail(detail(msgValueMissing, "attribute value", n.name))
		}
		n.val = v
		return nil
	}
	for _, a := range n.args {
		if err := c.validate(a); err != nil {
			return err
		}
	}
	if err := c.validateOperator(n); err != nil {
		return err
	}
	c.operators++
	if c.operators > maxOperators {
		return c.fail(detail(msgTooManyOperators, "operator count", strconv.Itoa(c.operators)))
	}
	return nil
}

// attributeTypes is the list attribute_type accepts, as DynamoDB prints it.
const attributeTypes = "{S,SS,N,NS,B,BS,BOOL,NULL,L,M}"

func (c *checker) validateOperator(n *node) error {
	op := n.operator()
	count := len(n.args)
	if count != op.operands && !(op.orMore && count > op.operands) {
		return c.fail(detail(msgOperandCount, "operator or function", op.name, "number of operands", strconv.Itoa(count)))
	}
	for _, a := range n.args {
		if t := a.possibleTypes(); t&op.accepts == 0 {
			return c.fail(detail(msgOperandType, "operator or function", op.name, "operand type", t.String()))
		}
	}
	if op.allowNull && count > 1 && n.args[0].kind == nPath {
		first := n.args[0].path
		for _, a := range n.args[1:] {
			if a.kind == nPath && a.path.Equal(first) {
				return c.fail(detail(msgRepeatPath, "operator", op.name, "first operand", first.String()))
			}
		}
	}
	switch n.kind {
	case nFunc:
		switch n.fn {
		case fnAttributeExists, fnAttributeNotExists, fnIfNotExists:
			if n.args[0].kind != nPath {
				return c.fail(detail(msgNeedPath, "operator or function", op.name))
			}
		case fnAttributeType:
			t := n.args[1]
			if t.kind != nValue || t.val.T != av.S {
				return c.fail(detail(msgOperandType, "operator or function", op.name, "operand type", t.possibleTypes().String()))
			}
			if !validTypeName(t.val.Str) {
				return c.fail(detail(msgAttrTypeName, "type", t.val.Str, "valid types", attributeTypes))
			}
		}
	case nBetween:
		lo, hi := n.args[1], n.args[2]
		if lo.kind == nValue && hi.kind == nValue {
			if lo.val.T != hi.val.T {
				return c.fail(detail(msgBetweenTypes, "lower bound operand", describe(lo.val), "upper bound operand", describe(hi.val)))
			}
			if cmp, _ := av.Compare(lo.val, hi.val); cmp > 0 {
				return c.fail(detail(msgBetweenOrder, "lower bound operand", describe(lo.val), "upper bound operand", describe(hi.val)))
			}
		}
	case nIn:
		if count > maxInOperands+1 {
			return c.fail(detail(msgInTooMany, "number of operands", strconv.Itoa(count-1)))
		}
	}
	return nil
}
