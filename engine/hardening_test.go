package engine_test

import (
	"net/http"
	"testing"

	"lastro/engine/enginetest"
)

// TestBodiesHoldExactlyOneJSONValue: a body with anything after its one
// JSON value — a closing bracket or brace included, which the decoder's
// More does not see — is refused and writes nothing.
func TestBodiesHoldExactlyOneJSONValue(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	keys := env.CreateTenant(t, "t-trail")
	tests := []struct {
		name, method, path, role, body string
	}{
		{"policy then ]", http.MethodPut, "/v1/policies/charges", "supervisor", `{"finePercent":"2.00","lateInterestMonthlyPercent":"1.00"}]`},
		{"policy then }", http.MethodPut, "/v1/policies/charges", "supervisor", `{"finePercent":"2.00","lateInterestMonthlyPercent":"1.00"}}`},
		{"policy then a second object", http.MethodPut, "/v1/policies/charges", "supervisor", `{"finePercent":"2.00","lateInterestMonthlyPercent":"1.00"} {}`},
		{"lookup then }", http.MethodPost, "/v1/debtors/lookup", "operator", `{"document":"52998224725"}}`},
		{"holidays then ]", http.MethodPut, "/v1/tenant/holidays", "supervisor", `{"dates":["2027-01-25"]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := env.Do(t, tt.method, tt.path, keys[tt.role], tt.body)
			if status != http.StatusBadRequest || enginetest.ErrorCode(out) != "invalid_json" {
				t.Fatalf("%s %s: %d %v, want 400 invalid_json", tt.method, tt.path, status, out)
			}
		})
	}
	// Nothing was published: the current charges policy is still version 0.
	if status, out := env.Do(t, http.MethodGet, "/v1/policies/charges", keys["operator"], ""); status != 200 || out["version"] != float64(0) {
		t.Fatalf("current charges policy: %d %v, want version 0", status, out)
	}
	// Whitespace after the value is not data.
	if status, out := env.Do(t, http.MethodPut, "/v1/policies/charges", keys["supervisor"], "{\"finePercent\":\"1.50\",\"lateInterestMonthlyPercent\":\"1.00\"}\n \t"); status != http.StatusCreated {
		t.Fatalf("trailing whitespace: %d %v", status, out)
	}
}
