package settlement_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/engine/enginetest"
	"lastro/settlement"
)

// resolveFixture is the settlement fixture with the tenant's API keys,
// for tests through HTTP.
type resolveFixture struct {
	*fixture
	keys enginetest.Keys
}

func newResolveFixture(t *testing.T) *resolveFixture {
	t.Helper()
	env := enginetest.New(t, enginetest.At(testNow))
	tn, k := env.Tenant(t, "t-res")
	return &resolveFixture{fixture: &fixture{Env: env, t: tn}, keys: k}
}

// suspend delivers a webhook for an unknown charge: it lands in suspense.
func (f *resolveFixture) suspend(t *testing.T, settlementID string, amount int64) {
	t.Helper()
	body := enginetest.WebhookBody(settlementID, "WRONG-TXID-"+settlementID, amount, paidAt.Format(time.RFC3339))
	status, resp, err := f.Deliver(f.t.ID, f.keys["webhook"], body, f.Clock.Now(), nil)
	if err != nil || status != http.StatusOK || !strings.Contains(resp, `"status":"unmatched"`) {
		t.Fatalf("webhook: %d %s %v", status, resp, err)
	}
}

func (f *resolveFixture) resolve(t *testing.T, settlementID, chargeID string) (int, map[string]any) {
	t.Helper()
	return f.Do(t, http.MethodPost, "/v1/settlements/unmatched/"+settlementID+"/resolve", f.keys["supervisor"], `{"chargeId":"`+chargeID+`"}`)
}

func (f *resolveFixture) suspended(t *testing.T) []string {
	t.Helper()
	status, out := f.Do(t, http.MethodGet, "/v1/settlements/unmatched", f.keys["supervisor"], "")
	if status != http.StatusOK {
		t.Fatalf("unmatched list: %d %v", status, out)
	}
	var ids []string
	for _, it := range out["items"].([]any) {
		ids = append(ids, it.(map[string]any)["settlementId"].(string))
	}
	return ids
}

// events counts a contract's events of one type on one instalment.
func (f *resolveFixture) events(t *testing.T, dk, contractID string, seq int, eventType string) int {
	t.Helper()
	n := 0
	prefix := keys.EventsPrefix(contractID, seq)
	for _, it := range f.partition(t, dk) {
		e, err := contract.DecodeEvent(it)
		if err != nil || !strings.HasPrefix(pkSK(it), prefix) {
			continue
		}
		if e.EventType == eventType {
			n++
		}
	}
	return n
}

func pkSK(it kit.Item) string {
	sk, _ := it["SK"].(*types.AttributeValueMemberS)
	if sk == nil {
		return ""
	}
	return sk.Value
}

func TestResolveAppliesASuspendedSettlementOnce(t *testing.T) {
	t.Parallel()
	f := newResolveFixture(t)
	dk, ch := lateContract(t, f.fixture, "C-RES")
	f.suspend(t, "stl-r1", ch.AmountCents)
	if got := f.suspended(t); len(got) != 1 || got[0] != "stl-r1" {
		t.Fatalf("suspense: %v", got)
	}

	status, out := f.resolve(t, "stl-r1", ch.ChargeID)
	if status != http.StatusOK || out["status"] != settlement.StatusApplied || out["outcome"] != settlement.OutcomeApplied ||
		out["resolvedChargeId"] != ch.ChargeID || out["unmatchedReason"] != settlement.ReasonChargeNotFound ||
		out["appliedCents"] != float64(ch.AmountCents) || out["contractId"] != "C-RES" {
		t.Fatalf("resolve: %d %v", status, out)
	}
	// Applied: the instalment is paid, the contract cured and out of the
	// portfolio; the suspense entry is gone; the record says what arrived
	// and where it went.
	c := f.load(t, dk, "C-RES")
	if in := c.Installment(1); in.Status != contract.InstPaid || c.Header.Bucket != "" || c.Header.GSI2PK != "" {
		t.Fatalf("contract after resolve: %+v %+v", c.Header, in)
	}
	if got := f.portfolio(t, "D001_030"); len(got) != 0 {
		t.Fatalf("still in the portfolio: %v", got)
	}
	if got := f.suspended(t); len(got) != 0 {
		t.Fatalf("suspense after resolve: %v", got)
	}
	stl := f.stl(t, "stl-r1")
	if stl.Outcome != settlement.OutcomeApplied || stl.ChargeID != "WRONG-TXID-stl-r1" || stl.Version != 2 || stl.ContractID != "C-RES" {
		t.Fatalf("record: %+v", stl)
	}
	if n := f.events(t, dk, "C-RES", 1, settlement.EvSettlementApplied); n != 1 {
		t.Fatalf("%d SettlementApplied events on seq 1", n)
	}
	if n := f.events(t, dk, "C-RES", 0, settlement.EvSettlementResolved); n != 1 {
		t.Fatalf("%d SettlementResolved events", n)
	}

	// Again: the first outcome, nothing changes.
	version := f.load(t, dk, "C-RES").Header.Version
	status, again := f.resolve(t, "stl-r1", ch.ChargeID)
	if status != http.StatusOK || again["status"] != settlement.StatusAlreadyApplied || again["appliedCents"] != out["appliedCents"] ||
		again["resolvedAt"] != out["resolvedAt"] {
		t.Fatalf("resolve again: %d %v", status, again)
	}
	// The provider redelivers the original webhook: already applied.
	body := enginetest.WebhookBody("stl-r1", "WRONG-TXID-stl-r1", ch.AmountCents, paidAt.Format(time.RFC3339))
	if status, resp, err := f.Deliver(f.t.ID, f.keys["webhook"], body, f.Clock.Now(), nil); err != nil || status != http.StatusOK ||
		!strings.Contains(resp, `"status":"already_applied"`) || !strings.Contains(resp, `"outcome":"APPLIED"`) {
		t.Fatalf("redelivery: %d %s %v", status, resp, err)
	}
	if v := f.load(t, dk, "C-RES").Header.Version; v != version {
		t.Fatalf("contract changed by a repeat: version %d → %d", version, v)
	}
	if n := f.events(t, dk, "C-RES", 1, settlement.EvSettlementApplied); n != 1 {
		t.Fatalf("%d SettlementApplied events after repeats", n)
	}
}

func TestResolveRefusals(t *testing.T) {
	t.Parallel()
	f := newResolveFixture(t)
	dk, ch := lateContract(t, f.fixture, "C-REF")
	other := f.charge(t, dk, "C-REF", 2)
	// Applied when it arrived: nothing to resolve.
	body := enginetest.WebhookBody("stl-direct", ch.ChargeID, 1000, paidAt.Format(time.RFC3339))
	if status, _, err := f.Deliver(f.t.ID, f.keys["webhook"], body, f.Clock.Now(), nil); err != nil || status != http.StatusOK {
		t.Fatalf("webhook: %d %v", status, err)
	}
	f.suspend(t, "stl-sus", 5000)
	if status, out := f.resolve(t, "stl-sus", other.ChargeID); status != http.StatusOK {
		t.Fatalf("resolve: %d %v", status, out)
	}

	tests := []struct {
		name, path, token, body string
		status                  int
		code                    string
	}{
		{"unknown settlement", "/v1/settlements/unmatched/stl-none/resolve", "supervisor", `{"chargeId":"` + ch.ChargeID + `"}`, 404, "settlement_not_found"},
		{"applied on arrival", "/v1/settlements/unmatched/stl-direct/resolve", "supervisor", `{"chargeId":"` + ch.ChargeID + `"}`, 409, "settlement_already_applied"},
		{"resolved to another charge", "/v1/settlements/unmatched/stl-sus/resolve", "supervisor", `{"chargeId":"` + ch.ChargeID + `"}`, 409, "settlement_already_resolved"},
		{"bad settlement id", "/v1/settlements/unmatched/a%23b/resolve", "supervisor", `{"chargeId":"` + ch.ChargeID + `"}`, 400, "invalid_settlement_id"},
		{"bad charge id", "/v1/settlements/unmatched/stl-sus/resolve", "supervisor", `{"chargeId":"a#b"}`, 400, "invalid_charge_id"},
		{"no charge id", "/v1/settlements/unmatched/stl-sus/resolve", "supervisor", `{}`, 400, "invalid_charge_id"},
		{"unknown field", "/v1/settlements/unmatched/stl-sus/resolve", "supervisor", `{"chargeId":"x","amount":1}`, 400, "invalid_json"},
		{"operator", "/v1/settlements/unmatched/stl-sus/resolve", "operator", `{"chargeId":"` + ch.ChargeID + `"}`, 403, "forbidden"},
	}
	for _, tt := range tests {
		status, out := f.Do(t, http.MethodPost, tt.path, f.keys[tt.token], tt.body)
		if status != tt.status || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want %d %s", tt.name, status, out, tt.status, tt.code)
		}
	}
	f.suspend(t, "stl-nocharge", 5000)
	if status, out := f.resolve(t, "stl-nocharge", "NO-SUCH-CHARGE"); status != http.StatusNotFound || enginetest.ErrorCode(out) != "charge_not_found" {
		t.Fatalf("unknown charge: %d %v", status, out)
	}
	if got := f.suspended(t); len(got) != 1 || got[0] != "stl-nocharge" {
		t.Fatalf("a refused resolve changed the suspense list: %v", got)
	}
}

func TestConcurrentResolvesApplyOnce(t *testing.T) {
	t.Parallel()
	f := newResolveFixture(t)
	dk, ch := lateContract(t, f.fixture, "C-RACE")
	f.suspend(t, "stl-race", 30000)
	const n = 8
	statuses := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			status, out := f.resolve(t, "stl-race", ch.ChargeID)
			if status == http.StatusOK {
				statuses[i], _ = out["status"].(string)
			} else {
				statuses[i] = "!" + enginetest.ErrorCode(out)
			}
		})
	}
	wg.Wait()
	applied := 0
	for _, s := range statuses {
		switch s {
		case settlement.StatusApplied:
			applied++
		case settlement.StatusAlreadyApplied:
		default:
			t.Errorf("a resolve answered %q", s)
		}
	}
	if applied != 1 {
		t.Fatalf("%d resolves applied: %v", applied, statuses)
	}
	if in := f.load(t, dk, "C-RACE").Installment(1); in.PaidCents+in.FinePaidCents+in.LateInterestPaidCents != 30000 {
		t.Fatalf("instalment after the race: %+v", in)
	}
	if n := f.events(t, dk, "C-RACE", 1, settlement.EvSettlementApplied); n != 1 {
		t.Fatalf("%d SettlementApplied events", n)
	}
}
