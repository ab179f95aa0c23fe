package settlement_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"lastro/charges"
	"lastro/settlement"
)

// TestScheduledReconcileHealsALostWebhook: a Pix charge paid at the PSP
// whose notice was lost is applied by the scheduled pass once its check
// is due (not before), exactly once: a second pass has nothing due, and
// the notice redelivered later answers already_applied. A charge never
// paid is checked again later, then dropped once past its validity.
func TestScheduledReconcileHealsALostWebhook(t *testing.T) {
	t.Parallel()
	e := newPSPEnv(t)
	paidID, _ := e.issue(t, 1)
	e.issue(t, 2) // never paid
	status, paid := e.pay(t, paidID, false)
	if status != http.StatusOK {
		t.Fatalf("pay: %d", status)
	}
	sched := e.Settlement.NewReconcileScheduler(time.Minute, nil)
	if run, err := sched.Pass(bg); err != nil || run.Checked != 0 {
		t.Fatalf("before the first check is due: %+v %v", run, err)
	}
	e.Clock.Advance(charges.PixCheckAfter + time.Second)
	run, err := sched.Pass(bg)
	if err != nil || run.Checked != 2 || run.Applied != 1 || run.Closed != 1 || run.Rescheduled != 1 {
		t.Fatalf("first pass: %+v %v", run, err)
	}
	if got := e.stl(t, paid.Payment.EndToEndID); got == nil || got.Outcome != settlement.OutcomeApplied || got.ChargeID != paidID {
		t.Fatalf("STL: %+v", got)
	}
	if run, err := sched.Pass(bg); err != nil || run.Checked != 0 {
		t.Fatalf("second pass: %+v %v", run, err)
	}
	resp, err := e.SandboxPost("/sandbox/redeliver", `{"endToEndId":"`+paid.Payment.EndToEndID+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), `already_applied`) {
		t.Fatalf("redelivered: %s", raw)
	}
	// The open cobv (due 2026-10-10, valid 30 days after) is checked on and
	// on, then dropped past its validity.
	checks := 0
	for range 200 {
		e.Clock.Advance(12 * time.Hour)
		run, err := sched.Pass(bg)
		if err != nil {
			t.Fatal(err)
		}
		checks += run.Checked
		if run.Closed == 1 {
			break
		}
	}
	if now := e.Clock.Now(); checks < 3 || now.Before(time.Date(2026, 11, 9, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("the open charge was checked %d times and dropped at %s", checks, now)
	}
	if due, err := e.Charges.DueChecks(bg, e.t, e.Clock.Now().AddDate(1, 0, 0), 10); err != nil || len(due) != 0 {
		t.Fatalf("checks left: %v %v", due, err)
	}
}
