package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestRotateDebtorKeysCommand seeds two tenants on a store on disk and
// rotates one tenant's debtor keys with the command: an interrupted run
// says to run it again, the rerun finishes, -h lists only its flags, and
// a table that is not Lastro's is refused.
func TestRotateDebtorKeysCommand(t *testing.T) {
	t.Setenv("LASTRO_DATA_DIR", t.TempDir())
	t.Setenv("LASTRO_ADMIN_TOKEN", testAdminToken)
	t.Setenv("LASTRO_NOW", "2026-09-24T12:00:00Z")
	do := func(ctx context.Context, args ...string) (string, string, error) {
		t.Helper()
		var out, errw bytes.Buffer
		err := run(ctx, args, &out, &errw)
		return out.String(), errw.String(), err
	}
	bg := context.Background()
	for _, tn := range []string{"t-a", "t-b"} {
		if _, _, err := do(bg, "demo", "seed", "--tenant", tn, "--debtors", "3"); err != nil {
			t.Fatalf("seed %s: %v", tn, err)
		}
	}
	stopped, cancel := context.WithCancel(bg)
	cancel()
	if _, _, err := do(stopped, "rotate", "debtor-keys", "--tenant", "t-a"); err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a stopped run: %v", err)
	}
	out, progress, err := do(bg, "rotate", "debtor-keys", "--tenant", "t-a", "--wcu", "0", "--settle", "0s")
	var rep struct {
		Done       bool
		KeyVersion int
		Counts     map[string]int64
	}
	if err != nil || json.Unmarshal([]byte(out), &rep) != nil || !rep.Done || rep.KeyVersion != 2 || rep.Counts["debtors"] != 3 {
		t.Fatalf("rotate: %v %s\n%s", err, out, progress)
	}
	if !strings.Contains(progress, "debtors moved") || !strings.Contains(progress, "older secret versions retired") {
		t.Fatalf("progress: %s", progress)
	}
	_, help, err := do(bg, "rotate", "debtor-keys", "-h")
	if !errors.Is(err, flag.ErrHelp) || !strings.Contains(help, "-tenant") || !strings.Contains(help, "-wcu") || !strings.Contains(help, "-settle") || strings.Contains(help, "  -addr") || strings.Contains(help, "  -out") {
		t.Fatalf("help: %v\n%s", err, help)
	}
	if _, _, err := do(bg, "table", "create", "--archive"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"rotate"}, "unknown rotate command"},
		{[]string{"rotate", "webhook"}, "unknown rotate command"},
		{[]string{"rotate", "debtor-keys"}, "--tenant"},
		{[]string{"rotate", "debtor-keys", "--tenant", "T#x"}, "--tenant"},
		{[]string{"rotate", "debtor-keys", "--tenant", "t-a", "--wcu", "-1"}, "--wcu"},
		{[]string{"rotate", "debtor-keys", "--tenant", "t-a", "--settle", "-1s"}, "--settle"},
		{[]string{"rotate", "debtor-keys", "--tenant", "t-none"}, "tenant not found"},
		{[]string{"rotate", "debtor-keys", "--tenant", "t-a", "--table", "lastro-archive"}, "not a Lastro table"},
	} {
		if _, _, err := do(bg, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line holding %q", tt.args, err, tt.want)
		}
	}
}
