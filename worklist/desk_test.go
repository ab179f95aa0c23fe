package worklist_test

import (
	"context"
	"testing"
	"time"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/contactlimit"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/worklist"
)

func code(err error) string {
	_, c, _ := errs.Public(err)
	return c
}

// TestOneCollectorPerDebtor: the queue comes in working order; a task is
// one collector's while the claim runs, only its holder records the
// outcome, a done task is taken by nobody, and a lapsed claim frees it.
func TestOneCollectorPerDebtor(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	tn, _ := env.Tenant(t, "t-wl")
	ctx := context.Background()
	db := env.Kit.Tenant(tn.ID, tn.CursorKey())
	day := "2026-09-24"
	for _, task := range []worklist.Task{
		{DebtorKey: "00000000000000a1", ContractID: "C-1", DaysPastDue: 15, AmountDueCents: 5000},
		{DebtorKey: "00000000000000a2", ContractID: "C-2", DaysPastDue: 45, AmountDueCents: 100},
		{DebtorKey: "00000000000000a3", ContractID: "C-3", DaysPastDue: 15, AmountDueCents: 9000},
	} {
		task.TenantID, task.Date, task.Action, task.AttemptID, task.CreatedAt = tn.ID, day, "CALL_D15", "att-"+task.ContractID, "2026-09-24T11:00:00.000Z"
		put, err := worklist.Put(task)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Transact(ctx, put); err != nil {
			t.Fatal(err)
		}
	}
	desk := worklist.NewDesk(env.Kit, env.Clock, env.Policies)
	q, err := desk.Queue(ctx, tn, day)
	if err != nil || len(q) != 3 || q[0].ContractID != "C-2" || q[1].ContractID != "C-3" || q[2].ContractID != "C-1" {
		t.Fatalf("queue %v %+v: want C-2 (most late), C-3 (larger amount), C-1", err, q)
	}
	if err := desk.Claim(ctx, tn, day, "00000000000000a2", "C-2", "ana"); err != nil {
		t.Fatal(err)
	}
	if err := desk.Claim(ctx, tn, day, "00000000000000a2", "C-2", "bia"); code(err) != "task_taken" {
		t.Fatalf("a second collector: %v", err)
	}
	if err := desk.Record(ctx, tn, day, "00000000000000a2", "C-2", "bia", "REACHED", time.Time{}); code(err) != "task_not_yours" {
		t.Fatalf("an outcome by who does not hold it: %v", err)
	}
	for _, bad := range []struct {
		outcome string
		at      time.Time
		want    string
	}{
		{"HUNG_UP", time.Time{}, "invalid_outcome"},
		{"CALLBACK", time.Time{}, "invalid_callback"},
		{"CALLBACK", env.Clock.Now().Add(-time.Hour), "invalid_callback"},
	} {
		if err := desk.Record(ctx, tn, day, "00000000000000a2", "C-2", "ana", bad.outcome, bad.at); code(err) != bad.want {
			t.Errorf("%s at %v: %v, want %s", bad.outcome, bad.at, err, bad.want)
		}
	}
	if err := desk.Record(ctx, tn, day, "00000000000000a2", "C-2", "ana", "NO_ANSWER", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := desk.Claim(ctx, tn, day, "00000000000000a2", "C-2", "ana"); code(err) != "task_taken" {
		t.Fatalf("a done task taken again: %v", err)
	}
	for _, bad := range []string{"", "2026-13-01", "2026-09-24#X", "T#other"} {
		if err := desk.Claim(ctx, tn, bad, "00000000000000a2", "C-2", "ana"); code(err) != "invalid_date" {
			t.Errorf("claim on day %q: %v", bad, err)
		}
		if _, err := desk.Queue(ctx, tn, bad); code(err) != "invalid_date" {
			t.Errorf("queue of day %q: %v", bad, err)
		}
		if err := desk.Record(ctx, tn, bad, "00000000000000a2", "C-2", "ana", "REACHED", time.Time{}); code(err) != "invalid_date" {
			t.Errorf("outcome on day %q: %v", bad, err)
		}
	}
	if err := desk.Claim(ctx, tn, day, "00000000000000a9", "C-9", "ana"); code(err) != "task_not_found" {
		t.Fatalf("no such task: %v", err)
	}
	// A callback keeps the task for later; a lapsed claim frees the debtor.
	if err := desk.Claim(ctx, tn, day, "00000000000000a3", "C-3", "ana"); err != nil {
		t.Fatal(err)
	}
	if err := desk.Record(ctx, tn, day, "00000000000000a3", "C-3", "ana", "CALLBACK", env.Clock.Now().Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := desk.Claim(ctx, tn, day, "00000000000000a1", "C-1", "ana"); err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(worklist.ClaimFor + time.Second)
	if err := desk.Claim(ctx, tn, day, "00000000000000a1", "C-1", "bia"); err != nil {
		t.Fatalf("a lapsed claim: %v", err)
	}
	q, _ = desk.Queue(ctx, tn, day)
	if q[0].ContractID != "C-1" || q[len(q)-1].Status != worklist.StatusDone {
		t.Fatalf("queue after the calls: %+v", q)
	}
}

// TestTheOutcomeSettlesTheCallsEvidence: recording a call's outcome
// writes it on the attempt's evidence in the same transaction (CALLED,
// the desk's code, the operator's id and the time), counts no contact,
// and a task whose evidence is not an open call attempt is refused whole.
func TestTheOutcomeSettlesTheCallsEvidence(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	tn, _ := env.Tenant(t, "t-wl-ev")
	ctx := context.Background()
	db := env.Kit.Tenant(tn.ID, tn.CursorKey())
	r, err := env.Debtors.Register(ctx, tn, debtor.RegisterInput{Document: env.CPF(), Name: "Pessoa Sintética", Phone: "+55 11 90000-0001"}, debtor.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	dk := r.DebtorKey
	day := calendar.Today(env.Clock.Now(), tn.Location).String()
	call, err := env.Contacts.Claim(ctx, tn, contactlimit.Claim{DebtorKey: dk, ContractID: "C-1", Channel: contactlimit.Call, Template: "CALL_D15", Actor: debtor.Actor{Role: "agenda"}})
	if err != nil || !call.Allowed {
		t.Fatalf("claim the call: %+v %v", call, err)
	}
	// The debtor then refuses calls: a second contract's claim is blocked.
	if err := env.Contacts.SetOptOut(ctx, tn, dk, contactlimit.Call, true); err != nil {
		t.Fatal(err)
	}
	blocked, err := env.Contacts.Claim(ctx, tn, contactlimit.Claim{DebtorKey: dk, ContractID: "C-2", Channel: contactlimit.Call, Template: "CALL_D15", Actor: debtor.Actor{Role: "agenda"}})
	if err != nil || blocked.Allowed {
		t.Fatalf("a second contact of the day: %+v %v", blocked, err)
	}
	for cid, a := range map[string]contactlimit.Attempt{"C-1": call, "C-2": blocked} {
		put, err := worklist.Put(worklist.Task{TenantID: tn.ID, Date: day, DebtorKey: dk, ContractID: cid, Action: "CALL_D15",
			AttemptID: a.AttemptID, AttemptKey: a.SK, CreatedAt: "2026-09-24T11:00:00.000Z"})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Transact(ctx, put); err != nil {
			t.Fatal(err)
		}
	}
	desk := worklist.NewDesk(env.Kit, env.Clock, env.Policies)
	const op = "3f9a0c1d2e4b5a69"
	if err := desk.Claim(ctx, tn, day, dk, "C-1", op); err != nil {
		t.Fatal(err)
	}
	if err := desk.Record(ctx, tn, day, dk, "C-1", op, worklist.OutcomeCallback, env.Clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := desk.Claim(ctx, tn, day, dk, "C-1", op); err != nil {
		t.Fatal(err)
	}
	if err := desk.Record(ctx, tn, day, dk, "C-1", op, "REACHED", time.Time{}); err != nil {
		t.Fatal(err)
	}
	v, err := env.Contacts.Day(ctx, tn, dk, call.LocalDate, 50, "")
	if err != nil {
		t.Fatal(err)
	}
	if v.Counter != 1 {
		t.Errorf("the day's counter is %d after the outcomes: the listing spent the only contact", v.Counter)
	}
	var got contactlimit.Attempt
	for _, a := range v.Items {
		if a.AttemptID == call.AttemptID {
			got = a
		}
	}
	if got.Outcome != contactlimit.OutcomeCalled || got.CallOutcome != "REACHED" || got.OperatorID != op || got.Calls != 2 || got.OutcomeAt == "" {
		t.Errorf("the call's evidence: %+v", got)
	}
	// The blocked attempt is no call to settle: the task stays as it was.
	if err := desk.Claim(ctx, tn, day, dk, "C-2", op); err != nil {
		t.Fatal(err)
	}
	if err := desk.Record(ctx, tn, day, dk, "C-2", op, "REACHED", time.Time{}); code(err) != "attempt_settled" {
		t.Fatalf("an outcome on a blocked attempt: %v", err)
	}
	q, err := desk.Queue(ctx, tn, day)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range q {
		if task.ContractID == "C-2" && (task.Status != worklist.StatusOpen || task.Outcome != "") {
			t.Errorf("the refused outcome changed the task: %+v", task)
		}
		if task.ContractID == "C-1" && (task.Status != worklist.StatusDone || task.OutcomeBy != op || task.ClaimedBy != op) {
			t.Errorf("the recorded task: %+v", task)
		}
	}
}
