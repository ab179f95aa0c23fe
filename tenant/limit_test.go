package tenant_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"lastro/engine/enginetest"
	"lastro/tenant"
)

// calls is how many store calls a business operation made so far.
func calls(env *enginetest.Env, op string) int {
	for _, o := range env.Kit.Meter().Snapshot() {
		if o.Name == op {
			return o.Calls
		}
	}
	return 0
}

// forged is a well-formed key of tenant id that was never issued.
func forged(id, fill string) string { return "lst_" + id + "_" + strings.Repeat(fill, 48) }

// TestMissesAreCached: an unknown key or tenant costs one store read per
// miss window, not one per request; a tenant created after a miss works
// at once on the instance that missed.
func TestMissesAreCached(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	k := env.CreateTenant(t, "t-miss")
	bad := forged("t-miss", "a")
	before := calls(env, "tenant.authenticate")
	for range 5 {
		if status, out := env.Do(t, http.MethodGet, "/v1/tenant", bad, ""); status != http.StatusUnauthorized || enginetest.ErrorCode(out) != "unauthenticated" {
			t.Fatalf("unknown key: %d %v", status, out)
		}
	}
	if n := calls(env, "tenant.authenticate") - before; n != 1 {
		t.Fatalf("5 requests with one unknown key read the store %d times, want 1", n)
	}
	// A revoked key joins the misses too.
	if status, _ := env.Do(t, http.MethodDelete, "/v1/tenant/keys/"+keyID(k["compliance"]), k["supervisor"], ""); status != http.StatusOK {
		t.Fatalf("revoke: %d", status)
	}
	before = calls(env, "tenant.authenticate")
	for range 3 {
		if status, _ := env.Do(t, http.MethodGet, "/v1/tenant", k["compliance"], ""); status != http.StatusUnauthorized {
			t.Fatalf("revoked key: %d", status)
		}
	}
	if n := calls(env, "tenant.authenticate") - before; n != 1 {
		t.Fatalf("3 requests with a revoked key read the store %d times, want 1", n)
	}

	before = calls(env, "tenant.load")
	for i := range 4 {
		status, raw := deliver(t, env, "t-late", "whsec_none", i)
		if status != http.StatusNotFound || enginetest.ErrorCode(enginetest.JSON(t, raw)) != "tenant_not_found" {
			t.Fatalf("unknown tenant: %d %s", status, raw)
		}
	}
	if n := calls(env, "tenant.load") - before; n != 1 {
		t.Fatalf("4 webhooks to an unknown tenant read the store %d times, want 1", n)
	}
	late := env.CreateTenant(t, "t-late")
	if status, raw := deliver(t, env, "t-late", late["webhook"], 9); status != http.StatusOK {
		t.Fatalf("tenant created after a miss: %d %s", status, raw)
	}
	if status, _ := env.Do(t, http.MethodGet, "/v1/tenant", late["operator"], ""); status != http.StatusOK {
		t.Fatalf("its key: %d", status)
	}
}

// get sends GET /v1/tenant and returns the status, error code and
// Retry-After header.
func get(t *testing.T, env *enginetest.Env, token string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, env.URL+"/v1/tenant", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := env.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var code string
	if resp.StatusCode != http.StatusOK {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		code = enginetest.ErrorCode(enginetest.JSON(t, string(b)))
	}
	return resp.StatusCode, code, resp.Header.Get("Retry-After")
}

// TestFailedAuthenticationsAreLimited: past its burst of failures a
// client address gets 429 with Retry-After in the error shape, before any
// store read; a key it already used still passes, and the failures of
// webhooks count against the same budget.
func TestFailedAuthenticationsAreLimited(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t, enginetest.Auth(tenant.Options{FailureBurst: 3, FailureEvery: time.Minute}))
	k := env.CreateTenant(t, "t-brute")
	if status, _, _ := get(t, env, k["operator"]); status != http.StatusOK {
		t.Fatalf("good key: %d", status)
	}
	for i := range 3 {
		if status, code, _ := get(t, env, forged("t-brute", strconv.Itoa(i))); status != http.StatusUnauthorized || code != "unauthenticated" {
			t.Fatalf("failure %d: %d %s", i, status, code)
		}
	}
	before := calls(env, "tenant.authenticate")
	status, code, retry := get(t, env, forged("t-brute", "9"))
	if secs, err := strconv.Atoi(retry); status != http.StatusTooManyRequests || code != "too_many_failures" || err != nil || secs < 1 || secs > 60 {
		t.Fatalf("over the burst: %d %s Retry-After %q", status, code, retry)
	}
	if n := calls(env, "tenant.authenticate") - before; n != 0 {
		t.Fatalf("a refused client reached the store %d times", n)
	}
	if status, _, _ := get(t, env, k["operator"]); status != http.StatusOK {
		t.Fatalf("a cached good key from the limited address: %d", status)
	}
	// A webhook to an uncached tenant is refused too; the store is not
	// read for it.
	before = calls(env, "tenant.load")
	if status, raw := deliver(t, env, "t-nobody", "whsec_none", 0); status != http.StatusTooManyRequests || enginetest.ErrorCode(enginetest.JSON(t, raw)) != "too_many_failures" {
		t.Fatalf("webhook from the limited address: %d %s", status, raw)
	}
	if n := calls(env, "tenant.load") - before; n != 0 {
		t.Fatalf("a refused webhook read the store %d times", n)
	}
}

// TestFailureBudgetRefills: the bucket earns a failure back every
// FailureEvery, and webhook failures spend it as key failures do.
func TestFailureBudgetRefills(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t, enginetest.Auth(tenant.Options{FailureBurst: 2, FailureEvery: 100 * time.Millisecond}))
	k := env.CreateTenant(t, "t-refill")
	for i := range 2 { // two bad signatures: 401 each, the tenant gets cached
		if status, _ := deliver(t, env, "t-refill", "whsec_wrong", i); status != http.StatusUnauthorized {
			t.Fatalf("bad signature %d: %d", i, status)
		}
	}
	if status, code, _ := get(t, env, forged("t-refill", "b")); status != http.StatusTooManyRequests || code != "too_many_failures" {
		t.Fatalf("after two webhook failures: %d %s", status, code)
	}
	// The tenant is cached: its webhook costs no store read, so a
	// correctly signed one passes even now.
	if status, raw := deliver(t, env, "t-refill", k["webhook"], 5); status != http.StatusOK {
		t.Fatalf("good webhook of a cached tenant: %d %s", status, raw)
	}
	time.Sleep(250 * time.Millisecond)
	if status, code, _ := get(t, env, forged("t-refill", "b")); status != http.StatusUnauthorized || code != "unauthenticated" {
		t.Fatalf("after the refill: %d %s", status, code)
	}
}
