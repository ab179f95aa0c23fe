package tenant_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"lastro/engine/enginetest"
	"lastro/tenant"
)

func keyID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:tenant.KeyIDLength]
}

func fullHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// listKeys is GET /v1/tenant/keys as keyId → item.
func listKeys(t *testing.T, env *enginetest.Env, token string) (map[string]map[string]any, string) {
	t.Helper()
	status, raw := env.Raw(t, http.MethodGet, "/v1/tenant/keys", token, "")
	if status != http.StatusOK {
		t.Fatalf("list keys: %d %s", status, raw)
	}
	out := map[string]map[string]any{}
	for _, it := range enginetest.JSON(t, raw)["items"].([]any) {
		m := it.(map[string]any)
		out[m["keyId"].(string)] = m
	}
	return out, raw
}

func TestKeysListCreateRevoke(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	k := env.CreateTenant(t, "t-keys")
	sup := k["supervisor"]

	listed, raw := listKeys(t, env, sup)
	if len(listed) != 3 {
		t.Fatalf("%d keys listed, want 3: %s", len(listed), raw)
	}
	for _, role := range []string{"operator", "supervisor", "compliance"} {
		it := listed[keyID(k[role])]
		if it == nil || it["role"] != role || it["createdAt"] == "" || it["revokedAt"] != nil {
			t.Errorf("%s key listed as %v", role, it)
		}
		if strings.Contains(raw, k[role]) || strings.Contains(raw, fullHash(k[role])) {
			t.Errorf("the list shows the %s key or its full hash", role)
		}
	}

	for _, tt := range []struct {
		name, method, path, token, body string
		status                          int
		code                            string
	}{
		{"operator may not list", http.MethodGet, "/v1/tenant/keys", k["operator"], "", 403, "forbidden"},
		{"compliance may not create", http.MethodPost, "/v1/tenant/keys", k["compliance"], `{"role":"operator"}`, 403, "forbidden"},
		{"operator may not revoke", http.MethodDelete, "/v1/tenant/keys/" + keyID(sup), k["operator"], "", 403, "forbidden"},
		{"admin is no role of a key", http.MethodPost, "/v1/tenant/keys", sup, `{"role":"admin"}`, 400, "invalid_role"},
		{"no role", http.MethodPost, "/v1/tenant/keys", sup, `{}`, 400, "invalid_role"},
		{"unknown field", http.MethodPost, "/v1/tenant/keys", sup, `{"role":"operator","x":1}`, 400, "invalid_json"},
		{"malformed key id", http.MethodDelete, "/v1/tenant/keys/XYZ", sup, "", 400, "invalid_key_id"},
		{"unknown key id", http.MethodDelete, "/v1/tenant/keys/0123456789abcdef", sup, "", 404, "key_not_found"},
	} {
		status, out := env.Do(t, tt.method, tt.path, tt.token, tt.body)
		if status != tt.status || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want %d %s", tt.name, status, out, tt.status, tt.code)
		}
	}

	// A new key works at once and is listed.
	status, created := env.Do(t, http.MethodPost, "/v1/tenant/keys", sup, `{"role":"operator"}`)
	if status != http.StatusCreated {
		t.Fatalf("create key: %d %v", status, created)
	}
	fresh := created["apiKey"].(string)
	if created["keyId"] != keyID(fresh) || created["role"] != "operator" || !strings.HasPrefix(fresh, "lst_t-keys_") {
		t.Fatalf("created %v", created)
	}
	if status, _ := env.Do(t, http.MethodGet, "/v1/tenant", fresh, ""); status != http.StatusOK {
		t.Fatalf("new key: %d", status)
	}
	if listed, _ = listKeys(t, env, sup); len(listed) != 4 || listed[keyID(fresh)] == nil {
		t.Fatalf("after create: %v", listed)
	}

	// The old operator key, used (so cached), is revoked: 401 on the
	// very next request; the other keys go on working.
	old := k["operator"]
	if status, _ := env.Do(t, http.MethodGet, "/v1/tenant", old, ""); status != http.StatusOK {
		t.Fatalf("operator key before revocation: %d", status)
	}
	status, revoked := env.Do(t, http.MethodDelete, "/v1/tenant/keys/"+keyID(old), sup, "")
	if status != http.StatusOK || revoked["keyId"] != keyID(old) || revoked["revokedAt"] == nil {
		t.Fatalf("revoke: %d %v", status, revoked)
	}
	if status, out := env.Do(t, http.MethodGet, "/v1/tenant", old, ""); status != http.StatusUnauthorized || enginetest.ErrorCode(out) != "unauthenticated" {
		t.Fatalf("revoked key: %d %v", status, out)
	}
	if status, _ := env.Do(t, http.MethodGet, "/v1/tenant", fresh, ""); status != http.StatusOK {
		t.Fatalf("other operator key after the revocation: %d", status)
	}
	listed, _ = listKeys(t, env, sup)
	if listed[keyID(old)]["revokedAt"] != revoked["revokedAt"] || listed[keyID(fresh)]["revokedAt"] != nil {
		t.Fatalf("after revoke: %v", listed)
	}
	// Revoking again answers the key as it is.
	if status, again := env.Do(t, http.MethodDelete, "/v1/tenant/keys/"+keyID(old), sup, ""); status != http.StatusOK || again["revokedAt"] != revoked["revokedAt"] {
		t.Fatalf("revoke twice: %d %v", status, again)
	}
	// Another tenant's key id is not found in this tenant.
	other := env.CreateTenant(t, "t-keys-other")
	if status, out := env.Do(t, http.MethodDelete, "/v1/tenant/keys/"+keyID(other["operator"]), sup, ""); status != 404 || enginetest.ErrorCode(out) != "key_not_found" {
		t.Fatalf("another tenant's key: %d %v", status, out)
	}
	if status, _ := env.Do(t, http.MethodGet, "/v1/tenant", other["operator"], ""); status != http.StatusOK {
		t.Fatalf("the other tenant's key: %d", status)
	}
}

func TestLastSupervisorKeyIsNotRevoked(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	k := env.CreateTenant(t, "t-lock")
	sup := k["supervisor"]
	if status, out := env.Do(t, http.MethodDelete, "/v1/tenant/keys/"+keyID(sup), sup, ""); status != http.StatusConflict || enginetest.ErrorCode(out) != "last_supervisor_key" {
		t.Fatalf("revoke the only supervisor key: %d %v", status, out)
	}
	if status, _ := env.Do(t, http.MethodGet, "/v1/tenant", sup, ""); status != http.StatusOK {
		t.Fatal("the refused revocation revoked the key")
	}
	// With a second supervisor key either may go, not both, even when
	// both revocations race.
	_, created := env.Do(t, http.MethodPost, "/v1/tenant/keys", sup, `{"role":"supervisor"}`)
	second := created["apiKey"].(string)
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i, pair := range [][2]string{{sup, second}, {second, sup}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// each key revokes the other one
			statuses[i], _ = env.Raw(t, http.MethodDelete, "/v1/tenant/keys/"+keyID(pair[1]), pair[0], "")
		}()
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		switch s {
		case http.StatusOK:
			ok++
		case http.StatusConflict, http.StatusUnauthorized: // refused, or the caller was revoked first
		default:
			t.Errorf("racing revocation: %d", s)
		}
	}
	if ok != 1 {
		t.Fatalf("%d racing revocations succeeded (%v), want 1", ok, statuses)
	}
	active := 0
	for _, key := range []string{sup, second} {
		if status, _ := env.Do(t, http.MethodGet, "/v1/tenant", key, ""); status == http.StatusOK {
			active++
		}
	}
	if active != 1 {
		t.Fatalf("%d supervisor keys left working, want 1", active)
	}
}

// TestRevocationReachesOtherInstances: two engines on one store. The
// revoking instance refuses the key at once; another one that cached it
// goes on accepting it for its key cache window and no longer.
func TestRevocationReachesOtherInstances(t *testing.T) {
	t.Parallel()
	a := enginetest.New(t)
	b := enginetest.New(t, enginetest.SharedWith(a))                                                                       // default window: 10 s
	c := enginetest.New(t, enginetest.SharedWith(a), enginetest.Auth(tenant.Options{KeyCacheTTL: 200 * time.Millisecond})) // short window
	k := a.CreateTenant(t, "t-multi")
	for _, env := range []*enginetest.Env{a, b, c} {
		if status, _ := env.Do(t, http.MethodGet, "/v1/tenant", k["operator"], ""); status != http.StatusOK {
			t.Fatalf("before revocation: %d", status)
		}
	}
	if status, _ := a.Do(t, http.MethodDelete, "/v1/tenant/keys/"+keyID(k["operator"]), k["supervisor"], ""); status != http.StatusOK {
		t.Fatalf("revoke: %d", status)
	}
	if status, _ := a.Do(t, http.MethodGet, "/v1/tenant", k["operator"], ""); status != http.StatusUnauthorized {
		t.Fatalf("revoking instance: %d, want 401 at once", status)
	}
	if status, _ := b.Do(t, http.MethodGet, "/v1/tenant", k["operator"], ""); status != http.StatusOK {
		t.Fatalf("other instance within its window: %d, want the cached answer", status)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, _ := c.Do(t, http.MethodGet, "/v1/tenant", k["operator"], "")
		if status == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance with a 200 ms window still accepts the revoked key: %d", status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
