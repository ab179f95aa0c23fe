package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/kit"
	"lastro/engine/enginetest"
	"lastro/ops/migrate"
)

// oldData registers, through the API, debtors in t-a and t-b (all with a
// phone but the last of each tenant, one contract each), then takes their
// lookup entries away and the profiles' phoneLookup: the table as it was
// before the lookups (ADR 0084). It returns the phone and contract id of
// each tenant's first debtor, with its key, and each tenant's operator key.
func oldData(t *testing.T, env *enginetest.Env, n int) (map[string][3]string, map[string]string) {
	t.Helper()
	first, ops := map[string][3]string{}, map[string]string{}
	for _, id := range []string{"t-a", "t-b"} {
		_, k := env.Tenant(t, id)
		ops[id] = k["operator"]
		for i := range n {
			phone := fmt.Sprintf(`"phone":"(11) 9%04d-0000",`, i)
			if i == n-1 {
				phone = ""
			}
			status, out := env.Do(t, "POST", "/v1/debtors", k["operator"], `{"document":"`+env.CPF()+`",`+phone+`"name":"Pessoa Sintética"}`)
			if status != 201 {
				t.Fatalf("register: %d %v", status, out)
			}
			dk := out["debtorKey"].(string)
			cid := fmt.Sprintf("C-OLD-%d", i)
			body := `{"contractId":"` + cid + `","productCode":"CDC","installments":[{"seq":1,"dueDate":"2026-10-10","principalCents":10000,"interestCents":0}]}`
			if status, out := env.Do(t, "POST", "/v1/debtors/"+dk+"/contracts", k["operator"], body); status != 201 {
				t.Fatalf("contract: %d %v", status, out)
			}
			if i == 0 {
				first[id] = [3]string{fmt.Sprintf("11 9%04d-0000", i), cid, dk}
			}
		}
	}
	for _, it := range env.ScanAll(t) {
		key := kit.Key{PK: it["PK"].(*types.AttributeValueMemberS).Value, SK: it["SK"].(*types.AttributeValueMemberS).Value}
		typ, _ := it["type"].(*types.AttributeValueMemberS)
		if !strings.HasPrefix(key.PK, "T#") {
			continue // the platform's partitions
		}
		db := env.Kit.Tenant(strings.Split(key.PK, "#")[1], nil)
		switch {
		case typ == nil:
		case typ.Value == "PHONE_LOOKUP" || typ.Value == "CONTRACT_LOOKUP":
			if err := db.Delete(bg, key, nil); err != nil {
				t.Fatal(err)
			}
		case typ.Value == "PROFILE":
			if _, err := db.Update(bg, key, expression.Remove(expression.Name("phoneLookup")), nil, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	return first, ops
}

// cancelling cancels a context after a number of PutItem calls: the
// contract-lookups backfill stopped halfway.
type cancelling struct {
	kit.API
	after  int64
	calls  atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelling) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if c.calls.Add(1) == c.after {
		defer c.cancel()
	}
	return c.API.PutItem(ctx, in, o...)
}

// TestLookupsBackfill: on a table from before the lookups, verify finds
// the entries missing and the searches miss; plan counts what the runs
// write; the contract-id backfill, interrupted and resumed, and the phone
// backfill file every entry once; verify then agrees and the API finds
// the old debtors by phone and by contract id, each tenant its own.
func TestLookupsBackfill(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	const n = 5
	first, op := oldData(t, env, n)
	find := func(key, body string) (int, string) {
		status, out := env.Do(t, "POST", "/v1/debtors/lookup", key, body)
		dk, _ := out["debtorKey"].(string)
		return status, dk
	}
	if status, _ := find(op["t-a"], `{"contractId":"C-OLD-0"}`); status != 404 {
		t.Fatalf("old contract found before the backfill: %d", status)
	}
	for _, m := range []*migrate.Migration{migrate.ContractLookups(), migrate.PhoneLookups()} {
		v, err := migrate.Verify(bg, deps(env, env.Kit, nil), m)
		if !errors.Is(err, migrate.ErrDifferences) || v.Differences == 0 {
			t.Fatalf("%s: verify before: %v %+v", m.Name, err, v)
		}
	}
	contracts, phones := migrate.ContractLookups(), migrate.PhoneLookups()
	pc, err := migrate.PlanBackfill(bg, deps(env, env.Kit, nil), contracts, 10)
	if err != nil || pc.Changes != 2*n || pc.PerTenant["t-a"] != n || pc.WCU != 2*n {
		t.Fatalf("contract plan %+v %v", pc, err)
	}
	pp, err := migrate.PlanBackfill(bg, deps(env, env.Kit, nil), phones, 10)
	if err != nil || pp.Changes != 2*(n-1) || pp.Carrying != 2 || pp.PerTenant["t-b"] != n-1 {
		t.Fatalf("phone plan %+v %v", pp, err)
	}

	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	cut := &cancelling{API: kit.NewEmbeddedClient(kit.InProcessEndpoint, env.StoreClient), after: 3, cancel: cancel}
	var progress strings.Builder
	if _, err := migrate.Run(ctx, deps(env, kit.New(cut, enginetest.Table), &progress), contracts, migrate.Options{PageSize: 3}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	rep, err := migrate.Run(bg, deps(env, env.Kit, &progress), contracts, migrate.Options{PageSize: 3})
	if err != nil || !rep.Done || rep.Written > 2*n || rep.Written < 2*n-3 {
		t.Fatalf("resumed contract run %+v %v\n%s", rep, err, progress.String())
	}
	if rep, err := migrate.Run(bg, deps(env, env.Kit, nil), phones, migrate.Options{}); err != nil || rep.Written != 2*(n-1) || rep.Conflicts != 0 {
		t.Fatalf("phone run %+v %v", rep, err)
	}
	entries := map[string]int{}
	for _, it := range env.ScanAll(t) {
		if typ, _ := it["type"].(*types.AttributeValueMemberS); typ != nil && strings.HasSuffix(typ.Value, "_LOOKUP") {
			entries[typ.Value]++
		}
	}
	if entries["CONTRACT_LOOKUP"] != 2*n || entries["PHONE_LOOKUP"] != 2*(n-1) {
		t.Fatalf("entries after the runs: %v", entries)
	}
	for _, m := range []*migrate.Migration{contracts, phones} {
		v, err := migrate.Verify(bg, deps(env, env.Kit, nil), m)
		if err != nil || !v.OK {
			t.Fatalf("%s: verify after: %v %+v", m.Name, err, v)
		}
		for _, c := range v.Counts {
			if c.Source != c.Carrying || c.Carrying != c.Index || c.Source == 0 {
				t.Fatalf("%s: counts %+v", m.Name, c)
			}
		}
	}
	for id, key := range op {
		f := first[id]
		for _, body := range []string{`{"phone":"` + f[0] + `"}`, `{"contractId":"` + f[1] + `"}`} {
			if status, dk := find(key, body); status != 200 || dk != f[2] {
				t.Errorf("%s %s after the backfill: %d %s, want %s", id, body, status, dk, f[2])
			}
		}
	}
	// A second plan finds nothing left to file.
	if p, err := migrate.PlanBackfill(bg, deps(env, env.Kit, nil), phones, 10); err != nil || p.Changes != 0 {
		t.Fatalf("phone plan after: %+v %v", p, err)
	}
	if p, err := migrate.PlanBackfill(bg, deps(env, env.Kit, nil), contracts, 10); err != nil || p.Changes != 0 {
		t.Fatalf("contract plan after: %+v %v", p, err)
	}
}
