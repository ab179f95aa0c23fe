package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

// TestBackupDrill seeds two tenants on a store on disk, then backs it up,
// lists the backup, restores it into a new table with --verify and runs
// the drill: every restore holds the counts per item type of its source.
// Then point-in-time restores on the embedded store: one to an instant
// with nothing changed since verifies against the source, and one to an
// instant before a third tenant was seeded holds the counts per type of
// that instant, not the source's current ones.
func TestBackupDrill(t *testing.T) {
	t.Setenv("LASTRO_DATA_DIR", t.TempDir())
	t.Setenv("LASTRO_ADMIN_TOKEN", testAdminToken)
	t.Setenv("LASTRO_NOW", "2026-09-24T12:00:00Z")
	do := func(args ...string) (string, error) {
		t.Helper()
		var out, errw bytes.Buffer
		err := run(context.Background(), args, &out, &errw)
		return out.String(), err
	}
	for _, tn := range []string{"t-a", "t-b"} {
		if _, err := do("demo", "seed", "--tenant", tn, "--debtors", "3"); err != nil {
			t.Fatalf("seed %s: %v", tn, err)
		}
	}
	if _, err := do("table", "create", "--archive"); err != nil {
		t.Fatal(err)
	}
	out, err := do("backup", "create", "--name", "before-release")
	if err != nil || !strings.Contains(out, "before-release") {
		t.Fatalf("create: %v %s", err, out)
	}
	arn, _, _ := strings.Cut(out, "\t")
	if out, err := do("backup", "list"); err != nil || !strings.Contains(out, arn) {
		t.Fatalf("list: %v %s", err, out)
	}
	type report struct {
		Verified    bool
		Items       int64
		ItemsByType map[string]int64
	}
	verified := func(out string) report {
		t.Helper()
		var v report
		if err := json.Unmarshal([]byte(out), &v); err != nil || !v.Verified || v.Items == 0 || v.ItemsByType["PROFILE"] != 6 {
			t.Fatalf("not verified: %v %s", err, out)
		}
		return v
	}
	out, err = do("backup", "restore", "--backup", arn, "--target", "lastro-restored", "--verify")
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	seeded := verified(out)
	out, err = do("backup", "drill")
	if err != nil {
		t.Fatalf("drill: %v", err)
	}
	verified(out)

	t.Setenv("LASTRO_NOW", "2026-09-24T12:30:00Z")
	out, err = do("backup", "restore", "--at", "2026-09-24T12:20:00Z", "--target", "lastro-pitr-1220", "--verify")
	if err != nil {
		t.Fatalf("restore --at: %v", err)
	}
	verified(out)
	t.Setenv("LASTRO_NOW", "2026-09-24T12:40:00Z")
	if _, err := do("demo", "seed", "--tenant", "t-c", "--debtors", "2"); err != nil {
		t.Fatalf("seed t-c: %v", err)
	}
	t.Setenv("LASTRO_NOW", "2026-09-24T13:00:00Z")
	out, err = do("backup", "restore", "--at", "2026-09-24T12:30:00Z", "--target", "lastro-pitr-1230", "--verify")
	if err != nil {
		t.Fatalf("restore --at before t-c: %v", err)
	}
	var past report
	if err := json.Unmarshal([]byte(out), &past); err != nil || past.Verified || !maps.Equal(past.ItemsByType, seeded.ItemsByType) {
		t.Fatalf("restore at 12:30 = %v %s, want the counts per type of the two seeded tenants %v (differing from the source now)", err, out, seeded.ItemsByType)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "restore", "--at", "2026-09-24T12:58:00Z", "--target", "xyz"}, "InvalidRestoreTimeException"},
		{[]string{"backup", "restore", "--backup", arn}, "needs --target"},
		{[]string{"backup", "restore", "--target", "x"}, "exactly one of"},
		{[]string{"backup", "restore", "--at", "yesterday", "--target", "x"}, "not an RFC 3339"},
		{[]string{"backup", "restore", "--backup", arn, "--target", "lastro"}, "must be a new table"},
		{[]string{"backup", "restore", "--backup", arn, "--target", "lastro-restored"}, "restore into lastro-restored"},
		{[]string{"backup", "erase"}, "unknown backup command"},
		{[]string{"backup", "list", "--table", "lastro-archive"}, "not a Lastro table"},
	} {
		if _, err := do(tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line holding %q", tt.args, err, tt.want)
		}
	}
}
