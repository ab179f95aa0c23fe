package expr

import (
	"slices"
	"unicode/utf16"
)

// ptree is a tree of document paths, used to reject overlapping or
// conflicting paths in update and projection expressions, and to project
// items.
//
// DynamoDB keeps each node's children in a Java HashMap and, when it
// reports an overlap or a conflict, names as "path two" the path found by
// descending through the first child of each node in the map's iteration
// order. To give the same messages, children remember their Java hash code
// and first() replays HashMap's bucket order.
type ptree struct {
	kids []*ptKid // insertion order
}

type ptKid struct {
	elem PathElement
	hash uint32 // the element's Java hashCode
	sub  *ptree // nil for a leaf (the path ends here)
}

// elemHash is the hashCode of DynamoDB's path element classes, built with
// Apache Commons' HashCodeBuilder(8191, 127) over the name or the index.
func elemHash(e PathElement) uint32 {
	const seed = 8191 * 127
	if e.IsIndex {
		return seed + uint32(int32(e.Index))
	}
	return seed + javaStringHash(e.Name)
}

// javaStringHash is Java's String.hashCode, over UTF-16 code units.
func javaStringHash(s string) uint32 {
	var h uint32
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			h = 31*h + uint32(r1)
			h = 31*h + uint32(r2)
			continue
		}
		h = 31*h + uint32(r)
	}
	return h
}

func (t *ptree) find(e PathElement) *ptKid {
	for _, k := range t.kids {
		if k.elem == e {
			return k
		}
	}
	return nil
}

// first returns the child a java.util.HashMap holding t's children would
// iterate first: the lowest bucket of a table of the size HashMap would
// have grown to (16, doubled whenever it is more than 3/4 full), ties going
// to the earliest inserted.
func (t *ptree) first() *ptKid {
	capacity := 16
	for len(t.kids) > capacity*3/4 {
		capacity *= 2
	}
	var best *ptKid
	bestBucket := capacity
	for _, k := range t.kids {
		if b := int((k.hash ^ k.hash>>16) & uint32(capacity-1)); b < bestBucket {
			best, bestBucket = k, b
		}
	}
	return best
}

func newKid(elems []PathElement) *ptKid {
	k := &ptKid{elem: elems[0], hash: elemHash(elems[0])}
	if len(elems) > 1 {
		k.sub = &ptree{kids: []*ptKid{newKid(elems[1:])}}
	}
	return k
}

// insert adds p to the tree. When p overlaps a path already there (one is
// a prefix of the other) or conflicts with one (a map key where another
// has a list index), it returns the message stem and the other path.
func (t *ptree) insert(p Path) (stem string, other Path) {
	node := t
	for depth := 0; ; depth++ {
		e := p.elems[depth]
		k := node.find(e)
		if k == nil {
			if len(node.kids) > 0 && node.first().elem.IsIndex != e.IsIndex {
				return msgPathConflict, node.leafPath(p, depth)
			}
			node.kids = append(node.kids, newKid(p.elems[depth:]))
			return "", Path{}
		}
		if k.sub == nil || depth+1 == len(p.elems) {
			return msgPathOverlap, node.leafPath(p, depth)
		}
		node = k.sub
	}
}

// leafPath is the first depth elements of p followed by the first-child
// descent from node, the way DynamoDB names the other path of a clash.
func (t *ptree) leafPath(p Path, depth int) Path {
	elems := slices.Clone(p.elems[:depth])
	for node := t; node != nil && len(node.kids) > 0; {
		k := node.first()
		elems = append(elems, k.elem)
		node = k.sub
	}
	return Path{elems: elems}
}

// add inserts p for projection purposes only, where clashes cannot occur
// or do not matter: a path already covered by a shorter one is dropped, a
// path covering deeper ones replaces them.
func (t *ptree) add(p Path) {
	node := t
	for depth, e := range p.elems {
		k := node.find(e)
		if k == nil {
			node.kids = append(node.kids, newKid(p.elems[depth:]))
			return
		}
		if k.sub == nil {
			return
		}
		if depth+1 == len(p.elems) {
			k.sub = nil
			return
		}
		node = k.sub
	}
}

// sortIndexes orders list-index children by index, which is the order
// projections and updates produce list elements in.
func (t *ptree) sortIndexes() {
	if len(t.kids) > 1 && t.kids[0].elem.IsIndex {
		slices.SortFunc(t.kids, func(a, b *ptKid) int { return a.elem.Index - b.elem.Index })
	}
	for _, k := range t.kids {
		if k.sub != nil {
			k.sub.sortIndexes()
		}
	}
}
