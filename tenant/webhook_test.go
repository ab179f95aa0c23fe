package tenant_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"lastro/engine/enginetest"
)

// deliver posts a settlement for an unknown charge (recorded as unmatched,
// 200) signed with secret at the engine's now, and returns the status.
func deliver(t *testing.T, env *enginetest.Env, tenantID, secret string, n int) (int, string) {
	t.Helper()
	body := enginetest.WebhookBody(fmt.Sprintf("stl-rot-%d", n), "E9f2c1a7e4b0d3e61A7bX2kQ9mZ4pL8", 102500, "2026-09-24T10:15:00-03:00")
	status, raw, err := env.Deliver(tenantID, secret, body, env.Clock.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return status, raw
}

func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	k := env.CreateTenant(t, "t-rot")
	old := k["webhook"]
	if status, raw := deliver(t, env, "t-rot", old, 0); status != http.StatusOK {
		t.Fatalf("before rotation: %d %s", status, raw)
	}
	for _, tt := range []struct {
		name, token, body string
		status            int
		code              string
	}{
		{"operator may not rotate", k["operator"], `{}`, 403, "forbidden"},
		{"negative overlap", k["supervisor"], `{"overlapSeconds":-1}`, 400, "invalid_overlap"},
		{"overlap over 7 days", k["supervisor"], `{"overlapSeconds":604801}`, 400, "invalid_overlap"},
		{"overlap not a number", k["supervisor"], `{"overlapSeconds":"1h"}`, 400, "invalid_json"},
	} {
		if status, out := env.Do(t, http.MethodPost, "/v1/tenant/webhook-secret/rotate", tt.token, tt.body); status != tt.status || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v", tt.name, status, out)
		}
	}
	if status, raw := deliver(t, env, "t-rot", old, 1); status != http.StatusOK {
		t.Fatalf("refused rotations changed the secret: %d %s", status, raw)
	}

	status, out := env.Do(t, http.MethodPost, "/v1/tenant/webhook-secret/rotate", k["supervisor"], `{"overlapSeconds":600}`)
	if status != http.StatusOK {
		t.Fatalf("rotate: %d %v", status, out)
	}
	fresh, _ := out["webhookSecret"].(string)
	until := env.Clock.Now().Add(600 * time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
	if fresh == "" || fresh == old || out["previousValidUntil"] != until {
		t.Fatalf("rotated: %v (want previousValidUntil %s)", out, until)
	}
	// During the overlap both secrets verify.
	for i, secret := range []string{old, fresh} {
		if status, raw := deliver(t, env, "t-rot", secret, 10+i); status != http.StatusOK {
			t.Fatalf("within the overlap, secret %d: %d %s", i, status, raw)
		}
	}
	env.Clock.Advance(599 * time.Second)
	if status, raw := deliver(t, env, "t-rot", old, 12); status != http.StatusOK {
		t.Fatalf("old secret 1 s before the overlap ends: %d %s", status, raw)
	}
	// After it, only the new one.
	env.Clock.Advance(time.Second)
	if status, raw := deliver(t, env, "t-rot", old, 13); status != http.StatusUnauthorized || enginetest.ErrorCode(enginetest.JSON(t, raw)) != "invalid_signature" {
		t.Fatalf("old secret after the overlap: %d %s", status, raw)
	}
	if status, raw := deliver(t, env, "t-rot", fresh, 14); status != http.StatusOK {
		t.Fatalf("new secret after the overlap: %d %s", status, raw)
	}

	// A rotation without overlap cuts over at once; the default overlap
	// is an hour.
	_, out = env.Do(t, http.MethodPost, "/v1/tenant/webhook-secret/rotate", k["supervisor"], `{"overlapSeconds":0}`)
	third, _ := out["webhookSecret"].(string)
	if out["previousValidUntil"] != nil {
		t.Fatalf("no overlap: %v", out)
	}
	if status, _ := deliver(t, env, "t-rot", fresh, 20); status != http.StatusUnauthorized {
		t.Fatalf("replaced secret without overlap: %d", status)
	}
	status, out = env.Do(t, http.MethodPost, "/v1/tenant/webhook-secret/rotate", k["supervisor"], "")
	if status != http.StatusOK || out["previousValidUntil"] != env.Clock.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("default overlap: %d %v", status, out)
	}
	for i, secret := range []string{third, out["webhookSecret"].(string)} {
		if status, _ := deliver(t, env, "t-rot", secret, 30+i); status != http.StatusOK {
			t.Fatalf("default overlap, secret %d: %d", i, status)
		}
	}
	// The tenant's other secrets survived the rotations: its API keys
	// and debtor keys still work.
	if status, _ := env.Do(t, http.MethodGet, "/v1/tenant", k["operator"], ""); status != http.StatusOK {
		t.Fatalf("tenant after rotations: %d", status)
	}
}
