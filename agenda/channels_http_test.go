package agenda_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/contract"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/worklist"
)

// These are the acceptance tests of issue 22's findings 5, 6, 7, 10 and
// the residue minimum of 11, driven through the public HTTP API (the
// policy, the runs, promises, charges and the settlement webhook).

// apiRun runs the agenda of date over HTTP at the instant now.
func (f *fixture) apiRun(t *testing.T, now time.Time) map[string]any {
	t.Helper()
	f.Clock.Set(now)
	status, out := f.Do(t, http.MethodPost, "/v1/agenda/run", f.keys["supervisor"], `{"date":"`+now.In(f.t.Location).Format("2006-01-02")+`"}`)
	if status != http.StatusOK {
		t.Fatalf("run %s: %d %v", now, status, out)
	}
	return out
}

// count is a run answer's count of an action (executed) or a reason (blocked).
func count(out map[string]any, field, name string) int {
	m, _ := out[field].(map[string]any)
	n, _ := m[name].(float64)
	return int(n)
}

// putPolicy publishes a dunning policy over HTTP and reloads the tenant, so
// contracts signed next are signed under it.
func (f *fixture) putPolicy(t *testing.T, body string) {
	t.Helper()
	status, out := f.Do(t, http.MethodPut, "/v1/policies/dunning", f.keys["supervisor"], body)
	if status != http.StatusCreated {
		t.Fatalf("policy: %d %v", status, out)
	}
	f.Tenants.Invalidate(f.t.ID)
	tn, err := f.Tenants.Get(bg, f.t.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.t = tn
}

const window = `"contactWindow":{"weekdays":{"from":"08:00","to":"20:00"},"saturday":{"from":"08:00","to":"14:00"}},"maxDailyContacts":3`

// payOverHTTP issues a Pix charge for seq and pays cents of it (all of it
// when 0) through the signed settlement webhook at paidAt.
func (f *fixture) payOverHTTP(t *testing.T, dk, id string, seq int, cents int64, paidAt time.Time) {
	t.Helper()
	f.Clock.Set(paidAt)
	status, ch := f.Do(t, http.MethodPost, "/v1/charges", f.keys["operator"], fmt.Sprintf(`{"debtorKey":%q,"contractId":%q,"seq":%d,"method":"PIX"}`, dk, id, seq))
	if status != http.StatusCreated {
		t.Fatalf("charge: %d %v", status, ch)
	}
	if cents == 0 {
		cents = int64(ch["amountCents"].(float64))
	}
	body := enginetest.WebhookBody(fmt.Sprintf("stl-%s-%d-%d", id, seq, paidAt.Unix()), ch["chargeId"].(string), cents, paidAt.UTC().Format(time.RFC3339))
	code, answer, err := f.Env.Deliver(f.t.ID, f.keys["webhook"], body, paidAt, nil)
	if err != nil || code != http.StatusOK || !strings.Contains(answer, "applied") {
		t.Fatalf("settlement: %d %s %v", code, answer, err)
	}
}

// TestPromiseHasTheWholePromisedDay is finding 5: the run on the promised
// date does not break the promise, a payment that afternoon keeps it, and
// the check the day after finds it kept (SPEC AP04 "broken yesterday").
func TestPromiseHasTheWholePromisedDay(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0))
	dk := f.sign(t, "C-1", "2026-08-07", 3)
	f.apiRun(t, at("2026-08-10", 8, 0))
	f.Clock.Set(at("2026-08-10", 10, 0))
	status, out := f.Do(t, http.MethodPost, "/v1/debtors/"+dk+"/contracts/C-1/promises", f.keys["operator"], `{"promisedDate":"2026-08-12","amountCents":100000}`)
	if status != http.StatusCreated {
		t.Fatalf("promise: %d %v", status, out)
	}
	if run := f.apiRun(t, at("2026-08-12", 9, 0)); count(run, "executed", "PROMISE_CHECK") != 0 {
		t.Fatalf("the promise was checked on its own date: %v", run)
	}
	if n := f.events(t, dk, "C-1", "PromiseBroken"); n != 0 {
		t.Fatalf("broken on its own date: %d", n)
	}
	f.payOverHTTP(t, dk, "C-1", 1, 0, at("2026-08-12", 15, 0))
	f.apiRun(t, at("2026-08-13", 9, 0))
	if kept, broken := f.events(t, dk, "C-1", "PromiseKept"), f.events(t, dk, "C-1", "PromiseBroken"); kept != 1 || broken != 0 {
		t.Fatalf("kept %d, broken %d", kept, broken)
	}
	for _, m := range f.outbox(t) {
		if m["action"] != "SMS_D1" {
			t.Fatalf("contacted during the promise: %v", m)
		}
	}
}

// TestBureauNoticeIsALawfulNotice is finding 6: the notice's default text
// names the creditor, the contract, the amount overdue, its due date, the
// bureau, the date before which nothing is reported and how to contest;
// it goes by the policy's channel; the inclusion carries the overdue
// amount and its due date (not the whole balance); a partial payment
// makes the reported amount change, and the bureau gets an UPDATE.
func TestBureauNoticeIsALawfulNotice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0))
	f.putPolicy(t, `{"steps":[{"daysPastDue":1,"action":"SMS_D1","channel":"SMS"},{"daysPastDue":5,"action":"BUREAU_NOTICE","channel":"EMAIL"},
		{"daysPastDue":20,"action":"BUREAU_REPORT"}],`+window+`,"bureauNoticeToReportDays":15,"bureauName":"Birô Exemplo"}`)
	dk := f.sign(t, "C-1", "2026-08-07", 3) // R$ 3.000,00 outstanding, R$ 1.000,00 overdue
	f.apiRun(t, at("2026-08-10", 8, 0))
	if run := f.apiRun(t, at("2026-08-12", 8, 0)); count(run, "executed", "BUREAU_NOTICE") != 1 {
		t.Fatalf("notice: %v", run)
	}
	msgs := f.outbox(t)
	notice := msgs[len(msgs)-1]
	text, _ := notice["text"].(string)
	if notice["action"] != "BUREAU_NOTICE" || notice["channel"] != "EMAIL" {
		t.Fatalf("notice message: %v", notice)
	}
	for _, want := range []string{f.t.Name, "C-1", "R$ 1.0", "2026-08-07", "Birô Exemplo", "2026-08-27", "contestar"} {
		if !strings.Contains(text, want) {
			t.Errorf("the notice does not say %q: %s", want, text)
		}
	}
	if strings.Contains(text, "3.000") {
		t.Errorf("the notice states the whole balance as overdue: %s", text)
	}
	if run := f.apiRun(t, at("2026-08-27", 8, 0)); count(run, "executed", "BUREAU_REPORT") != 1 {
		t.Fatalf("report: %v", run)
	}
	recs := jsonLines(t, f.BureauPath)
	if len(recs) != 1 || recs[0]["kind"] != "INCLUSION" || recs[0]["amountCents"] != float64(100000) || recs[0]["oldestOverdueDueDate"] != "2026-08-07" {
		t.Fatalf("inclusion: %v", recs)
	}
	f.payOverHTTP(t, dk, "C-1", 1, 50000, at("2026-08-28", 10, 0))
	if run := f.apiRun(t, at("2026-08-28", 11, 0)); count(run, "executed", "BUREAU_UPDATE") != 1 {
		t.Fatalf("update: %v", run)
	}
	recs = jsonLines(t, f.BureauPath)
	if len(recs) != 2 || recs[1]["kind"] != "UPDATE" {
		t.Fatalf("bureau records: %v", recs)
	}
	if amt, _ := recs[1]["amountCents"].(float64); amt <= 0 || amt >= 100000 {
		t.Fatalf("update amount %v, want what is still overdue", recs[1])
	}
	// Once per change: the next run sends nothing more.
	f.apiRun(t, at("2026-08-31", 8, 0))
	if n := len(jsonLines(t, f.BureauPath)); n != 2 {
		t.Fatalf("%d bureau records", n)
	}
}

// TestMessagesSayTheAmountDueFromTheContractsPolicy is finding 7's text
// half: {{amount}} is the amount due today with fine and late interest
// (not the outstanding balance), {{outstanding}} the balance, and the
// template is the contract's frozen policy version's, not the tenant's
// current one.
func TestMessagesSayTheAmountDueFromTheContractsPolicy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0))
	f.putPolicy(t, `{"steps":[{"daysPastDue":1,"action":"SMS_D1","channel":"SMS"}],`+window+`,"bureauNoticeToReportDays":15,
		"templates":{"SMS_D1":"V1 {{amount}} / {{amountDue}} / {{outstanding}} / {{oldestDueDate}}"}}`)
	f.sign(t, "C-1", "2026-08-07", 2)
	f.putPolicy(t, `{"steps":[{"daysPastDue":1,"action":"SMS_D1","channel":"SMS"}],`+window+`,"bureauNoticeToReportDays":15,
		"templates":{"SMS_D1":"V2 {{amount}}"}}`)
	f.apiRun(t, at("2026-08-10", 8, 0))
	msgs := f.outbox(t)
	if len(msgs) != 1 {
		t.Fatalf("outbox: %v", msgs)
	}
	// R$ 1.000,00 overdue since Friday 08-07, paid Monday 08-10: the 2 %
	// fine and 3 days of 1 % a month late interest (CP#v0000).
	want := "V1 R$ 1.021,00 / R$ 1.021,00 / R$ 2.000,00 / 2026-08-07"
	if msgs[0]["text"] != want {
		t.Fatalf("text %q, want %q", msgs[0]["text"], want)
	}
}

// TestStepsNameTheirChannel is finding 7's channel half: unknown channels
// are 400 at publish, a legacy-style name gets its channel from the
// table (CARTA is a LETTER, LIGACAO a CALL, never SMS), a step whose
// channel has no address is SKIPPED_NO_ADDRESS without spending a
// contact, and a CALL step leaves one call for the debtor on the day's
// list for all its contracts instead of a message each.
func TestStepsNameTheirChannel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0))
	for _, bad := range []string{
		`{"daysPastDue":1,"action":"SMS_D1","channel":"FAX"}`,
		`{"daysPastDue":1,"action":"AVISO_D1"}`,
		`{"daysPastDue":1,"action":"SMS_D1","channel":"SMS","fallbacks":["CALL"]}`,
		`{"daysPastDue":1,"action":"BUREAU_NOTICE","channel":"SMS"}`,
	} {
		status, out := f.Do(t, http.MethodPut, "/v1/policies/dunning", f.keys["supervisor"], `{"steps":[`+bad+`],`+window+`,"bureauNoticeToReportDays":15}`)
		if status != http.StatusBadRequest || enginetest.ErrorCode(out) != "invalid_steps" {
			t.Errorf("%s: %d %v", bad, status, out)
		}
	}
	f.putPolicy(t, `{"steps":[{"daysPastDue":1,"action":"EMAIL_D1","channel":"EMAIL"},{"daysPastDue":4,"action":"LIGACAO_D4"},
		{"daysPastDue":20,"action":"CARTA_D20"}],`+window+`,"bureauNoticeToReportDays":15}`)
	status, pol := f.Do(t, http.MethodGet, "/v1/policies/dunning", f.keys["supervisor"], "")
	steps, _ := pol["steps"].([]any)
	if status != http.StatusOK || len(steps) != 3 || steps[1].(map[string]any)["channel"] != "CALL" || steps[2].(map[string]any)["channel"] != "LETTER" {
		t.Fatalf("policy: %d %v", status, pol)
	}
	// A debtor with a phone and no e-mail, three contracts due together.
	r, err := f.Debtors.Register(bg, f.t, debtor.RegisterInput{Document: f.CPF(), Name: "Pessoa Sintética", Phone: "+55 11 90000-0002"}, debtor.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	dk := r.DebtorKey
	for _, id := range []string{"C-1", "C-2", "C-3"} {
		f.signFor(t, dk, id, "2026-08-07", 3)
	}
	run := f.apiRun(t, at("2026-08-10", 8, 0))
	if count(run, "blocked", "NO_ADDRESS") != 3 || count(run, "executed", "EMAIL_D1") != 0 {
		t.Fatalf("08-10: %v", run)
	}
	_, day := f.Do(t, http.MethodGet, "/v1/debtors/"+dk+"/contacts?date=2026-08-10", f.keys["compliance"], "")
	items, _ := day["items"].([]any)
	if day["counter"] != float64(0) || len(items) != 3 || items[0].(map[string]any)["outcome"] != "SKIPPED_NO_ADDRESS" {
		t.Fatalf("no-address evidence: %v", day)
	}
	if h := f.header(t, dk, "C-1"); h.LastStep != 1 || h.NextAction != "LIGACAO_D4" {
		t.Fatalf("the skipped step did not move the régua on: %+v", h)
	}
	// Day 4 is Tuesday 08-11.
	run = f.apiRun(t, at("2026-08-11", 8, 0))
	if count(run, "executed", "LIGACAO_D4") != 3 || count(run, "blocked", "JOINED") != 2 {
		t.Fatalf("08-11: %v", run)
	}
	if msgs := f.outbox(t); len(msgs) != 0 {
		t.Fatalf("a call went out as a message: %v", msgs)
	}
	tasks, _, err := worklist.Day(bg, f.Kit.Tenant(f.t.ID, f.t.CursorKey()), f.t.ID, "2026-08-11", 100, "")
	if err != nil || len(tasks) != 3 {
		t.Fatalf("call list: %v %v", tasks, err)
	}
	for _, task := range tasks {
		if task.AttemptID != tasks[0].AttemptID || task.DebtorKey != dk || task.DaysPastDue != 4 || task.AmountDueCents != 100000 ||
			task.TimeZone == "" { // the zone its attempt was judged in, for the desk's window
			t.Fatalf("tasks of one call: %+v", tasks)
		}
	}
	_, day = f.Do(t, http.MethodGet, "/v1/debtors/"+dk+"/contacts?date=2026-08-11", f.keys["compliance"], "")
	if day["counter"] != float64(1) {
		t.Fatalf("three contracts spent %v contacts for one call", day["counter"])
	}
}

// TestResidueBelowThePolicyMinimumIsNotDunned is finding 11's residue: a
// contract owing less than minimumDunnedCents overdue gets no message.
func TestResidueBelowThePolicyMinimumIsNotDunned(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0))
	f.putPolicy(t, `{"steps":[{"daysPastDue":1,"action":"SMS_D1","channel":"SMS"}],`+window+`,"bureauNoticeToReportDays":15,"minimumDunnedCents":5000}`)
	dk := f.register(t)
	for id, cents := range map[string]int64{"C-small": 2167, "C-big": 90000} {
		if _, err := f.Contracts.Create(bg, f.t, dk, contract.Input{ContractID: id, ProductCode: "CREDIARIO",
			Installments: enginetest.Monthly("2026-08-07", 1, cents, 0)}, contract.Actor{Role: "operator"}); err != nil {
			t.Fatal(err)
		}
	}
	run := f.apiRun(t, at("2026-08-10", 8, 0))
	if count(run, "executed", "DUE_CHECK") != 2 || count(run, "executed", "SMS_D1") != 1 {
		t.Fatalf("08-10: %v", run)
	}
	if msgs := f.outbox(t); len(msgs) != 1 || msgs[0]["contractId"] != "C-big" {
		t.Fatalf("outbox: %v", msgs)
	}
	if h := f.header(t, dk, "C-small"); h.Status != contract.StatusInCollection || h.Bucket == "" {
		t.Fatalf("the residue is still delinquent: %+v", h)
	}
}

// TestPartialPaymentRederivesTheNextAction is finding 10's stale plan: a
// payment that moves the oldest overdue instalment re-derives the next
// action and its date at once; the 360 never shows the plan it made stale.
func TestPartialPaymentRederivesTheNextAction(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0))
	dk := f.sign(t, "C-1", "2026-08-07", 3)
	for _, d := range []string{"2026-08-10", "2026-08-12", "2026-08-22", "2026-09-07", "2026-09-08", "2026-09-10"} {
		f.apiRun(t, at(d, 8, 0))
	}
	before := f.header(t, dk, "C-1")
	if before.OldestOverdueDueDate != "2026-08-07" || before.NextAction != "SMS_D45" || before.NextActionDate != "2026-09-21" {
		t.Fatalf("before: %+v", before)
	}
	f.payOverHTTP(t, dk, "C-1", 1, 0, at("2026-09-10", 10, 0))
	after := f.header(t, dk, "C-1")
	c, err := contract.Load(bg, f.Kit.Tenant(f.t.ID, f.t.CursorKey()), f.t.ID, dk, "C-1")
	if err != nil {
		t.Fatal(err)
	}
	pol, err := f.Policies.Dunning(bg, f.t, 0)
	if err != nil {
		t.Fatal(err)
	}
	plan := c.Refresh(calendar.Of(f.Clock.Now(), f.t.Location), f.t.Calendar(), pol)
	if after.OldestOverdueDueDate != "2026-09-07" || after.NextAction != plan.Action || after.NextActionDate != plan.Date.String() ||
		after.NextActionDate == "2026-09-21" {
		t.Fatalf("after the payment: %s on %s, the régua says %s on %s", after.NextAction, after.NextActionDate, plan.Action, plan.Date)
	}
	v, err := f.Debtors.View(bg, f.t, dk, 100, "")
	if err != nil || len(v.Contracts) != 1 {
		t.Fatalf("360: %v", err)
	}
	if got := v.Contracts[0]; got.NextAction == nil || *got.NextAction != plan.Action {
		t.Fatalf("360 next action: %+v", got.Facts)
	}
	// The plan moved later than the stored agenda entry: the entry stays
	// on its date (the payment's index writes stay within 3 WRU) and, when
	// the agenda visits it, moves to the plan's date.
	if after.AgendaDate != "2026-09-21" || after.GSI1PK != keys.Agenda(f.t.ID, "2026-09-21", after.Shard) {
		t.Fatalf("the entry left in place: agenda %s %s, GSI1PK %s", after.AgendaAction, after.AgendaDate, after.GSI1PK)
	}
	f.apiRun(t, at("2026-09-21", 8, 0))
	moved := f.header(t, dk, "C-1")
	if moved.AgendaDate != "" || moved.NextActionDate != after.NextActionDate || moved.GSI1PK != keys.Agenda(f.t.ID, after.NextActionDate, moved.Shard) {
		t.Fatalf("after the visit: agenda %q, next %s on %s, GSI1PK %s", moved.AgendaDate, moved.NextAction, moved.NextActionDate, moved.GSI1PK)
	}
}
