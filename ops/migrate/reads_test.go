package migrate_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lastro/collections/secret"
	"lastro/ops"
	"lastro/ops/migrate"
)

// TestReadsSwitchOnlyAfterVerify: on a store whose profiles partly lack
// GSI3PK, the readers of the tenant-debtors index do not rely on it:
// offboarding enumerates the debtors by a scan and hands every one over,
// and the data key's re-wrap refuses. A verify with differences leaves
// it so; after the backfill, a verify with none switches the reads.
func TestReadsSwitchOnlyAfterVerify(t *testing.T) {
	t.Parallel()
	s := seed(t, map[string]int{"t-a": 3, "t-b": 2})
	m := migrate.TenantDebtors()
	d := deps(s.env, s.env.Kit, nil)
	switched := func() bool {
		t.Helper()
		ok, err := ops.ReadsSwitched(bg, s.env.Kit, m.Name)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	rewrap := ops.RewrapOptions{SecretsKey: secret.LegacyKeyID, PIIKey: secret.LegacyKeyID}
	if switched() {
		t.Fatal("reads switched before any verify")
	}
	if _, err := ops.RewrapDataKey(bg, d, rewrap); !errors.Is(err, ops.ErrReadsNotSwitched) {
		t.Fatalf("re-wrap before verify: %v", err)
	}
	// The fallback finds the profiles the index misses.
	out := filepath.Join(t.TempDir(), "hand-over")
	if _, err := ops.Offboard(bg, d, "t-b", ops.OffboardOptions{Out: out}); err != nil {
		t.Fatalf("offboard before verify: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "debtors.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), "\n"); n != s.all["t-b"] || s.lacking["t-b"] == 0 {
		t.Fatalf("hand-over of %d debtors, want %d (%d of them missing from the index)", n, s.all["t-b"], s.lacking["t-b"])
	}

	if v, err := migrate.Verify(bg, d, m); !errors.Is(err, migrate.ErrDifferences) || v.Differences == 0 {
		t.Fatalf("verify before the backfill: %v %+v", err, v)
	}
	if switched() {
		t.Fatal("reads switched by a verify with differences")
	}
	if _, err := migrate.Run(bg, d, m, migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	if v, err := migrate.Verify(bg, d, m); err != nil || !v.OK {
		t.Fatalf("verify after the backfill: %v %+v", err, v)
	}
	if !switched() {
		t.Fatal("reads not switched after a verify with zero differences")
	}
	if rep, err := ops.RewrapDataKey(bg, d, rewrap); err != nil || !rep.Retirable || rep.Profiles != int64(s.all["t-a"]) {
		t.Fatalf("re-wrap after verify: %v %+v", err, rep)
	}
}
