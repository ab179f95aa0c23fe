package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// get sends GET path to the server with token and X-Forwarded-For (when
// not empty) and returns the status and the error code.
func getWith(t *testing.T, base, path, token, forwarded string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if forwarded != "" {
		req.Header.Set("X-Forwarded-For", forwarded)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.Error.Code
}

func randomKey(tenantID string) string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return "lst_" + tenantID + "_" + hex.EncodeToString(b)
}

// TestOthersFailuresNeverLockOutAValidKey is finding 6 against the
// binary: 25 bad keys from one address (forged ones naming the victim
// tenant, malformed ones) and then a valid key never used before, from
// the same address → 200. Thirty wrong admin tokens get 429 before the
// 30th and spend none of the API keys' budget.
func TestOthersFailuresNeverLockOutAValidKey(t *testing.T) {
	t.Parallel()
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken, "LASTRO_SCHEDULER": "off"})
	api := "http://" + s.addr
	status, raw := do(t, http.MethodPost, api+"/v1/tenants", testAdminToken, `{"tenantId":"t-locked","name":"Alvo"}`)
	var tn struct{ APIKeys map[string]string }
	if status != http.StatusCreated || json.Unmarshal([]byte(raw), &tn) != nil {
		t.Fatalf("tenant: %d %s", status, raw)
	}
	var limited int
	for i := range 25 {
		bad := randomKey("t-locked")
		if i%2 == 1 {
			bad = "lst_t-locked_" + strings.Repeat("z", i)
		}
		switch status, code := getWith(t, api, "/v1/tenant", bad, ""); {
		case status == http.StatusTooManyRequests && code == "too_many_failures":
			limited++
		case status != http.StatusUnauthorized:
			t.Fatalf("bad key %d: %d %s", i, status, code)
		}
	}
	if limited == 0 {
		t.Fatal("25 bad keys were never limited: the budget is not in force, the test proves nothing")
	}
	for _, role := range []string{"compliance", "supervisor", "operator"} {
		if status, code := getWith(t, api, "/v1/tenant", tn.APIKeys[role], ""); status != http.StatusOK {
			t.Fatalf("the valid %s key after others' failures: %d %s", role, status, code)
		}
	}

	other := startServe(t, map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken, "LASTRO_SCHEDULER": "off"})
	api = "http://" + other.addr
	status, raw = do(t, http.MethodPost, api+"/v1/tenants", testAdminToken, `{"tenantId":"t-admin","name":"Admin"}`)
	if status != http.StatusCreated || json.Unmarshal([]byte(raw), &tn) != nil {
		t.Fatalf("tenant: %d %s", status, raw)
	}
	first429 := 0
	for i := 1; i <= 30; i++ {
		status, code := getWith(t, api, "/v1/tenants", "adm_wrong_"+strings.Repeat("x", 30)+hex.EncodeToString([]byte{byte(i)}), "")
		if status == http.StatusTooManyRequests && first429 == 0 {
			first429 = i
		} else if status != http.StatusTooManyRequests && status != http.StatusUnauthorized {
			t.Fatalf("wrong admin token %d: %d %s", i, status, code)
		}
	}
	if first429 == 0 || first429 >= 30 {
		t.Fatalf("30 wrong admin tokens: first 429 at %d, want before the 30th", first429)
	}
	if status, code := getWith(t, api, "/v1/tenant", tn.APIKeys["operator"], ""); status != http.StatusOK {
		t.Fatalf("a tenant key after wrong admin tokens: %d %s", status, code)
	}
}

// TestTrustedProxiesDecideTheClient: behind LASTRO_TRUSTED_PROXIES the
// failures are counted per X-Forwarded-For client, so one client's bad
// keys do not limit another behind the same proxy; without the setting
// the header is ignored (a client cannot pick its own address).
func TestTrustedProxiesDecideTheClient(t *testing.T) {
	t.Parallel()
	limited := func(s *server, forwarded string) bool {
		for range 25 {
			if status, _ := getWith(t, "http://"+s.addr, "/v1/tenant", randomKey("t-x"), forwarded); status == http.StatusTooManyRequests {
				return true
			}
		}
		return false
	}
	env := func(proxies string) map[string]string {
		return map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken, "LASTRO_SCHEDULER": "off",
			"LASTRO_TRUSTED_PROXIES": proxies}
	}
	behind := startServe(t, env("127.0.0.0/8"))
	if !limited(behind, "203.0.113.7") {
		t.Fatal("25 bad keys from one forwarded client were never limited")
	}
	if status, code := getWith(t, "http://"+behind.addr, "/v1/tenant", randomKey("t-y"), "198.51.100.9"); status != http.StatusUnauthorized {
		t.Fatalf("another client behind the proxy: %d %s, want 401", status, code)
	}
	direct := startServe(t, env(""))
	if !limited(direct, "203.0.113.7") {
		t.Fatal("25 bad keys were never limited")
	}
	if status, code := getWith(t, "http://"+direct.addr, "/v1/tenant", randomKey("t-y"), "198.51.100.9"); status != http.StatusTooManyRequests {
		t.Fatalf("a forged X-Forwarded-For without trusted proxies: %d %s, want 429", status, code)
	}
	code, _, stderr := runChild(t, env("not-a-cidr"), "serve")
	if code == 0 || !strings.Contains(stderr, "LASTRO_TRUSTED_PROXIES") {
		t.Fatalf("a bad LASTRO_TRUSTED_PROXIES: exit %d %s", code, stderr)
	}
}
