package kit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/keys"
	"lastro/collections/kit"
)

// TestMaintenanceScanPagesResumes reads one segment in small pages,
// filtered on type, stops after the second page and resumes after the
// key it reported: together the two passes see every item of the type
// once and nothing else.
func TestMaintenanceScanPagesResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tn := e.kit.Tenant("t1", nil)
	var puts []kit.Item
	for i := range 30 {
		typ := "PROFILE"
		if i%3 == 0 {
			typ = "EVENT"
		}
		puts = append(puts, item(keys.Debtor("t1", fmt.Sprintf("%016x", i)), keys.ProfileSK, "type", typ))
	}
	if err := tn.BatchWrite(ctx, puts, nil); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	stop := errors.New("stop")
	var resume *kit.Key
	pages := 0
	visit := func(items []kit.Item, next *kit.Key) error {
		for _, it := range items {
			if str(it, "type") != "PROFILE" {
				t.Fatalf("filter let %s through", str(it, "type"))
			}
			seen[str(it, "PK")]++
		}
		resume, pages = next, pages+1
		if pages == 2 {
			return stop
		}
		return nil
	}
	spec := kit.ScanSpec{Segment: 0, Total: 1, Type: "PROFILE", Limit: 4}
	if err := e.kit.MaintenanceScanPages(ctx, "test", spec, visit); !errors.Is(err, stop) || resume == nil {
		t.Fatalf("first pass: %v, resume %v", err, resume)
	}
	spec.After = resume
	if err := e.kit.MaintenanceScanPages(ctx, "test", spec, visit); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 20 {
		t.Fatalf("%d profiles seen, want 20", len(seen))
	}
	for pk, n := range seen {
		if n != 1 {
			t.Fatalf("%s seen %d times", pk, n)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := e.kit.MaintenanceScanPages(cctx, "test", spec, visit); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func str(it kit.Item, attr string) string {
	if v, ok := it[attr].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}
