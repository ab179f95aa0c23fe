package strictjson_test

import (
	"strings"
	"testing"

	"lastro/collections/errs"
	"lastro/collections/strictjson"
)

func TestNoDuplicateFields(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 40) + strings.Repeat("]", 40)
	tests := []struct {
		name, body string
		ok         bool
	}{
		{"flat", `{"a":1,"b":"x"}`, true},
		{"same name in sibling objects", `{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":2}]}`, true},
		{"scalar", `"x"`, true},
		{"top level twice", `{"a":1,"a":1}`, false},
		{"nested twice", `{"a":{"b":[{"c":1,"c":2}]}}`, false},
		{"escaped twice", `{"a":1,"\u0061":2}`, false},
		{"too deep", deep, false},
		{"trailing", `{"a":1}{}`, false},
		{"malformed", `{"a":`, false},
		{"empty", ``, false},
	}
	for _, tt := range tests {
		err := strictjson.NoDuplicateFields([]byte(tt.body))
		if tt.ok != (err == nil) {
			t.Errorf("%s: %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && (!errs.Is(err, errs.Invalid) || strings.Contains(err.Error(), tt.body) && tt.body != "") {
			t.Errorf("%s: %v, want invalid_json without the input", tt.name, err)
		}
	}
}
