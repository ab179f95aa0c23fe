package expr

import (
	"strings"
	"testing"
)

func TestUpdateApply(t *testing.T) {
	t.Parallel()
	const vals = `{
		":s": {"S": "new"}, ":n1": {"N": "1"}, ":n2": {"N": "2"}, ":n3": {"N": "3"}, ":n17": {"N": "17"},
		":big": {"N": "99999999999999999999999999999999999999"},
		":ssa": {"SS": ["a"]}, ":ssab": {"SS": ["a", "b"]}, ":sscd": {"SS": ["c", "b"]}, ":ns1": {"NS": ["1"]},
		":bs": {"BS": ["AQ=="]}, ":l1": {"L": [{"S": "x"}]}, ":l2": {"L": [{"S": "y"}, {"S": "z"}]}, ":m": {"M": {"k": {"S": "v"}}},
		":a1": {"S": "a1"}, ":a2": {"S": "a2"}, ":a3": {"S": "a3"}, ":a4": {"S": "a4"}
	}`
	tests := []struct {
		name, expr, item, want, err string
	}{
		{"set new attribute", "SET b = :s", `{"k": {"S": "1"}}`, `{"k": {"S": "1"}, "b": {"S": "new"}}`, ""},
		{"set replaces", "SET b = :s", `{"b": {"N": "5"}}`, `{"b": {"S": "new"}}`, ""},
		{"set copies", "SET b = a", `{"a": {"S": "x"}}`, `{"a": {"S": "x"}, "b": {"S": "x"}}`, ""},
		{"set reads the old item", "SET x = :n1, y = x", `{"a": {"S": "x"}}`, "", MsgAttributeNotFound},
		{"set from missing", "SET c = z", `{"a": {"S": "x"}}`, "", MsgAttributeNotFound},
		{"swap", "SET a = b, b = a", `{"a": {"N": "1"}, "b": {"N": "2"}}`, `{"a": {"N": "2"}, "b": {"N": "1"}}`, ""},
		{"remove then read", "REMOVE a SET b = a", `{"a": {"S": "x"}}`, `{"b": {"S": "x"}}`, ""},
		{"remove missing", "REMOVE c", `{"a": {"S": "x"}}`, `{"a": {"S": "x"}}`, ""},
		{"plus", "SET a = a + :n2", `{"a": {"N": "3"}}`, `{"a": {"N": "5"}}`, ""},
		{"minus", "SET b = :n1 - a", `{"a": {"N": "3"}}`, `{"a": {"N": "3"}, "b": {"N": "-2"}}`, ""},
		{"plus missing", "SET a = b + :n1", `{"a": {"N": "3"}}`, "", MsgAttributeNotFound},
		{"plus string", "SET a = b + :n1", `{"b": {"S": "3"}}`, "", MsgOperandType},
		{"plus overflow", "SET a = :big + :big", `{}`, "", "Number overflow. Attempting to store a number with magnitude larger than supported range"},
		{"if_not_exists absent", "SET a = if_not_exists(a, :n1)", `{}`, `{"a": {"N": "1"}}`, ""},
		{"if_not_exists present", "SET a = if_not_exists(a, :n1)", `{"a": {"N": "7"}}`, `{"a": {"N": "7"}}`, ""},
		{"if_not_exists other", "SET b = if_not_exists(a, :n1)", `{"a": {"N": "7"}}`, `{"a": {"N": "7"}, "b": {"N": "7"}}`, ""},
		{"if_not_exists missing default", "SET b = if_not_exists(a, c)", `{"a": {"N": "7"}}`, "", MsgAttributeNotFound},
		{"if_not_exists plus", "SET b = if_not_exists(b, :n2) + :n3", `{}`, `{"b": {"N": "5"}}`, ""},
		{"list_append", "SET a = list_append(a, :l2)", `{"a": {"L": [{"S": "w"}]}}`, `{"a": {"L": [{"S": "w"}, {"S": "y"}, {"S": "z"}]}}`, ""},
		{"list_append prepend", "SET a = list_append(:l1, a)", `{"a": {"L": [{"S": "w"}]}}`, `{"a": {"L": [{"S": "x"}, {"S": "w"}]}}`, ""},
		{"list_append if_not_exists", "SET a = list_append(if_not_exists(a, :l1), :l2)", `{}`, `{"a": {"L": [{"S": "x"}, {"S": "y"}, {"S": "z"}]}}`, ""},
		{"list_append missing", "SET a = list_append(b, :l1)", `{}`, "", MsgAttributeNotFound},
		{"list_append not a list", "SET a = list_append(b, :l1)", `{"b": {"SS": ["x"]}}`, "", MsgOperandType},
		{"list_append list and not list", "SET a = list_append(:l1, b)", `{"b": {"N": "1"}}`, "", MsgOperandType},

		// ADD and DELETE.
		{"add number", "ADD a :n2", `{"a": {"N": "3"}}`, `{"a": {"N": "5"}}`, ""},
		{"add creates number", "ADD a :n2", `{}`, `{"a": {"N": "2"}}`, ""},
		{"add to string", "ADD a :n2", `{"a": {"S": "3"}}`, "", MsgOperandType},
		{"add set", "ADD a :sscd", `{"a": {"SS": ["a", "b"]}}`, `{"a": {"SS": ["a", "b", "c"]}}`, ""},
		{"add set nothing new", "ADD a :ssa", `{"a": {"SS": ["a", "b"]}}`, `{"a": {"SS": ["a", "b"]}}`, ""},
		{"add creates set", "ADD a :ssa", `{}`, `{"a": {"SS": ["a"]}}`, ""},
		{"add number set to string set", "ADD a :ns1", `{"a": {"SS": ["a"]}}`, "", MsgOperandType},
		{"add binary set", "ADD a :bs", `{"a": {"BS": ["Ag=="]}}`, `{"a": {"BS": ["Ag==", "AQ=="]}}`, ""},
		{"delete from set", "DELETE a :ssa", `{"a": {"SS": ["a", "b"]}}`, `{"a": {"SS": ["b"]}}`, ""},
		{"delete absent member", "DELETE a :sscd", `{"a": {"SS": ["a", "b"]}}`, `{"a": {"SS": ["a"]}}`, ""},
		{"delete all members", "DELETE a :ssab", `{"a": {"SS": ["a", "b"]}, "x": {"N": "1"}}`, `{"x": {"N": "1"}}`, ""},
		{"delete from missing", "DELETE a :ssa", `{"x": {"N": "1"}}`, `{"x": {"N": "1"}}`, ""},
		{"delete wrong set type", "DELETE a :ns1", `{"a": {"SS": ["a"]}}`, "", MsgOperandType},
		{"delete binary", "DELETE a :bs", `{"a": {"BS": ["AQ==", "Ag=="]}}`, `{"a": {"BS": ["Ag=="]}}`, ""},

		// Nested paths.
		{"set nested", "SET a.c = :n1", `{"a": {"M": {"b": {"N": "3"}, "c": {"N": "4"}}}}`, `{"a": {"M": {"b": {"N": "3"}, "c": {"N": "1"}}}}`, ""},
		{"add nested key", "SET a.d = :n1", `{"a": {"M": {"b": {"N": "3"}}}}`, `{"a": {"M": {"b": {"N": "3"}, "d": {"N": "1"}}}}`, ""},
		{"several nested", "SET a.b = :n1, a.c.d = :s, b.x = :n17 REMOVE a.x, b.y",
			`{"a": {"M": {"x": {"N": "3"}, "y": {"N": "4"}, "c": {"M": {"y": {"N": "3"}}}}}, "b": {"M": {"x": {"N": "1"}, "y": {"N": "2"}}}}`,
			`{"a": {"M": {"y": {"N": "4"}, "b": {"N": "1"}, "c": {"M": {"y": {"N": "3"}, "d": {"S": "new"}}}}}, "b": {"M": {"x": {"N": "17"}}}}`, ""},
		{"deep", "SET a.c[1].#n.y[1] = :n17", `{"a": {"M": {"b": {"N": "3"}, "c": {"L": [{"S": "hi"}, {"M": {"x": {"M": {"y": {"L": [{"N": "3"}, {"N": "5"}, {"N": "7"}]}}}}}]}}}}`,
			`{"a": {"M": {"b": {"N": "3"}, "c": {"L": [{"S": "hi"}, {"M": {"x": {"M": {"y": {"L": [{"N": "3"}, {"N": "17"}, {"N": "7"}]}}}}}]}}}}`, ""},
		{"remove nested", "REMOVE a.c[1].x.y[1], a.c[1].q",
			`{"a": {"M": {"b": {"N": "3"}, "c": {"L": [{"S": "hi"}, {"M": {"q": {"N": "2"}, "x": {"M": {"y": {"L": [{"N": "3"}, {"N": "5"}, {"N": "7"}]}}}}}]}}}}`,
			`{"a": {"M": {"b": {"N": "3"}, "c": {"L": [{"S": "hi"}, {"M": {"x": {"M": {"y": {"L": [{"N": "3"}, {"N": "7"}]}}}}}]}}}}`, ""},
		{"remove only member", "REMOVE a.b", `{"a": {"M": {"b": {"N": "1"}}}}`, `{"a": {"M": {}}}`, ""},
		{"remove missing leaf", "REMOVE a.y, b[7]", `{"a": {"M": {"x": {"N": "3"}}}, "b": {"L": [{"S": "hi"}]}}`, `{"a": {"M": {"x": {"N": "3"}}}, "b": {"L": [{"S": "hi"}]}}`, ""},
		{"add nested", "ADD a.n :n2, a.s :ssa", `{"a": {"M": {"n": {"N": "1"}}}}`, `{"a": {"M": {"n": {"N": "3"}, "s": {"SS": ["a"]}}}}`, ""},
		{"set under missing", "SET c.c = :n1", `{"a": {"S": "x"}}`, "", MsgPathInvalidForUpdate},
		{"set under string", "SET a.c = :n1", `{"a": {"S": "x"}}`, "", MsgPathInvalidForUpdate},
		{"set key under list", "SET b.c = :n1", `{"b": {"L": [{"S": "x"}]}}`, "", MsgPathInvalidForUpdate},
		{"set index under map", "SET b[0] = :n1", `{"b": {"M": {"0": {"S": "x"}}}}`, "", MsgPathInvalidForUpdate},
		{"set index under missing", "SET b[0] = :n1", `{}`, "", MsgPathInvalidForUpdate},
		{"remove under missing", "REMOVE y.a", `{"a": {"S": "x"}}`, "", MsgPathInvalidForUpdate},
		{"remove under string", "REMOVE a[0]", `{"a": {"S": "x"}}`, "", MsgPathInvalidForUpdate},
		{"add under missing", "ADD y.a :n1", `{}`, "", MsgPathInvalidForUpdate},

		// Lists: indexes refer to the original list; SET past the end
		// appends, in index order; REMOVE compacts.
		{"set element", "SET a[1] = :s", `{"a": {"L": [{"S": "one"}, {"S": "two"}, {"S": "three"}]}}`, `{"a": {"L": [{"S": "one"}, {"S": "new"}, {"S": "three"}]}}`, ""},
		{"set past end", "SET a[7] = :s", `{"a": {"L": [{"S": "one"}, {"S": "two"}, {"S": "three"}]}}`, `{"a": {"L": [{"S": "one"}, {"S": "two"}, {"S": "three"}, {"S": "new"}]}}`, ""},
		{"set past end sorted", "SET a[84] = :a1, a[37] = :a2, a[17] = :a3, a[50] = :a4", `{"a": {"L": [{"S": "one"}]}}`,
			`{"a": {"L": [{"S": "one"}, {"S": "a3"}, {"S": "a2"}, {"S": "a4"}, {"S": "a1"}]}}`, ""},
		{"remove shifts", "REMOVE a[1], a[2]", `{"a": {"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}, {"N": "3"}]}}`, `{"a": {"L": [{"N": "0"}, {"N": "3"}]}}`, ""},
		{"remove and set original positions", "REMOVE a[1] SET a[3] = :n17", `{"a": {"L": [{"N": "2"}, {"N": "3"}, {"N": "4"}, {"N": "5"}, {"N": "6"}, {"N": "7"}]}}`,
			`{"a": {"L": [{"N": "2"}, {"N": "4"}, {"N": "17"}, {"N": "6"}, {"N": "7"}]}}`, ""},
		{"set then remove order irrelevant", "SET a[3] = :n17 REMOVE a[1]", `{"a": {"L": [{"N": "2"}, {"N": "3"}, {"N": "4"}, {"N": "5"}, {"N": "6"}, {"N": "7"}]}}`,
			`{"a": {"L": [{"N": "2"}, {"N": "4"}, {"N": "17"}, {"N": "6"}, {"N": "7"}]}}`, ""},
		{"remove only element", "REMOVE a[0]", `{"a": {"L": [{"N": "1"}]}}`, `{"a": {"L": []}}`, ""},
		{"remove past end", "REMOVE a[17]", `{"a": {"L": [{"N": "4"}]}}`, `{"a": {"L": [{"N": "4"}]}}`, ""},
		{"delete empties element", "DELETE a[0] :ssa", `{"a": {"L": [{"SS": ["a"]}, {"N": "1"}]}}`, `{"a": {"L": [{"N": "1"}]}}`, ""},
		{"nested update, mixed sections", "set b.c=((c[1])+(b.a)),b.a = a,c[1] = a, c[4] = b.a - b.b, c[2] = b.c add c[8] :ssa, c[6] :n2",
			`{"a": {"S": "key"}, "b": {"M": {"a": {"N": "1"}, "b": {"N": "2"}, "c": {"N": "3"}}}, "c": {"L": [{"N": "1"}, {"N": "3"}]}}`,
			`{"a": {"S": "key"}, "b": {"M": {"a": {"S": "key"}, "b": {"N": "2"}, "c": {"N": "4"}}},
			  "c": {"L": [{"N": "1"}, {"S": "key"}, {"N": "3"}, {"N": "-1"}, {"N": "2"}, {"SS": ["a"]}]}}`, ""},
		{"set map value", "SET a = :m", `{}`, `{"a": {"M": {"k": {"S": "v"}}}}`, ""},
	}
	for _, tt := range tests {
		u, err := ParseUpdate(tt.expr, attrs(t, map[string]string{"#n": "x"}, vals))
		if err != nil {
			t.Errorf("%s: parse %q: %v", tt.name, tt.expr, err)
			continue
		}
		before := item(t, tt.item)
		snapshot := canon(t, before)
		got, err := u.Apply(before)
		if msg := errMsg(t, err); msg != tt.err {
			t.Errorf("%s: error %q, want %q", tt.name, msg, tt.err)
			continue
		}
		if canon(t, before) != snapshot {
			t.Errorf("%s: the input item was modified", tt.name)
		}
		if tt.err == "" {
			if g, w := canon(t, got), canonJSON(t, tt.want); g != w {
				t.Errorf("%s:\n got %s\nwant %s", tt.name, g, w)
			}
		}
	}
}

func TestUpdateApplyMissing(t *testing.T) {
	t.Parallel()
	key := item(t, `{"k": {"S": "1"}}`)
	tests := []struct{ expr, want, err string }{
		// Removing below a missing attribute is ignored for a new item...
		{"REMOVE x.y", `{"k": {"S": "1"}}`, ""},
		{"REMOVE x[0], z", `{"k": {"S": "1"}}`, ""},
		// ...but not setting below one.
		{"SET c.c = :v", "", MsgPathInvalidForUpdate},
		{"SET b = k", `{"k": {"S": "1"}, "b": {"S": "1"}}`, ""},
		{"ADD n :v", `{"k": {"S": "1"}, "n": {"N": "1"}}`, ""},
	}
	for _, tt := range tests {
		u, err := ParseUpdate(tt.expr, attrs(t, nil, `{":v": {"N": "1"}}`))
		if err != nil {
			t.Fatalf("%q: %v", tt.expr, err)
		}
		got, err := u.ApplyMissing(key)
		if msg := errMsg(t, err); msg != tt.err {
			t.Errorf("%q: error %q, want %q", tt.expr, msg, tt.err)
			continue
		}
		if tt.err == "" && canon(t, got) != canonJSON(t, tt.want) {
			t.Errorf("%q: got %s, want %s", tt.expr, canon(t, got), tt.want)
		}
	}
	// Apply on an existing item refuses the same removal.
	u, _ := ParseUpdate("REMOVE x.y", nil)
	if _, err := u.Apply(key); errMsg(t, err) != MsgPathInvalidForUpdate {
		t.Errorf("REMOVE x.y on an existing item: %v", err)
	}
}

func TestUpdateNestingLimit(t *testing.T) {
	t.Parallel()
	// A value 31 maps deep, set at level 2, reaches level 32.
	deep := `{"S": "x"}`
	for range 31 {
		deep = `{"M": {"k": ` + deep + `}}`
	}
	u, err := ParseUpdate("SET a.b = :deep", attrs(t, nil, `{":deep": `+deep+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Apply(item(t, `{"a": {"M": {}}}`)); errMsg(t, err) != MsgNestingTooDeep {
		t.Errorf("too deep: got %v", err)
	}
	u, _ = ParseUpdate("SET a = :deep", attrs(t, nil, `{":deep": `+deep+`}`))
	if _, err := u.Apply(nil); err != nil {
		t.Errorf("31 levels at level 1: %v", err)
	}
}

func TestUpdatePaths(t *testing.T) {
	t.Parallel()
	u, err := ParseUpdate("SET a.b = :v, #c[2] = x REMOVE d ADD e :v", attrs(t, map[string]string{"#c": "c"}, `{":v": {"N": "1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range u.Paths() {
		got = append(got, p.String())
	}
	if want := "[a, b] [c, [2]] [d] [e]"; strings.Join(got, " ") != want {
		t.Errorf("Paths: got %q, want %q", strings.Join(got, " "), want)
	}
	if r := u.ReadPaths(); len(r) != 1 || r[0].String() != "[x]" {
		t.Errorf("ReadPaths: got %v", r)
	}
	old := item(t, `{"a": {"M": {"b": {"N": "0"}, "z": {"N": "9"}}}, "c": {"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}]}, "d": {"S": "x"}, "f": {"S": "kept"}, "x": {"S": "X"}}`)
	updated, err := u.Apply(old)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := canon(t, ProjectPaths(old, u.Paths())), canonJSON(t, `{"a": {"M": {"b": {"N": "0"}}}, "c": {"L": [{"N": "2"}]}, "d": {"S": "x"}}`); g != w {
		t.Errorf("UPDATED_OLD: got %s, want %s", g, w)
	}
	if g, w := canon(t, ProjectPaths(updated, u.Paths())), canonJSON(t, `{"a": {"M": {"b": {"N": "1"}}}, "c": {"L": [{"S": "X"}]}, "e": {"N": "1"}}`); g != w {
		t.Errorf("UPDATED_NEW: got %s, want %s", g, w)
	}
}
