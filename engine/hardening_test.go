package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/google/uuid"

	"lastro/ddblocal"
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

// TestRequestIDsOfASafeShapeOnly: a client's X-Request-ID is kept only
// when it is a UUID or 8-64 of [A-Za-z0-9-] with a letter; anything else
// (a formatted or bare CPF sent as the id) is replaced by a generated id
// and never reaches the logs or the audit trail.
func TestRequestIDsOfASafeShapeOnly(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	keys := env.CreateTenant(t, "t-rid")
	u := uuid.NewString()
	tests := []struct {
		id   string
		kept bool
	}{
		{u, true},
		{strings.ToUpper(u), true},
		{"req-0123abcd", true},
		{"abcdefgh", true},
		{"529.982.247-25", false}, // a formatted CPF
		{"52998224725", false},    // a bare CPF: digits only
		{"11222333000181", false}, // a bare CNPJ
		{"short-7", false},        // too short
		{strings.Repeat("a", 65), false},
		{"req id with spaces", false},
		{"req_0123abcd", false},
		{"req\u00e9-0123abcd", false},
	}
	for i, tt := range tests {
		body := fmt.Sprintf(`{"document":%q,"name":"Pessoa Sintética"}`, env.CPF())
		req, err := http.NewRequest(http.MethodPost, env.URL+"/v1/debtors", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+keys["operator"])
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-ID", tt.id)
		resp, err := env.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := resp.Header.Get("X-Request-ID")
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("case %d: register: %d", i, resp.StatusCode)
		}
		if kept := got == tt.id; kept != tt.kept {
			t.Errorf("%q: answered with id %q, kept %v, want kept %v", tt.id, got, kept, tt.kept)
		}
		if _, err := uuid.Parse(got); !tt.kept && err != nil {
			t.Errorf("%q: replaced by %q, not a generated UUID", tt.id, got)
		}
	}
	logs := env.Logs.String()
	var items strings.Builder
	for _, it := range env.ScanAll(t) {
		var m map[string]any
		if err := attributevalue.UnmarshalMap(it, &m); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&items, "%v\n", m)
	}
	for _, tt := range tests {
		if tt.kept {
			continue
		}
		if strings.Contains(logs, tt.id) {
			t.Errorf("refused id %q is in the logs", tt.id)
		}
		if strings.Contains(items.String(), tt.id) {
			t.Errorf("refused id %q is in a stored item (audit event)", tt.id)
		}
	}
	if !strings.Contains(items.String(), "req-0123abcd") {
		t.Error("a kept id is not on the registration's audit event: the scan proves nothing")
	}
}

// TestHugePercentIsRefusedBeforeParsing: a million-digit percent (inside
// the 1 MiB body limit) is a 400 over HTTP. That it is refused before the
// decimal parser, whose cost grows with the square of the digits, is
// proven without a clock by the policy package's allocation test
// (TestHugePercentIsRefusedWithoutParsing): a wall-time bound here failed
// on a loaded machine.
func TestHugePercentIsRefusedBeforeParsing(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	keys := env.CreateTenant(t, "t-pct")
	digits := strings.Repeat("7", 1_000_000)
	for _, field := range []string{"finePercent", "lateInterestMonthlyPercent"} {
		body := `{"finePercent":"1.00","lateInterestMonthlyPercent":"1.00"}`
		body = strings.Replace(body, `"`+field+`":"1.00"`, `"`+field+`":"0.`+digits+`"`, 1)
		status, out := env.Do(t, http.MethodPut, "/v1/policies/charges", keys["supervisor"], body)
		if status != http.StatusBadRequest || enginetest.ErrorCode(out) != "invalid_percent" {
			t.Fatalf("%s of a million digits: %d %v, want 400 invalid_percent", field, status, out)
		}
	}
}

// TestPercentsArePlainDecimals: the decimal parser takes exponents and
// signs ("1e0" is 1); a policy's percent may not, so every reader of the
// stored policy reads what the client meant. Each is a 400 and the
// policy stays the built-in one.
func TestPercentsArePlainDecimals(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	keys := env.CreateTenant(t, "t-pct-exp")
	for _, v := range []string{"1e0", "1E0", "2e-2", "0.01e2", "+1.00", "-0", " 1.00", ".5", "1."} {
		for _, field := range []string{"finePercent", "lateInterestMonthlyPercent"} {
			body := `{"finePercent":"1.00","lateInterestMonthlyPercent":"1.00"}`
			body = strings.Replace(body, `"`+field+`":"1.00"`, `"`+field+`":"`+v+`"`, 1)
			status, out := env.Do(t, http.MethodPut, "/v1/policies/charges", keys["supervisor"], body)
			if status != http.StatusBadRequest || enginetest.ErrorCode(out) != "invalid_percent" {
				t.Errorf("%s %q: %d %v, want 400 invalid_percent", field, v, status, out)
			}
		}
	}
	if status, out := env.Do(t, http.MethodGet, "/v1/policies/charges", keys["operator"], ""); status != http.StatusOK || out["version"] != float64(0) {
		t.Errorf("after the refusals: %d %v, want the built-in version 0", status, out)
	}
}

// TestCursorsExpire: a cursor carries its issue time under the signature
// and is refused with 400 invalid_cursor once older than its 24 h
// lifetime, on the engine's clock.
func TestCursorsExpire(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	keys := env.CreateTenant(t, "t-cur")
	status, out := env.Do(t, http.MethodPost, "/v1/debtors", keys["operator"], fmt.Sprintf(`{"document":%q,"name":"Pessoa Sintética"}`, env.CPF()))
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, out)
	}
	view := "/v1/debtors/" + out["debtorKey"].(string) + "?limit=1"
	first := func() string {
		status, out := env.Do(t, http.MethodGet, view, keys["operator"], "")
		next, _ := out["nextCursor"].(string)
		if status != 200 || next == "" {
			t.Fatalf("first page: %d %v, want a next cursor", status, out)
		}
		return next
	}
	tests := []struct {
		name   string
		age    time.Duration
		status int
	}{
		{"fresh", 0, 200},
		{"a minute short of its lifetime", 24*time.Hour - time.Minute, 200},
		{"a second past its lifetime", 24*time.Hour + time.Second, 400},
		{"a week old", 7 * 24 * time.Hour, 400},
	}
	for _, tt := range tests {
		cursor := first()
		env.Clock.Advance(tt.age)
		status, out := env.Do(t, http.MethodGet, view+"&cursor="+cursor, keys["operator"], "")
		if status != tt.status || (tt.status == 400) != (enginetest.ErrorCode(out) == "invalid_cursor") {
			t.Errorf("%s: %d %v, want %d", tt.name, status, out, tt.status)
		}
	}
}

// TestBearerSchemeIsCaseInsensitive: the auth scheme is case-insensitive
// (RFC 7235), so "bearer" and "BEARER" authenticate like "Bearer".
func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	keys := env.CreateTenant(t, "t-bearer")
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		status, out := env.Do(t, http.MethodGet, "/v1/tenant", "", "", "Authorization", scheme+" "+keys["operator"])
		if status != 200 || out["tenantId"] != "t-bearer" {
			t.Errorf("scheme %q: %d %v", scheme, status, out)
		}
	}
	if status, out := env.Do(t, http.MethodGet, "/v1/tenant", "", "", "Authorization", "Basic "+keys["operator"]); status != 401 || enginetest.ErrorCode(out) != "unauthenticated" {
		t.Errorf("another scheme: %d %v, want 401", status, out)
	}
}

// logLines are the engine's JSON log lines whose msg is msg.
func logLines(t *testing.T, env *enginetest.Env, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(env.Logs.String(), "\n") {
		if l == "" {
			continue
		}
		m := enginetest.JSON(t, l)
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// TestContentionAndClientAbortsLogAtWarn: a 503 because the store is
// throttling, and a request whose client went away during a store call,
// are logged at WARN: they are not the engine's errors.
func TestContentionAndClientAbortsLogAtWarn(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	keys := env.CreateTenant(t, "t-warn")
	if err := env.Store.SetFault(ddblocal.FaultRule{Kind: ddblocal.FaultThrottling, Rate: 1, Operations: []string{"GetItem"}}); err != nil {
		t.Fatal(err)
	}
	status, out := env.Do(t, http.MethodGet, "/v1/tenant", keys["operator"], "")
	if status != http.StatusServiceUnavailable {
		t.Fatalf("throttled store: %d %v, want 503", status, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.URL+"/v1/tenant", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+keys["operator"])
	if resp, err := env.HTTP.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the request outlived its client: %d", resp.StatusCode)
	}
	var failed []map[string]any
	for deadline := time.Now().Add(10 * time.Second); len(failed) < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		failed = logLines(t, env, "request failed")
	}
	if len(failed) < 2 {
		t.Fatalf("want two request failed lines, got %v", failed)
	}
	for _, l := range failed {
		if l["level"] != "WARN" {
			t.Errorf("logged at %v, want WARN: %v", l["level"], l)
		}
	}
}
