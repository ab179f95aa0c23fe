package expr

import (
	"testing"

	"lastro/ddblocal/internal/av"
)

func TestCheckUnused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		names  map[string]string
		values string
		exprs  []string // parsed as conditions, then as updates for "SET"
		want   string
	}{
		{nil, "", []string{"a = b"}, ""},
		{map[string]string{"#a": "a"}, `{":v": {"S": "x"}}`, []string{"#a = :v"}, ""},
		{nil, `{":b": {"S": "x"}}`, []string{"attribute_exists(a)"}, "Value provided in ExpressionAttributeValues unused in expressions: keys: {:b}"},
		{map[string]string{"#a": "a"}, "", []string{"a = b"}, "Value provided in ExpressionAttributeNames unused in expressions: keys: {#a}"},
		{map[string]string{"#b": "b", "#a": "a"}, "", []string{"a = b"}, "Value provided in ExpressionAttributeNames unused in expressions: keys: {#a, #b}"},
		// Names are reported before values.
		{map[string]string{"#a": "a"}, `{":c": {"S": "x"}, ":a": {"S": "x"}}`, []string{"a = b"}, "Value provided in ExpressionAttributeNames unused in expressions: keys: {#a}"},
		{nil, `{":c": {"S": "x"}, ":a": {"S": "x"}, ":b": {"S": "x"}}`, []string{"a = :b"}, "Value provided in ExpressionAttributeValues unused in expressions: keys: {:a, :c}"},
		// Usage accumulates over the request's expressions.
		{map[string]string{"#a": "a", "#b": "b"}, `{":v": {"S": "x"}}`, []string{"#a = :v", "SET #b = :v"}, ""},
		{map[string]string{"#one": "c", "#two": "a", "#three": "z"}, "", []string{"SET #one = #two"}, "Value provided in ExpressionAttributeNames unused in expressions: keys: {#three}"},
	}
	for _, tt := range tests {
		a := attrs(t, tt.names, tt.values)
		for _, e := range tt.exprs {
			var err error
			if len(e) > 3 && e[:3] == "SET" {
				_, err = ParseUpdate(e, a)
			} else {
				_, err = ParseCondition(KindCondition, e, a)
			}
			if err != nil {
				t.Fatalf("%q: %v", e, err)
			}
		}
		if got := errMsg(t, a.CheckUnused()); got != tt.want {
			t.Errorf("%v: got %q, want %q", tt.exprs, got, tt.want)
		}
	}
	var nilAttrs *Attrs
	if err := nilAttrs.CheckUnused(); err != nil {
		t.Errorf("nil Attrs: %v", err)
	}
	if _, err := ParseCondition(KindCondition, "a = :v", NewAttrs(nil, map[string]*av.Value{":v": nil})); errMsg(t, err) == "" {
		t.Error("a nil value was accepted")
	}
}
