package agenda_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lastro/agenda"
	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/engine/enginetest"
	"lastro/settlement"
)

// pay settles what instalment seq owes with a Pix charge paid at paidAt.
func (f *fixture) pay(t *testing.T, dk, id string, seq int, paidAt time.Time) {
	t.Helper()
	f.Clock.Set(paidAt)
	ch, err := f.Charges.Issue(bg, f.t, charges.Input{DebtorKey: dk, ContractID: id, Seq: seq, Method: charges.PIX})
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.Settlement.Apply(bg, f.t, settlement.Payload{SettlementID: "stl-" + id + fmt.Sprint(seq), ChargeID: ch.ChargeID,
		AmountCents: ch.AmountCents, PaidAt: paidAt})
	if err != nil || out.Status != settlement.StatusApplied {
		t.Fatalf("pay %s/%d: %+v %v", id, seq, out, err)
	}
}

// events counts a contract's events of a type (its whole history).
func (f *fixture) events(t *testing.T, dk, id, eventType string) int {
	t.Helper()
	n := 0
	for seq := 0; seq <= 3; seq++ {
		p, err := f.Contracts.Events(bg, f.t, dk, id, fmt.Sprint(seq), 1000, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Items {
			if e.EventType == eventType {
				n++
			}
		}
	}
	return n
}

// TestPaidAtMidnightIsNeverContacted forces both interleavings of a
// payment at 00:07 and the 08:00 worker: the payment first (the worker
// finds the contract cured), and the payment between the worker's read
// and its write (the write fails on the version, and with it the
// contact's counter, evidence and outbox entry: nothing of the contact is
// spent; the re-read finds the contract cured).
func TestPaidAtMidnightIsNeverContacted(t *testing.T) {
	t.Parallel()
	for _, between := range []bool{false, true} {
		t.Run(fmt.Sprintf("payment between read and write=%t", between), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, at("2026-08-01", 10, 0))
			dk := f.sign(t, "C-1", "2026-08-07", 3) // DUE_CHECK + SMS_D1 on 08-10
			run := at("2026-08-10", 8, 0)
			if between {
				var once sync.Once
				f.Agenda.SetBeforeSave(func(string) {
					once.Do(func() {
						f.pay(t, dk, "C-1", 1, at("2026-08-10", 0, 7))
						f.Clock.Set(run)
					})
				})
			} else {
				f.pay(t, dk, "C-1", 1, at("2026-08-10", 0, 7))
			}
			got := f.runAt(t, run)
			if got["SMS_D1"] != 0 {
				t.Fatalf("contacted a paid contract: %v", got)
			}
			if msgs := f.outbox(t); len(msgs) != 0 {
				t.Fatalf("messages sent: %v", msgs)
			}
			h := f.header(t, dk, "C-1")
			if h.Status != contract.StatusActive || h.Bucket != "" || h.LastStep != 0 || h.NextAction != "DUE_CHECK" {
				t.Fatalf("header: %+v", h)
			}
			if between {
				// The contact reserved before the write went with it: no
				// slot of the day spent, no attempt claimed and cancelled.
				day, err := f.Contacts.Day(bg, f.t, dk, "2026-08-10", 100, "")
				if err != nil || len(day.Items) != 0 || day.Counter != 0 {
					t.Fatalf("evidence: %+v %v", day, err)
				}
			}
		})
	}
}

// TestTwoEnginesRunEachActionOnce runs the agenda of one day from two
// engine instances on one store at the same time: every due action runs
// exactly once.
func TestTwoEnginesRunEachActionOnce(t *testing.T) {
	t.Parallel()
	a := newFixture(t, at("2026-08-01", 10, 0), enginetest.Owner("engine-a"), enginetest.Shards(4))
	b := &fixture{Env: enginetest.New(t, enginetest.At(at("2026-08-01", 10, 0)), enginetest.SharedWith(a.Env), enginetest.Owner("engine-b"))}
	tn, err := b.Tenants.Get(bg, a.t.ID)
	if err != nil {
		t.Fatal(err)
	}
	b.t = tn
	const n = 40
	dks := make([]string, n)
	for i := range dks {
		dks[i] = a.sign(t, fmt.Sprintf("C-%02d", i), "2026-08-07", 2)
	}
	run := at("2026-08-10", 8, 0)
	a.Clock.Set(run)
	b.Clock.Set(run)
	var wg sync.WaitGroup
	var executed atomic.Int64
	for _, f := range []*fixture{a, b} {
		wg.Go(func() {
			for range 3 { // each engine tries the day three times
				rep, err := f.Agenda.Run(bg, f.t, calendar.Of(run, f.t.Location), agenda.Options{})
				if err != nil {
					t.Error(err)
					return
				}
				executed.Add(int64(rep.Executed["SMS_D1"]))
			}
		})
	}
	wg.Wait()
	if executed.Load() != n {
		t.Fatalf("SMS_D1 executed %d times for %d contracts", executed.Load(), n)
	}
	if sent := len(a.outbox(t)) + len(b.outbox(t)); sent != n {
		t.Fatalf("%d messages for %d contracts", sent, n)
	}
	for i, dk := range dks {
		if got := a.events(t, dk, fmt.Sprintf("C-%02d", i), agenda.EvStepExecuted); got != 1 {
			t.Fatalf("contract %d: %d StepExecuted events", i, got)
		}
	}
}

// TestInterruptedRunResumesFromItsCheckpoint freezes a worker after its
// first page, as a killed (or hung) process would be — its lease stays
// until it expires — then runs the shard from another worker: it finds
// the shard busy, then, once the lease expired, resumes from the
// checkpoint, and no step runs twice.
func TestInterruptedRunResumesFromItsCheckpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0), enginetest.Shards(1))
	const n = 250
	for i := range n {
		f.sign(t, fmt.Sprintf("C-%03d", i), "2026-08-07", 2)
	}
	run := at("2026-08-10", 8, 0)
	f.Clock.Set(run)
	date := calendar.Of(run, f.t.Location)
	newRunner := func(owner string) *agenda.Runner {
		return agenda.New(agenda.Deps{Kit: f.Kit, Tenants: f.Tenants, Policies: f.Policies, Contacts: f.Contacts, Clock: f.Clock,
			Owner: owner, Lease: 300 * time.Millisecond})
	}
	ctx, cancel := context.WithCancel(bg)
	frozen, thaw := make(chan struct{}), make(chan struct{})
	var once sync.Once
	firstDone := make(chan agenda.ShardReport, 1)
	go func() {
		rep, _ := newRunner("killed").RunShard(ctx, f.t, date, 0, func(agenda.Progress) {
			once.Do(func() { close(frozen); <-thaw })
		})
		firstDone <- rep
	}()
	<-frozen
	second := newRunner("restarted")
	if _, err := second.RunShard(bg, f.t, date, 0, nil); err != agenda.ErrBusy {
		t.Fatalf("the frozen worker's lease is still held: %v", err)
	}
	time.Sleep(400 * time.Millisecond)
	rep, err := second.RunShard(bg, f.t, date, 0, nil)
	if err != nil || !rep.Resumed || rep.Executed["SMS_D1"] != n-100 {
		t.Fatalf("resumed run: %+v %v", rep, err)
	}
	// The frozen worker wakes up stopped: it does nothing more.
	cancel()
	close(thaw)
	if first := <-firstDone; first.Executed["SMS_D1"] != 100 {
		t.Fatalf("frozen worker: %+v", first)
	}
	// One run item for the shard and date, finished; every contract got
	// exactly one SMS_D1.
	p, err := f.Kit.Tenant(f.t.ID, f.t.CursorKey()).QueryPage(bg, kit.Query{Partition: keys.Tenant(f.t.ID), Sort: kit.BeginsWith("RUN#")}, "")
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("run items: %v %v", p.Items, err)
	}
	sent := 0
	for _, m := range f.outbox(t) {
		if m["action"] == "SMS_D1" {
			sent++
		}
	}
	if sent != n {
		t.Fatalf("%d SMS_D1 messages for %d contracts", sent, n)
	}
}
