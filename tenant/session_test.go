package tenant_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"lastro/collections/errs"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

func TestSessionFingerprints(t *testing.T) {
	t.Parallel()
	// A long key cache: only this instance's own revocation may end it early.
	env := enginetest.New(t, enginetest.Auth(tenant.Options{KeyCacheTTL: time.Hour}))
	ctx := context.Background()
	a, ka := env.Tenant(t, "t-sess-a")
	env.Tenant(t, "t-sess-b")
	tid, role, fp, err := env.Tenants.SignIn(ctx, ka["operator"], "192.0.2.1")
	if err != nil || tid != a.ID || role != "operator" || fp != tenant.KeyFingerprint(ka["operator"]) || fp != fullHash(ka["operator"]) {
		t.Fatalf("sign in: %q %q %q %v", tid, role, fp, err)
	}
	unauth := func(err error) bool {
		var e *errs.Error
		return errors.As(err, &e) && e.Kind == errs.Unauth
	}
	tests := []struct {
		name       string
		tenantID   string
		fp         string
		wantRole   string
		wantUnauth bool
	}{
		{"its own tenant", a.ID, fp, "operator", false},
		{"another tenant", "t-sess-b", fp, "", true},
		{"unknown key", a.ID, strings.Repeat("0", 64), "", true},
		{"malformed fingerprint", a.ID, "abc", "", true},
		{"malformed tenant", "T#x", fp, "", true},
	}
	for _, tt := range tests {
		got, err := env.Tenants.CheckFingerprint(ctx, tt.tenantID, tt.fp)
		if got != tt.wantRole || unauth(err) != tt.wantUnauth {
			t.Errorf("%s: %q %v, want %q unauthenticated %v", tt.name, got, err, tt.wantRole, tt.wantUnauth)
		}
	}
	if _, err := env.Tenants.RevokeKey(ctx, a, keyID(ka["operator"])); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Tenants.CheckFingerprint(ctx, a.ID, fp); !unauth(err) {
		t.Errorf("revoked key's session: %v, want unauthenticated", err)
	}
	if _, _, _, err := env.Tenants.SignIn(ctx, "not-a-key", "192.0.2.1"); !unauth(err) {
		t.Errorf("sign in with a malformed key: %v", err)
	}
}
