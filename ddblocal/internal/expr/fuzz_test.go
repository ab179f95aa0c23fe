package expr

import (
	"testing"

	"lastro/ddblocal/internal/av"
)

// FuzzParse feeds arbitrary text to every parser, and evaluates or applies
// whatever parses. Nothing may panic, and every error must be an *Error.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"a = :s", "#a.b[1] <> :n AND NOT (c < :n OR begins_with(d, :s))", "size(a) BETWEEN :n AND :n5",
		"a IN (:s, :n)", "attribute_type(a, :typeS)", "((a = :s))", "SET a = b + :n, c = list_append(if_not_exists(c, :l), :l)",
		"REMOVE a[1], b.c ADD d :n DELETE e :ss", "SET a[3].#b = :s", "a, b.c[2], #d", "!!!", "a.", "a[", "SET",
		"p = :s AND r BETWEEN :n AND :n5", "contains(a, :s)", "ü", "#", ":", "a[99999999999]",
	} {
		f.Add(s)
	}
	vals := item(f, commonValues)
	it := item(f, `{"a": {"L": [{"N": "1"}, {"M": {"b": {"S": "x"}}}]}, "b": {"M": {"c": {"SS": ["a"]}}}, "c": {"N": "2"}, "s": {"S": "str"}}`)
	check := func(t *testing.T, s string, err error) {
		if err == nil {
			return
		}
		if _, ok := err.(*Error); !ok {
			t.Fatalf("%q: error %T %v", s, err, err)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := NewAttrs(commonNames, vals)
		c, err := ParseCondition(KindCondition, s, a)
		check(t, s, err)
		if err == nil {
			c.Eval(it)
			c.Eval(nil)
			c.Paths()
		}
		u, err := ParseUpdate(s, NewAttrs(commonNames, vals))
		check(t, s, err)
		if err == nil {
			_, err = u.Apply(it)
			check(t, s, err)
			_, err = u.ApplyMissing(av.Item{"k": av.Str("1")})
			check(t, s, err)
			ProjectPaths(it, u.Paths())
		}
		p, err := ParseProjection(s, NewAttrs(commonNames, nil))
		check(t, s, err)
		if err == nil {
			p.Apply(it)
		}
		k, err := ParseKeyConditionExpr(s, NewAttrs(commonNames, vals))
		check(t, s, err)
		if err == nil {
			kc, err := k.Bind(KeySchema{Hash: "p", HashType: av.S, Range: "r", RangeType: av.N})
			check(t, s, err)
			if err == nil {
				kc.Match(av.Num("1"))
			}
		}
		check(t, s, a.CheckUnused())
	})
}
