package agenda_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"lastro/agenda"
	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contactlimit"
	"lastro/engine/enginetest"
)

// TestTwoDatesAtOnceSpendNothingTwice: runs for 08-10 and 08-11 at once
// (two engines; both catch-up windows hold 08-10's partition). The shard
// has one lease across dates, so the second run finds it busy instead of
// claiming the same contracts; over both runs every contract has exactly
// one attempt, sent, and each debtor's counter says one — no attempt
// claimed and then cancelled, no slot of the daily limit spent for
// nothing.
func TestTwoDatesAtOnceSpendNothingTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0), enginetest.Shards(1))
	const n = 150
	dks := make([]string, n)
	for i := range n {
		dks[i] = f.sign(t, fmt.Sprintf("C-%03d", i), "2026-08-07", 2) // DUE_CHECK + SMS_D1 on 08-10
	}
	f.Clock.Set(at("2026-08-11", 9, 0))
	other := agenda.New(agenda.Deps{Kit: f.Kit, Tenants: f.Tenants, Policies: f.Policies, Contacts: f.Contacts, Clock: f.Clock, Owner: "engine-b"})
	var second *agenda.Report
	var secondErr error
	var once sync.Once
	first, err := f.Agenda.Run(bg, f.t, calendar.MustParse("2026-08-10"), agenda.Options{Progress: func(agenda.Progress) {
		// The 08-11 run starts while 08-10's is under way.
		once.Do(func() { second, secondErr = other.Run(bg, f.t, calendar.MustParse("2026-08-11"), agenda.Options{}) })
	}})
	if err != nil || secondErr != nil {
		t.Fatalf("runs: %v, %v", err, secondErr)
	}
	if len(second.Busy) != 1 || second.Busy[0] != 0 || total(second.Executed) != 0 {
		t.Fatalf("the 08-11 run beside the 08-10 one: busy %v, executed %v", second.Busy, second.Executed)
	}
	if first.Executed["SMS_D1"] != n {
		t.Fatalf("08-10 run: %v", first.Executed)
	}
	// The 08-11 run again, now that the shard is free: nothing is owed.
	if again, err := other.Run(bg, f.t, calendar.MustParse("2026-08-11"), agenda.Options{}); err != nil || len(again.Busy) != 0 || again.Executed["SMS_D1"] != 0 {
		t.Fatalf("08-11 run after: %+v %v", again, err)
	}
	for i, dk := range dks {
		day, err := f.Contacts.Day(bg, f.t, dk, "2026-08-11", 10, "")
		if err != nil || day.Counter != 1 || len(day.Items) != 1 || day.Items[0].Outcome != contactlimit.OutcomeSent {
			t.Fatalf("contract %d: %+v %v", i, day, err)
		}
	}
	if msgs := f.outbox(t); len(msgs) != n {
		t.Fatalf("%d messages for %d contracts", len(msgs), n)
	}
}

// TestRunNowAfterACrashTakesTheShardOver: a worker that stopped renewing
// its lease (killed, or stuck between entries) holds the shard only until
// the lease runs out: POST /v1/agenda/run waits for it and runs the
// shard, instead of answering 200 with every shard busy. A shard held by
// a live run in this engine is 409 shards_busy, naming it.
func TestRunNowAfterACrashTakesTheShardOver(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0), enginetest.Shards(1))
	for i := range 120 {
		f.sign(t, fmt.Sprintf("C-%03d", i), "2026-08-07", 2)
	}
	f.Clock.Set(at("2026-08-10", 8, 0))
	date := calendar.MustParse("2026-08-10")
	killed := agenda.New(agenda.Deps{Kit: f.Kit, Tenants: f.Tenants, Policies: f.Policies, Contacts: f.Contacts, Clock: f.Clock,
		Owner: "killed", Lease: 1500 * time.Millisecond})
	frozen, thaw := make(chan struct{}), make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = killed.RunShard(bg, f.t, date, 0, func(agenda.Progress) { once.Do(func() { close(frozen); <-thaw }) })
	}()
	<-frozen
	defer func() { close(thaw); <-done }()
	status, out := f.Do(t, http.MethodPost, "/v1/agenda/run", f.keys["supervisor"], `{"date":"2026-08-10"}`)
	if status != http.StatusOK {
		t.Fatalf("run now: %d %v", status, out)
	}
	shards := out["shards"].([]any)
	if busy := out["busy"].([]any); len(busy) != 0 || len(shards) != 1 || shards[0].(map[string]any)["resumed"] != true {
		t.Fatalf("run now after the holder stopped: %v", out)
	}

	// A live run of the shard in this engine: nothing can run beside it.
	inside, release := make(chan struct{}), make(chan struct{})
	f.Clock.Set(at("2026-08-12", 8, 0))
	var once2 sync.Once
	liveDone := make(chan struct{})
	for i := range 120 {
		f.sign(t, fmt.Sprintf("D-%03d", i), "2026-08-11", 1) // due Tuesday: DUE_CHECK on 08-12
	}
	go func() {
		defer close(liveDone)
		_, _ = f.Agenda.Run(bg, f.t, calendar.MustParse("2026-08-12"), agenda.Options{Progress: func(agenda.Progress) {
			once2.Do(func() { close(inside); <-release })
		}})
	}()
	<-inside
	status, out = f.Do(t, http.MethodPost, "/v1/agenda/run", f.keys["supervisor"], `{"date":"2026-08-12"}`)
	close(release)
	<-liveDone
	if status != http.StatusConflict || enginetest.ErrorCode(out) != "shards_busy" {
		t.Fatalf("run now beside a live run: %d %v", status, out)
	}
}

// TestAStepsOutboxCostIsExact: one due contract whose DUE_CHECK runs its
// first step (SMS_D1), delivered to the file outbox. The step's own
// transaction carries the day's counter, the PENDING evidence and the
// outbox entry (each under 1 KB, doubled by the transaction); after the
// commit the outcome and the entry's deletion cost 1 WRU each. What the
// outbox adds to an entry, against the claim-then-write it replaces
// (counter 1 + evidence 1 outside the transaction): 2 × 3 − 2 = 4 WRU in
// the transaction and 1 WRU for the deletion — 5 WRU, no read, one store
// call (the deletion).
func TestAStepsOutboxCostIsExact(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0), enginetest.Shards(1))
	dk := f.sign(t, "C-1", "2026-08-07", 2)
	f.Clock.Set(at("2026-08-10", 8, 0))
	before := map[string]kit.OpTotal{}
	for _, o := range f.Kit.Meter().Snapshot() {
		before[o.Name] = o
	}
	ctx, run := kit.Operation(bg, "agenda.test")
	rep, err := f.Agenda.Run(ctx, f.t, calendar.MustParse("2026-08-10"), agenda.Options{})
	if err != nil || rep.Executed["SMS_D1"] != 1 {
		t.Fatalf("run: %+v %v", rep, err)
	}
	ops := map[string]kit.OpTotal{}
	for _, o := range f.Kit.Meter().Snapshot() {
		b := before[o.Name]
		ops[o.Name] = kit.OpTotal{Name: o.Name, RRU: o.RRU - b.RRU, WRU: o.WRU - b.WRU, Calls: o.Calls - b.Calls}
	}
	// The step's write: one transaction of the counter, the evidence, the
	// outbox entry, the header and the event, every item ≤ 1 KB.
	if got := run.Calls("TransactWriteItems"); got != 1 {
		t.Fatalf("%d transactions, want the step's one", got)
	}
	if got, want := ops["contact.record"], (kit.OpTotal{Name: "contact.record", WRU: 1, Calls: 1}); got != want {
		t.Errorf("outcome: %+v, want %+v", got, want)
	}
	if got, want := ops[contactlimit.OutboxOperation], (kit.OpTotal{Name: contactlimit.OutboxOperation, WRU: 1, Calls: 1}); got != want {
		t.Errorf("outbox entry after the commit: %+v, want %+v", got, want)
	}
	if got := ops["contact.claim"].Calls + ops["contact.evidence"].Calls; got != 0 {
		t.Errorf("%d contact writes outside the step's transaction", got)
	}
	// The transaction's table units: 2 × (counter 1 + evidence 1 + entry 1
	// + header 1 + event 1) = 10; the agenda entry moves (delete + put) and
	// the portfolio entry appears: 3 index units.
	tx := run.WRU() - float64(run.Calls("UpdateItem")) // the run item's take, checkpoint and release are 1 WRU each
	if tx != 10+3 {
		t.Errorf("the step's write: %.1f WRU (with its index entries), want 13", tx)
	}
	// Left behind: no outbox entry, the attempt SENT, the counter 1.
	p, err := f.Kit.Tenant(f.t.ID, f.t.CursorKey()).QueryPage(bg, kit.Query{Partition: keys.Outbox(f.t.ID, 0), Consistent: true}, "")
	if err != nil || len(p.Items) != 0 {
		t.Fatalf("outbox entries left: %v %v", p.Items, err)
	}
	day, err := f.Contacts.Day(bg, f.t, dk, "2026-08-10", 10, "")
	if err != nil || day.Counter != 1 || len(day.Items) != 1 || day.Items[0].Outcome != contactlimit.OutcomeSent {
		t.Fatalf("day: %+v %v", day, err)
	}
	t.Logf("per entry: step write %.0f WRU in 1 transaction; outcome %.0f WRU; outbox deletion %.0f WRU; reads %.0f RRU (profile %.0f)",
		tx, ops["contact.record"].WRU, ops[contactlimit.OutboxOperation].WRU, run.RRU()+ops["contact.profile"].RRU, ops["contact.profile"].RRU)
}
