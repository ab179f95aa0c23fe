package partiql

import (
	"testing"

	"lastro/ddblocal/internal/av"
)

// FuzzParse checks that no input makes the parser or the value converter
// panic, and that every refusal is an *Error.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`SELECT * FROM "t" WHERE pk = 'a' AND sk BETWEEN 1 AND 2 ORDER BY sk DESC`,
		`INSERT INTO t VALUE {'pk': ?, 'l': [1, <<'a'>>], 'm': {'x': -.5e3}}`,
		`UPDATE t SET a = a + 1 REMOVE b[0].c SET s = set_add(s, <<1>>) WHERE pk = 1 RETURNING ALL NEW *`,
		`DELETE FROM t."i" WHERE NOT (a IN [1, 2] OR b IS NOT MISSING)`,
		`EXISTS(SELECT * FROM t WHERE pk = 'x' AND attribute_exists(a))`,
		`FROM t WHERE pk = 'x' SET a = list_append(a, [1])`,
		"-- c\nSELECT a.b['c'] FROM t /* x */",
		`SELECT * FROM t WHERE "a""b" <> 'it''s' AND size(x) >= 3`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		st, err := Parse(src)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse(%q) returned %T", src, err)
			}
			return
		}
		params := make([]*av.Value, st.Params)
		for i := range params {
			params[i] = av.Str("p")
		}
		if st.Value != nil {
			Value(st.Value, params)
		}
		for _, a := range st.Actions {
			if a.Value != nil && IsValue(a.Value) {
				Value(a.Value, params)
			}
		}
	})
}
