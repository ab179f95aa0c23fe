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

// TestHolidaysNeedTheirDates: a holiday body without its dates field is a
// 400 and keeps the tenant's days; an explicit empty list still clears them.
func TestHolidaysNeedTheirDates(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	keys := env.CreateTenant(t, "t-hol")
	put := func(body string) (int, map[string]any) {
		return env.Do(t, http.MethodPut, "/v1/tenant/holidays", keys["supervisor"], body)
	}
	extra := func() []any {
		status, out := env.Do(t, http.MethodGet, "/v1/tenant/holidays?year=2027", keys["operator"], "")
		if status != 200 {
			t.Fatalf("get holidays: %d %v", status, out)
		}
		days, _ := out["tenant"].([]any)
		return days
	}
	if status, out := put(`{"dates":["2027-01-25"]}`); status != 200 {
		t.Fatalf("set: %d %v", status, out)
	}
	for _, body := range []string{`{}`, `null`, `{"dates":null}`} {
		if status, out := put(body); status != http.StatusBadRequest || enginetest.ErrorCode(out) != "missing_field" {
			t.Errorf("%s: %d %v, want 400 missing_field", body, status, out)
		}
	}
	if got := extra(); len(got) != 1 {
		t.Fatalf("after refused bodies the tenant's days are %v, want the one set", got)
	}
	if status, out := put(`{"dates":[]}`); status != 200 {
		t.Fatalf("clear: %d %v", status, out)
	}
	if got := extra(); len(got) != 0 {
		t.Fatalf("after an explicit empty list: %v", got)
	}
}
