package partiql

import (
	"testing"

	"lastro/ddblocal/internal/av"
)

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, st *Statement)
	}{
		{"select star", `SELECT * FROM "Music" WHERE Artist = 'Acme'`, func(t *testing.T, st *Statement) {
			want(t, st.Kind == Select && st.Star && st.Table == "Music" && st.Index == "", "statement %+v", st)
			b := st.Where.(*Binary)
			want(t, b.Op == "=" && b.L.(*Path).String() == "Artist" && b.R.(*Lit).Text == "Acme", "where %+v", b)
		}},
		{"index source", `select a, b.c[2], "d e" from Music."idx"`, func(t *testing.T, st *Statement) {
			want(t, st.Index == "idx" && len(st.Projection) == 3, "statement %+v", st)
			want(t, st.Projection[1].String() == "b.c[2]" && st.Projection[2].Elems[0].Name == "d e", "projection %v", st.Projection)
		}},
		{"params counted", `SELECT * FROM t WHERE a = ? AND b IN [?, ?]`, func(t *testing.T, st *Statement) {
			want(t, st.Params == 3, "params %d", st.Params)
		}},
		{"precedence", `SELECT * FROM t WHERE a = 1 OR b = 2 AND NOT c = 3`, func(t *testing.T, st *Statement) {
			or := st.Where.(*Binary)
			want(t, or.Op == "OR", "top %s", or.Op)
			and := or.R.(*Binary)
			want(t, and.Op == "AND", "right %s", and.Op)
			_, ok := and.R.(*Not)
			want(t, ok, "NOT binds below AND")
		}},
		{"between in is", `SELECT * FROM t WHERE a BETWEEN 1 AND 5 AND b NOT IN ['x'] AND c IS NOT MISSING AND d IS bool`, func(t *testing.T, st *Statement) {
			var kinds []string
			walkAnd(st.Where, func(e Expr) {
				switch e := e.(type) {
				case *Between:
					kinds = append(kinds, "between")
				case *In:
					want(t, e.Not, "NOT IN")
					kinds = append(kinds, "in")
				case *Is:
					kinds = append(kinds, e.Type)
				}
			})
			want(t, len(kinds) == 4 && kinds[2] == "MISSING" && kinds[3] == "BOOLEAN", "kinds %v", kinds)
		}},
		{"functions", `SELECT * FROM t WHERE begins_with("sk", 'x') AND Size(s) > 2 AND attribute_type(a, 'N')`, func(t *testing.T, st *Statement) {
			want(t, st.Where.(*Binary).L.(*Binary).L.(*Call).Name == "begins_with", "call")
		}},
		{"order by", `SELECT * FROM t WHERE pk = 'a' ORDER BY sk DESC`, func(t *testing.T, st *Statement) {
			want(t, len(st.OrderBy) == 1 && st.OrderBy[0].Desc && st.OrderBy[0].Name == "sk", "order %+v", st.OrderBy)
		}},
		{"comments", "-- lead\nSELECT * FROM t /* mid */ WHERE pk = 'a' -- tail", func(t *testing.T, st *Statement) {
			want(t, st.Where != nil, "where kept")
		}},
		{"insert", `INSERT INTO "t" VALUE {'pk': 'a', 'n': -1.5e2, 'l': [1, 'x'], 's': <<'a', 'b'>>, 'm': {'k': true}}`, func(t *testing.T, st *Statement) {
			v, err := Value(st.Value, nil)
			if err != nil {
				t.Fatal(err)
			}
			want(t, v.Map["n"].Str == "-150" && v.Map["s"].T == av.SS && v.Map["m"].Map["k"].Bool, "value %+v", v)
		}},
		{"update", `UPDATE t SET a = a + 1, b = list_append(b, [1]) REMOVE c SET s = set_add(s, <<1>>) WHERE pk = 'x' RETURNING MODIFIED NEW *`, func(t *testing.T, st *Statement) {
			want(t, st.Kind == Update && len(st.Actions) == 4 && st.Returning == ReturnModifiedNew, "statement %+v", st)
			want(t, st.Actions[2].Kind == ActionRemove, "remove")
		}},
		{"from-first update", `FROM t WHERE pk = 'x' SET a = 1`, func(t *testing.T, st *Statement) {
			want(t, st.Kind == Update && st.Where != nil && len(st.Actions) == 1, "statement %+v", st)
		}},
		{"delete", `DELETE FROM t WHERE pk = 'x' RETURNING ALL OLD *;`, func(t *testing.T, st *Statement) {
			want(t, st.Kind == Delete && st.Returning == ReturnAllOld, "statement %+v", st)
		}},
		{"exists", `EXISTS(SELECT * FROM t WHERE pk = 'x' AND a IS MISSING)`, func(t *testing.T, st *Statement) {
			want(t, st.Kind == Exists && st.Where != nil, "statement %+v", st)
		}},
		{"quoted escapes", `SELECT * FROM t WHERE q = 'it''s' AND "we""ird" = 1`, func(t *testing.T, st *Statement) {
			b := st.Where.(*Binary)
			want(t, b.L.(*Binary).R.(*Lit).Text == "it's" && b.R.(*Binary).L.(*Path).Elems[0].Name == `we"ird`, "escapes")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.src, err)
			}
			tt.check(t, st)
		})
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	const nwf = "Statement wasn't well formed, can't be processed: "
	tests := []struct{ src, msg string }{
		{`SLECT * FROM t`, nwf + "Expected data manipulation"},
		{`SELECT * FROM t WHERE pk = 1 foo`, nwf + "Unexpected token after expression"},
		{`SELECT * FROM t WHERE pk = 1 e5`, nwf + "Unexpected token after expression"},
		{`SELECT * FROM t WHERE pk = 1)`, nwf + "Unexpected token after expression"},
		{`DELETE FROM t WHERE pk = 1 ORDER BY pk`, nwf + "Unexpected token after expression"},
		{`SELECT * FROM t ORDER BY pk WHERE pk = 1`, nwf + "Unexpected token after expression"},
		{`INSERT INTO t x VALUE {'pk': 1}`, nwf + "Unexpected token after expression"},
		{`SELECT * FROM t WHERE pk = 1e2147483648`, nwf},
		{`SELECT * FROM t WHERE pk = 1.5e-2147483647`, nwf},
		{`SELECT * FROM t WHERE pk = 1 # note`, nwf},
		{`SELECT * FROM t WHERE pk = 1 /* note`, nwf},
		{`SELECT * FROM "t`, nwf},
		{`SELECT * FROM t x WHERE pk = 'x'`, "Aliasing is not supported"},
		{`SELECT * FROM t AS x WHERE pk = 'x'`, "Aliasing is not supported"},
		{`UPDATE t x SET a = 3 WHERE pk = 'x'`, "Aliasing is not supported"},
		{`DELETE FROM t x WHERE pk = 'x'`, "Aliasing is not supported"},
		{`SELECT * FROM t WHERE`, nwf + "Unexpected term"},
		{`SELECT * FROM t WHERE;`, nwf + "Unexpected term"},
		{`SELECT * FROM t WHERE NOT`, nwf + "Unexpected term"},
		{`SELECT * FROM t WHERE (`, nwf + "Unexpected term"},
		{`UPDATE t SET a = 1 WHERE`, nwf + "Unexpected term"},
		{`SELECT * FROM`, nwf + "Unexpected term"},
		{`SELECT * FROM t WHERE pk = 'a' AND`, nwf + "Missing right-hand side expression of infix operator"},
		{`SELECT * FROM t WHERE pk = 'a' OR`, nwf + "Missing right-hand side expression of infix operator"},
		{`SELECT * FROM t WHERE ORDER BY pk`, nwf + "Unexpected keyword"},
		{`SELECT * FROM t WHERE pk = 'a' AND x IS FOO`, nwf + "Expected type name"},
		{`SELECT * FROM t WHERE IS NULL`, nwf + "Unexpected operator"},
		{`SELECT * FROM t WHERE pk = LIKE`, nwf + "Unexpected operator"},
		{`DELETE FROM`, nwf + "Expected identifier for simple path"},
		{`DELETE FROM;`, nwf + "Expected identifier for simple path"},
		{`DELETE FROM WHERE pk = 'a'`, nwf + "Expected identifier for simple path"},
		{`FROM t SET c = 1`, "Where clause does not contain a mandatory equality on all key attributes"},
		{`FROM t REMOVE a`, "Where clause does not contain a mandatory equality on all key attributes"},
		{`FROM t SET c = 1 WHERE pk = 'x'`, nwf + "Unexpected token after expression"},
		{`DELETE FROM t`, "Where clause does not contain a mandatory equality on all key attributes"},
		{`UPDATE t SET a = 1`, "Where clause does not contain a mandatory equality on all key attributes"},
		{`SELECT * FROM t."i"."x" WHERE pk = 'p'`, "A path may contain at most 2 components in the FROM clause"},
		{`SELECT * FROM t."" WHERE pk = 'p'`, "Path component cannot be an empty string"},
		{`SELECT * FROM "" WHERE pk = 'p'`, "Path component cannot be an empty string"},
		{`SELECT *, a FROM t`, "Other attributes should not be present in the projection when '*' is used."},
		{`SELECT attribute_exists(ss) FROM t WHERE pk = 'x'`, "Unexpected path component at 1:8:16"},
		{`SELECT * FROM t WHERE pk = 'x' AND EXISTS(ss)`, "Unrecognized function: exists at 1:36:6"},
		{`SELECT * FROM t WHERE pk = 'x' AND attribute_exists(m.inner)`, nwf + "Invalid path dot component"},
		{`SELECT * FROM t WHERE attribute_exists()`, "Incorrect number of operands for operator or function; operator or function: attribute_exists, number of operands: 0"},
		{`SELECT * FROM t WHERE attribute_exists(a, b)`, "Incorrect number of operands for operator or function; operator or function: attribute_exists, number of operands: 2"},
		{`SELECT * FROM t WHERE set_add(ss, <<'x'>>) = ss`, "Unrecognized function: set_add at 1:23:7"},
		{`UPDATE t SET t = set_add(ss, <<'x'>>) WHERE pk = 'x'`, "The first argument to SET_ADD must equal the assignment value at 1:18:7"},
		{`UPDATE t SET ss = set_add(<<'a'>>, <<'b'>>) WHERE pk = 'x'`, "The first argument to SET_ADD must equal the assignment value at 1:19:7"},
		{`UPDATE t SET ss = set_add(ss, 'x') WHERE pk = 'x'`, "The second argument to SET_ADD must be a value with type SET at 1:27:2"},
		{`UPDATE t SET ss = set_add(ss) WHERE pk = 'x'`, "SET_ADD must have exactly two arguments at 1:19:7"},
		{`UPDATE t SET ss = set_delete(ss, ['a']) WHERE pk = 'x'`, "The second argument to SET_DELETE must be a value with type SET at 1:30:2"},
		{`DELETE FROM t WHERE pk = 'x' RETURNING MODIFIED OLD *`, "Invalid returning clause: RETURNING MODIFIED OLD *. Only RETURNING ALL OLD * is allowed in DELETE statements."},
		{`DELETE FROM t WHERE pk = 'x' RETURNING ALL NEW *`, "Invalid returning clause: RETURNING ALL NEW *. Only RETURNING ALL OLD * is allowed in DELETE statements."},
		{`UPDATE t SET a = 1 WHERE pk = 'x' RETURNING ALL NEW`, "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.src)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want %q", tt.src, tt.msg)
			}
			if err.Error() != tt.msg {
				t.Fatalf("Parse(%q):\n got %q\nwant %q", tt.src, err.Error(), tt.msg)
			}
		})
	}
}

func TestValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string // an INSERT value
		want string // wire JSON, or the error message
	}{
		{`{'a': 1E3}`, `{"M":{"a":{"N":"1000"}}}`},
		{`{'b': -1.5e-3}`, `{"M":{"b":{"N":"-0.0015"}}}`},
		{`{'c': 2.50}`, `{"M":{"c":{"N":"2.5"}}}`},
		{`{'d': -0}`, `{"M":{"d":{"N":"0"}}}`},
		{`{'e': .73e1}`, `{"M":{"e":{"N":"7.3"}}}`},
		{`{'s': <<3, 1, 2>>}`, `{"M":{"s":{"NS":["1","2","3"]}}}`},
		{`{'l': [TRUE, 'x', NULL]}`, `{"M":{"l":{"L":[{"BOOL":true},{"S":"x"},{"NULL":true}]}}}`},
		{`{'pk': 1e126}`, "Number overflow. Attempting to store a number with magnitude larger than supported range under root"},
		{`{'m': {'x': 1e126}}`, "Number overflow. Attempting to store a number with magnitude larger than supported range under root.x"},
		{`{'l': [1, 1e126]}`, "Number overflow. Attempting to store a number with magnitude larger than supported range under root[1]"},
		{`{'s': <<>>}`, "Empty bags are not supported"},
		{`{'s': <<1, 'a'>>}`, "Unsupported data type in Bag. DynamoDB only supports either numbers or strings in bags"},
		{`{'s': <<'a', 'a'>>}`, "One or more parameter values were invalid: Input collection [a, a] contains duplicates."},
		{`{'a': 1, 'a': 2}`, "Duplicate keys in tuple. Key: a under root"},
		{`{'m': {'a': 1, 'a': 2}}`, "Duplicate keys in tuple. Key: a under root"},
		{`{1: 2}`, "Tuple keys must be of type String. Actual type: DECIMAL under root"},
		{`{'ss': set_add(<<'a'>>, <<'b'>>)}`, "Unsupported data type: set_add under key root at 1:28:7"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			t.Parallel()
			st, err := Parse(`INSERT INTO t VALUE ` + tt.src)
			if err != nil {
				t.Fatal(err)
			}
			it, err := Item(st.Value, nil)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = string(av.AppendJSON(nil, &av.Value{T: av.M, Map: it}))
			}
			if got != tt.want {
				t.Fatalf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func walkAnd(e Expr, f func(Expr)) {
	if b, ok := e.(*Binary); ok && b.Op == "AND" {
		walkAnd(b.L, f)
		walkAnd(b.R, f)
		return
	}
	f(e)
}

func want(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}
