package expr

import (
	"slices"

	"lastro/ddblocal/internal/av"
)

// Projection is a parsed and validated ProjectionExpression. It is
// immutable and safe for concurrent use.
type Projection struct {
	paths []Path // textual order
	tree  *ptree
}

func (p *parser) projection() []*node {
	paths := []*node{p.path()}
	for p.at(tComma) {
		p.pos++
		paths = append(paths, p.path())
	}
	return paths
}

// ParseProjection parses and validates a projection expression.
func ParseProjection(s string, a *Attrs) (*Projection, error) {
	nodes, err := parse(KindProjection, s, (*parser).projection)
	if err != nil {
		return nil, err
	}
	c := checker{kind: KindProjection, attrs: a}
	for _, n := range nodes {
		if err := c.listenPath(n); err != nil {
			return nil, err
		}
	}
	// DynamoDB builds its path tree from the last path to the first.
	tree := &ptree{}
	for _, n := range slices.Backward(nodes) {
		if err := c.resolvePath(n); err != nil {
			return nil, err
		}
		if stem, other := tree.insert(n.path); stem != "" {
			return nil, c.fail(detail(stem, "path one", n.path.String(), "path two", other.String()))
		}
	}
	tree.sortIndexes()
	proj := &Projection{tree: tree, paths: make([]Path, len(nodes))}
	for i, n := range nodes {
		proj.paths[i] = n.path
	}
	return proj, nil
}

// Paths returns the projected paths in textual order.
func (p *Projection) Paths() []Path { return p.paths }

// TopNames returns the distinct top-level attribute names, in textual
// order.
func (p *Projection) TopNames() []string { return topNames(p.paths) }

// Apply returns a new item holding only the projected attributes. Nested
// paths keep their structure: a.b yields a map a holding only b, and list
// elements come out in index order, without gaps, as DynamoDB returns them.
func (p *Projection) Apply(item av.Item) av.Item { return projectItem(p.tree, item) }

// ProjectPaths projects an item on a set of paths, as Projection.Apply
// does; it serves ReturnValues UPDATED_OLD and UPDATED_NEW with
// Update.Paths.
func ProjectPaths(item av.Item, paths []Path) av.Item {
	tree := &ptree{}
	for _, p := range paths {
		if p.Len() > 0 {
			tree.add(p)
		}
	}
	tree.sortIndexes()
	return projectItem(tree, item)
}

func projectItem(t *ptree, item av.Item) av.Item {
	out := make(av.Item, len(t.kids))
	for _, k := range t.kids {
		v := item[k.elem.Name]
		if v == nil {
			continue
		}
		if k.sub != nil {
			if v = project(k.sub, v); v == nil {
				continue
			}
		}
		out[k.elem.Name] = v
	}
	return out
}

// project keeps the parts of v selected by t; nil when nothing is left.
func project(t *ptree, v *av.Value) *av.Value {
	switch {
	case v.T == av.M && !t.kids[0].elem.IsIndex:
		var m map[string]*av.Value
		for _, k := range t.kids {
			c := v.Map[k.elem.Name]
			if c != nil && k.sub != nil {
				c = project(k.sub, c)
			}
			if c == nil {
				continue
			}
			if m == nil {
				m = make(map[string]*av.Value, len(t.kids))
			}
			m[k.elem.Name] = c
		}
		if m == nil {
			return nil
		}
		return &av.Value{T: av.M, Map: m}
	case v.T == av.L && t.kids[0].elem.IsIndex:
		var list []*av.Value
		for _, k := range t.kids { // sorted by index
			if k.elem.Index >= len(v.List) {
				break
			}
			c := v.List[k.elem.Index]
			if k.sub != nil {
				c = project(k.sub, c)
			}
			if c != nil {
				list = append(list, c)
			}
		}
		if list == nil {
			return nil
		}
		return &av.Value{T: av.L, List: list}
	}
	return nil
}
