package agenda_test

import (
	"fmt"
	"sync"
	"testing"

	"lastro/arrangement"
	"lastro/contract"
)

// TestPromiseCheckRacingASettlement forces a payment on the promised date
// before the PROMISE_CHECK and between the check's read and its write:
// either way the promise is KEPT exactly once and never also BROKEN (the
// check's write is conditioned on the promise still open and the header's
// version). The other interleaving, the check inside the settlement's gap,
// is settlement's TestSettlementRacingAPromiseCheck.
func TestPromiseCheckRacingASettlement(t *testing.T) {
	t.Parallel()
	for _, between := range []bool{false, true} {
		t.Run(fmt.Sprintf("payment between read and write=%t", between), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, at("2026-08-01", 10, 0))
			dk := f.sign(t, "C-1", "2026-08-07", 3)
			f.runAt(t, at("2026-08-10", 8, 0))
			f.Clock.Set(at("2026-08-10", 10, 0))
			if _, err := f.Arrangements.MakePromise(bg, f.t, dk, "C-1", arrangement.PromiseInput{PromisedDate: "2026-08-12", AmountCents: 100000},
				contract.Actor{Role: "operator"}); err != nil {
				t.Fatal(err)
			}
			// The check runs the day after the promised date.
			run := at("2026-08-13", 8, 0)
			paidAt := at("2026-08-13", 7, 59)
			if between {
				var once sync.Once
				f.Agenda.SetBeforeSave(func(string) {
					once.Do(func() {
						f.pay(t, dk, "C-1", 1, paidAt)
						f.Clock.Set(run)
					})
				})
			} else {
				f.pay(t, dk, "C-1", 1, paidAt)
			}
			f.runAt(t, run)
			kept, broken := f.events(t, dk, "C-1", arrangement.EvPromiseKept), f.events(t, dk, "C-1", arrangement.EvPromiseBroken)
			if kept != 1 || broken != 0 {
				t.Fatalf("kept %d, broken %d events", kept, broken)
			}
			h := f.header(t, dk, "C-1")
			if h.Hold != "" || h.NextAction == "PROMISE_CHECK" || h.Status != contract.StatusActive {
				t.Fatalf("header: %+v", h)
			}
			if msgs := f.outbox(t); len(msgs) != 1 {
				t.Fatalf("contacted: %v", msgs)
			}
		})
	}
}
