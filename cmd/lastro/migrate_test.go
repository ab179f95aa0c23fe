package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestMigrateCommands seeds two tenants on a store on disk and runs the
// shipped migration end to end: list, plan, run and verify, then the
// refusals of bad input and of a table that is not Lastro's.
func TestMigrateCommands(t *testing.T) {
	t.Setenv("LASTRO_DATA_DIR", t.TempDir())
	t.Setenv("LASTRO_ADMIN_TOKEN", testAdminToken)
	t.Setenv("LASTRO_NOW", "2026-09-24T12:00:00Z")
	do := func(args ...string) (string, string, error) {
		t.Helper()
		var out, errw bytes.Buffer
		err := run(context.Background(), args, &out, &errw)
		return out.String(), errw.String(), err
	}
	for _, tn := range []string{"t-a", "t-b"} {
		if _, _, err := do("demo", "seed", "--tenant", tn, "--debtors", "3"); err != nil {
			t.Fatalf("seed %s: %v", tn, err)
		}
	}
	if out, _, err := do("migrate", "list"); err != nil || !strings.Contains(out, "tenant-debtors\tbackfill") {
		t.Fatalf("list: %v %q", err, out)
	}
	out, progress, err := do("migrate", "plan", "tenant-debtors", "--wcu", "50")
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	var p struct{ Scanned, Changes, Carrying int64 }
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.Scanned != 6 || p.Changes != 0 || p.Carrying != 6 {
		t.Fatalf("plan: %v %s", err, out)
	}
	if !strings.Contains(progress, "0 items would change") {
		t.Fatalf("plan progress: %s", progress)
	}
	if out, _, err := do("migrate", "run", "tenant-debtors", "--segments", "2"); err != nil || !strings.Contains(out, `"done": true`) {
		t.Fatalf("run: %v %s", err, out)
	}
	out, _, err = do("migrate", "verify", "tenant-debtors")
	var v struct {
		OK     bool
		Counts []struct{ Tenant string }
	}
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || !v.OK || len(v.Counts) != 2 {
		t.Fatalf("verify: %v %s", err, out)
	}
	if _, _, err := do("table", "create", "--archive"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate"}, "no migrate command"},
		{[]string{"migrate", "undo", "tenant-debtors"}, "unknown migrate command"},
		{[]string{"migrate", "run"}, "no migration given"},
		{[]string{"migrate", "run", "--wcu", "5"}, "no migration given"},
		{[]string{"migrate", "plan", "no-such"}, "unknown migration"},
		{[]string{"migrate", "run", "tenant-debtors", "--wcu", "-1"}, "--wcu"},
		{[]string{"migrate", "run", "tenant-debtors", "--segments", "0"}, "--segments"},
		{[]string{"migrate", "run", "tenant-debtors", "--page", "x"}, "invalid value"},
		{[]string{"migrate", "verify", "tenant-debtors", "--table", "lastro-archive"}, "not a Lastro table"},
	} {
		if _, _, err := do(tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line holding %q", tt.args, err, tt.want)
		}
	}
}
