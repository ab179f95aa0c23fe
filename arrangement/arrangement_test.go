package arrangement_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/agenda"
	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/contract"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

var bg = context.Background()

// at is a São Paulo wall-clock instant.
var at = enginetest.SaoPaulo

type fixture struct {
	*enginetest.Env
	t    *tenant.Tenant
	keys enginetest.Keys
}

func newFixture(t *testing.T, now time.Time) *fixture {
	t.Helper()
	env := enginetest.New(t, enginetest.At(now))
	tn, k := env.Tenant(t, "t-arr")
	return &fixture{Env: env, t: tn, keys: k}
}

// sign registers a debtor and signs a contract of 3 monthly instalments
// of R$ 1,000.00 due from first.
func (f *fixture) sign(t *testing.T, id, first string) string {
	t.Helper()
	r, err := f.Debtors.Register(bg, f.t, debtor.RegisterInput{Document: f.CPF(), Name: "Pessoa Sintética", Phone: "+55 11 90000-0001",
		Email: "p@example.invalid"}, debtor.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Contracts.Create(bg, f.t, r.DebtorKey, contract.Input{ContractID: id, ProductCode: "CREDIARIO_12X",
		Installments: enginetest.Monthly(first, 3, 90000, 10000)}, contract.Actor{Role: "operator"}); err != nil {
		t.Fatal(err)
	}
	return r.DebtorKey
}

func (f *fixture) db() *kit.Tenant { return f.Kit.Tenant(f.t.ID, f.t.CursorKey()) }

func (f *fixture) header(t *testing.T, dk, id string) contract.Header {
	t.Helper()
	c, err := contract.Load(bg, f.db(), f.t.ID, dk, id)
	if err != nil || c == nil {
		t.Fatalf("load %s: %v", id, err)
	}
	return c.Header
}

func (f *fixture) runAt(t *testing.T, now time.Time) *agenda.Report {
	t.Helper()
	f.Clock.Set(now)
	rep, err := f.Agenda.Run(bg, f.t, calendar.Of(now, f.t.Location), agenda.Options{})
	if err != nil {
		t.Fatalf("run %s: %v", now, err)
	}
	return rep
}

func (f *fixture) post(t *testing.T, role, path, body string) (int, map[string]any) {
	t.Helper()
	return f.Do(t, http.MethodPost, path, f.keys[role], body)
}

func contractPath(dk, id string) string { return "/v1/debtors/" + dk + "/contracts/" + id }

// promise makes a promise over HTTP and returns its id.
func (f *fixture) promise(t *testing.T, dk, id, date string, cents int64) string {
	t.Helper()
	status, out := f.post(t, "operator", contractPath(dk, id)+"/promises", fmt.Sprintf(`{"promisedDate":%q,"amountCents":%d}`, date, cents))
	if status != http.StatusCreated {
		t.Fatalf("promise: %d %v", status, out)
	}
	return out["promiseId"].(string)
}

func (f *fixture) promiseStatus(t *testing.T, dk, id, promiseID string) string {
	t.Helper()
	it, err := f.db().Get(bg, kit.Key{PK: keys.Debtor(f.t.ID, dk), SK: keys.Promise(id, promiseID)}, true)
	if err != nil || it == nil {
		t.Fatalf("promise item: %v %v", it, err)
	}
	var p struct {
		Status string `dynamodbav:"status"`
	}
	if err := attributevalue.UnmarshalMap(it, &p); err != nil {
		t.Fatal(err)
	}
	return p.Status
}

// payPix issues a Pix charge for seq and delivers its settlement webhook
// paid at paidAt, for the amount charged.
func (f *fixture) payPix(t *testing.T, dk, id string, seq int, paidAt time.Time) {
	t.Helper()
	f.Clock.Set(paidAt)
	ch, err := f.Charges.Issue(bg, f.t, charges.Input{DebtorKey: dk, ContractID: id, Seq: seq, Method: charges.PIX})
	if err != nil {
		t.Fatal(err)
	}
	f.deliver(t, "stl-"+id+fmt.Sprint(seq), ch, paidAt)
}

func (f *fixture) deliver(t *testing.T, stlID string, ch *charges.Issued, paidAt time.Time) {
	t.Helper()
	body := enginetest.WebhookBody(stlID, ch.ChargeID, ch.AmountCents, paidAt.UTC().Format(time.RFC3339))
	status, out, err := f.Deliver(f.t.ID, f.keys["webhook"], body, f.Clock.Now(), nil)
	if err != nil || status != http.StatusOK {
		t.Fatalf("webhook: %d %s %v", status, out, err)
	}
}

func (f *fixture) outbox(t *testing.T) []map[string]any { return f.Outbox(t) }

// events counts the contract-level events of a type.
func (f *fixture) events(t *testing.T, dk, id, eventType string) int {
	t.Helper()
	p, err := f.Contracts.Events(bg, f.t, dk, id, "0", 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range p.Items {
		if e.EventType == eventType {
			n++
		}
	}
	return n
}

// indexed returns the contract ids on an index partition.
func (f *fixture) indexed(t *testing.T, index, partition string) []string {
	t.Helper()
	return f.ContractIDs(t, f.t, kit.Query{Index: index, Partition: partition})
}

// delinquent signs C-1 (due Friday 08-07) and runs 08-10: DUE_CHECK and
// SMS_D1, next SMS_D5 on 08-12.
func delinquent(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t, at("2026-08-01", 10, 0))
	dk := f.sign(t, "C-1", "2026-08-07")
	if got := f.runAt(t, at("2026-08-10", 8, 0)); got.Executed["SMS_D1"] != 1 {
		t.Fatalf("08-10: %v", got.Executed)
	}
	f.Clock.Set(at("2026-08-10", 10, 0))
	return f, dk
}

func TestPromiseKeptByPixTwoDaysEarly(t *testing.T) {
	t.Parallel()
	f, dk := delinquent(t)
	pid := f.promise(t, dk, "C-1", "2026-08-14", 100000)
	h := f.header(t, dk, "C-1")
	// Checked the day after the promised date: the debtor has the whole day.
	if h.Hold != "PROMISE" || h.NextAction != "PROMISE_CHECK" || h.NextActionDate != "2026-08-15" || h.HoldID != pid {
		t.Fatalf("after promise: %+v", h)
	}
	if ids := f.indexed(t, table.Agenda, keys.Agenda(f.t.ID, "2026-08-15", h.Shard)); len(ids) != 1 {
		t.Fatalf("PROMISE_CHECK not on the agenda: %v", ids)
	}
	f.payPix(t, dk, "C-1", 1, at("2026-08-12", 11, 0))
	if st := f.promiseStatus(t, dk, "C-1", pid); st != "KEPT" {
		t.Fatalf("promise: %s", st)
	}
	h = f.header(t, dk, "C-1")
	if h.Hold != "" || h.HoldID != "" || h.NextAction != "DUE_CHECK" || h.Status != contract.StatusActive {
		t.Fatalf("after payment: %+v", h)
	}
	if ids := f.indexed(t, table.Agenda, keys.Agenda(f.t.ID, "2026-08-15", h.Shard)); len(ids) != 0 {
		t.Fatalf("PROMISE_CHECK left on the agenda: %v", ids)
	}
	for _, d := range []string{"2026-08-12", "2026-08-13", "2026-08-14"} {
		if rep := f.runAt(t, at(d, 8, 0)); len(rep.Executed) != 0 || len(rep.Blocked) != 0 {
			t.Fatalf("%s: %v %v", d, rep.Executed, rep.Blocked)
		}
	}
	if msgs := f.outbox(t); len(msgs) != 1 {
		t.Fatalf("contacted after the promise: %v", msgs)
	}
	if f.events(t, dk, "C-1", "PromiseKept") != 1 || f.events(t, dk, "C-1", "PromiseBroken") != 0 {
		t.Fatal("want exactly one PromiseKept event")
	}
}

func TestBrokenPromiseReturnsToTheOwedStepOnTheNextContactDay(t *testing.T) {
	t.Parallel()
	f, dk := delinquent(t)
	pid := f.promise(t, dk, "C-1", "2026-08-15", 100000) // a Saturday: checked on Sunday
	for _, d := range []string{"2026-08-12", "2026-08-13", "2026-08-14", "2026-08-15"} {
		if rep := f.runAt(t, at(d, 8, 0)); len(rep.Executed) != 0 {
			t.Fatalf("%s under promise: %v", d, rep.Executed)
		}
	}
	rep := f.runAt(t, at("2026-08-16", 8, 0))
	if rep.Executed["PROMISE_CHECK"] != 1 || len(rep.Executed) != 1 {
		t.Fatalf("08-16: %v", rep.Executed)
	}
	if st := f.promiseStatus(t, dk, "C-1", pid); st != "BROKEN" {
		t.Fatalf("promise: %s", st)
	}
	h := f.header(t, dk, "C-1")
	// Nine days past due on Sunday: SMS_D5 is owed, on Monday.
	if h.Hold != "" || h.NextAction != "SMS_D5" || h.NextActionDate != "2026-08-17" {
		t.Fatalf("after the check: %+v", h)
	}
	if rep := f.runAt(t, at("2026-08-17", 8, 0)); rep.Executed["SMS_D5"] != 1 {
		t.Fatalf("08-17: %v", rep.Executed)
	}
	if msgs := f.outbox(t); len(msgs) != 2 || msgs[1]["action"] != "SMS_D5" {
		t.Fatalf("outbox: %v", msgs)
	}
	if f.events(t, dk, "C-1", "PromiseBroken") != 1 || f.events(t, dk, "C-1", "PromiseKept") != 0 {
		t.Fatal("want exactly one PromiseBroken event")
	}
}

func TestThirdPromiseRefusedAfterTwoBroken(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0))
	status, out := f.Do(t, http.MethodPut, "/v1/policies/dunning", f.keys["supervisor"], `{"steps":[{"daysPastDue":1,"action":"SMS_D1"},{"daysPastDue":5,"action":"SMS_D5"}],
		"contactWindow":{"weekdays":{"from":"08:00","to":"20:00"}},"maxDailyContacts":3,"bureauNoticeToReportDays":15,"maxBrokenPromises":2,"maxPromiseDays":10}`)
	if status != http.StatusCreated && status != http.StatusOK {
		t.Fatalf("policy: %d %v", status, out)
	}
	tn, err := f.Tenants.Get(bg, f.t.ID) // with the new policy version current
	if err != nil {
		t.Fatal(err)
	}
	f.t = tn
	dk := f.sign(t, "C-1", "2026-08-07")
	if h := f.header(t, dk, "C-1"); h.DunningPolicy == "DP#v0000" {
		t.Fatalf("signed under the default policy: %+v", h)
	}
	f.runAt(t, at("2026-08-10", 8, 0))
	for _, d := range []string{"2026-08-11", "2026-08-13"} {
		f.Clock.Set(at(d, 7, 0))
		f.promise(t, dk, "C-1", d, 50000)
		// Checked, and broken, the day after.
		next := calendar.MustParse(d).AddDays(1).String()
		if rep := f.runAt(t, at(next, 8, 0)); rep.Executed["PROMISE_CHECK"] != 1 {
			t.Fatalf("%s: %v", next, rep.Executed)
		}
	}
	f.Clock.Set(at("2026-08-14", 12, 0))
	status, out = f.post(t, "operator", contractPath(dk, "C-1")+"/promises", `{"promisedDate":"2026-08-15","amountCents":50000}`)
	if status != http.StatusUnprocessableEntity || enginetest.ErrorCode(out) != "too_many_broken_promises" {
		t.Fatalf("third promise: %d %v", status, out)
	}
	// The horizon of this policy is 10 days.
	if h := f.header(t, dk, "C-1"); h.Hold != "" {
		t.Fatalf("refused promise held the contract: %+v", h)
	}
}

func TestBadPromisesWriteNothing(t *testing.T) {
	t.Parallel()
	f, dk := delinquent(t)
	_, otherKeys := f.Tenant(t, "t-other")
	f.promise(t, dk, "C-1", "2026-08-14", 100000)
	before := len(f.Partition(t, f.t, dk))
	tests := []struct {
		name, key, path, body string
		status                int
		code                  string
	}{
		{"date in the past", f.keys["operator"], contractPath(dk, "C-1"), `{"promisedDate":"2026-08-09","amountCents":100}`, 422, "promised_date_past"},
		{"beyond the horizon", f.keys["operator"], contractPath(dk, "C-1"), `{"promisedDate":"2026-10-09","amountCents":100}`, 422, "promised_date_beyond_horizon"},
		{"zero amount", f.keys["operator"], contractPath(dk, "C-1"), `{"promisedDate":"2026-08-14","amountCents":0}`, 400, "invalid_amount"},
		{"negative amount", f.keys["operator"], contractPath(dk, "C-1"), `{"promisedDate":"2026-08-14","amountCents":-5}`, 400, "invalid_amount"},
		{"bad date", f.keys["operator"], contractPath(dk, "C-1"), `{"promisedDate":"14/08/2026","amountCents":100}`, 400, "invalid_promised_date"},
		{"unknown field", f.keys["operator"], contractPath(dk, "C-1"), `{"promisedDate":"2026-08-14","amountCents":100,"x":1}`, 400, ""},
		{"second open promise", f.keys["operator"], contractPath(dk, "C-1"), `{"promisedDate":"2026-08-13","amountCents":100}`, 409, "promise_open"},
		{"another tenant's contract", otherKeys["operator"], contractPath(dk, "C-1"), `{"promisedDate":"2026-08-13","amountCents":100}`, 404, "contract_not_found"},
		{"unknown contract", f.keys["operator"], contractPath(dk, "C-9"), `{"promisedDate":"2026-08-13","amountCents":100}`, 404, "contract_not_found"},
		{"bad contract id", f.keys["operator"], contractPath(dk, "C%23x"), `{"promisedDate":"2026-08-13","amountCents":100}`, 400, "invalid_contract_id"},
		{"compliance role", f.keys["compliance"], contractPath(dk, "C-1"), `{"promisedDate":"2026-08-13","amountCents":100}`, 403, ""},
	}
	for _, tt := range tests {
		status, out := f.Do(t, http.MethodPost, tt.path+"/promises", tt.key, tt.body)
		if status != tt.status || enginetest.ErrorCode(out) == "" || (tt.code != "" && enginetest.ErrorCode(out) != tt.code) {
			t.Errorf("%s: %d %v", tt.name, status, out)
		}
	}
	if after := len(f.Partition(t, f.t, dk)); after != before {
		t.Fatalf("bad input wrote %d items", after-before)
	}
}

func TestDisputeBlocksTheNextSMSAndBureauReporting(t *testing.T) {
	t.Parallel()
	f, dk := delinquent(t)
	status, out := f.post(t, "operator", contractPath(dk, "C-1")+"/disputes", `{"reason":"NOT_RECOGNISED"}`)
	if status != http.StatusCreated {
		t.Fatalf("dispute: %d %v", status, out)
	}
	id := out["disputeId"].(string)
	if h := f.header(t, dk, "C-1"); h.Hold != "DISPUTE" || h.NextAction != "SMS_D5" || h.NextActionDate != "2026-08-12" {
		t.Fatalf("after dispute: %+v", h)
	}
	rep := f.runAt(t, at("2026-08-12", 8, 0))
	if rep.Blocked["DISPUTE"] != 1 || rep.Executed["SMS_D5"] != 0 {
		t.Fatalf("08-12: %v %v", rep.Executed, rep.Blocked)
	}
	day, err := f.Contacts.Day(bg, f.t, dk, "2026-08-12", 100, "")
	if err != nil || len(day.Items) != 1 || day.Items[0].Reason != "DISPUTE" || day.Items[0].Allowed {
		t.Fatalf("evidence: %+v %v", day, err)
	}
	// Run every date the disputed contract is due until day 100 past due:
	// only bucket moves, never a contact, a notice or a report.
	for i := 0; i < 10; i++ {
		h := f.header(t, dk, "C-1")
		if h.NextAction == "" {
			break
		}
		if h.NextAction != "BUCKET_MOVE" {
			t.Fatalf("disputed contract planned %s", h.NextAction)
		}
		f.runAt(t, at(h.NextActionDate, 8, 0))
	}
	if h := f.header(t, dk, "C-1"); h.Bucket != "D091_PLUS" || h.NextAction != "" {
		t.Fatalf("disputed contract: %+v", h)
	}
	if msgs := f.outbox(t); len(msgs) != 1 {
		t.Fatalf("contacted while disputed: %v", msgs)
	}
	if b, err := os.ReadFile(f.BureauPath); err == nil && len(b) > 0 {
		t.Fatalf("bureau records while disputed: %s", b)
	}
	// The operator may not resolve; the supervisor does, and the régua
	// resumes with the notice it never skips.
	if status, _ := f.post(t, "operator", contractPath(dk, "C-1")+"/disputes/"+id+"/resolve", `{"outcome":"DEBT_CONFIRMED"}`); status != http.StatusForbidden {
		t.Fatalf("operator resolve: %d", status)
	}
	status, out = f.post(t, "supervisor", contractPath(dk, "C-1")+"/disputes/"+id+"/resolve", `{"outcome":"DEBT_CONFIRMED"}`)
	if status != http.StatusOK || out["status"] != "RESOLVED" {
		t.Fatalf("resolve: %d %v", status, out)
	}
	if h := f.header(t, dk, "C-1"); h.Hold != "" || h.NextAction != "BUREAU_NOTICE" {
		t.Fatalf("after resolve: %+v", h)
	}
	if status, out := f.post(t, "supervisor", contractPath(dk, "C-1")+"/disputes/"+id+"/resolve", `{"outcome":"DEBT_CONFIRMED"}`); status != http.StatusConflict {
		t.Fatalf("second resolve: %d %v", status, out)
	}
}

func TestWriteOffLeavesAgendaAndPortfolio(t *testing.T) {
	t.Parallel()
	f, dk := delinquent(t)
	h := f.header(t, dk, "C-1")
	if ids := f.indexed(t, table.Portfolio, keys.Bucket(f.t.ID, "D001_030")); len(ids) != 1 {
		t.Fatalf("not in the portfolio: %v", ids)
	}
	agendaPK := keys.Agenda(f.t.ID, h.NextActionDate, h.Shard)
	if ids := f.indexed(t, table.Agenda, agendaPK); len(ids) != 1 {
		t.Fatalf("not on the agenda: %v", ids)
	}
	ch, err := f.Charges.Issue(bg, f.t, charges.Input{DebtorKey: dk, ContractID: "C-1", Seq: 1, Method: charges.PIX})
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := f.post(t, "operator", contractPath(dk, "C-1")+"/write-off", `{"reason":"UNCOLLECTIBLE"}`); status != http.StatusForbidden {
		t.Fatalf("operator write-off: %d", status)
	}
	if status, out := f.post(t, "supervisor", contractPath(dk, "C-1")+"/write-off", `{"reason":"lost contact with Maria"}`); status != http.StatusBadRequest {
		t.Fatalf("free-text reason: %d %v", status, out)
	}
	status, out := f.post(t, "supervisor", contractPath(dk, "C-1")+"/write-off", `{"reason":"UNCOLLECTIBLE"}`)
	if status != http.StatusOK || out["status"] != "WRITTEN_OFF" {
		t.Fatalf("write-off: %d %v", status, out)
	}
	h = f.header(t, dk, "C-1")
	if h.Status != contract.StatusWrittenOff || h.GSI1PK != "" || h.GSI2PK != "" || h.Bucket != "" || h.NextAction != "" {
		t.Fatalf("written off: %+v", h)
	}
	if ids := f.indexed(t, table.Portfolio, keys.Bucket(f.t.ID, "D001_030")); len(ids) != 0 {
		t.Fatalf("still in the portfolio: %v", ids)
	}
	if ids := f.indexed(t, table.Agenda, agendaPK); len(ids) != 0 {
		t.Fatalf("still on the agenda: %v", ids)
	}
	if f.events(t, dk, "C-1", "WrittenOff") != 1 || f.events(t, dk, "C-1", "StepExecuted") != 1 {
		t.Fatal("history not kept")
	}
	if status, out := f.post(t, "supervisor", contractPath(dk, "C-1")+"/write-off", `{"reason":"UNCOLLECTIBLE"}`); status != http.StatusConflict {
		t.Fatalf("second write-off: %d %v", status, out)
	}
	// A later payment is applied and recorded, and changes nothing else.
	f.Clock.Set(at("2026-08-11", 9, 0))
	f.deliver(t, "stl-late", ch, at("2026-08-11", 9, 0))
	after := f.header(t, dk, "C-1")
	if after.Status != contract.StatusWrittenOff || after.OutstandingCents >= h.OutstandingCents || after.GSI1PK != "" || after.GSI2PK != "" {
		t.Fatalf("after a late payment: %+v", after)
	}
	if ev, err := f.Contracts.Events(bg, f.t, dk, "C-1", "1", 100, ""); err != nil || len(ev.Items) == 0 {
		t.Fatalf("payment not recorded: %v", err)
	}
}
