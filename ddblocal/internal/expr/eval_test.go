package expr

import "testing"

func TestConditionEval(t *testing.T) {
	t.Parallel()
	const it = `{
		"s": {"S": "hello"}, "n": {"N": "10"}, "neg": {"N": "-2.5"}, "b": {"B": "AQID"},
		"ss": {"SS": ["x", "y"]}, "ns": {"NS": ["1", "2.5"]}, "bs": {"BS": ["AQ==", "Ag=="]},
		"l": {"L": [{"S": "x"}, {"N": "1"}, {"M": {"k": {"S": "v"}}}]},
		"m": {"M": {"a": {"M": {"b": {"L": [{"N": "7"}, {"S": "deep"}]}}}, "e": {"S": ""}}},
		"t": {"BOOL": true}, "z": {"NULL": true}, "u": {"S": "ü€𝄞"}
	}`
	const vals = `{
		":hello": {"S": "hello"}, ":he": {"S": "he"}, ":ell": {"S": "ell"}, ":x": {"S": "x"}, ":z": {"S": "zzz"},
		":10": {"N": "10"}, ":ten0": {"N": "10.0"}, ":9": {"N": "9"}, ":11": {"N": "11"}, ":1": {"N": "1"}, ":2": {"N": "2"},
		":two5": {"N": "2.5"}, ":m3": {"N": "-3"}, ":0": {"N": "0"}, ":3": {"N": "3"}, ":5": {"N": "5"}, ":4": {"N": "4"},
		":b": {"B": "AQID"}, ":b1": {"B": "AQ=="}, ":b2": {"B": "Ag=="}, ":true": {"BOOL": true}, ":null": {"NULL": true},
		":ssxy": {"SS": ["y", "x"]}, ":l": {"L": [{"S": "x"}, {"N": "1"}, {"M": {"k": {"S": "v"}}}]},
		":mk": {"M": {"k": {"S": "v"}}}, ":7": {"N": "7"}, ":deep": {"S": "deep"},
		":S": {"S": "S"}, ":N": {"S": "N"}, ":SS": {"S": "SS"}, ":NULL": {"S": "NULL"}, ":M": {"S": "M"}, ":L": {"S": "L"}, ":BOOL": {"S": "BOOL"}
	}`
	tests := []struct {
		expr string
		want bool
	}{
		// Equality is by value and type; sets compare as sets.
		{"s = :hello", true},
		{"s = :he", false},
		{"n = :ten0", true},
		{"n = :hello", false},
		{"ss = :ssxy", true},
		{"l = :l", true},
		{"l[2] = :mk", true},
		{"t = :true", true},
		{"z = :null", true},
		{"gone = :null", false},
		{"gone <> :null", true},
		{"s <> :he", true},
		{"s <> :hello", false},
		// Ordering works on S, N and B of the same type only.
		{"n > :9", true},
		{"n < :11", true},
		{"n <= :10", true},
		{"n >= :11", false},
		{"neg < :0", true},
		{"neg > :m3", true},
		{"s > :he", true},
		{"s < :z", true},
		{"s < :10", false},
		{"s > :10", false},
		{"b >= :b1", true},
		{"b > :b2", false},
		{"gone < :10", false},
		{"gone > :10", false},
		{"ss > :hello", false},
		// BETWEEN is inclusive.
		{"n BETWEEN :9 AND :11", true},
		{"n BETWEEN :10 AND :10", true},
		{"n BETWEEN :11 AND :11", false},
		{"s BETWEEN :he AND :z", true},
		{"s BETWEEN :1 AND :11", false},
		{"gone BETWEEN :1 AND :11", false},
		// IN.
		{"n IN (:1, :ten0)", true},
		{"n IN (:1, :9)", false},
		{"s IN (:x, :hello)", true},
		{"gone IN (:1)", false},
		// Logic and precedence: NOT > AND > OR.
		{"n = :10 AND s = :hello", true},
		{"n = :10 AND s = :x", false},
		{"n = :1 OR s = :hello", true},
		{"NOT n = :1", true},
		{"NOT n = :10 OR s = :hello", true},
		{"NOT (n = :10 OR s = :hello)", false},
		{"n = :1 AND s = :x OR t = :true", true},
		{"n = :1 AND (s = :x OR t = :true)", false},
		{"NOT NOT n = :10", true},
		// Functions.
		{"attribute_exists(s)", true},
		{"attribute_exists(gone)", false},
		{"attribute_not_exists(gone)", true},
		{"attribute_exists(m.a.b[1])", true},
		{"attribute_exists(m.a.b[2])", false},
		{"attribute_exists(m.a.b.c)", false},
		{"attribute_exists(s.x)", false},
		{"attribute_exists(l[5])", false},
		{"attribute_type(s, :S)", true},
		{"attribute_type(n, :N)", true},
		{"attribute_type(ss, :SS)", true},
		{"attribute_type(z, :NULL)", true},
		{"attribute_type(m, :M)", true},
		{"attribute_type(l, :L)", true},
		{"attribute_type(t, :BOOL)", true},
		{"attribute_type(s, :N)", false},
		{"attribute_type(gone, :S)", false},
		{"begins_with(s, :he)", true},
		{"begins_with(s, :ell)", false},
		{"begins_with(b, :b1)", true},
		{"begins_with(b, :b2)", false},
		{"begins_with(n, :he)", false},
		{"begins_with(gone, :he)", false},
		{"begins_with(m.a.b[1], :deep)", true},
		{"contains(s, :ell)", true},
		{"contains(s, :x)", false},
		{"contains(b, :b2)", true},
		{"contains(ss, :x)", true},
		{"contains(ss, :hello)", false},
		{"contains(ns, :two5)", true},
		{"contains(ns, :x)", false},
		{"contains(bs, :b2)", true},
		{"contains(l, :x)", true},
		{"contains(l, :1)", true},
		{"contains(l, :mk)", true},
		{"contains(l, :z)", false},
		{"contains(n, :1)", false},
		{"contains(gone, :x)", false},
		{"contains(m.a.b, :7)", true},
		// size(): string length (UTF-16 units), bytes, members.
		{"size(s) = :5", true},
		{"size(u) = :4", true},
		{"size(b) = :3", true},
		{"size(ss) = :2", true},
		{"size(ss) < :3", true},
		{"size(l) = :3", true},
		{"size(m) = :two5", false},
		{"size(m.e) = :0", true},
		{"size(n) = :1", false},
		{"size(n) <> :1", true},
		{"size(gone) = :0", false},
		{"size(gone) <> :0", true},
		{":10 = :ten0", true},
		{"size(:hello) = :5", true},
	}
	for _, tt := range tests {
		c, err := ParseCondition(KindCondition, tt.expr, attrs(t, nil, vals))
		if err != nil {
			t.Errorf("%q: %v", tt.expr, err)
			continue
		}
		if got := c.Eval(item(t, it)); got != tt.want {
			t.Errorf("%q: got %v, want %v", tt.expr, got, tt.want)
		}
	}
}

func TestConditionOnMissingItem(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]bool{
		"attribute_not_exists(a)": true,
		"attribute_exists(a)":     false,
		"a = :v":                  false,
		"a <> :v":                 true,
		"NOT a = :v":              true,
		"size(a) > :v":            false,
	} {
		c, err := ParseCondition(KindCondition, expr, attrs(t, nil, `{":v": {"N": "1"}}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Eval(nil); got != want {
			t.Errorf("%q on a gone item: got %v, want %v", expr, got, want)
		}
	}
}

func TestConditionPaths(t *testing.T) {
	t.Parallel()
	c, err := ParseCondition(KindFilter, "#a.b[1] = :v AND size(c) > :v OR a = :v", attrs(t, map[string]string{"#a": "a"}, `{":v": {"N": "1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.Paths() {
		got = append(got, p.String())
	}
	if want := "[a, b, [1]] [c] [a]"; join(got) != want {
		t.Errorf("Paths: got %q, want %q", join(got), want)
	}
	if got, want := join(c.TopNames()), "a c"; got != want {
		t.Errorf("TopNames: got %q, want %q", got, want)
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
