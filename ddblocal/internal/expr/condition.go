package expr

import "lastro/ddblocal/internal/av"

// Condition is a parsed and validated ConditionExpression,
// FilterExpression or KeyConditionExpression. It is immutable and safe for
// concurrent use.
type Condition struct {
	root *node
}

// ParseCondition parses and validates a condition; kind is
// KindCondition or KindFilter and prefixes error messages.
func ParseCondition(kind, s string, a *Attrs) (*Condition, error) {
	root, err := parse(kind, s, (*parser).condition)
	if err != nil {
		return nil, err
	}
	c := checker{kind: kind, attrs: a}
	if err := c.listenCond(root, 0); err != nil {
		return nil, err
	}
	if err := c.validate(root); err != nil {
		return nil, err
	}
	return &Condition{root: root}, nil
}

// Eval reports whether the item satisfies the condition. A nil item is an
// item that does not exist.
func (c *Condition) Eval(item av.Item) bool { return evalCond(c.root, item) }

// Paths returns every document path the condition refers to, in textual
// order (the server uses them to reject nested access to key attributes
// and filters on key attributes).
func (c *Condition) Paths() []Path {
	var paths []Path
	walk(c.root, func(n *node) {
		if n.kind == nPath {
			paths = append(paths, n.path)
		}
	})
	return paths
}

// TopNames returns the distinct top-level attribute names the condition
// refers to, in textual order.
func (c *Condition) TopNames() []string { return topNames(c.Paths()) }

func walk(n *node, f func(*node)) {
	f(n)
	for _, a := range n.args {
		walk(a, f)
	}
}

func topNames(paths []Path) []string {
	var names []string
	seen := make(map[string]bool, len(paths))
	for _, p := range paths {
		if t := p.Top(); !seen[t] {
			seen[t] = true
			names = append(names, t)
		}
	}
	return names
}
