package expr

import (
	"strconv"
	"strings"

	"lastro/ddblocal/internal/av"
)

// PathElement is one step of a document path: a map key (or the top-level
// attribute name) or a list index.
type PathElement struct {
	Name    string
	Index   int
	IsIndex bool
}

// String renders the element as DynamoDB does in messages: the name, or
// the index in brackets.
func (e PathElement) String() string {
	if e.IsIndex {
		return "[" + strconv.Itoa(e.Index) + "]"
	}
	return e.Name
}

// Path is a document path: a top-level attribute name followed by map keys
// and list indexes, with expression attribute names already substituted.
type Path struct {
	elems []PathElement
}

// NewPath builds a path; the first element must be a name.
func NewPath(elems ...PathElement) Path { return Path{elems: elems} }

// Top returns the top-level attribute name.
func (p Path) Top() string {
	if len(p.elems) == 0 {
		return ""
	}
	return p.elems[0].Name
}

// Len returns the number of elements.
func (p Path) Len() int { return len(p.elems) }

// Elements returns the elements; callers must not modify them.
func (p Path) Elements() []PathElement { return p.elems }

// Nested reports whether the path goes below its top-level attribute.
func (p Path) Nested() bool { return len(p.elems) > 1 }

// String renders the path the way DynamoDB prints document paths in its
// messages, e.g. "[a, b, [1]]".
func (p Path) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, e := range p.elems {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.String())
	}
	b.WriteByte(']')
	return b.String()
}

// Equal reports whether two paths are the same.
func (p Path) Equal(q Path) bool {
	if len(p.elems) != len(q.elems) {
		return false
	}
	for i := range p.elems {
		if p.elems[i] != q.elems[i] {
			return false
		}
	}
	return true
}

// lookup returns the value at the path in the item, or nil when it is
// missing or an intermediate value has the wrong type.
func (p Path) lookup(item av.Item) *av.Value {
	v := item[p.elems[0].Name]
	for _, e := range p.elems[1:] {
		if v == nil {
			return nil
		}
		switch {
		case e.IsIndex && v.T == av.L:
			if e.Index >= len(v.List) {
				return nil
			}
			v = v.List[e.Index]
		case !e.IsIndex && v.T == av.M:
			v = v.Map[e.Name]
		default:
			return nil
		}
	}
	return v
}
