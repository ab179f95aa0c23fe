package expr

import (
	"slices"

	"lastro/ddblocal/internal/av"
)

// Apply applies the update to an existing item and returns the new item.
// The input is not modified; unchanged values are shared. Every value is
// computed from the item as it was before the update, and list indexes
// refer to the original positions.
func (u *Update) Apply(item av.Item) (av.Item, error) {
	return u.apply(item, false)
}

// ApplyMissing applies the update to an item that does not exist yet:
// key holds its key attributes (which SET values may read). It differs
// from Apply in one DynamoDB quirk: removing a nested attribute below a
// missing one is an error for an existing item but is ignored here.
func (u *Update) ApplyMissing(key av.Item) (av.Item, error) {
	return u.apply(key, true)
}

func (u *Update) apply(item av.Item, missing bool) (av.Item, error) {
	out := make(av.Item, len(item)+len(u.root.kids))
	for k, v := range item {
		out[k] = v
	}
	for _, k := range u.root.kids {
		res, err := u.applyKid(k, item[k.elem.Name], item, missing, 1)
		if err != nil {
			return nil, err
		}
		if res == nil {
			delete(out, k.elem.Name)
		} else {
			out[k.elem.Name] = res
		}
	}
	return out, nil
}

// applyKid returns the new value of a child whose current value is cur
// (nil when absent); a nil result removes it. level is the nesting level
// of the child, top-level attributes being at level 1.
func (u *Update) applyKid(k *updKid, cur *av.Value, item av.Item, missing bool, level int) (*av.Value, error) {
	if k.act != nil {
		return applyAction(k.act, cur, item, level)
	}
	if cur == nil {
		if missing && k.sub.onlyRemoves {
			return nil, nil
		}
		return nil, &Error{Msg: MsgPathInvalidForUpdate}
	}
	switch {
	case !k.sub.list && cur.T == av.M:
		m := make(map[string]*av.Value, len(cur.Map)+len(k.sub.kids))
		for name, v := range cur.Map {
			m[name] = v
		}
		for _, kid := range k.sub.kids {
			res, err := u.applyKid(kid, cur.Map[kid.elem.Name], item, missing, level+1)
			if err != nil {
				return nil, err
			}
			if res == nil {
				delete(m, kid.elem.Name)
			} else {
				m[kid.elem.Name] = res
			}
		}
		return &av.Value{T: av.M, Map: m}, nil
	case k.sub.list && cur.T == av.L:
		kids := k.sub.kids
		list := make([]*av.Value, 0, len(cur.List)+len(kids))
		ki := 0
		for i, v := range cur.List {
			if ki < len(kids) && kids[ki].elem.Index == i {
				res, err := u.applyKid(kids[ki], v, item, missing, level+1)
				if err != nil {
					return nil, err
				}
				if res != nil {
					list = append(list, res)
				}
				ki++
				continue
			}
			list = append(list, v)
		}
		// Indexes past the end append, in index order.
		for ; ki < len(kids); ki++ {
			res, err := u.applyKid(kids[ki], nil, item, missing, level+1)
			if err != nil {
				return nil, err
			}
			if res != nil {
				list = append(list, res)
			}
		}
		return &av.Value{T: av.L, List: list}, nil
	}
	return nil, &Error{Msg: MsgPathInvalidForUpdate}
}

var (
	errNotFound     = &Error{Msg: MsgAttributeNotFound}
	errOperandType  = &Error{Msg: MsgOperandType}
	errNestingDepth = &Error{Msg: MsgNestingTooDeep}
)

func applyAction(act *action, cur *av.Value, item av.Item, level int) (*av.Value, error) {
	switch act.kind {
	case actRemove:
		return nil, nil
	case actSet:
		v, err := evalValue(act.value, item)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, errNotFound
		}
		if (v.T == av.M || v.T == av.L) && level+depth(v)-1 >= maxPathDepth {
			return nil, errNestingDepth
		}
		return v, nil
	case actAdd:
		v := act.value.val
		switch {
		case cur == nil:
			return v, nil
		case cur.T != v.T:
			return nil, errOperandType
		case v.T == av.N:
			return add(cur, v, false)
		}
		return setUnion(cur, v), nil
	}
	// DELETE
	v := act.value.val
	switch {
	case cur == nil:
		return nil, nil
	case cur.T != v.T:
		return nil, errOperandType
	}
	return setDifference(cur, v), nil
}

// depth is the number of nested maps and lists, v included.
func depth(v *av.Value) int {
	d := 0
	switch v.T {
	case av.M:
		for _, c := range v.Map {
			d = max(d, depth(c))
		}
	case av.L:
		for _, c := range v.List {
			d = max(d, depth(c))
		}
	default:
		return 0
	}
	return d + 1
}

// evalValue evaluates a SET value. Like DynamoDB, it evaluates all the
// operands of an operation before checking them.
func evalValue(n *node, item av.Item) (*av.Value, error) {
	switch n.kind {
	case nPath:
		return n.path.lookup(item), nil
	case nValue:
		return n.val, nil
	}
	a, err := evalValue(n.args[0], item)
	if err != nil {
		return nil, err
	}
	b, err := evalValue(n.args[1], item)
	if err != nil {
		return nil, err
	}
	if n.kind == nFunc && n.fn == fnIfNotExists {
		switch {
		case b == nil:
			return nil, errNotFound
		case a == nil:
			return b, nil
		}
		return a, nil
	}
	want := av.N
	if n.kind == nFunc { // list_append
		want = av.L
	}
	for _, v := range [2]*av.Value{a, b} {
		switch {
		case v == nil:
			return nil, errNotFound
		case v.T != want:
			return nil, errOperandType
		}
	}
	if want == av.L {
		list := make([]*av.Value, 0, len(a.List)+len(b.List))
		list = append(append(list, a.List...), b.List...)
		return &av.Value{T: av.L, List: list}, nil
	}
	return add(a, b, n.op == opMinus)
}

func add(a, b *av.Value, sub bool) (*av.Value, error) {
	s, err := av.AddNumbers(a.Str, b.Str, sub)
	if err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	return av.Num(s), nil
}

// setUnion adds the members of v missing from cur.
func setUnion(cur, v *av.Value) *av.Value {
	out := &av.Value{T: cur.T}
	if cur.T == av.BS {
		out.Bins = slices.Clone(cur.Bins)
		for _, b := range v.Bins {
			if !slices.ContainsFunc(out.Bins, func(x []byte) bool { return string(x) == string(b) }) {
				out.Bins = append(out.Bins, b)
			}
		}
		if len(out.Bins) == len(cur.Bins) {
			return cur
		}
		return out
	}
	out.Strs = slices.Clone(cur.Strs)
	for _, s := range v.Strs {
		if !slices.Contains(out.Strs, s) {
			out.Strs = append(out.Strs, s)
		}
	}
	if len(out.Strs) == len(cur.Strs) {
		return cur
	}
	return out
}

// setDifference removes the members of v from cur; an empty result removes
// the attribute, since sets cannot be empty.
func setDifference(cur, v *av.Value) *av.Value {
	out := &av.Value{T: cur.T}
	if cur.T == av.BS {
		for _, b := range cur.Bins {
			if !slices.ContainsFunc(v.Bins, func(x []byte) bool { return string(x) == string(b) }) {
				out.Bins = append(out.Bins, b)
			}
		}
		switch len(out.Bins) {
		case 0:
			return nil
		case len(cur.Bins):
			return cur
		}
		return out
	}
	for _, s := range cur.Strs {
		if !slices.Contains(v.Strs, s) {
			out.Strs = append(out.Strs, s)
		}
	}
	switch len(out.Strs) {
	case 0:
		return nil
	case len(cur.Strs):
		return cur
	}
	return out
}
