package ops_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/ops"
	"lastro/tenant"
)

// lookup finds a document's debtor through the API: its key, after
// checking the 360 view answers under it.
func lookup(t *testing.T, env *enginetest.Env, token, doc string) string {
	t.Helper()
	status, out := env.Do(t, "POST", "/v1/debtors/lookup", token, `{"document":"`+doc+`"}`)
	if status != 200 {
		t.Fatalf("lookup: %d %v", status, out)
	}
	dk := out["debtorKey"].(string)
	if status, out := env.Do(t, "GET", "/v1/debtors/"+dk, token, ""); status != 200 {
		t.Fatalf("360 view of a found debtor: %d %v", status, out)
	}
	return dk
}

// dump is a debtor's collection as canonical JSON, keyed by SK, without
// what a rotation changes: the partition key, the debtor key wherever it
// appears, the PROFILE's seal and key version. Index keys (GSI1, GSI2)
// stay: they must be equal.
func dump(t *testing.T, env *enginetest.Env, id, dk string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, it := range env.ScanAll(t) {
		if it["PK"].(*types.AttributeValueMemberS).Value != "T#"+id+"#D#"+dk {
			continue
		}
		var m map[string]any
		if err := attributevalue.UnmarshalMap(it, &m); err != nil {
			t.Fatal(err)
		}
		for _, a := range []string{"PK", "pii", "keyVersion", "movedFrom"} {
			delete(m, a)
		}
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out[m["SK"].(string)] = strings.ReplaceAll(string(raw), dk, "<dk>")
	}
	return out
}

func view(t *testing.T, env *enginetest.Env, token, dk string) string {
	t.Helper()
	_, body := env.Raw(t, "GET", "/v1/debtors/"+dk, token, "")
	body = strings.Replace(body, `"keyVersion":1,`, "", 1) // the profile's: what a rotation changes
	body = strings.Replace(body, `"keyVersion":2,`, "", 1)
	return strings.ReplaceAll(body, dk, "<dk>")
}

// indexEntries reads, through the agenda (GSI1) and portfolio (GSI2)
// indexes, every entry of tenant tn's index partitions that its contract
// headers name, each as "<index> <partition> <sort> <document>": the
// debtor named by its document, so entries compare across a rotation.
func indexEntries(t *testing.T, env *enginetest.Env, tn *tenant.Tenant, docOf func(dk string) string) []string {
	t.Helper()
	parts := map[string]map[string]bool{table.Agenda: {}, table.Portfolio: {}}
	for _, it := range env.ScanAll(t) {
		if v, ok := it["GSI1PK"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(v.Value, "T#"+tn.ID+"#") {
			parts[table.Agenda][v.Value] = true
		}
		if v, ok := it["GSI2PK"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(v.Value, "T#"+tn.ID+"#") {
			parts[table.Portfolio][v.Value] = true
		}
	}
	var out []string
	db := env.Kit.Tenant(tn.ID, tn.CursorKey())
	for index, pks := range parts {
		for pk := range pks {
			page, err := db.QueryPage(bg, kit.Query{Index: index, Partition: pk}, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Items {
				var m map[string]any
				if err := attributevalue.UnmarshalMap(it, &m); err != nil {
					t.Fatal(err)
				}
				out = append(out, fmt.Sprintf("%s %s %v %v %s", index, pk, m["GSI1SK"], m["outstandingCents"], docOf(m["debtorKey"].(string))))
			}
		}
	}
	slices.Sort(out)
	return out
}

// partitionsOf lists the debtor partitions of tenant id in the table.
func partitionsOf(t *testing.T, env *enginetest.Env, id string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, it := range env.ScanAll(t) {
		pk := it["PK"].(*types.AttributeValueMemberS).Value
		if strings.HasPrefix(pk, "T#"+id+"#D#") {
			out[pk]++
		}
	}
	return out
}

// TestRotateDebtorKeysMovesEveryDebtor rotates t-a's debtor-key secret
// beside t-b, interrupted halfway and resumed: every debtor is found by
// document before, during and after, each collection (360 view, items
// and their agenda and portfolio index keys) is the same under its new
// key, a charge issued before the rotation settles after it, a settlement
// delivered again is still a duplicate, nothing of the old partitions is
// left, the old secret is retired and t-b is untouched.
func TestRotateDebtorKeysMovesEveryDebtor(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	ta, ka, docs := portfolio(t, env, "t-a", 4)
	_, kb, docsB := portfolio(t, env, "t-b", 2)
	op := ka["operator"]
	// A charge issued before the rotation, paid after it.
	var first string
	for dk := range docs {
		first = dk
		break
	}
	status, pending := env.Do(t, "POST", "/v1/charges", op, `{"debtorKey":"`+first+`","contractId":"C-1","seq":2,"method":"PIX"}`)
	if status != 201 {
		t.Fatalf("charge: %d %v", status, pending)
	}
	byDoc := map[string]string{}
	before := map[string]map[string]string{}
	views := map[string]string{}
	for dk, doc := range docs {
		if got := lookup(t, env, op, doc); got != dk {
			t.Fatalf("lookup before: %s, want %s", got, dk)
		}
		byDoc[doc] = dk
		before[doc] = dump(t, env, ta.ID, dk)
		views[doc] = view(t, env, op, dk)
	}
	counts := countAll(t, env)
	entries := indexEntries(t, env, ta, func(dk string) string { return docs[dk] })
	if len(entries) < 2*len(docs) {
		t.Fatalf("index entries before: %v", entries)
	}

	// Interrupted after the second batch write: a debtor copied, another
	// halfway.
	api := kit.NewEmbeddedClient(kit.InProcessEndpoint, env.StoreClient)
	ctx, cancel := context.WithCancel(bg)
	cut := &interrupting{API: api, after: 2, cancel: cancel}
	var progress strings.Builder
	_, err := ops.RotateDebtorKeys(ctx, deps(env, kit.New(cut, enginetest.Table), &progress), ta.ID, ops.RotateOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted rotation: %v\n%s", err, progress.String())
	}
	mid := partitionsOf(t, env, ta.ID)
	if len(mid) <= len(docs) {
		t.Fatalf("the interruption left no copy: %v", mid)
	}
	env.Tenants.Invalidate(ta.ID)
	rotating, err := env.Tenants.Get(bg, ta.ID)
	if err != nil || !rotating.RotatingDebtorKeys() {
		t.Fatalf("tenant mid-rotation: %v", err)
	}
	movedMid := 0
	for doc, dk := range byDoc {
		got := lookup(t, env, op, doc)
		// One GetItem under the current key; one more under the old key
		// only for a debtor not moved yet.
		lctx, usage := kit.Operation(bg, "debtor.lookup")
		if _, err := env.Debtors.Lookup(lctx, rotating, debtor.LookupInput{Document: doc}); err != nil {
			t.Fatal(err)
		}
		want := 2
		if got != dk {
			want = 1
			movedMid++
			// The old key answers that it was replaced, never the old data.
			if status, out := env.Do(t, "GET", "/v1/debtors/"+dk, op, ""); status != 404 || enginetest.ErrorCode(out) != "debtor_moved" {
				t.Fatalf("the 360 view under a replaced key: %d %v", status, out)
			}
		}
		if n := usage.Calls("GetItem"); n != want || usage.Calls("") != want {
			t.Fatalf("a lookup mid-rotation made %d GetItems (%d calls), want %d", n, usage.Calls(""), want)
		}
		// Registering the document again finds the same debtor.
		status, out := env.Do(t, "POST", "/v1/debtors", op, `{"document":"`+doc+`","name":"Pessoa Sintética"}`)
		if status != 200 || out["debtorKey"] != got || out["created"] != false {
			t.Fatalf("registration during the rotation: %d %v (lookup %s, before %s)", status, out, got, dk)
		}
	}

	rep, err := ops.RotateDebtorKeys(bg, deps(env, env.Kit, &progress), ta.ID, ops.RotateOptions{WCU: 10000})
	if err != nil || !rep.Done || rep.Conflicts != 0 {
		t.Fatalf("resumed rotation: %v %+v\n%s", err, rep, progress.String())
	}
	if !strings.Contains(progress.String(), "version 2 added") || !strings.Contains(progress.String(), "old profiles deleted") {
		t.Fatalf("progress:\n%s", progress.String())
	}
	env.Tenants.Invalidate(ta.ID)
	if fresh, err := env.Tenants.Get(bg, ta.ID); err != nil || fresh.KeyVersion != 2 || fresh.RotatingDebtorKeys() {
		t.Fatalf("tenant after: %v version %d rotating %v", err, fresh.KeyVersion, fresh.RotatingDebtorKeys())
	}
	// A new document registered mid-rotation is keyed with the new
	// secret at once, and the job leaves it where it is.
	newDoc := env.CPF()
	status, reg := env.Do(t, "POST", "/v1/debtors", op, `{"document":"`+newDoc+`","name":"Pessoa Nova"}`)
	if status != 201 || reg["created"] != true {
		t.Fatalf("a registration mid-rotation: %d %v", status, reg)
	}
	if movedMid == 0 || movedMid == len(byDoc) {
		t.Fatalf("the interruption moved %d of %d debtors", movedMid, len(byDoc))
	}
	done, err := env.Tenants.Get(bg, ta.ID)
	if err != nil {
		t.Fatal(err)
	}
	moved := map[string]string{}
	for doc, old := range byDoc {
		dk := lookup(t, env, op, doc)
		lctx, usage := kit.Operation(bg, "debtor.lookup")
		if _, err := env.Debtors.Lookup(lctx, done, debtor.LookupInput{Document: doc}); err != nil || usage.Calls("") != 1 {
			t.Fatalf("a lookup after the rotation: %v, %d calls", err, usage.Calls(""))
		}
		if dk == old {
			t.Fatalf("a debtor kept its key")
		}
		moved[old] = dk
		if got := dump(t, env, ta.ID, dk); fmt.Sprint(got) != fmt.Sprint(before[doc]) {
			t.Fatalf("collection differs after the move:\n%v\n%v", got, before[doc])
		}
		if got := view(t, env, op, dk); got != views[doc] {
			t.Fatalf("360 view differs:\n%s\n%s", got, views[doc])
		}
	}
	if got := indexEntries(t, env, ta, func(dk string) string {
		for old, n := range moved {
			if n == dk {
				return docs[old]
			}
		}
		return "unknown " + dk
	}); !slices.Equal(got, entries) {
		t.Fatalf("index entries after:\n%v\nbefore:\n%v", got, entries)
	}
	if got := lookup(t, env, op, newDoc); got != reg["debtorKey"] {
		t.Fatalf("the debtor registered mid-rotation moved: %s, was %v", got, reg["debtorKey"])
	}
	after := partitionsOf(t, env, ta.ID)
	if len(after) != len(docs)+1 {
		t.Fatalf("partitions after: %v", after)
	}
	for _, old := range byDoc {
		if after["T#"+ta.ID+"#D#"+old] != 0 {
			t.Fatalf("an old partition remains")
		}
	}
	registered := int64(len(env.Partition(t, ta, reg["debtorKey"].(string))))
	if now := countAll(t, env); now[ta.ID] != counts[ta.ID]+registered || now["t-b"] != counts["t-b"] {
		t.Fatalf("counts after %v, before %v", now, counts)
	}
	// The charge lookups name the new keys; the pending charge settles.
	for _, it := range env.ScanAll(t) {
		pk := it["PK"].(*types.AttributeValueMemberS).Value
		if v, ok := it["debtorKey"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(pk, "T#"+ta.ID+"#") {
			if _, stale := docs[v.Value]; stale {
				t.Fatalf("%s still names an old key", pk)
			}
		}
	}
	body := enginetest.WebhookBody("stl-after", pending["chargeId"].(string), int64(pending["amountCents"].(float64)), "2026-09-24T10:00:00-03:00")
	if status, out, err := env.Deliver(ta.ID, ka["webhook"], body, env.Clock.Now(), nil); err != nil || status != 200 || !strings.Contains(out, "APPLIED") {
		t.Fatalf("settlement after the rotation: %d %s %v", status, out, err)
	}
	beforeDup := view(t, env, op, moved[first])
	if status, out, err := env.Deliver(ta.ID, ka["webhook"], body, env.Clock.Now(), nil); err != nil || status != 200 || !strings.Contains(out, "APPLIED") {
		t.Fatalf("a settlement delivered again: %d %s %v", status, out, err)
	}
	if view(t, env, op, moved[first]) != beforeDup {
		t.Fatalf("a duplicate settlement changed the debtor")
	}
	for dk, doc := range docsB {
		if got := lookup(t, env, kb["operator"], doc); got != dk {
			t.Fatalf("t-b debtor moved")
		}
	}

	// Uninterrupted rotations of t-b (2 debtors) and t-c (4), measured on
	// the store's meter: what the job costs per tenant (the tenant-wide
	// partitions it reads, its checkpoints) and per debtor (ADR 0075).
	portfolio(t, env, "t-c", 4)
	countsA := countAll(t, env)[ta.ID]
	measure := func(id string, debtors int64) (rru, wru float64, items int64) {
		t.Helper()
		mctx, usage := kit.Operation(bg, "ops.rotate")
		rep, err := ops.RotateDebtorKeys(mctx, deps(env, env.Kit, nil), id, ops.RotateOptions{})
		if err != nil || !rep.Done || rep.Counts["debtors"] != debtors {
			t.Fatalf("%s rotation: %v %+v", id, err, rep)
		}
		return usage.RRU(), usage.WRU(), rep.Counts["items"] / debtors
	}
	r2, w2, items := measure("t-b", 2)
	r4, w4, _ := measure("t-c", 4)
	perR, perW := (r4-r2)/2, (w4-w2)/2
	t.Logf("rotation: per debtor of %d items %.1f RRU %.1f WRU; per tenant %.1f RRU %.1f WRU", items, perR, perW, r2-2*perR, w2-2*perW)
	// Pinned exactly, like every operation's cost (docs/adr/0073); the
	// numbers are ADR 0075's.
	if items != 13 || perR != 14 || perW != 42 || r2-2*perR != 36.5 || w2-2*perW != 12 {
		t.Errorf("rotation cost changed: per debtor of %d items %v RRU %v WRU, per tenant %v RRU %v WRU: update ADR 0075",
			items, perR, perW, r2-2*perR, w2-2*perW)
	}
	if got := countAll(t, env)[ta.ID]; got != countsA {
		t.Fatalf("rotating t-b changed t-a: %d items, was %d", got, countsA)
	}
	for _, doc := range docsB {
		lookup(t, env, kb["operator"], doc)
	}
}

// racing is an SDK client that runs race once, before the first
// transaction it sends: a writer that changes the debtor between the
// copy and the switch.
type racing struct {
	kit.API
	once atomic.Bool
	race func()
}

func (c *racing) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if c.once.CompareAndSwap(false, true) {
		c.race()
	}
	return c.API.TransactWriteItems(ctx, in, o...)
}

// stale is an SDK client that runs race once, before the first lookup
// rewrite it sends (an UpdateItem on a charge lookup): a settlement that
// reads the lookup after the switch but before it names the new key.
type stale struct {
	kit.API
	once atomic.Bool
	race func()
}

func (c *stale) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if pk, ok := in.Key["PK"].(*types.AttributeValueMemberS); ok && strings.Contains(pk.Value, "#CHG#") && c.once.CompareAndSwap(false, true) {
		c.race()
	}
	return c.API.UpdateItem(ctx, in, o...)
}

// TestRotateSettlementBeforeLookupRewrite pays a charge between the
// switch and the rewrite of its lookup: the settlement finds no contract
// under the old key, follows the old profile's movedTo and is applied
// to the moved debtor, exactly once.
func TestRotateSettlementBeforeLookupRewrite(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	ta, ka, docs := portfolio(t, env, "t-s", 1)
	op := ka["operator"]
	var old, doc string
	for dk, d := range docs {
		old, doc = dk, d
	}
	status, ch := env.Do(t, "POST", "/v1/charges", op, `{"debtorKey":"`+old+`","contractId":"C-1","seq":2,"method":"PIX"}`)
	if status != 201 {
		t.Fatalf("charge: %d %v", status, ch)
	}
	body := enginetest.WebhookBody("stl-race", ch["chargeId"].(string), int64(ch["amountCents"].(float64)), "2026-09-24T10:00:00-03:00")
	api := kit.NewEmbeddedClient(kit.InProcessEndpoint, env.StoreClient)
	var applied string
	race := &stale{API: api, race: func() {
		_, out, err := env.Deliver(ta.ID, ka["webhook"], body, env.Clock.Now(), nil)
		if err != nil {
			t.Error(err)
		}
		applied = out
	}}
	rep, err := ops.RotateDebtorKeys(bg, deps(env, kit.New(race, enginetest.Table), nil), ta.ID, ops.RotateOptions{})
	if err != nil || !rep.Done {
		t.Fatalf("rotation: %v %+v", err, rep)
	}
	if !strings.Contains(applied, "APPLIED") || strings.Contains(applied, "UNMATCHED") {
		t.Fatalf("the racing settlement: %s", applied)
	}
	dk := lookup(t, env, op, doc)
	_, v := env.Do(t, "GET", "/v1/debtors/"+dk, op, "")
	c := v["contracts"].([]any)[0].(map[string]any)
	if c["outstandingCents"].(float64) != 100000 {
		t.Fatalf("outstanding after the racing settlement: %v", c["outstandingCents"])
	}
	// Delivered again it is the same settlement: nothing changes.
	if status, out, err := env.Deliver(ta.ID, ka["webhook"], body, env.Clock.Now(), nil); err != nil || status != 200 {
		t.Fatalf("again: %d %s %v", status, out, err)
	}
	_, v = env.Do(t, "GET", "/v1/debtors/"+dk, op, "")
	if c := v["contracts"].([]any)[0].(map[string]any); c["outstandingCents"].(float64) != 100000 {
		t.Fatalf("a duplicate changed the balance: %v", c["outstandingCents"])
	}
	if n := partitionsOf(t, env, ta.ID)["T#"+ta.ID+"#D#"+old]; n != 0 {
		t.Fatalf("the old partition holds %d items", n)
	}
}

// TestRotateSwitchRacingWriter changes a debtor's profile and pays one
// of its instalments between its copy and its switch: the switch fails
// its conditions, the debtor is copied again and moves with both; a writer holding the old key
// after the move is refused, changing nothing.
func TestRotateSwitchRacingWriter(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	ta, ka, docs := portfolio(t, env, "t-r", 1)
	op := ka["operator"]
	var old, doc string
	for dk, d := range docs {
		old, doc = dk, d
	}
	status, ch := env.Do(t, "POST", "/v1/charges", op, `{"debtorKey":"`+old+`","contractId":"C-1","seq":2,"method":"PIX"}`)
	if status != 201 {
		t.Fatalf("charge: %d %v", status, ch)
	}
	api := kit.NewEmbeddedClient(kit.InProcessEndpoint, env.StoreClient)
	race := &racing{API: api, race: func() {
		if status, out := env.Do(t, "PATCH", "/v1/debtors/"+old, op, `{"version":1,"email":"nova@example.com"}`); status != 200 {
			t.Errorf("racing patch: %d %v", status, out)
		}
		body := enginetest.WebhookBody("stl-race", ch["chargeId"].(string), int64(ch["amountCents"].(float64)), "2026-09-24T10:00:00-03:00")
		if status, out, err := env.Deliver(ta.ID, ka["webhook"], body, env.Clock.Now(), nil); err != nil || status != 200 || !strings.Contains(out, "APPLIED") {
			t.Errorf("racing payment: %d %s %v", status, out, err)
		}
	}}
	rep, err := ops.RotateDebtorKeys(bg, deps(env, kit.New(race, enginetest.Table), nil), ta.ID, ops.RotateOptions{})
	if err != nil || !rep.Done || rep.Counts["retries"] != 1 || rep.Counts["debtors"] != 1 {
		t.Fatalf("rotation: %v %+v", err, rep)
	}
	dk := lookup(t, env, op, doc)
	_, out := env.Do(t, "GET", "/v1/debtors/"+dk, op, "")
	if raw, _ := json.Marshal(out); !strings.Contains(string(raw), `"hasEmail":true`) {
		t.Fatalf("the racing change was lost: %s", raw)
	}
	if c := out["contracts"].([]any)[0].(map[string]any); c["outstandingCents"].(float64) != 100000 {
		t.Fatalf("the racing payment was lost: outstanding %v", c["outstandingCents"])
	}
	if status, out := env.Do(t, "PATCH", "/v1/debtors/"+old, op, `{"version":2,"email":"outra@example.com"}`); status < 400 || status >= 500 {
		t.Fatalf("a write under the old key after the move: %d %v", status, out)
	}
	if n := partitionsOf(t, env, ta.ID)["T#"+ta.ID+"#D#"+old]; n != 0 {
		t.Fatalf("the old partition holds %d items", n)
	}
}

// TestRotateBadInput answers in the error vocabulary.
func TestRotateBadInput(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	for _, id := range []string{"T#x", "t-none"} {
		if _, err := ops.RotateDebtorKeys(bg, deps(env, env.Kit, nil), id, ops.RotateOptions{}); err == nil {
			t.Fatalf("%s: no error", id)
		}
	}
}
