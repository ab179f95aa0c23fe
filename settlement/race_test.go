package settlement_test

import (
	"errors"
	"fmt"
	"lastro/contract"
	"sync"
	"testing"

	"lastro/collections/calendar"
	"lastro/policy"
	"lastro/settlement"
)

// contact is what a worker would do next for a late contract: SMS_D5 on
// 2026-09-26. A paid contract must never keep such an action.
const contact = "SMS_D5"

var contactDate = calendar.MustParse("2026-09-26")

// paidContractHasNoContact checks the invariant on the stored header and
// on the agenda index: a cured contract waits for its next due date
// (DUE_CHECK), a settled one has no action at all.
func paidContractHasNoContact(t *testing.T, f *fixture, dk, id string, settled bool) {
	t.Helper()
	h := f.load(t, dk, id).Header
	switch {
	case settled && (h.Status != contract.StatusSettled || h.NextAction != "" || h.GSI1PK != ""):
		t.Fatalf("%s: settled contract keeps %q on %q (%s)", id, h.NextAction, h.NextActionDate, h.Status)
	case !settled && (h.Status != contract.StatusActive || h.NextAction != policy.DueCheck || h.OldestOverdueDueDate != ""):
		t.Fatalf("%s: cured contract keeps %q on %q (%s)", id, h.NextAction, h.NextActionDate, h.Status)
	}
	for _, c := range f.agenda(t, contactDate.String(), h.Shard) {
		if c == id {
			t.Fatalf("%s: still on the %s agenda", id, contactDate)
		}
	}
}

// TestSettlementAndRescheduleRace forces both interleavings of a payment
// and an agenda reschedule of the same contract.
func TestSettlementAndRescheduleRace(t *testing.T) {
	t.Parallel()
	// overpaid: the rest becomes credit and the contract is cured all
	// the same (future instalments are not prepaid).
	for _, overpaid := range []bool{false, true} {
		amount := func(due int64) int64 {
			if overpaid {
				return due + 200000
			}
			return due
		}
		t.Run(fmt.Sprintf("overpaid=%t/settlement between the reschedule's read and write", overpaid), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			dk, ch := lateContract(t, f, "C-r")
			read, resume := make(chan int), make(chan struct{})
			errc := make(chan error, 1)
			go func() { // the agenda worker
				c, err := contract.Load(bg, f.db(), f.t.ID, dk, "C-r")
				if err != nil {
					read <- 0
					errc <- err
					return
				}
				v := c.Header.Version
				read <- v
				<-resume
				errc <- f.Contracts.Reschedule(bg, f.t, dk, "C-r", v, contact, contactDate)
			}()
			<-read
			out, err := f.Settlement.Apply(bg, f.t, pay("stl-r", ch.ChargeID, amount(ch.AmountCents), paidAt))
			if err != nil || out.Status != settlement.StatusApplied {
				t.Fatalf("settlement: %+v %v", out, err)
			}
			close(resume)
			if err := <-errc; !errors.Is(err, contract.ErrStale) {
				t.Fatalf("the reschedule of a contract paid meanwhile: %v", err)
			}
			paidContractHasNoContact(t, f, dk, "C-r", false)
		})
		t.Run(fmt.Sprintf("overpaid=%t/reschedule between the settlement's read and write", overpaid), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			dk, ch := lateContract(t, f, "C-r")
			attempts := 0
			f.Settlement.SetBeforeWrite(func(attempt int) {
				attempts = attempt
				if attempt != 1 {
					return
				}
				// The worker reads the contract (still late) and moves it to
				// a contact action, committing before the payment does.
				v := f.load(t, dk, "C-r").Header.Version
				if err := f.Contracts.Reschedule(bg, f.t, dk, "C-r", v, contact, contactDate); err != nil {
					t.Errorf("reschedule: %v", err)
				}
			})
			out, err := f.Settlement.Apply(bg, f.t, pay("stl-r", ch.ChargeID, amount(ch.AmountCents), paidAt))
			if err != nil || out.Status != settlement.StatusApplied || attempts != 2 {
				t.Fatalf("settlement: %+v %v after %d attempts", out, err, attempts)
			}
			paidContractHasNoContact(t, f, dk, "C-r", false)
		})
	}
}

// TestSettlementAndRescheduleAtTheSameInstant lets the two race freely,
// released together, many times: whichever wins, the invariant holds.
func TestSettlementAndRescheduleAtTheSameInstant(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const n = 20
	for i := range n {
		id := fmt.Sprintf("C-s%02d", i)
		dk, ch := lateContract(t, f, id)
		v := f.load(t, dk, id).Header.Version
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(2)
		var rerr, serr error
		go func() {
			defer wg.Done()
			<-start
			rerr = f.Contracts.Reschedule(bg, f.t, dk, id, v, contact, contactDate)
		}()
		go func() {
			defer wg.Done()
			<-start
			_, serr = f.Settlement.Apply(bg, f.t, pay("stl-"+id, ch.ChargeID, ch.AmountCents, paidAt))
		}()
		close(start)
		wg.Wait()
		if serr != nil {
			t.Fatalf("%s: settlement: %v", id, serr)
		}
		if rerr != nil && !errors.Is(rerr, contract.ErrStale) {
			t.Fatalf("%s: reschedule: %v", id, rerr)
		}
		paidContractHasNoContact(t, f, dk, id, false)
	}
}
