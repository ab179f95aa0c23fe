package worklist_test

import (
	"context"
	"testing"
	"time"

	"lastro/engine/enginetest"
	"lastro/worklist"
)

// TestClaimRespectsTheDebtorsWindow: at one instant (the engine's clock)
// a debtor where it is 21:30 is outside the default window (08:00-20:00)
// and refused, one where it is 10:00 is claimable; a holiday of the
// debtor's state refuses all day while another state's debtor is called.
// The queue marks the outside tasks and puts them after the callable ones.
func TestClaimRespectsTheDebtorsWindow(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	tn, _ := env.Tenant(t, "t-wl-window")
	ctx := context.Background()
	db := env.Kit.Tenant(tn.ID, tn.CursorKey())
	put := func(day, dk, cid, zone, uf string, late int) {
		t.Helper()
		a, err := worklist.Put(worklist.Task{TenantID: tn.ID, Date: day, DebtorKey: dk, ContractID: cid, Action: "CALL_D15",
			AttemptID: "att-" + cid, DaysPastDue: late, CreatedAt: "2026-09-24T11:00:00.000Z", TimeZone: zone, UF: uf})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Transact(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	// A Thursday, 13:00 UTC: 10:00 in São Paulo, 22:00 in Tokyo; and
	// 00:30 UTC the next day: 21:30 in São Paulo, 19:30 in Rio Branco.
	day := "2026-09-24"
	put(day, "00000000000000c1", "C-TOKYO", "Asia/Tokyo", "", 90)
	put(day, "00000000000000c2", "C-SP", "", "SP", 15)
	desk := worklist.NewDesk(env.Kit, env.Clock, env.Policies)
	env.Clock.Set(time.Date(2026, 9, 24, 13, 0, 0, 0, time.UTC))
	q, err := desk.Queue(ctx, tn, day)
	if err != nil || len(q) != 2 || q[0].ContractID != "C-SP" || q[0].Outside || !q[1].Outside || q[1].ContractID != "C-TOKYO" {
		t.Fatalf("queue %v %+v: want C-SP callable first, C-TOKYO (more days late, but 22:00 local) after, outside", err, q)
	}
	if err := desk.Claim(ctx, tn, day, "00000000000000c1", "C-TOKYO", "ana"); code(err) != "outside_contact_window" {
		t.Fatalf("22:00 local: %v, want outside_contact_window", err)
	}
	if err := desk.Claim(ctx, tn, day, "00000000000000c2", "C-SP", "ana"); err != nil {
		t.Fatalf("10:00 local: %v", err)
	}

	put(day, "00000000000000c3", "C-ACRE", "", "AC", 15)
	env.Clock.Set(time.Date(2026, 9, 25, 0, 30, 0, 0, time.UTC))
	if err := desk.Claim(ctx, tn, day, "00000000000000c2", "C-SP", "bia"); code(err) != "outside_contact_window" {
		t.Fatalf("21:30 in São Paulo: %v, want outside_contact_window", err)
	}
	if err := desk.Claim(ctx, tn, day, "00000000000000c3", "C-ACRE", "bia"); err != nil {
		t.Fatalf("19:30 in Rio Branco: %v", err)
	}

	// 9 July 2026 is a holiday of São Paulo only: 10:00 local in both.
	hol := "2026-07-09"
	put(hol, "00000000000000c4", "C-SP-HOL", "", "SP", 15)
	put(hol, "00000000000000c5", "C-RJ-HOL", "", "RJ", 15)
	env.Clock.Set(time.Date(2026, 7, 9, 13, 0, 0, 0, time.UTC))
	if err := desk.Claim(ctx, tn, hol, "00000000000000c4", "C-SP-HOL", "ana"); code(err) != "outside_contact_window" {
		t.Fatalf("a holiday of the debtor's state: %v, want outside_contact_window", err)
	}
	if err := desk.Claim(ctx, tn, hol, "00000000000000c5", "C-RJ-HOL", "ana"); err != nil {
		t.Fatalf("another state's ordinary day: %v", err)
	}
	q, err = desk.Queue(ctx, tn, hol)
	if err != nil || len(q) != 2 || q[1].ContractID != "C-SP-HOL" || !q[1].Outside || q[1].OpensAt != "" {
		t.Fatalf("holiday queue %v %+v: want C-SP-HOL last, outside, no opening that day", err, q)
	}
}
