package expr

import (
	"slices"

	"lastro/ddblocal/internal/av"
)

// actionKind is the section an update action belongs to.
type actionKind uint8

const (
	actSet actionKind = iota
	actRemove
	actAdd
	actDelete
)

var sectionNames = [...]string{"SET", "REMOVE", "ADD", "DELETE"}

// action is one action of an update expression.
type action struct {
	kind   actionKind
	target *node // nPath
	value  *node // SET: value tree; ADD, DELETE: nValue; REMOVE: nil
}

type section struct {
	kind    actionKind
	actions []*action
}

// update parses an update expression into its sections.
func (p *parser) update() []section {
	var secs []section
	for {
		var kind actionKind
		switch p.cur().kind {
		case tSet:
			kind = actSet
		case tRemove:
			kind = actRemove
		case tAdd:
			kind = actAdd
		case tDelete:
			kind = actDelete
		default:
			if len(secs) == 0 {
				p.fail()
			}
			return secs
		}
		p.pos++
		sec := section{kind: kind}
		for {
			a := &action{kind: kind, target: p.path()}
			switch kind {
			case actSet:
				p.expect(tEQ)
				a.value = p.setValue()
			case actAdd, actDelete:
				t := p.cur()
				if t.kind != tValue {
					p.fail()
				}
				p.pos++
				a.value = &node{kind: nValue, name: p.text(t)}
			}
			sec.actions = append(sec.actions, a)
			if !p.at(tComma) {
				break
			}
			p.pos++
		}
		secs = append(secs, sec)
	}
}

// Update is a parsed and validated UpdateExpression. It is immutable and
// safe for concurrent use.
type Update struct {
	actions []*action // textual order
	root    *updTree
}

// updTree holds the actions by path, to apply them in one walk of the
// item. Children of a node are all names or all list indexes (conflicting
// paths are rejected), indexes sorted.
type updTree struct {
	kids        []*updKid
	list        bool
	onlyRemoves bool // every action below is a REMOVE
}

type updKid struct {
	elem PathElement
	sub  *updTree // intermediate step
	act  *action  // leaf
}

// ParseUpdate parses and validates an update expression.
func ParseUpdate(s string, a *Attrs) (*Update, error) {
	secs, err := parse(KindUpdate, s, (*parser).update)
	if err != nil {
		return nil, err
	}
	c := checker{kind: KindUpdate, attrs: a}
	var actions []*action
	var seen [4]bool
	for _, sec := range secs {
		for _, act := range sec.actions {
			if err := c.listenPath(act.target); err != nil {
				return nil, err
			}
			if act.kind == actSet {
				if err := c.listenSetValue(act.value, 0); err != nil {
					return nil, err
				}
			}
		}
		if seen[sec.kind] {
			return nil, c.fail(detail(`The "` + sectionNames[sec.kind] + `" section can only be used once in an update expression`))
		}
		seen[sec.kind] = true
		actions = append(actions, sec.actions...)
	}
	// DynamoDB collects the actions in reverse order before validating
	// them, which decides which problem is reported when there are several.
	var tree ptree
	for _, act := range slices.Backward(actions) {
		if err := c.resolvePath(act.target); err != nil {
			return nil, err
		}
		if stem, other := tree.insert(act.target.path); stem != "" {
			return nil, c.fail(detail(stem, "path one", act.target.path.String(), "path two", other.String()))
		}
	}
	for _, act := range slices.Backward(actions) {
		if act.value == nil {
			continue
		}
		if err := c.validate(act.value); err != nil {
			return nil, err
		}
		if err := c.checkAddDelete(act); err != nil {
			return nil, err
		}
	}
	u := &Update{actions: actions, root: &updTree{}}
	for _, act := range actions {
		u.root.add(act)
	}
	u.root.finish()
	return u, nil
}

// javaTypeNames are DynamoDB's internal type names, which ADD and DELETE
// operand errors print.
var javaTypeNames = [...]string{
	av.S: "STRING", av.N: "NUMBER", av.B: "BINARY", av.SS: "STRING_SET", av.NS: "NUMBER_SET",
	av.BS: "BINARY_SET", av.M: "MAP", av.L: "LIST", av.NULL: "NULL", av.BOOL: "BOOLEAN",
}

// checkAddDelete checks the operand type of ADD (a number or a set) and
// DELETE (a set).
func (c *checker) checkAddDelete(act *action) error {
	if act.kind != actAdd && act.kind != actDelete {
		return nil
	}
	t := act.value.val.T
	switch {
	case act.kind == actAdd && t != av.N && !t.IsSet():
		return c.fail(detail(msgOperandType, "operator", "ADD", "operand type", javaTypeNames[t], "typeSet", "ALLOWED_FOR_ADD_OPERAND"))
	case act.kind == actDelete && !t.IsSet():
		return c.fail(detail(msgOperandType, "operator", "DELETE", "operand type", javaTypeNames[t], "typeSet", "ALLOWED_FOR_DELETE_OPERAND"))
	}
	return nil
}

func (t *updTree) add(act *action) {
	node := t
	elems := act.target.path.elems
	for i, e := range elems {
		node.list = e.IsIndex
		var k *updKid
		for _, kid := range node.kids {
			if kid.elem == e {
				k = kid
				break
			}
		}
		if k == nil {
			k = &updKid{elem: e}
			node.kids = append(node.kids, k)
		}
		if i == len(elems)-1 {
			k.act = act
			return
		}
		if k.sub == nil {
			k.sub = &updTree{}
		}
		node = k.sub
	}
}

// finish sorts list indexes and computes onlyRemoves.
func (t *updTree) finish() bool {
	if t.list {
		slices.SortFunc(t.kids, func(a, b *updKid) int { return a.elem.Index - b.elem.Index })
	}
	t.onlyRemoves = true
	for _, k := range t.kids {
		if k.act != nil {
			t.onlyRemoves = t.onlyRemoves && k.act.kind == actRemove
		} else {
			t.onlyRemoves = k.sub.finish() && t.onlyRemoves
		}
	}
	return t.onlyRemoves
}

// Paths returns the paths the update sets, removes, adds to or deletes
// from, in textual order. The server uses them to refuse changes to key
// attributes and to compute UPDATED_OLD and UPDATED_NEW.
func (u *Update) Paths() []Path {
	paths := make([]Path, len(u.actions))
	for i, a := range u.actions {
		paths[i] = a.target.path
	}
	return paths
}

// ReadPaths returns the paths the update's values read (SET right-hand
// sides), in textual order.
func (u *Update) ReadPaths() []Path {
	var paths []Path
	for _, a := range u.actions {
		if a.kind == actSet {
			walk(a.value, func(n *node) {
				if n.kind == nPath {
					paths = append(paths, n.path)
				}
			})
		}
	}
	return paths
}
