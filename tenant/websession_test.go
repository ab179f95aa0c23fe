package tenant_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

func TestWebSessionsAreStoredEndedAndExpired(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t, enginetest.Auth(tenant.Options{KeyCacheTTL: time.Hour}))
	ctx := context.Background()
	a, ka := env.Tenant(t, "t-wsess-a")
	env.Tenant(t, "t-wsess-b")
	const ttl = 8 * time.Hour
	ws, err := env.Tenants.StartSession(ctx, ka["supervisor"], "192.0.2.1", ttl)
	if err != nil {
		t.Fatal(err)
	}
	if ws.TenantID != a.ID || ws.Role != "supervisor" || len(ws.ID) != 32 || ws.Expires.Unix() != env.Clock.Now().Add(ttl).Unix() {
		t.Fatalf("started %+v", ws)
	}
	// The item: in the tenant's partition, the key's fingerprint kept
	// there (never in the cookie), the expiry in the table's TTL attribute.
	it, err := env.Kit.Tenant(a.ID, nil).Get(ctx, kit.Key{PK: keys.Tenant(a.ID), SK: keys.WebSession(ws.ID)}, true)
	if err != nil || it == nil {
		t.Fatalf("session item: %v %v", it, err)
	}
	exp, ok := it[table.TTLAttribute].(*types.AttributeValueMemberN)
	if !ok || exp.Value != strconv.FormatInt(ws.Expires.Unix(), 10) {
		t.Errorf("TTL attribute %s: %#v, want %d", table.TTLAttribute, it[table.TTLAttribute], ws.Expires.Unix())
	}
	if fp, _ := it["fingerprint"].(*types.AttributeValueMemberS); fp == nil || fp.Value != tenant.KeyFingerprint(ka["supervisor"]) {
		t.Errorf("the item does not name its key: %#v", it["fingerprint"])
	}

	other, err := env.Tenants.StartSession(ctx, ka["supervisor"], "192.0.2.1", ttl)
	if err != nil || other.ID == ws.ID {
		t.Fatalf("a second login: %+v %v, want its own id", other, err)
	}
	tests := []struct {
		name, tenantID, id string
		ok                 bool
	}{
		{"its own tenant", a.ID, ws.ID, true},
		{"another tenant", "t-wsess-b", ws.ID, false},
		{"unknown id", a.ID, "0123456789abcdef0123456789abcdef", false},
		{"malformed id", a.ID, "#SK", false},
		{"malformed tenant", "T#x", ws.ID, false},
	}
	for _, tt := range tests {
		got, err := env.Tenants.Session(ctx, tt.tenantID, tt.id)
		if (err == nil) != tt.ok || err != nil && !unauth(err) || tt.ok && got.Role != "supervisor" {
			t.Errorf("%s: %+v %v, want ok %v (else unauthenticated)", tt.name, got, err, tt.ok)
		}
	}

	// Ending one session leaves the other; ending it twice is no error.
	for range 2 {
		if err := env.Tenants.EndSession(ctx, a.ID, ws.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.Tenants.Session(ctx, a.ID, ws.ID); !unauth(err) {
		t.Errorf("ended session: %v, want unauthenticated", err)
	}
	if _, err := env.Tenants.Session(ctx, a.ID, other.ID); err != nil {
		t.Errorf("the other session after the first ended: %v", err)
	}
	// Expiry is the session's own, before the TTL deletes the item.
	env.Clock.Advance(ttl)
	if _, err := env.Tenants.Session(ctx, a.ID, other.ID); !unauth(err) {
		t.Errorf("expired session: %v, want unauthenticated", err)
	}
}

func TestRevokedKeyEndsItsWebSessions(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t, enginetest.Auth(tenant.Options{KeyCacheTTL: time.Hour}))
	ctx := context.Background()
	a, ka := env.Tenant(t, "t-wsess-r")
	ws, err := env.Tenants.StartSession(ctx, ka["operator"], "192.0.2.1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Tenants.RevokeKey(ctx, a, keyID(ka["operator"])); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Tenants.Session(ctx, a.ID, ws.ID); !unauth(err) {
		t.Errorf("session of a revoked key: %v, want unauthenticated", err)
	}
	if _, err := env.Tenants.StartSession(ctx, ka["operator"], "192.0.2.1", time.Hour); !unauth(err) {
		t.Errorf("login with a revoked key: %v, want unauthenticated", err)
	}
}

func unauth(err error) bool {
	var e *errs.Error
	return errors.As(err, &e) && e.Kind == errs.Unauth
}
