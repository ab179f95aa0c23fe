package agenda_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"lastro/agenda"
	"lastro/collections/calendar"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

// tenantIDs lists the tenants of the reports, in order.
func tenantIDs(reps []*agenda.Report) []string {
	var ids []string
	for _, r := range reps {
		ids = append(ids, r.TenantID)
	}
	return ids
}

func TestSchedulerRunsEachTenantOnceADayFromItsLocalHour(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t, enginetest.At(at("2026-08-01", 10, 0)), enginetest.Shards(4))
	sp, _ := env.Tenant(t, "t-sp")
	if _, err := env.Tenants.Create(bg, tenant.CreateInput{TenantID: "t-mao", Name: "Manaus", TimeZone: "America/Manaus"}); err != nil {
		t.Fatal(err)
	}
	mao, err := env.Tenants.Get(bg, "t-mao")
	if err != nil {
		t.Fatal(err)
	}
	fsp, fmao := &fixture{Env: env, t: sp}, &fixture{Env: env, t: mao}
	for i := range 3 {
		fsp.sign(t, fmt.Sprintf("SP-%d", i), "2026-08-07", 3)
		fmao.sign(t, fmt.Sprintf("MAO-%d", i), "2026-08-07", 3)
	}
	s, err := agenda.NewScheduler(env.Agenda, agenda.SchedulerOptions{Hour: agenda.DefaultRunHour})
	if err != nil {
		t.Fatal(err)
	}
	pass := func(now time.Time) []*agenda.Report {
		t.Helper()
		env.Clock.Set(now)
		reps, err := s.RunDue(bg)
		if err != nil {
			t.Fatalf("pass at %s: %v", now, err)
		}
		return reps
	}
	// 07:59 in São Paulo (06:59 in Manaus): nobody's hour yet.
	if reps := pass(at("2026-08-10", 7, 59)); len(reps) != 0 {
		t.Fatalf("before the hour: %v", tenantIDs(reps))
	}
	// 08:30 in São Paulo is 07:30 in Manaus: only São Paulo runs.
	reps := pass(at("2026-08-10", 8, 30))
	if len(reps) != 1 || reps[0].TenantID != "t-sp" || reps[0].Executed["DUE_CHECK"] != 3 || reps[0].Executed["SMS_D1"] != 3 || len(reps[0].Shards) != 4 {
		t.Fatalf("08:30: %+v", reps)
	}
	// 09:00 in São Paulo: Manaus's hour; São Paulo's day is finished.
	reps = pass(at("2026-08-10", 9, 0))
	if len(reps) != 1 || reps[0].TenantID != "t-mao" || reps[0].Executed["DUE_CHECK"] != 3 {
		t.Fatalf("09:00: %+v", reps)
	}
	// Later passes that day run nothing, not even empty runs.
	for _, now := range []time.Time{at("2026-08-10", 9, 1), at("2026-08-10", 19, 0)} {
		if reps := pass(now); len(reps) != 0 {
			t.Fatalf("%s: ran again: %v", now, tenantIDs(reps))
		}
	}
	if msgs := fsp.outbox(t); len(msgs) != 6 {
		t.Fatalf("%d messages, want one SMS_D1 per contract", len(msgs))
	}
	// The next day is a new day: both run (nothing is due, the runs are
	// cheap), then are done.
	if reps := pass(at("2026-08-11", 10, 0)); len(reps) != 2 {
		t.Fatalf("08-11: %v", tenantIDs(reps))
	}
	if reps := pass(at("2026-08-11", 10, 1)); len(reps) != 0 {
		t.Fatalf("08-11 again: %v", tenantIDs(reps))
	}
	// One line per run, counts only.
	logs := env.Logs.String()
	if n := strings.Count(logs, `"msg":"agenda run"`); n != 4 {
		t.Errorf("%d run log lines, want 4:\n%s", n, logs)
	}
	if strings.Contains(logs, "Pessoa") || strings.Contains(logs, "p@example") {
		t.Errorf("personal data in the logs:\n%s", logs)
	}
}

func TestSchedulerRefusesABadHour(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	for _, h := range []int{-1, 24} {
		if _, err := agenda.NewScheduler(env.Agenda, agenda.SchedulerOptions{Hour: h}); err == nil {
			t.Errorf("hour %d accepted", h)
		}
	}
}

// TestTwoEnginesScheduleOneStoreWithoutDoubleRuns: two runners with their
// own lease owners (two engine instances) make their passes at the same
// time: every contract is acted on once, and neither runs the day again.
func TestTwoEnginesScheduleOneStoreWithoutDoubleRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0), enginetest.Shards(4))
	for i := range 12 {
		f.sign(t, fmt.Sprintf("C-%02d", i), "2026-08-07", 3)
	}
	other := agenda.New(agenda.Deps{Kit: f.Kit, Tenants: f.Tenants, Policies: f.Policies, Contacts: f.Contacts,
		Bureau: agenda.NewFileBureau(f.BureauPath), Clock: f.Clock, Owner: "engine-b"})
	var scheds []*agenda.Scheduler
	for _, r := range []*agenda.Runner{f.Agenda, other} {
		s, err := agenda.NewScheduler(r, agenda.SchedulerOptions{Hour: agenda.DefaultRunHour})
		if err != nil {
			t.Fatal(err)
		}
		scheds = append(scheds, s)
	}
	f.Clock.Set(at("2026-08-10", 8, 0))
	var wg sync.WaitGroup
	reps := make([][]*agenda.Report, 2)
	for i, s := range scheds {
		wg.Go(func() {
			var err error
			if reps[i], err = s.RunDue(bg); err != nil {
				t.Errorf("engine %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	total := map[string]int{}
	for _, rs := range reps {
		for _, r := range rs {
			for a, n := range r.Executed {
				total[a] += n
			}
		}
	}
	if total["DUE_CHECK"] != 12 || total["SMS_D1"] != 12 {
		t.Fatalf("executed %v over both engines, want 12 DUE_CHECK and 12 SMS_D1", total)
	}
	if msgs := f.outbox(t); len(msgs) != 12 {
		t.Fatalf("%d messages, want 12", len(msgs))
	}
	for i, s := range scheds {
		if r, err := s.RunDue(bg); err != nil || len(r) != 0 {
			t.Fatalf("engine %d ran the finished day again: %v %v", i, tenantIDs(r), err)
		}
	}
}

// TestSchedulerLoopStopsWithItsContext: Run passes at once and on its
// ticker, and returns when the context ends.
func TestSchedulerLoopStopsWithItsContext(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0), enginetest.Shards(2))
	dk := f.sign(t, "C-1", "2026-08-07", 3)
	f.Clock.Set(at("2026-08-10", 8, 0))
	s, err := agenda.NewScheduler(f.Agenda, agenda.SchedulerOptions{Hour: agenda.DefaultRunHour, Every: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(f.Logs.String(), `"msg":"agenda run"`) {
		if time.Now().After(deadline) {
			t.Fatal("the scheduler did not run the due day")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The next day comes while it ticks: it runs that one too.
	f.Clock.Set(at("2026-08-11", 8, 0))
	for strings.Count(f.Logs.String(), `"msg":"agenda run"`) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the scheduler did not run the next day")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if n := strings.Count(f.Logs.String(), `"msg":"agenda run"`); n != 2 {
		t.Fatalf("%d runs, want 2 (one per day)", n)
	}
	if h := f.header(t, dk, "C-1"); h.NextAction != "SMS_D5" {
		t.Fatalf("after the runs: %+v", h)
	}
}

// TestYieldLetsAnotherEngineResumeAtOnce: a run stopped by its context
// keeps its checkpoint; once its leases are yielded another engine
// resumes the shard at once instead of finding it busy until the lease
// expires.
func TestYieldLetsAnotherEngineResumeAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0), enginetest.Shards(1))
	for i := range 150 {
		f.sign(t, fmt.Sprintf("C-%03d", i), "2026-08-07", 1)
	}
	f.Clock.Set(at("2026-08-10", 8, 0))
	date := f.t.Today(f.Clock.Now())
	ctx, cancel := context.WithCancel(bg)
	rep, err := f.Agenda.Run(ctx, f.t, mustDate(t, date), agenda.Options{Progress: func(agenda.Progress) { cancel() }})
	if err == nil || total(rep.Executed) == 0 {
		t.Fatalf("interrupted run: %v %+v", err, rep)
	}
	other := agenda.New(agenda.Deps{Kit: f.Kit, Tenants: f.Tenants, Policies: f.Policies, Contacts: f.Contacts, Clock: f.Clock, Owner: "engine-b"})
	// The stopped run yielded its lease itself (YieldInterrupted after it
	// finds nothing left of ours to release).
	f.Agenda.YieldInterrupted(ctx, f.t, rep)
	again, err := other.Run(bg, f.t, mustDate(t, date), agenda.Options{})
	if err != nil || again.Shards[0].Busy || !again.Shards[0].Resumed {
		t.Fatalf("after yielding: %v %+v", err, again.Shards[0])
	}
	if n := total(rep.Executed) + total(again.Executed); n != 300 {
		t.Fatalf("%d steps over both runs, want 150 DUE_CHECK + 150 SMS_D1", n)
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func mustDate(t *testing.T, s string) calendar.Date {
	t.Helper()
	d, err := calendar.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
