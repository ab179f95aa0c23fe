package ddblocal_test

import (
	"testing"
	"time"

	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// A store closed by its user is closed again by ddbtest's cleanup: the
// second Close must not panic.
func TestCloseTwice(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"", t.TempDir()} {
		srv := ddbtest.Start(t, ddblocal.Options{Dir: dir, TTLSweepInterval: 10 * time.Millisecond})
		if err := srv.Store.Close(); err != nil {
			t.Fatal(err)
		}
		if err := srv.Store.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	}
}
