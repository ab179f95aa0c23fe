package agenda_test

import (
	"testing"
	"time"

	"lastro/agenda"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/policy"
)

// registerIn registers a debtor of state uf (with a phone and an e-mail).
func (f *fixture) registerIn(t *testing.T, uf string) string {
	t.Helper()
	r, err := f.Debtors.Register(bg, f.t, debtor.RegisterInput{Document: f.CPF(), Name: "Pessoa Sintética", Phone: "+55 11 90000-0001",
		Email: "p@example.invalid", UF: uf}, debtor.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	return r.DebtorKey
}

// scheduler makes passes of a scheduler with run hour hour over f.
type scheduler struct {
	f *fixture
	s *agenda.Scheduler
}

func (f *fixture) scheduler(t *testing.T, hour int) *scheduler {
	t.Helper()
	s, err := agenda.NewScheduler(f.Agenda, agenda.SchedulerOptions{Hour: hour})
	if err != nil {
		t.Fatal(err)
	}
	return &scheduler{f: f, s: s}
}

// pass moves the clock to now and makes one pass; it returns the runs.
func (s *scheduler) pass(t *testing.T, now time.Time) []*agenda.Report {
	t.Helper()
	s.f.Clock.Set(now)
	reps, err := s.s.RunDue(bg)
	if err != nil {
		t.Fatalf("pass at %s: %v", now, err)
	}
	return reps
}

// sent is the messages of action in the outbox.
func (f *fixture) sent(t *testing.T, action string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range f.outbox(t) {
		if m["action"] == action {
			out = append(out, m)
		}
	}
	return out
}

// TestAStateWindowThatOpensAfterTheRunIsServedThatDay: Acre's window opens
// at 10:00 in Rio Branco (12:00 in the tenant's São Paulo), after the
// 08:00 run. The step waits for it — not moved to the next contact day,
// not superseded by SMS_D5 — and the scheduler wakes at the opening.
func TestAStateWindowThatOpensAfterTheRunIsServedThatDay(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0), enginetest.Shards(2))
	d := policy.DefaultDunning()
	ac := policy.ContactWindow{Weekdays: &policy.Window{From: "10:00", To: "20:00"}, Saturday: &policy.Window{From: "10:00", To: "14:00"}}
	if _, _, err := f.Policies.PutDunning(bg, f.t, policy.DunningInput{Steps: d.Steps, ContactWindow: d.ContactWindow, MaxDailyContacts: 3,
		BureauNoticeToReportDays: 15, StateWindows: map[string]policy.ContactWindow{"AC": ac}}); err != nil {
		t.Fatal(err)
	}
	f.Tenants.Invalidate(f.t.ID)
	var err error
	if f.t, err = f.Tenants.Get(bg, f.t.ID); err != nil {
		t.Fatal(err)
	}
	acre := f.signFor(t, f.registerIn(t, "AC"), "C-AC", "2026-08-10", 3)
	paulista := f.signFor(t, f.registerIn(t, "SP"), "C-SP", "2026-08-10", 3)
	s := f.scheduler(t, agenda.DefaultRunHour)
	// 08:00 in São Paulo, 06:00 in Rio Branco: both fall due; the SP
	// debtor gets SMS_D1 now, the AC one waits for 10:00 its time.
	reps := s.pass(t, at("2026-08-11", 8, 0))
	if len(reps) != 1 || reps[0].Executed["DUE_CHECK"] != 2 || reps[0].Executed["SMS_D1"] != 1 {
		t.Fatalf("08:00 run: %+v", reps)
	}
	h := f.header(t, acre, "C-AC")
	if h.NextAction != "SMS_D1" || h.NextActionDate != "2026-08-11" || h.ContactAfter != "2026-08-11T15:00:00.000Z" {
		t.Fatalf("the AC step does not wait for today's window: %+v", h)
	}
	if got := f.sent(t, "SMS_D1"); len(got) != 1 || got[0]["debtorKey"] != paulista {
		t.Fatalf("messages before the AC window: %v", got)
	}
	// Passes before the opening run nothing.
	if reps := s.pass(t, at("2026-08-11", 11, 59)); len(reps) != 0 {
		t.Fatalf("11:59: %+v", reps)
	}
	// 12:00 in São Paulo is 10:00 in Rio Branco: the wake-up runs the day.
	if reps := s.pass(t, at("2026-08-11", 12, 0)); len(reps) != 1 || reps[0].Executed["SMS_D1"] != 1 {
		t.Fatalf("12:00 wake-up: %+v", reps)
	}
	got := f.sent(t, "SMS_D1")
	if len(got) != 2 || got[1]["debtorKey"] != acre {
		t.Fatalf("messages after the AC window opened: %v", got)
	}
	day, err := f.Contacts.Day(bg, f.t, acre, "2026-08-11", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	var sentAt string
	for _, a := range day.Items {
		if a.Allowed {
			sentAt = a.LocalTime
		}
	}
	if sentAt != "2026-08-11T10:00:00-05:00" || day.Counter != 1 {
		t.Fatalf("evidence of the AC contact: localTime %q, counter %d (%+v)", sentAt, day.Counter, day.Items)
	}
	if h := f.header(t, acre, "C-AC"); h.LastStep != 1 || h.LastStepAt != "2026-08-11" || h.ContactAfter != "" {
		t.Fatalf("the AC step is not recorded on its day: %+v", h)
	}
	// The wake-up is served: later passes that day run nothing.
	if reps := s.pass(t, at("2026-08-11", 12, 1)); len(reps) != 0 {
		t.Fatalf("12:01: %+v", reps)
	}
}

// TestARunBeforeTheWindowCostsNothing: LASTRO_AGENDA_HOUR=7 (a run before
// the default 08:00 window) and a manual run at 07:59:59 both leave the
// day's step waiting for 08:00, and the scheduler serves it then: no day
// lost, nothing superseded.
func TestARunBeforeTheWindowCostsNothing(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		manual bool
	}{{"run hour 7", false}, {"manual run at 07:59:59", true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, at("2026-08-01", 10, 0), enginetest.Shards(2))
			dk := f.sign(t, "C-1", "2026-08-10", 3)
			s := f.scheduler(t, 7)
			if tt.manual {
				s = f.scheduler(t, agenda.DefaultRunHour)
				f.runAt(t, at("2026-08-11", 7, 59).Add(59*time.Second))
			} else if reps := s.pass(t, at("2026-08-11", 7, 0)); len(reps) != 1 || reps[0].Executed["DUE_CHECK"] != 1 {
				t.Fatalf("07:00 run: %+v", reps)
			}
			if h := f.header(t, dk, "C-1"); h.NextAction != "SMS_D1" || h.NextActionDate != "2026-08-11" || len(f.sent(t, "SMS_D1")) != 0 {
				t.Fatalf("before the window: %+v", h)
			}
			if reps := s.pass(t, at("2026-08-11", 8, 0)); len(reps) != 1 || reps[0].Executed["SMS_D1"] != 1 {
				t.Fatalf("08:00: %+v", reps)
			}
			if len(f.sent(t, "SMS_D1")) != 1 {
				t.Fatal("SMS_D1 not sent at 08:00")
			}
			// SMS_D5 still runs on its own day (08-15 is a Saturday: a contact day).
			f.runAt(t, at("2026-08-15", 9, 0))
			if len(f.sent(t, "SMS_D5")) != 1 {
				t.Fatalf("SMS_D5 after a waiting SMS_D1: %v", f.outbox(t))
			}
		})
	}
}

// TestTheFridayBeforeCarnivalGetsItsD1: due Friday 2026-02-13, first late
// on Ash Wednesday (5 days past due): SMS_D1 that day, SMS_D5 the next.
func TestTheFridayBeforeCarnivalGetsItsD1(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-02-01", 10, 0), enginetest.Shards(1))
	f.sign(t, "C-1", "2026-02-13", 3)
	f.runAt(t, at("2026-02-18", 12, 0))
	f.runAt(t, at("2026-02-19", 9, 0))
	var actions []any
	for _, m := range f.outbox(t) {
		actions = append(actions, m["action"])
	}
	if len(actions) != 2 || actions[0] != "SMS_D1" || actions[1] != "SMS_D5" {
		t.Fatalf("messages %v, want SMS_D1 then SMS_D5", actions)
	}
}
