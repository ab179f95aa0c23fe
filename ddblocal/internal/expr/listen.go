package expr

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
