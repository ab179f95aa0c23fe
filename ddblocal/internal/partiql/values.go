package partiql

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"lastro/ddblocal/internal/av"
)

// IsValue reports whether e denotes a value (a literal, a parameter or a
// literal collection) rather than a path or an operation.
func IsValue(e Expr) bool {
	switch e := e.(type) {
	case *Lit:
		return e.Kind != LitMissing
	case *Param, *Bag:
		return true
	case *Tuple:
		for i := range e.Keys {
			if !IsValue(e.Keys[i]) || !IsValue(e.Vals[i]) {
				return false
			}
		}
		return true
	case *List:
		for _, x := range e.Elems {
			if !IsValue(x) {
				return false
			}
		}
		return true
	}
	return false
}

// Value converts a value expression into an attribute value. params are
// the request's parameters, already validated.
func Value(e Expr, params []*av.Value) (*av.Value, error) {
	return value(e, params, "root")
}

// Item converts the value of an INSERT into an item. DynamoDB names the
// place of a bad value from each attribute's own value, so the attributes
// of the item itself are all "root".
func Item(e Expr, params []*av.Value) (av.Item, error) {
	if tu, ok := e.(*Tuple); ok {
		v, err := tuple(tu, params, "root", "root")
		if err != nil {
			return nil, err
		}
		return v.Map, nil
	}
	v, err := value(e, params, "root")
	if err != nil {
		return nil, err
	}
	if v.T != av.M {
		return nil, &Error{Msg: "Unsupported format in item expression. Please use struct format {...} to express item values for insert statement."}
	}
	return v.Map, nil
}

func value(e Expr, params []*av.Value, at string) (*av.Value, error) {
	switch e := e.(type) {
	case *Lit:
		switch e.Kind {
		case LitString:
			return av.Str(e.Text), nil
		case LitNumber:
			n, err := av.ParseNumber(e.Text)
			if err != nil {
				var ae *av.Error
				if errors.As(err, &ae) {
					return nil, &Error{Msg: ae.Msg + " under " + at}
				}
				return nil, err
			}
			return av.Num(n), nil
		case LitBool:
			return av.Bool(e.Bool), nil
		case LitNull:
			return av.Null(), nil
		}
	case *Param:
		if e.Index >= len(params) {
			return nil, &Error{Msg: "Number of parameters in request and statement don't match."}
		}
		return params[e.Index], nil
	case *Tuple:
		return tuple(e, params, at, at+".")
	case *List:
		l := make([]*av.Value, len(e.Elems))
		for i, x := range e.Elems {
			v, err := value(x, params, at+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return &av.Value{T: av.L, List: l}, nil
	case *Bag:
		return bag(e, params, at)
	}
	return nil, errorf("Unsupported data type: %s under key %s at %s", describe(e), at, PosOf(e))
}

// tuple converts {'k': v, ...}; each value is at prefix+k (prefix alone
// when it does not end in a dot).
func tuple(e *Tuple, params []*av.Value, at, prefix string) (*av.Value, error) {
	m := make(map[string]*av.Value, len(e.Keys))
	for i, k := range e.Keys {
		kv, err := value(k, params, at)
		if err != nil {
			return nil, err
		}
		if kv.T != av.S {
			return nil, errorf("Tuple keys must be of type String. Actual type: %s under %s", typeWord(kv), at)
		}
		if kv.Str == "" {
			// Stored, the attribute could never be named by a path.
			return nil, &Error{Msg: av.MsgEmptyName}
		}
		if _, dup := m[kv.Str]; dup {
			return nil, errorf("Duplicate keys in tuple. Key: %s under %s", kv.Str, at)
		}
		where := prefix
		if strings.HasSuffix(prefix, ".") {
			where += kv.Str
		}
		v, err := value(e.Vals[i], params, where)
		if err != nil {
			return nil, err
		}
		m[kv.Str] = v
	}
	return &av.Value{T: av.M, Map: m}, nil
}

// bag converts <<...>> into a string or number set.
func bag(b *Bag, params []*av.Value, at string) (*av.Value, error) {
	if len(b.Elems) == 0 {
		return nil, &Error{Msg: "Empty bags are not supported"}
	}
	var t av.Type
	var members []string
	var written []string
	for _, x := range b.Elems {
		v, err := value(x, params, at)
		if err != nil {
			return nil, err
		}
		var mt av.Type
		switch v.T {
		case av.S:
			mt = av.SS
		case av.N:
			mt = av.NS
		default:
			return nil, &Error{Msg: "Unsupported data type in Bag. DynamoDB only supports either numbers or strings in bags"}
		}
		if t != 0 && t != mt {
			return nil, &Error{Msg: "Unsupported data type in Bag. DynamoDB only supports either numbers or strings in bags"}
		}
		t = mt
		members = append(members, v.Str)
		if l, ok := x.(*Lit); ok {
			written = append(written, l.Text)
		} else {
			written = append(written, v.Str)
		}
	}
	seen := map[string]bool{}
	for _, m := range members {
		// Members are canonical already, so equal numbers have equal text.
		if seen[m] {
			return nil, errorf("One or more parameter values were invalid: Input collection [%s] contains duplicates.", strings.Join(written, ", "))
		}
		seen[m] = true
	}
	sort.Strings(members)
	return &av.Value{T: t, Strs: members}, nil
}

func typeWord(v *av.Value) string {
	switch v.T {
	case av.N:
		return "DECIMAL"
	case av.BOOL:
		return "BOOL"
	case av.NULL:
		return "NULL"
	case av.M:
		return "STRUCT"
	case av.L:
		return "LIST"
	}
	return v.T.String()
}
