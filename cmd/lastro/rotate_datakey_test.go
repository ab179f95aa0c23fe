package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lastro/collections/secret"
)

// TestRotateDataKey seeds two tenants on a store on disk, rotates the
// data key to one read from the environment, then runs again with only
// the new key configured: every tenant's secrets open and no profile is
// left under the old key. Bad input is one line, never a key.
func TestRotateDataKey(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LASTRO_DATA_DIR", dir)
	t.Setenv("LASTRO_ADMIN_TOKEN", testAdminToken)
	t.Setenv("LASTRO_NOW", "2026-09-24T12:00:00Z")
	newKey := base64.StdEncoding.EncodeToString(secret.Random(secret.KeySize))
	t.Setenv("LASTRO_TEST_NEW_KEY", newKey)
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
	if _, _, err := do("table", "create", "--archive"); err != nil {
		t.Fatal(err)
	}
	oldKey, err := os.ReadFile(filepath.Join(dir, "data.key"))
	if err != nil {
		t.Fatal(err)
	}
	type report struct {
		Resealed  map[string]int64
		Profiles  int64
		Tenants   int64
		Retirable bool `json:"oldKeysRetirable"`
	}
	if _, _, err := do("rotate", "data-key", "--new-key", "env:LASTRO_TEST_NEW_KEY"); err == nil || !strings.Contains(err.Error(), "migrate verify tenant-debtors") {
		t.Fatalf("rotate before the index is verified: %v", err)
	}
	if out, _, err := do("migrate", "verify", "tenant-debtors"); err != nil {
		t.Fatalf("verify: %v %s", err, out)
	}
	out, progress, err := do("rotate", "data-key", "--new-key", "env:LASTRO_TEST_NEW_KEY", "--wcu", "0")
	var rep report
	if err != nil || json.Unmarshal([]byte(out), &rep) != nil || !rep.Retirable || rep.Tenants != 2 || rep.Profiles != 6 ||
		rep.Resealed["tenants"] != 2 || rep.Resealed["profiles"] != 6 {
		t.Fatalf("rotate: %v %s\n%s", err, out, progress)
	}
	if !strings.Contains(progress, "sealing under data key v2") || !strings.Contains(progress, "can be retired") {
		t.Errorf("progress: %s", progress)
	}
	// The new key alone, under its id: nothing left to re-seal (the
	// job's counts are those of the first run).
	t.Setenv("LASTRO_DATA_KEY", newKey)
	t.Setenv("LASTRO_DATA_KEY_ID", "v2")
	out, progress, err = do("rotate", "data-key")
	rep = report{}
	if err != nil || json.Unmarshal([]byte(out), &rep) != nil || !rep.Retirable || rep.Profiles != 6 || rep.Resealed["profiles"] != 6 {
		t.Fatalf("rotate with only the new key: %v %s\n%s", err, out, progress)
	}
	t.Setenv("LASTRO_EMPTY_KEY", "")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"rotate", "data-key", "--new-key", "env:LASTRO_EMPTY_KEY"}, "is empty"},
		{[]string{"rotate", "data-key", "--new-key", filepath.Join(dir, "missing")}, "--new-key"},
		{[]string{"rotate", "data-key", "--new-key", "env:LASTRO_ADMIN_TOKEN"}, "32 bytes in base64"},
		{[]string{"rotate", "data-key", "--new-key", "env:LASTRO_TEST_NEW_KEY", "--new-kms-key", "arn:aws:kms:x"}, "not both"},
		{[]string{"rotate", "data-key", "--new-kms-key", "arn:aws:kms:x"}, "needs LASTRO_KMS_KEY_ID"},
		{[]string{"rotate", "data-key", "--wcu", "-1"}, "--wcu"},
		{[]string{"rotate", "keys"}, "unknown rotate command"},
		{[]string{"rotate", "data-key", "--table", "lastro-archive"}, "not a Lastro table"},
	} {
		_, stderr, err := do(tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line holding %q", tt.args, err, tt.want)
		}
		for _, k := range []string{newKey, strings.TrimSpace(string(oldKey)), testAdminToken} {
			if err != nil && (strings.Contains(err.Error(), k) || strings.Contains(stderr, k)) {
				t.Errorf("%v: a key in the error or output", tt.args)
			}
		}
	}
}
