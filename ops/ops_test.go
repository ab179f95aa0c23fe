package ops_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/kit"
	"lastro/engine/enginetest"
	"lastro/ops"
	"lastro/tenant"
)

var bg = context.Background()

// portfolio builds n debtors in tenant id through the API: each with a
// contract of three instalments, a paid charge, a promise and a contact;
// plus one unmatched settlement and an idempotent promise. It returns the
// debtors' documents by key.
func portfolio(t *testing.T, env *enginetest.Env, id string, n int) (*tenant.Tenant, enginetest.Keys, map[string]string) {
	t.Helper()
	tn, k := env.Tenant(t, id)
	call := func(method, path, token, body string, want int, headers ...string) map[string]any {
		t.Helper()
		status, out := env.Do(t, method, path, token, body, headers...)
		if status != want {
			t.Fatalf("%s %s: %d %v", method, path, status, out)
		}
		return out
	}
	docs := map[string]string{}
	for i := range n {
		doc := env.CPF()
		dk := call("POST", "/v1/debtors", k["operator"], `{"document":"`+doc+`","name":"Pessoa Sintética","phone":"+55 11 90000-0001"}`, 201)["debtorKey"].(string)
		docs[dk] = doc
		base := "/v1/debtors/" + dk
		call("POST", base+"/contracts", k["operator"], `{"contractId":"C-1","productCode":"CREDIARIO_12X","installments":[
			{"seq":1,"dueDate":"2026-07-10","principalCents":90000,"interestCents":10000},
			{"seq":2,"dueDate":"2026-08-10","principalCents":90000,"interestCents":10000},
			{"seq":3,"dueDate":"2026-11-10","principalCents":90000,"interestCents":10000}]}`, 201)
		ch := call("POST", "/v1/charges", k["operator"], `{"debtorKey":"`+dk+`","contractId":"C-1","seq":1,"method":"PIX"}`, 201)
		body := enginetest.WebhookBody(fmt.Sprintf("stl-%d", i), ch["chargeId"].(string), int64(ch["amountCents"].(float64)), "2026-09-24T09:05:00-03:00")
		if status, out, err := env.Deliver(tn.ID, k["webhook"], body, env.Clock.Now(), nil); err != nil || status != 200 {
			t.Fatalf("settlement: %d %s %v", status, out, err)
		}
		call("POST", base+"/contracts/C-1/promises", k["operator"], `{"promisedDate":"2026-09-30","amountCents":100000}`, 201, "Idempotency-Key", fmt.Sprintf("p-%d", i))
		env.Do(t, "POST", base+"/contacts", k["operator"], `{"channel":"SMS","template":"MANUAL_SMS","contractId":"C-1"}`)
	}
	body := enginetest.WebhookBody("stl-unmatched", "no-such-charge", 5000, "2026-09-24T09:06:00-03:00")
	if status, out, err := env.Deliver(tn.ID, k["webhook"], body, env.Clock.Now(), nil); err != nil || status != 200 {
		t.Fatalf("unmatched settlement: %d %s %v", status, out, err)
	}
	return tn, k, docs
}

// countAll counts the table's items per tenant ("" : platform partitions).
func countAll(t *testing.T, env *enginetest.Env) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, it := range env.ScanAll(t) {
		pk := it["PK"].(*types.AttributeValueMemberS).Value
		id := ""
		if rest, ok := strings.CutPrefix(pk, "T#"); ok {
			id, _, _ = strings.Cut(rest, "#")
		}
		out[id]++
	}
	return out
}

// interrupting is an SDK client that cancels a context after a number of
// BatchWriteItem calls: a job killed halfway through its deletes.
type interrupting struct {
	kit.API
	after  int64
	calls  atomic.Int64
	cancel context.CancelFunc
}

func (c *interrupting) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	if c.calls.Add(1) == c.after {
		c.cancel()
	}
	return c.API.BatchWriteItem(ctx, in, o...)
}

func deps(env *enginetest.Env, k *kit.Kit, progress *strings.Builder) ops.Deps {
	d := ops.Deps{Kit: k, Tenants: env.Tenants, Debtors: env.Debtors, Clock: env.Clock, Owner: "test", Segments: 3}
	if progress != nil {
		d.Progress = progress
	}
	return d
}
