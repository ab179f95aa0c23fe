package main

import (
	"bytes"
	"context"
	"lastro/contract/regua"
	"strings"
	"testing"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
)

func TestDemoSeed(t *testing.T) {
	t.Parallel()
	te := newTestEngine(t)
	ctx := context.Background()
	var out, errOut bytes.Buffer
	if err := seedDemo(ctx, te.Engine, "t-demo", 30, 7, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "seeded 30 debtors") || !strings.Contains(out.String(), "operator") {
		t.Fatalf("output: %s", out.String())
	}
	tn, err := te.Tenants.Get(ctx, "t-demo")
	if err != nil {
		t.Fatal(err)
	}
	// The portfolio index answers by bucket: the seeded late contracts are there.
	db := te.Kit.Tenant(tn.ID, tn.CursorKey())
	inPortfolio := 0
	for _, b := range []string{regua.BucketD001_030, regua.BucketD031_060, regua.BucketD061_090, regua.BucketD091_PLUS} {
		p, err := db.QueryPage(ctx, kit.Query{Index: table.Portfolio, Partition: keys.Bucket(tn.ID, b), Descending: true}, "")
		if err != nil {
			t.Fatal(err)
		}
		inPortfolio += len(p.Items)
	}
	if inPortfolio == 0 {
		t.Fatal("no delinquent contracts in the portfolio index")
	}
	// Every debtor is enumerable through GSI3 (tenant-debtors).
	p, err := db.QueryPage(ctx, kit.Query{Index: table.TenantDebtors, Partition: keys.Profiles(tn.ID)}, "")
	if err != nil || len(p.Items) != 30 {
		t.Fatalf("GSI3: %v %d", err, len(p.Items))
	}
	// Running it again resumes: nothing new, nothing fails.
	out.Reset()
	if err := seedDemo(ctx, te.Engine, "t-demo", 30, 7, &out, &errOut); err != nil || !strings.Contains(out.String(), "and 0 new contracts") {
		t.Fatalf("rerun: %v %s", err, out.String())
	}
}
