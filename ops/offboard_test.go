package ops_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lastro/collections/errs"
	"lastro/collections/kit"
	"lastro/engine/enginetest"
	"lastro/ops"
)

// TestOffboardRemovesExactlyOneTenant offboards t-a beside t-b, killed
// halfway through its deletes and run again: the hand-over holds every
// debtor with the profile decrypted, nothing of t-a is left, t-b's items
// are all there, its API still answers, and t-a's keys no longer do.
func TestOffboardRemovesExactlyOneTenant(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	ta, ka, docs := portfolio(t, env, "t-a", 4)
	_, kb, docsB := portfolio(t, env, "t-b", 2)
	before := countAll(t, env)
	if before["t-a"] == 0 || before["t-b"] == 0 {
		t.Fatalf("fixture: %v", before)
	}
	out := filepath.Join(t.TempDir(), "hand-over")
	api := kit.NewEmbeddedClient(kit.InProcessEndpoint, env.StoreClient)
	ctx, cancel := context.WithCancel(bg)
	cut := &interrupting{API: api, after: 3, cancel: cancel}
	var progress strings.Builder
	_, err := ops.Offboard(ctx, deps(env, kit.New(cut, enginetest.Table), &progress), ta.ID, ops.OffboardOptions{Out: out, WCU: 0})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted offboarding: %v", err)
	}
	if mid := countAll(t, env); mid["t-a"] == 0 || mid["t-a"] == before["t-a"] || mid["t-b"] != before["t-b"] {
		t.Fatalf("the interruption did not stop halfway: %v (before %v)", mid, before)
	}
	rep, err := ops.Offboard(bg, deps(env, env.Kit, &progress), ta.ID, ops.OffboardOptions{Out: out, WCU: 10000})
	if err != nil {
		t.Fatalf("resumed offboarding: %v\n%s", err, progress.String())
	}
	after := countAll(t, env)
	if after["t-a"] != 0 || after["t-b"] != before["t-b"] || rep.Remaining != 0 || !rep.Untouched {
		t.Fatalf("after: %v, before %v, report %+v", after, before, rep)
	}
	if rep.Before["t-a"] != before["t-a"] || rep.After["t-b"] != before["t-b"] {
		t.Fatalf("report counts %v / %v, table %v", rep.Before, rep.After, before)
	}
	// The lookups are deleted by the keys the debtors' items name (a
	// charge, the phone and contract C-1 of each of the 4), not left to
	// the sweep; the debtor the interruption finished may go uncounted.
	if rep.Deleted["lookups"] < 3*3 {
		t.Errorf("%d lookup entries deleted by key, want at least 9: %v", rep.Deleted["lookups"], rep.Deleted)
	}
	if !strings.Contains(progress.String(), "hand-over written") || !strings.Contains(progress.String(), "secrets destroyed") {
		t.Fatalf("progress: %s", progress.String())
	}
	// The hand-over: one report per debtor, the documents decrypted.
	raw, err := os.ReadFile(filepath.Join(out, "debtors.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for line := range strings.Lines(string(raw)) {
		var r struct {
			DebtorKey string
			Profile   struct{ Document string }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if d, ok := docs[r.DebtorKey]; ok && strings.Map(func(c rune) rune {
			if c < '0' || c > '9' {
				return -1
			}
			return c
		}, r.Profile.Document) == d {
			found++
		}
	}
	if found != len(docs) {
		t.Fatalf("hand-over holds %d of %d debtors", found, len(docs))
	}
	if fi, err := os.Stat(filepath.Join(out, "items.jsonl")); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
		t.Fatalf("items.jsonl: %v %v", fi, err)
	}
	// t-a is gone for its API keys; t-b works.
	if status, _ := env.Do(t, "GET", "/v1/tenant", ka["operator"], ""); status != 401 && status != 404 {
		t.Fatalf("offboarded tenant's key: %d", status)
	}
	for dk := range docsB {
		if status, _ := env.Do(t, "GET", "/v1/debtors/"+dk, kb["operator"], ""); status != 200 {
			t.Fatalf("t-b debtor after offboarding t-a: %d", status)
		}
	}
	// Running it again is a no-op.
	if rep, err := ops.Offboard(bg, deps(env, env.Kit, &progress), ta.ID, ops.OffboardOptions{Out: out}); err != nil || rep.Remaining != 0 {
		t.Fatalf("again: %v %+v", err, rep)
	}
}

// TestOffboardBadInput answers in the error vocabulary, never a panic.
func TestOffboardBadInput(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	tests := []struct {
		name, tenant, out, code string
	}{
		{"bad id", "T#x", "dir", "invalid_tenant_id"},
		{"no folder", "t-a", "", "no_out"},
		{"unknown tenant", "t-none", t.TempDir(), "tenant_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ops.Offboard(bg, deps(env, env.Kit, nil), tt.tenant, ops.OffboardOptions{Out: tt.out})
			if _, code, _ := errs.Public(err); code != tt.code {
				t.Fatalf("%v: code %q, want %q", err, code, tt.code)
			}
		})
	}
}
