package expr

import (
	"testing"

	"lastro/ddblocal/internal/av"
)

func TestKeyConditionBind(t *testing.T) {
	t.Parallel()
	hashOnly := KeySchema{Hash: "a", HashType: av.S}
	ranged := KeySchema{Hash: "a", HashType: av.S, Range: "b", RangeType: av.N}
	const vals = `{":a": {"S": "x"}, ":b": {"S": "y"}, ":n": {"N": "1"}, ":m": {"N": "5"}}`
	tests := []struct {
		expr   string
		schema KeySchema
		op     string
		values int
		err    string
	}{
		{"a = :a", hashOnly, "", 0, ""},
		{"a = :a", ranged, "", 0, ""},
		{":a = a", ranged, "", 0, ""},
		{"a = :a AND b = :n", ranged, "EQ", 1, ""},
		{"b < :n AND a = :a", ranged, "LT", 1, ""},
		{"a = :a AND :n < b", ranged, "GT", 1, ""},
		{"a = :a AND :n >= b", ranged, "LE", 1, ""},
		{"a = :a AND b BETWEEN :n AND :m", ranged, "BETWEEN", 2, ""},
		{"((a = :a) AND (b >= :n))", ranged, "GE", 1, ""},
		{"((a = :a)) AND ((b >= :n))", ranged, "GE", 1, ""},
		{"(((a = :a)))", hashOnly, "", 0, "Invalid KeyConditionExpression: The expression has redundant parentheses;"},
		{"((a = :a) AND ((b >= :n)))", ranged, "", 0, "Invalid KeyConditionExpression: The expression has redundant parentheses;"},
		{"(((a = :a)) AND ((b >= :n)))", ranged, "", 0, "Invalid KeyConditionExpression: The expression has redundant parentheses;"},
		{"((a)) = :a", hashOnly, "", 0, "Invalid KeyConditionExpression: The expression has redundant parentheses;"},
		{"a = :a AnD b BeTwEeN :n aNd :m", ranged, "BETWEEN", 2, ""},
		{"z = :a", hashOnly, "", 0, "Query condition missed key schema element: a"},
		{"b = :n", ranged, "", 0, "Query condition missed key schema element: a"},
		{"a = :a AND c = :n", ranged, "", 0, "Query condition missed key schema element: b"},
		{"a = :a AND b = :n", hashOnly, "", 0, "Query key condition not supported"},
		{"y = :a and z = :a", hashOnly, "", 0, "Query key condition not supported"},
		{"a > :a", hashOnly, "", 0, "Query key condition not supported"},
		{"begins_with(a, :a)", hashOnly, "", 0, "Query key condition not supported"},
		{"a between :a and :b", hashOnly, "", 0, "Query key condition not supported"},
		{":n > a", hashOnly, "", 0, "One or more parameter values were invalid: Condition parameter type does not match schema type"},
		{"a = :n", hashOnly, "", 0, "One or more parameter values were invalid: Condition parameter type does not match schema type"},
		{"a = :a AND b = :a", ranged, "", 0, "One or more parameter values were invalid: Condition parameter type does not match schema type"},
		{"a = :a AND begins_with(b, :a)", ranged, "", 0, "One or more parameter values were invalid: Condition parameter type does not match schema type"},
		{"a = :a AND begins_with(b, :n)", ranged, "", 0, "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"},
	}
	for _, tt := range tests {
		kc, err := ParseKeyCondition(tt.expr, attrs(t, nil, vals), tt.schema)
		if msg := errMsg(t, err); msg != tt.err {
			t.Errorf("%q: error %q, want %q", tt.expr, msg, tt.err)
			continue
		}
		if err != nil {
			continue
		}
		if kc.HashValue == nil || kc.HashValue.Str != "x" {
			t.Errorf("%q: hash value %v", tt.expr, kc.HashValue)
		}
		if kc.RangeOp != tt.op || len(kc.RangeValues) != tt.values {
			t.Errorf("%q: range %s %d values, want %s %d", tt.expr, kc.RangeOp, len(kc.RangeValues), tt.op, tt.values)
		}
	}
}

func TestKeyConditionMatch(t *testing.T) {
	t.Parallel()
	schema := KeySchema{Hash: "h", HashType: av.S, Range: "r", RangeType: av.S}
	const vals = `{":h": {"S": "p"}, ":lo": {"S": "b"}, ":hi": {"S": "d"}, ":pre": {"S": "ab"}}`
	tests := []struct {
		expr string
		in   map[string]bool
	}{
		{"h = :h", map[string]bool{"a": true, "zz": true}},
		{"h = :h AND r = :lo", map[string]bool{"b": true, "c": false}},
		{"h = :h AND r < :lo", map[string]bool{"a": true, "b": false}},
		{"h = :h AND r <= :lo", map[string]bool{"b": true, "c": false}},
		{"h = :h AND r > :lo", map[string]bool{"b": false, "c": true}},
		{"h = :h AND r >= :lo", map[string]bool{"a": false, "b": true}},
		{"h = :h AND r BETWEEN :lo AND :hi", map[string]bool{"a": false, "b": true, "c": true, "d": true, "da": false}},
		{"h = :h AND begins_with(r, :pre)", map[string]bool{"abc": true, "ab": true, "a": false, "b": false}},
	}
	for _, tt := range tests {
		kc, err := ParseKeyCondition(tt.expr, attrs(t, nil, vals), schema)
		if err != nil {
			t.Fatalf("%q: %v", tt.expr, err)
		}
		for r, want := range tt.in {
			if got := kc.Match(av.Str(r)); got != want {
				t.Errorf("%q with r=%q: got %v, want %v", tt.expr, r, got, want)
			}
		}
		if kc.RangeOp != "" && kc.Match(nil) {
			t.Errorf("%q matches a missing sort key", tt.expr)
		}
	}
}
