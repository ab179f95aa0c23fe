package expr

import "strconv"

// checker runs the semantic passes over a parse tree.
type checker struct {
	kind      string
	attrs     *Attrs
	operators int
}

func (c *checker) fail(msg string) *Error { return invalid(c.kind, msg) }

// The first semantic pass walks the tree in textual order, as DynamoDB
// walks its parse tree: it rejects reserved words used as names, unknown
// functions and functions used where they are not allowed, and list
// indexes that do not fit an int.

// listenPath checks the elements of a path as written.
func (c *checker) listenPath(n *node) error {
	for _, e := range n.raw {
		switch {
		case e.kind == rawID && isReserved(e.text):
			return c.fail(detail(msgReserved, "reserved keyword", e.text))
		case e.kind == rawIndex && e.index < 0:
			return c.fail(detail(msgListIndex, "index", "["+e.text+"]"))
		}
	}
	return nil
}

// listenCond walks a condition. nesting counts the comparisons and
// function calls enclosing n: a function used as a condition must return
// a boolean, and only size() may appear inside another operation.
func (c *checker) listenCond(n *node, nesting int) error {
	switch n.kind {
	case nPath:
		return c.listenPath(n)
	case nValue:
		return nil
	case nFunc:
		switch {
		case n.fn == fnUnknown:
			return c.fail(detail(msgInvalidFunction, "function", n.name))
		case n.fn.isUpdateFunction():
			return c.fail(detail(msgConditionFunction, "function", n.name))
		case nesting == 0 && opFuncs[n.fn].returns != tsBOOL,
			nesting > 0 && n.fn != fnSize:
			return c.fail(detail(msgFunctionContext, "function", n.name))
		}
		nesting++
	case nCompare, nBetween, nIn:
		nesting++
	}
	for _, a := range n.args {
		if err := c.listenCond(a, nesting); err != nil {
			return err
		}
	}
	return nil
}

// listenSetValue walks the value of a SET action. Only the update
// functions are allowed, and inside another operation only if_not_exists.
func (c *checker) listenSetValue(n *node, nesting int) error {
	switch n.kind {
	case nPath:
		return c.listenPath(n)
	case nValue:
		return nil
	case nFunc:
		switch {
		case n.fn == fnUnknown:
			return c.fail(detail(msgInvalidFunction, "function", n.name))
		case !n.fn.isUpdateFunction():
			return c.fail(detail(msgValueFunction, "function", n.name))
		case nesting > 0 && n.fn != fnIfNotExists:
			return c.fail(detail(msgFunctionContext, "function", n.name))
		}
	}
	for _, a := range n.args {
		if err := c.listenSetValue(a, nesting+1); err != nil {
			return err
		}
	}
	return nil
}

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
			if t.kind != nValue || t.val.T != avS {
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
			if cmp, _ := compareValues(lo.val, hi.val); cmp > 0 {
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
