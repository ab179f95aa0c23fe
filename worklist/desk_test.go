package worklist_test

import (
	"context"
	"testing"
	"time"

	"lastro/collections/errs"
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
	desk := worklist.NewDesk(env.Kit, env.Clock)
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
