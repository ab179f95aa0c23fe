package agenda_test

import (
	"context"
	"testing"
	"time"

	"lastro/agenda"
	"lastro/collections/calendar"
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

func newFixture(t *testing.T, now time.Time, opts ...enginetest.Option) *fixture {
	t.Helper()
	env := enginetest.New(t, append([]enginetest.Option{enginetest.At(now)}, opts...)...)
	tn, keys := env.Tenant(t, "t-ag")
	return &fixture{Env: env, t: tn, keys: keys}
}

// sign registers a debtor (with a phone and an e-mail, so contacts can be
// delivered) and signs a contract of n monthly instalments of R$ 1,000.00.
func (f *fixture) sign(t *testing.T, id, first string, n int) string {
	t.Helper()
	return f.signFor(t, f.register(t), id, first, n)
}

func (f *fixture) register(t *testing.T) string {
	t.Helper()
	r, err := f.Debtors.Register(bg, f.t, debtor.RegisterInput{Document: f.CPF(), Name: "Pessoa Sintética", Phone: "+55 11 90000-0001",
		Email: "p@example.invalid"}, debtor.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	return r.DebtorKey
}

// signFor signs a contract of n monthly instalments of R$ 1,000.00 for dk.
func (f *fixture) signFor(t *testing.T, dk, id, first string, n int) string {
	t.Helper()
	d := calendar.MustParse(first)
	insts := make([]contract.InstallmentInput, n)
	for i := range insts {
		insts[i] = contract.InstallmentInput{Seq: i + 1, DueDate: d.AddMonths(i).String(), PrincipalCents: contract.Cents(90000), InterestCents: contract.Cents(10000)}
	}
	if _, err := f.Contracts.Create(bg, f.t, dk, contract.Input{ContractID: id, ProductCode: "CREDIARIO_12X", Installments: insts}, contract.Actor{Role: "operator"}); err != nil {
		t.Fatal(err)
	}
	return dk
}

func (f *fixture) header(t *testing.T, dk, id string) contract.Header {
	t.Helper()
	c, err := contract.Load(bg, f.Kit.Tenant(f.t.ID, f.t.CursorKey()), f.t.ID, dk, id)
	if err != nil || c == nil {
		t.Fatalf("load %s: %v", id, err)
	}
	return c.Header
}

// runAt moves the clock to the instant and runs the whole agenda of its date.
func (f *fixture) runAt(t *testing.T, now time.Time) map[string]int {
	t.Helper()
	f.Clock.Set(now)
	rep, err := f.Agenda.Run(bg, f.t, calendar.Of(now, f.t.Location), agenda.Options{})
	if err != nil {
		t.Fatalf("run %s: %v", now, err)
	}
	return rep.Executed
}

// outbox returns the messages sent, in order.
func (f *fixture) outbox(t *testing.T) []map[string]any { return f.Outbox(t) }

// jsonLines reads a JSON-lines file (the bureau file).
var jsonLines = enginetest.JSONLines

func TestDueCheckMakesTheContractDelinquentAndRunsTheFirstStep(t *testing.T) {
	t.Parallel()
	// Signed on Saturday 08-01, due Friday 08-07: DUE_CHECK on Monday 08-10.
	f := newFixture(t, at("2026-08-01", 10, 0))
	dk := f.sign(t, "C-1", "2026-08-07", 3)
	if h := f.header(t, dk, "C-1"); h.NextAction != "DUE_CHECK" || h.NextActionDate != "2026-08-10" {
		t.Fatalf("signed: %+v", h)
	}
	// Nothing is due before the 10th.
	if got := f.runAt(t, at("2026-08-08", 8, 0)); len(got) != 0 {
		t.Fatalf("08-08: %v", got)
	}
	got := f.runAt(t, at("2026-08-10", 8, 0))
	if got["DUE_CHECK"] != 1 || got["SMS_D1"] != 1 {
		t.Fatalf("08-10: %v", got)
	}
	h := f.header(t, dk, "C-1")
	if h.Status != contract.StatusInCollection || h.OldestOverdueDueDate != "2026-08-07" || h.Bucket != "D001_030" || h.GSI2PK == "" ||
		h.LastStep != 1 || h.LastStepAt != "2026-08-10" || h.NextAction != "SMS_D5" || h.NextActionDate != "2026-08-12" {
		t.Fatalf("after DUE_CHECK: %+v", h)
	}
	if msgs := f.outbox(t); len(msgs) != 1 || msgs[0]["action"] != "SMS_D1" || msgs[0]["channel"] != "SMS" {
		t.Fatalf("outbox: %v", msgs)
	}
	// A second run of the same day repeats nothing.
	if got := f.runAt(t, at("2026-08-10", 9, 0)); len(got) != 0 {
		t.Fatalf("re-run: %v", got)
	}
	if msgs := f.outbox(t); len(msgs) != 1 {
		t.Fatalf("re-run sent again: %v", msgs)
	}
	// SMS_D5 on Wednesday.
	if got := f.runAt(t, at("2026-08-12", 8, 0)); got["SMS_D5"] != 1 {
		t.Fatalf("08-12: %v", got)
	}
}

// TestAnswersDeriveLatenessBeforeTheAgendaRuns: a contract signed current
// whose instalment fell due while no agenda ran (before the day's run, or
// a downtime longer than the catch-up window) is shown late in the 360
// view all the same: the answer derives it from today, not from the
// stored facts the DUE_CHECK has not written yet.
func TestAnswersDeriveLatenessBeforeTheAgendaRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-09-01", 10, 0))
	dk := f.sign(t, "C-1", "2026-09-10", 3)
	f.Clock.Set(at("2026-09-27", 7, 0)) // 17 days late, no run since signing
	v, err := f.Debtors.View(bg, f.t, dk, 100, "")
	if err != nil || len(v.Contracts) != 1 {
		t.Fatalf("360: %+v %v", v, err)
	}
	c := v.Contracts[0]
	if c.Status != contract.StatusInCollection || c.DaysPastDue != 17 || c.Bucket == nil || *c.Bucket != "D001_030" ||
		c.OldestOverdueDueDate == nil || *c.OldestOverdueDueDate != "2026-09-10" {
		t.Fatalf("contract facts: %+v", c.Facts)
	}
	// The stored header still waits for its DUE_CHECK (in the catch-up window).
	if h := f.header(t, dk, "C-1"); h.Status != contract.StatusActive || h.NextAction != "DUE_CHECK" {
		t.Fatalf("stored header: %+v", h)
	}
}

// TestALongDowntimeLosesNoEntry: no run for 18 days, longer than the
// catch-up window; the next run reaches back to the day after the shard's
// last finished run (here: the tenant's creation), so the DUE_CHECK of
// 08-10 still runs — with the step the contract is owed by then.
func TestALongDowntimeLosesNoEntry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0))
	dk := f.sign(t, "C-1", "2026-08-07", 3)
	f.runAt(t, at("2026-08-03", 8, 0)) // a run finished: the watermark
	got := f.runAt(t, at("2026-08-25", 8, 0))
	if got["DUE_CHECK"] != 1 || got["CALL_D15"] != 1 {
		t.Fatalf("after the downtime: %v", got)
	}
	if h := f.header(t, dk, "C-1"); h.Status != contract.StatusInCollection || h.LastStep != 15 || h.Bucket != "D001_030" {
		t.Fatalf("header: %+v", h)
	}
}
