package kit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// env is one in-memory store with the Lastro table and a kit on it.
type env struct {
	store *ddblocal.Store
	kit   *kit.Kit
}

func newEnv(t *testing.T) env {
	t.Helper()
	srv := ddbtest.Start(t, ddblocal.Options{})
	db := srv.Client()
	if _, err := table.Ensure(context.Background(), db, "lastro"); err != nil {
		t.Fatal(err)
	}
	return env{store: srv.Store, kit: kit.New(db, "lastro")}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func item(pk, sk string, extra ...string) kit.Item {
	it := kit.Item{"PK": s(pk), "SK": s(sk)}
	for i := 0; i+1 < len(extra); i += 2 {
		it[extra[i]] = s(extra[i+1])
	}
	return it
}

func TestQueryPageWalksAPartitionThroughOneMegabytePages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tn := e.kit.Tenant("t1", []byte("cursor-secret"))
	pk := keys.Debtor("t1", "d1")
	pad := strings.Repeat("x", 4000) // ~4 KB items: 1,000 of them need several 1 MB pages
	var puts []kit.Item
	for i := range 1000 {
		puts = append(puts, item(pk, keys.Installment("C-1", i), "pad", pad))
	}
	if err := tn.BatchWrite(ctx, puts, nil); err != nil {
		t.Fatal(err)
	}
	q := kit.Query{Partition: pk, Sort: kit.BeginsWith(keys.InstallmentsPrefix("C-1"))}
	seen := map[string]bool{}
	pages, cursor := 0, ""
	var prev string
	for {
		page, err := tn.QueryPage(ctx, q, cursor)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, it := range page.Items {
			sk := it["SK"].(*types.AttributeValueMemberS).Value
			if seen[sk] || sk <= prev {
				t.Fatalf("item %s repeated or out of order", sk)
			}
			seen[sk], prev = true, sk
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if len(seen) != 1000 {
		t.Fatalf("walked %d items, want 1000", len(seen))
	}
	if pages < 4 || pages > 6 {
		t.Fatalf("%d pages for ~4 MB, want 4-6 (1 MB each)", pages)
	}
}

func TestCursorIsBoundToTenantAndQuery(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	t1 := e.kit.Tenant("t1", []byte("k1"))
	pk := keys.Debtor("t1", "d1")
	for i := range 5 {
		if err := t1.Put(ctx, item(pk, keys.Installment("C-1", i)), nil); err != nil {
			t.Fatal(err)
		}
		if err := t1.Put(ctx, item(pk, keys.Installment("C-2", i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	q1 := kit.Query{Partition: pk, Sort: kit.BeginsWith(keys.InstallmentsPrefix("C-1")), Limit: 2}
	page, err := t1.QueryPage(ctx, q1, "")
	if err != nil || page.Next == "" {
		t.Fatalf("first page: %v, next %q", err, page.Next)
	}
	if _, err := t1.QueryPage(ctx, q1, page.Next); err != nil {
		t.Fatalf("own cursor rejected: %v", err)
	}
	body, sig, _ := strings.Cut(page.Next, ".")
	flipped := []byte(body)
	flipped[len(flipped)/2] ^= 1
	q2 := q1
	q2.Sort = kit.BeginsWith(keys.InstallmentsPrefix("C-2"))
	q3 := q1
	q3.Descending = true
	for name, try := range map[string]func() error{
		"tampered payload": func() error { _, err := t1.QueryPage(ctx, q1, string(flipped)+"."+sig); return err },
		"garbage":          func() error { _, err := t1.QueryPage(ctx, q1, "not-a-cursor"); return err },
		"other query":      func() error { _, err := t1.QueryPage(ctx, q2, page.Next); return err },
		"other direction":  func() error { _, err := t1.QueryPage(ctx, q3, page.Next); return err },
		"other secret": func() error {
			_, err := e.kit.Tenant("t1", []byte("k2")).QueryPage(ctx, q1, page.Next)
			return err
		},
	} {
		err := try()
		if !errors.Is(err, kit.ErrBadCursor) || errs.KindOf(err) != errs.Invalid {
			t.Errorf("%s: error %v, want invalid cursor (400)", name, err)
		}
	}
}

func TestTenantGuardRefusesOtherTenantsKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	victim := e.kit.Tenant("t2", []byte("k"))
	if err := victim.Put(ctx, item(keys.Debtor("t2", "d1"), keys.ProfileSK, "secret", "x"), nil); err != nil {
		t.Fatal(err)
	}
	attacker := e.kit.Tenant("t1", []byte("k"))
	// A prefix trick: tenant "t1" must not reach tenant "t10" either.
	foreign := []kit.Key{{PK: keys.Debtor("t2", "d1"), SK: keys.ProfileSK}, {PK: keys.Debtor("t10", "d1"), SK: keys.ProfileSK}, {PK: "T#t1", SK: "x"}}
	upd := expression.Set(expression.Name("secret"), expression.Value("y"))
	for _, k := range foreign[:2] {
		calls := map[string]func() error{
			"Get":    func() error { _, err := attacker.Get(ctx, k, true); return err },
			"Put":    func() error { return attacker.Put(ctx, item(k.PK, k.SK), nil) },
			"Update": func() error { _, err := attacker.Update(ctx, k, upd, nil, ""); return err },
			"Delete": func() error { return attacker.Delete(ctx, k, nil) },
			"Query":  func() error { _, err := attacker.QueryPage(ctx, kit.Query{Partition: k.PK}, ""); return err },
			"IndexQuery": func() error {
				_, err := attacker.QueryPage(ctx, kit.Query{Index: table.Agenda, Partition: strings.Replace(k.PK, "#D#", "#ACT#", 1)}, "")
				return err
			},
			"BatchGet":   func() error { _, err := attacker.BatchGet(ctx, []kit.Key{k}, false); return err },
			"BatchWrite": func() error { return attacker.BatchWrite(ctx, nil, []kit.Key{k}) },
			"Transact":   func() error { return attacker.Transact(ctx, kit.DeleteAction(k, nil)) },
		}
		for name, call := range calls {
			err := call()
			if !errors.Is(err, kit.ErrOutsideTenant) || errs.KindOf(err) != errs.Permission {
				t.Errorf("%s on %s: error %v, want the tenant guard", name, k.PK, err)
				continue
			}
			if strings.Contains(err.Error(), k.PK) || strings.Contains(err.Error(), "d1") {
				t.Errorf("%s: guard error names the key: %v", name, err)
			}
		}
	}
	// The tenant's own partition item is allowed.
	if err := attacker.Put(ctx, item(foreign[2].PK, foreign[2].SK), nil); err != nil {
		t.Fatalf("own tenant item refused: %v", err)
	}
	got, err := victim.Get(ctx, foreign[0], true)
	if err != nil || got["secret"].(*types.AttributeValueMemberS).Value != "x" {
		t.Fatalf("victim item changed: %v %v", got, err)
	}
}

// TestDirectoryIsReachableOnlyThroughItsHandles: the directory of
// tenants is the one partition outside every tenant; a tenant handle
// reaches it only when asked to (WithDirectory), and the directory handle
// reaches nothing else.
func TestDirectoryIsReachableOnlyThroughItsHandles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	entry := item(keys.Directory, keys.DirectoryEntry("t1"))
	own := item(keys.Tenant("t1"), keys.TenantSK)
	plain := e.kit.Tenant("t1", nil)
	if err := plain.Put(ctx, entry, nil); !errors.Is(err, kit.ErrOutsideTenant) {
		t.Fatalf("a plain tenant handle wrote the directory: %v", err)
	}
	if err := plain.WithDirectory().Transact(ctx, kit.PutAction(own, nil), kit.PutAction(entry, nil)); err != nil {
		t.Fatalf("tenant and directory entry in one transaction: %v", err)
	}
	if err := plain.WithDirectory().Put(ctx, item(keys.Tenant("t2"), keys.TenantSK), nil); !errors.Is(err, kit.ErrOutsideTenant) {
		t.Fatalf("WithDirectory widened the tenant: %v", err)
	}
	dir := e.kit.Directory()
	page, err := dir.QueryPage(ctx, kit.Query{Partition: keys.Directory, Sort: kit.BeginsWith(keys.DirectoryPrefix), Consistent: true}, "")
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("directory query: %v %d items", err, len(page.Items))
	}
	for _, pk := range []string{keys.Tenant("t1"), keys.Debtor("t1", "d1"), "", "DIRX"} {
		if _, err := dir.Get(ctx, kit.Key{PK: pk, SK: keys.TenantSK}, true); !errors.Is(err, kit.ErrOutsideTenant) {
			t.Errorf("the directory handle reached %q: %v", pk, err)
		}
	}
}

func TestBatchesRetryInjectedUnprocessedItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.store.SetFaultSeed(7)
	if err := e.store.SetFault(ddblocal.FaultRule{Kind: ddblocal.FaultUnprocessed, Rate: 0.3}); err != nil {
		t.Fatal(err)
	}
	ctx, usage := kit.Operation(context.Background(), "test.batch")
	tn := e.kit.Tenant("t1", []byte("k"))
	var puts []kit.Item
	var ks []kit.Key
	for i := range 60 {
		sk := fmt.Sprintf("CONTACT#%03d", i)
		puts = append(puts, item(keys.Debtor("t1", "d1"), sk))
		ks = append(ks, kit.Key{PK: keys.Debtor("t1", "d1"), SK: sk})
	}
	if err := tn.BatchWrite(ctx, puts, nil); err != nil {
		t.Fatal(err)
	}
	got, err := tn.BatchGet(ctx, ks, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 60 {
		t.Fatalf("BatchGet returned %d items, want 60", len(got))
	}
	if usage.Calls("BatchWriteItem") <= 3 || usage.Calls("BatchGetItem") <= 1 {
		t.Fatalf("no retries happened (%d writes, %d gets): injection not exercised", usage.Calls("BatchWriteItem"), usage.Calls("BatchGetItem"))
	}
	e.store.ClearFaults()
}

func TestBatchesGiveUpAfterBoundedAttempts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := e.store.SetFault(ddblocal.FaultRule{Kind: ddblocal.FaultUnprocessed, Rate: 1}); err != nil {
		t.Fatal(err)
	}
	ctx, usage := kit.Operation(context.Background(), "test.batch")
	tn := e.kit.Tenant("t1", []byte("k"))
	k := kit.Key{PK: keys.Debtor("t1", "d1"), SK: "CONTACT#001"}
	err := tn.BatchWrite(ctx, []kit.Item{item(k.PK, k.SK)}, nil)
	if !errors.Is(err, kit.ErrThrottled) || !errs.Is(err, errs.Transient) {
		t.Fatalf("every item unprocessed: %v", err)
	}
	if _, err := tn.BatchGet(ctx, []kit.Key{k}, true); !errors.Is(err, kit.ErrThrottled) || !errs.Is(err, errs.Transient) {
		t.Fatalf("every key unprocessed: %v", err)
	}
	if w, g := usage.Calls("BatchWriteItem"), usage.Calls("BatchGetItem"); w != 8 || g != 8 {
		t.Fatalf("%d writes and %d gets, want 8 attempts each", w, g)
	}
	// A cancelled context stops the retries at once.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := tn.BatchWrite(cctx, []kit.Item{item(k.PK, k.SK)}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestTransactErrorsAreClassified(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tn := e.kit.Tenant("t1", []byte("k"))
	pk := keys.Debtor("t1", "d1")
	k := kit.Key{PK: pk, SK: keys.Contract("C-1")}
	if err := tn.Put(ctx, item(k.PK, k.SK, "status", "ACTIVE"), nil); err != nil {
		t.Fatal(err)
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	// Conditional failure.
	err := tn.Transact(ctx, kit.PutAction(item(pk, "CT#C-2"), nil), kit.PutAction(item(k.PK, k.SK), &notExists))
	var tc *kit.TxCanceled
	if !errors.As(err, &tc) || !errors.Is(err, kit.ErrConditionFailed) || errors.Is(err, kit.ErrConflict) || !tc.Failed(1) || tc.Failed(0) {
		t.Fatalf("condition failure: %v", err)
	}
	if errs.KindOf(err) != errs.Conflict {
		t.Fatalf("condition failure kind %v", errs.KindOf(err))
	}
	// Conflict.
	if err := e.store.SetFault(ddblocal.FaultRule{Kind: ddblocal.FaultTransactionConflict, Rate: 1, Count: 1, Operations: []string{"TransactWriteItems"}}); err != nil {
		t.Fatal(err)
	}
	err = tn.Transact(ctx, kit.PutAction(item(pk, "CT#C-3"), nil))
	if !errors.Is(err, kit.ErrConflict) || errors.Is(err, kit.ErrConditionFailed) || errs.KindOf(err) != errs.Conflict {
		t.Fatalf("conflict: %v", err)
	}
	// Throttling.
	if err := e.store.SetFault(ddblocal.FaultRule{Kind: ddblocal.FaultThroughputExceeded, Rate: 1, Count: 1, Operations: []string{"TransactWriteItems"}}); err != nil {
		t.Fatal(err)
	}
	err = tn.Transact(ctx, kit.PutAction(item(pk, "CT#C-4"), nil))
	if !errors.Is(err, kit.ErrThrottled) || errs.KindOf(err) != errs.Transient {
		t.Fatalf("throttling: %v", err)
	}
	// Single-item conditional failure.
	err = tn.Put(ctx, item(k.PK, k.SK), &notExists)
	if !errors.Is(err, kit.ErrConditionFailed) || errs.KindOf(err) != errs.Conflict {
		t.Fatalf("put condition failure: %v", err)
	}
}

func TestConsumedCapacityIsRecordedPerOperation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tn := e.kit.Tenant("t1", []byte("k"))
	ctx, usage := kit.Operation(context.Background(), "test.capacity")
	pk := keys.Debtor("t1", "d1")
	// A contract in the agenda: the put writes the table and one GSI.
	it := item(pk, keys.Contract("C-1"), "GSI1PK", keys.Agenda("t1", "2026-09-24", 3), "GSI1SK", keys.AgendaEntry("SMS_D1", "C-1"))
	if err := tn.Put(ctx, it, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tn.Get(ctx, kit.Key{PK: pk, SK: keys.Contract("C-1")}, true); err != nil {
		t.Fatal(err)
	}
	if usage.WRU() != 2 || usage.Index(table.Agenda) != 1 || usage.RRU() != 1 {
		t.Fatalf("usage WRU %v (agenda %v) RRU %v, want 2 (1) 1", usage.WRU(), usage.Index(table.Agenda), usage.RRU())
	}
	var found bool
	for _, op := range e.kit.Meter().Snapshot() {
		if op.Name == "test.capacity" {
			found = op.WRU == 2 && op.RRU == 1 && op.Calls == 2
		}
	}
	if !found {
		t.Fatalf("meter lacks the operation: %+v", e.kit.Meter().Snapshot())
	}
}

func TestConcurrentConditionalWritesApplyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tn := e.kit.Tenant("t1", []byte("k"))
	k := kit.Key{PK: keys.Settlement("t1", "s-1"), SK: keys.SettlementSK}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for range 16 {
		wg.Go(func() {
			err := tn.Put(context.Background(), item(k.PK, k.SK), &notExists)
			if err == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			} else if !errors.Is(err, kit.ErrConditionFailed) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok != 1 {
		t.Fatalf("%d writers won, want exactly 1", ok)
	}
}

func TestQueryFilterDropsItemsAfterReadingThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tn := e.kit.Tenant("t1", []byte("cursor-secret"))
	pk := keys.Debtor("t1", "d1")
	puts := []kit.Item{item(pk, keys.Contract("C-1"), "type", "CONTRACT"), item(pk, keys.Installment("C-1", 1), "type", "INSTALLMENT")}
	for i := range 5 {
		puts = append(puts, item(pk, keys.Event("C-1", 1, time.Unix(int64(i), 0), "e"), "type", "EVENT", "pad", strings.Repeat("x", 1000)))
	}
	if err := tn.BatchWrite(ctx, puts, nil); err != nil {
		t.Fatal(err)
	}
	lo, hi := keys.ContractRange("C-1")
	f := expression.Name("type").NotEqual(expression.Value("EVENT"))
	octx, usage := kit.Operation(ctx, "test.filter")
	p, err := tn.QueryPage(octx, kit.Query{Partition: pk, Sort: kit.Between(lo, hi), Consistent: true, Filter: &f}, "")
	if err != nil || len(p.Items) != 2 || p.Next != "" {
		t.Fatalf("filtered query: %d items, %v", len(p.Items), err)
	}
	// The events were read (and paid for) even though they were not sent.
	if usage.RRU() < 2 {
		t.Fatalf("filtered query consumed %.1f RRU", usage.RRU())
	}
}

// TestCountCountsAcrossOneMegabytePages: Count returns how many items the
// key condition selects, through every 1 MB page, sending none.
func TestCountCountsAcrossOneMegabytePages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tn := e.kit.Tenant("t1", []byte("cursor-secret"))
	pk := keys.Debtor("t1", "d1")
	pad := strings.Repeat("x", 4000)
	var puts []kit.Item
	for i := range 600 {
		puts = append(puts, item(pk, keys.Installment("C-1", i), "pad", pad))
	}
	puts = append(puts, item(pk, keys.Contract("C-2")))
	if err := tn.BatchWrite(ctx, puts, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    kit.Query
		want int64
	}{
		{kit.Query{Partition: pk, Sort: kit.BeginsWith(keys.InstallmentsPrefix("C-1"))}, 600},
		{kit.Query{Partition: pk}, 601},
		{kit.Query{Partition: keys.Debtor("t1", "d2")}, 0},
	} {
		n, err := tn.Count(ctx, c.q)
		if err != nil || n != c.want {
			t.Errorf("count %+v: %d %v, want %d", c.q, n, err, c.want)
		}
	}
	if _, err := tn.Count(ctx, kit.Query{Partition: keys.Debtor("t2", "d1")}); err == nil {
		t.Error("a count in another tenant's partition")
	}
}
