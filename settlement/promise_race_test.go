package settlement_test

import (
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/agenda"
	"lastro/arrangement"
	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/contract"
	"lastro/settlement"
)

// TestSettlementRacingAPromiseCheck runs the promised date's
// PROMISE_CHECK between a settlement's reads and its transaction: the
// check commits first and breaks the promise; the settlement's
// transaction fails on the header's version, re-reads and applies the
// payment to a contract no longer held. The promise ends BROKEN only,
// never also KEPT, and the money is applied once.
func TestSettlementRacingAPromiseCheck(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk := f.contract(t, "C-1", "2026-09-10", 3) // 14 days past due on 09-24
	p, err := f.Arrangements.MakePromise(bg, f.t, dk, "C-1", arrangement.PromiseInput{PromisedDate: "2026-09-24", AmountCents: 100000},
		contract.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	ch := f.charge(t, dk, "C-1", 1)
	// The check runs the day after the promised date (the debtor has the
	// whole day); a payment that day no longer counts towards the promise.
	dayAfter := testNow.Add(24 * time.Hour)
	f.Clock.Set(dayAfter)
	var once sync.Once
	var runErr error
	var rep *agenda.Report
	f.Settlement.SetBeforeWrite(func(int) {
		once.Do(func() {
			rep, runErr = f.Agenda.Run(bg, f.t, calendar.MustParse("2026-09-25"), agenda.Options{})
		})
	})
	out, err := f.Settlement.Apply(bg, f.t, pay("stl-race", ch.ChargeID, ch.AmountCents, dayAfter))
	if err != nil || out.Status != settlement.StatusApplied {
		t.Fatalf("apply: %+v %v", out, err)
	}
	if runErr != nil || rep.Executed["PROMISE_CHECK"] != 1 {
		t.Fatalf("run: %+v %v", rep, runErr)
	}
	it := f.item(t, keys.Debtor(f.t.ID, dk), keys.Promise("C-1", p.PromiseID))
	var got arrangement.Promise
	if err := attributevalue.UnmarshalMap(it, &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != arrangement.PromiseBroken || got.ReceivedCents != 0 {
		t.Fatalf("promise: %+v", got)
	}
	kept, broken := 0, 0
	for _, it := range f.partition(t, dk) {
		var ev contract.Event
		_ = attributevalue.UnmarshalMap(it, &ev)
		switch ev.EventType {
		case arrangement.EvPromiseKept:
			kept++
		case arrangement.EvPromiseBroken:
			broken++
		}
	}
	if kept != 0 || broken != 1 {
		t.Fatalf("kept %d, broken %d events", kept, broken)
	}
	h := f.load(t, dk, "C-1").Header
	if h.Hold != "" || h.HoldID != "" || f.load(t, dk, "C-1").Installment(1).Status != contract.InstPaid {
		t.Fatalf("after the race: %+v", h)
	}
}
