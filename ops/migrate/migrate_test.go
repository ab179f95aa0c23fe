package migrate_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/engine/enginetest"
	"lastro/ops"
	"lastro/ops/migrate"
)

var bg = context.Background()

// seeded is a two-tenant store whose profiles partly lack GSI3PK, as
// profiles written by a path other than registration would.
type seeded struct {
	env     *enginetest.Env
	lacking map[string]int // profiles without GSI3PK, by tenant
	all     map[string]int // profiles, by tenant
}

// seed registers debtors in t-a and t-b through the API, then removes
// GSI3PK from all but the first profile of each tenant.
func seed(t *testing.T, debtors map[string]int) seeded {
	t.Helper()
	env := enginetest.New(t)
	s := seeded{env: env, lacking: map[string]int{}, all: map[string]int{}}
	for id, n := range debtors {
		_, k := env.Tenant(t, id)
		for i := range n {
			status, out := env.Do(t, "POST", "/v1/debtors", k["operator"], `{"document":"`+env.CPF()+`","name":"Pessoa Sintética"}`)
			if status != 201 {
				t.Fatalf("register: %d %v", status, out)
			}
			s.all[id]++
			if i == 0 {
				continue
			}
			dk := out["debtorKey"].(string)
			_, err := env.Kit.Tenant(id, nil).Update(bg, kit.Key{PK: keys.Debtor(id, dk), SK: keys.ProfileSK},
				expression.Remove(expression.Name("GSI3PK")), nil, "")
			if err != nil {
				t.Fatal(err)
			}
			s.lacking[id]++
		}
	}
	return s
}

func deps(env *enginetest.Env, k *kit.Kit, progress *strings.Builder) ops.Deps {
	d := ops.Deps{Kit: k, Tenants: env.Tenants, Debtors: env.Debtors, Clock: env.Clock, Owner: "test", Segments: 3}
	if progress != nil {
		d.Progress = progress
	}
	return d
}

// interrupting cancels a context after a number of UpdateItem calls: a
// backfill stopped by Ctrl-C halfway.
type interrupting struct {
	kit.API
	after  int64
	calls  atomic.Int64
	cancel context.CancelFunc
}

func (c *interrupting) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if c.calls.Add(1) == c.after {
		defer c.cancel()
	}
	return c.API.UpdateItem(ctx, in, o...)
}

func TestRegistered(t *testing.T) {
	t.Parallel()
	r := migrate.Registered()
	m, err := r.Lookup("tenant-debtors")
	if err != nil || m.Kind != migrate.Backfill || m.Type != "PROFILE" || m.Version < 1 {
		t.Fatalf("tenant-debtors: %+v %v", m, err)
	}
	if _, err := r.Lookup("no-such"); !errors.Is(err, migrate.ErrUnknown) {
		t.Fatalf("unknown: %v", err)
	}
	if _, code, _ := errs.Public(func() error { _, err := r.Lookup("x"); return err }()); code != "unknown_migration" {
		t.Fatalf("code %q", code)
	}
	tests := []struct {
		name string
		ms   []*migrate.Migration
	}{
		{"no name", []*migrate.Migration{{Kind: migrate.Additive}}},
		{"twice", []*migrate.Migration{{Name: "a", Kind: migrate.Additive}, {Name: "a", Kind: migrate.Additive}}},
		{"no kind", []*migrate.Migration{{Name: "a"}}},
		{"backfill without type", []*migrate.Migration{{Name: "a", Kind: migrate.Backfill, Version: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := migrate.NewRegistry(tt.ms...); err == nil {
				t.Fatal("registered")
			}
		})
	}
}

// TestPlanCountsExact plans the backfill on two tenants: the counts are
// the profiles that lack the key, per tenant, and the write units are
// those the run then consumes.
func TestPlanCountsExact(t *testing.T) {
	t.Parallel()
	s := seed(t, map[string]int{"t-a": 5, "t-b": 3})
	m := migrate.TenantDebtors()
	var progress strings.Builder
	p, err := migrate.PlanBackfill(bg, deps(s.env, s.env.Kit, &progress), m, 2)
	if err != nil {
		t.Fatal(err)
	}
	if p.Scanned != 8 || p.Changes != 6 || p.Carrying != 2 || p.PerTenant["t-a"] != 4 || p.PerTenant["t-b"] != 2 {
		t.Fatalf("plan %+v", p)
	}
	if p.WCU < float64(2*p.Changes) || p.Seconds != p.WCU/2 {
		t.Fatalf("plan units %v, %v s", p.WCU, p.Seconds)
	}
	if !strings.Contains(progress.String(), "6 items would change") {
		t.Fatalf("progress: %s", progress.String())
	}
	rep, err := migrate.Run(bg, deps(s.env, s.env.Kit, nil), m, migrate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written != p.Changes || rep.WCU != p.WCU {
		t.Fatalf("run %+v, plan %+v", rep, p)
	}
	if p, err := migrate.PlanBackfill(bg, deps(s.env, s.env.Kit, nil), m, 2); err != nil || p.Changes != 0 || p.Carrying != 8 {
		t.Fatalf("plan after the run: %+v %v", p, err)
	}
}

// TestBackfillInterruptedResumes stops a backfill after a few writes,
// verifies that the index still differs, resumes it and verifies zero
// differences; every lacking profile was written exactly once.
func TestBackfillInterruptedResumes(t *testing.T) {
	t.Parallel()
	s := seed(t, map[string]int{"t-a": 8, "t-b": 4})
	m := migrate.TenantDebtors()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	cut := &interrupting{API: kit.NewEmbeddedClient(kit.InProcessEndpoint, s.env.StoreClient), after: 3, cancel: cancel}
	var progress strings.Builder
	_, err := migrate.Run(ctx, deps(s.env, kit.New(cut, enginetest.Table), &progress), m, migrate.Options{PageSize: 2, WCU: 1000})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	v, err := migrate.Verify(bg, deps(s.env, s.env.Kit, nil), m)
	if !errors.Is(err, migrate.ErrDifferences) || v.Differences == 0 || v.ViolationCount != 0 {
		t.Fatalf("verify halfway: %v %+v", err, v)
	}
	if n := cut.calls.Load(); n < 3 || n >= int64(s.lacking["t-a"]+s.lacking["t-b"]) {
		t.Fatalf("%d writes before the interruption", n)
	}
	// Another host resumes at once: a clean stop released the leases.
	other := deps(s.env, s.env.Kit, &progress)
	other.Owner = "another-host"
	rep, err := migrate.Run(bg, other, m, migrate.Options{PageSize: 2})
	if err != nil {
		t.Fatalf("resumed: %v\n%s", err, progress.String())
	}
	// A write in flight when the context ended may have landed without
	// being counted: the table, not the counters, says what was written.
	want := s.lacking["t-a"] + s.lacking["t-b"]
	if !rep.Done || rep.Written > int64(want) || rep.Written < int64(want)-3 || rep.Conflicts != 0 {
		t.Fatalf("resumed run %+v, want about %d written", rep, want)
	}
	stamped := 0
	for _, it := range s.env.ScanAll(t) {
		if v, ok := it[migrate.SchemaVersion].(*types.AttributeValueMemberN); ok && v.Value == "1" {
			stamped++
		}
	}
	if stamped != want {
		t.Fatalf("%d items stamped, want the %d that lacked the key", stamped, want)
	}
	v, err = migrate.Verify(bg, deps(s.env, s.env.Kit, &progress), m)
	if err != nil || !v.OK || v.Differences != 0 {
		t.Fatalf("verify: %v %+v", err, v)
	}
	for _, c := range v.Counts {
		if c.Source != int64(s.all[c.Tenant]) || c.Index != c.Source {
			t.Fatalf("counts %+v, want %d", c, s.all[c.Tenant])
		}
	}
	if !strings.Contains(progress.String(), "interrupted") || !strings.Contains(progress.String(), "0 differences") {
		t.Fatalf("progress:\n%s", progress.String())
	}
	if again, err := migrate.Run(bg, deps(s.env, s.env.Kit, nil), m, migrate.Options{}); err != nil || !again.Done || again.Written != rep.Written {
		t.Fatalf("again: %+v %v", again, err)
	}
}

func item(pk, sk, typ string, attrs map[string]types.AttributeValue) kit.Item {
	it := kit.Item{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk},
		"type": &types.AttributeValueMemberS{Value: typ}}
	for k, v := range attrs {
		it[k] = v
	}
	return it
}

// recreateIndex drops the tenant-debtors index, calls plant while the
// table has none, and creates the index again: the first step of a
// migration on a live table, over items that already had the attribute.
// DynamoDB (and the store) refuse a wrong key attribute on write, so
// this is how a violation comes to exist.
func recreateIndex(t *testing.T, env *enginetest.Env, plant func()) {
	t.Helper()
	db := kit.NewEmbeddedClient(kit.InProcessEndpoint, env.StoreClient)
	def := table.CreateInput(enginetest.Table)
	var gsi types.GlobalSecondaryIndex
	for _, g := range def.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) == table.TenantDebtors {
			gsi = g
		}
	}
	update := func(u types.GlobalSecondaryIndexUpdate, attrs []types.AttributeDefinition) {
		t.Helper()
		_, err := db.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: aws.String(enginetest.Table),
			AttributeDefinitions: attrs, GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{u}})
		if err != nil {
			t.Fatal(err)
		}
		for {
			out, err := db.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String(enginetest.Table)})
			if err != nil {
				t.Fatal(err)
			}
			settled := true
			for _, g := range out.Table.GlobalSecondaryIndexes {
				if g.IndexStatus != types.IndexStatusActive || aws.ToBool(g.Backfilling) {
					settled = false
				}
			}
			if settled {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	update(types.GlobalSecondaryIndexUpdate{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: gsi.IndexName}}, nil)
	plant()
	update(types.GlobalSecondaryIndexUpdate{Create: &types.CreateGlobalSecondaryIndexAction{
		IndexName: gsi.IndexName, KeySchema: gsi.KeySchema, Projection: gsi.Projection}},
		[]types.AttributeDefinition{{AttributeName: aws.String("GSI3PK"), AttributeType: types.ScalarAttributeTypeS}})
}

// TestVerifyReportsViolations plants key violations in the table (a
// wrong type, an empty string, an oversized key, a foreign item type and
// a profile in another tenant's partition) and finds each listed by its
// keys.
func TestVerifyReportsViolations(t *testing.T) {
	t.Parallel()
	s := seed(t, map[string]int{"t-a": 2, "t-b": 1})
	m := migrate.TenantDebtors()
	if _, err := migrate.Run(bg, deps(s.env, s.env.Kit, nil), m, migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	if v, err := migrate.Verify(bg, deps(s.env, s.env.Kit, nil), m); err != nil || !v.OK {
		t.Fatalf("verify before the plants: %v %+v", err, v)
	}
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	dk := func(id, suffix string) string { return keys.Debtor(id, "00000000000000"+suffix) }
	planted := []kit.Item{
		item(dk("t-a", "aa"), keys.ProfileSK, "PROFILE", map[string]types.AttributeValue{"GSI3PK": str(keys.Profiles("t-b"))}),
		item(dk("t-a", "bb"), keys.ProfileSK, "PROFILE", map[string]types.AttributeValue{"GSI3PK": &types.AttributeValueMemberN{Value: "7"}}),
		item(dk("t-a", "cc"), keys.ProfileSK, "PROFILE", map[string]types.AttributeValue{"GSI3PK": str(strings.Repeat("x", 2100))}),
		item(dk("t-b", "dd"), keys.ProfileSK, "PROFILE", map[string]types.AttributeValue{"GSI3PK": str("")}),
		item(dk("t-b", "ee"), "CT#C-2", "CONTRACT", map[string]types.AttributeValue{"GSI3PK": str(keys.Profiles("t-b"))}),
	}
	recreateIndex(t, s.env, func() {
		for _, it := range planted {
			pk := it["PK"].(*types.AttributeValueMemberS).Value
			id, _, _ := strings.Cut(strings.TrimPrefix(pk, "T#"), "#")
			if err := s.env.Kit.Tenant(id, nil).Put(bg, it, nil); err != nil {
				t.Fatal(err)
			}
		}
	})
	var progress strings.Builder
	v, err := migrate.Verify(bg, deps(s.env, s.env.Kit, &progress), m)
	if !errors.Is(err, migrate.ErrDifferences) || v.OK {
		t.Fatalf("verify: %v %+v", err, v)
	}
	want := []struct{ pk, sk, problem string }{
		{dk("t-a", "aa"), keys.ProfileSK, "another index partition"},
		{dk("t-a", "bb"), keys.ProfileSK, "a number, the key wants S"},
		{dk("t-a", "cc"), keys.ProfileSK, "2100 bytes, over the key limit of 2048"},
		{dk("t-b", "dd"), keys.ProfileSK, "an empty string"},
		{dk("t-b", "ee"), "CT#C-2", "for PROFILE items only"},
	}
	if v.ViolationCount != int64(len(want)) {
		t.Fatalf("%d violations, want %d: %+v", v.ViolationCount, len(want), v.Violations)
	}
	for _, w := range want {
		found := false
		for _, got := range v.Violations {
			if got.PK == w.pk && got.SK == w.sk && got.Attribute == "GSI3PK" && strings.Contains(got.Problem, w.problem) {
				found = true
			}
		}
		if !found {
			t.Errorf("violation %+v not reported in %+v", w, v.Violations)
		}
	}
	if v.Differences == 0 || !strings.Contains(progress.String(), "5 key violations") {
		t.Fatalf("differences %d (the planted profiles are source items without the key), progress %s", v.Differences, progress.String())
	}
}

// TestRunLeased refuses a second run while a live one holds the leases
// (a crashed run's leases, never released), and lets it resume once they
// expire.
func TestRunLeased(t *testing.T) {
	t.Parallel()
	s := seed(t, map[string]int{"t-a": 3, "t-b": 2})
	m := migrate.TenantDebtors()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	// A crash: the first writes land, and the run never saves again.
	crashed := &failing{API: kit.NewEmbeddedClient(kit.InProcessEndpoint, s.env.StoreClient), after: 2}
	_, err := migrate.Run(ctx, deps(s.env, kit.New(crashed, enginetest.Table), nil), m, migrate.Options{PageSize: 1})
	if err == nil {
		t.Fatal("the crashed run finished")
	}
	other := deps(s.env, s.env.Kit, nil)
	other.Owner = "another-host"
	if _, err := migrate.Run(bg, other, m, migrate.Options{}); !errors.Is(err, ops.ErrLeased) {
		t.Fatalf("second run beside a live lease: %v", err)
	}
	s.env.Clock.Advance(ops.LeaseTTL + time.Second)
	rep, err := migrate.Run(bg, other, m, migrate.Options{})
	if err != nil || !rep.Done {
		t.Fatalf("after the lease expired: %v %+v", err, rep)
	}
	if v, err := migrate.Verify(bg, other, m); err != nil || !v.OK {
		t.Fatalf("verify: %v %+v", err, v)
	}
}

// failing stands for a crashed process: after a number of UpdateItem
// calls every write to the table fails, checkpoints included.
type failing struct {
	kit.API
	after int64
	calls atomic.Int64
}

var errCrashed = errors.New("crashed")

func (f *failing) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if f.calls.Add(1) > f.after {
		return nil, errCrashed
	}
	return f.API.UpdateItem(ctx, in, o...)
}

func (f *failing) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if f.calls.Load() > f.after {
		return nil, errCrashed
	}
	return f.API.PutItem(ctx, in, o...)
}

// TestAdditiveHasNothingToBackfill: an additive migration plans no
// writes and refuses to run a backfill.
func TestAdditiveHasNothingToBackfill(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	m := &migrate.Migration{Name: "birthdate", Kind: migrate.Additive, Summary: "an optional field"}
	if _, err := migrate.NewRegistry(m); err != nil {
		t.Fatal(err)
	}
	p, err := migrate.PlanBackfill(bg, deps(env, env.Kit, nil), m, 10)
	if err != nil || p.Changes != 0 || p.Kind != migrate.Additive {
		t.Fatalf("plan: %+v %v", p, err)
	}
	if _, err := migrate.Run(bg, deps(env, env.Kit, nil), m, migrate.Options{}); err == nil {
		t.Fatal("an additive migration ran a backfill")
	}
}
