package regua

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"lastro/collections/calendar"
	"lastro/policy"
)

// randomPolicy is a valid régua: a few contact steps, often a notice and a
// report at least the policy's days after it, sometimes steps after them;
// Saturday and Sunday windows vary.
func randomPolicy(rng *rand.Rand) *policy.Dunning {
	p := policy.DefaultDunning()
	p.BureauNoticeToReportDays = 1 + rng.IntN(30)
	days := map[int]bool{}
	for range 1 + rng.IntN(6) {
		days[1+rng.IntN(120)] = true
	}
	var steps []policy.Step
	for _, n := range slices.Sorted(func(yield func(int) bool) {
		for n := range days {
			if !yield(n) {
				return
			}
		}
	}) {
		steps = append(steps, policy.Step{DaysPastDue: n, Action: fmt.Sprintf("SMS_D%d", n)})
	}
	if rng.IntN(4) > 0 {
		notice := 1 + rng.IntN(90)
		report := notice + p.BureauNoticeToReportDays + rng.IntN(10)
		steps = slices.DeleteFunc(steps, func(s policy.Step) bool { return s.DaysPastDue == notice || s.DaysPastDue == report })
		steps = append(steps, policy.Step{DaysPastDue: notice, Action: policy.BureauNotice})
		if rng.IntN(5) > 0 {
			steps = append(steps, policy.Step{DaysPastDue: report, Action: policy.BureauReport})
		}
		slices.SortFunc(steps, byDays)
	}
	if rng.IntN(2) == 0 {
		steps = slices.DeleteFunc(steps, func(s policy.Step) bool {
			return s.DaysPastDue > 0 && rng.IntN(8) == 0 && s.Action != policy.BureauNotice && s.Action != policy.BureauReport
		})
	}
	if len(steps) == 0 {
		steps = []policy.Step{{DaysPastDue: 1, Action: "SMS_D1"}}
	}
	p.Steps = steps
	switch rng.IntN(4) {
	case 0:
		p.ContactWindow.Saturday = nil
	case 1:
		p.ContactWindow.Sunday = &policy.Window{From: "10:00", To: "12:00"}
	}
	return p
}

// sim is one contract walked day by day through the agenda, the way the
// integrator runs it: events recompute the plan, the worker of a day runs
// the contract when its stored action date is that day.
type sim struct {
	t       *testing.T
	rng     *rand.Rand
	f       Facts
	stored  Plan   // the agenda entry and the stored bucket
	noticed string // delivered notice dates of this delinquency, for the report check
	ran     []policy.Step
	transit calendar.Date // a notice's delivery evidence arrives then; zero: none
	stats   *simStats
	name    string
}

type simStats struct {
	steps, notices, resent, reports, skipped, moves, promises, agreements, cures int
}

func (s *sim) contact(x calendar.Date) bool {
	return IsContactDay(s.f.Policy, s.f.Calendar, x) && (s.f.ContactDay == nil || s.f.ContactDay(x))
}

// next computes the plan on today and checks what holds of every plan.
func (s *sim) next() Plan {
	s.t.Helper()
	p := Next(s.f)
	today := s.f.Today
	if p.Action == "" {
		if !p.Date.IsZero() || p.Step != nil {
			s.t.Fatalf("%s %s: no action but date %s step %v", s.name, today, p.Date, p.Step)
		}
		return p
	}
	if p.Date.Before(today) {
		s.t.Fatalf("%s %s: %s planned in the past, on %s", s.name, today, p.Action, p.Date)
	}
	if p.Step != nil && !s.contact(p.Date) {
		s.t.Fatalf("%s %s: %s planned on %s (%s), not a contact day", s.name, today, p.Action, p.Date, p.Date.Weekday())
	}
	if (p.Step != nil) != (p.Action != policy.DueCheck && p.Action != policy.BucketMove && p.Action != policy.PromiseCheck) {
		s.t.Fatalf("%s %s: %s with step %v", s.name, today, p.Action, p.Step)
	}
	if p.Action == policy.BureauReport && (s.f.Executed.NoticeAt.IsZero() || p.Date.Before(s.f.Executed.NoticeAt.AddDays(s.f.Policy.BureauNoticeToReportDays))) {
		s.t.Fatalf("%s %s: BUREAU_REPORT on %s with notice evidence %q", s.name, today, p.Date, s.f.Executed.NoticeAt)
	}
	if p.Step != nil && s.f.Hold != HoldNone {
		s.t.Fatalf("%s %s: step %s planned under hold %s", s.name, today, p.Action, s.f.Hold)
	}
	if p.Action == policy.BucketMove && (p.Date.Sub(p.Payable) != nextBoundary(p.DaysPastDue) || Bucket(p.Date.Sub(p.Payable)) == p.Bucket) {
		s.t.Fatalf("%s %s: BUCKET_MOVE on %s is not a boundary (payable %s)", s.name, today, p.Date, p.Payable)
	}
	return p
}

// write stores a plan as the integrator does on every write: agenda entry
// and bucket; a cured contract starts a new delinquency.
func (s *sim) write(p Plan) {
	if !p.Delinquent && s.stored.Delinquent {
		s.f.Executed, s.noticed, s.ran, s.transit = Executed{}, "", nil, calendar.Date{}
		s.stats.cures++
	}
	s.stored = p
}

// event is a random thing the world does today: a payment, a promise, a
// dispute that starts or ends, a notice's delivery evidence.
func (s *sim) event() {
	today := s.f.Today
	changed := false
	if !s.transit.IsZero() && !s.transit.After(today) {
		s.f.Executed.NoticeAt, s.transit = s.transit, calendar.Date{}
		s.noticed += s.f.Executed.NoticeAt.String() + " "
		changed = true
	}
	if s.rng.IntN(40) == 0 {
		s.payOldest()
		changed = true
	}
	switch {
	case s.f.Hold == HoldNone && s.stored.Delinquent && s.rng.IntN(60) == 0:
		s.f.Hold, s.f.PromiseDate = HoldPromise, today.AddDays(s.rng.IntN(10))
		s.stats.promises++
		changed = true
	case s.f.Hold == HoldNone && s.stored.Delinquent && s.rng.IntN(200) == 0:
		s.f.Hold = HoldDispute
		changed = true
	case s.f.Hold == HoldDispute && s.rng.IntN(15) == 0:
		s.f.Hold = HoldNone
		changed = true
	case s.f.Hold == HoldNone && s.stored.Delinquent && s.rng.IntN(150) == 0:
		// An agreement renegotiates the overdue instalments into new ones.
		for i, in := range s.f.Installments {
			if in.Open && s.f.Calendar.IsOverdue(in.Due, today) {
				s.f.Installments[i].Open = false
			}
		}
		first, seq := today.AddDays(5+s.rng.IntN(15)), len(s.f.Installments)
		for i := range 3 {
			s.f.Installments = append(s.f.Installments, Installment{Seq: seq + i + 1, Due: first.AddMonths(i), Open: true})
		}
		s.f.Hold = HoldAgreement
		s.stats.agreements++
		changed = true
	case s.f.Hold == HoldAgreement && s.stored.Delinquent && s.stored.DaysPastDue >= 10:
		s.f.Hold = HoldNone // the agreement breaks: back to the régua
		changed = true
	}
	if changed {
		s.write(s.next())
	}
}

func (s *sim) payOldest() {
	i := -1
	for j, in := range s.f.Installments {
		if in.Open && (i < 0 || earlier(in, s.f.Installments[i].Due, s.f.Installments[i].Seq)) {
			i = j
		}
	}
	if i >= 0 {
		s.f.Installments[i].Open = false
	}
	if s.f.Hold == HoldPromise && !Next(s.f).Delinquent {
		s.f.Hold, s.f.PromiseDate = HoldNone, calendar.Date{} // the promise is kept
	}
}

// work is the worker of today: it runs the contract when its stored
// action is today, executing what Next says is due today until the next
// action is later.
func (s *sim) work() {
	today := s.f.Today
	if s.stored.Action == "" || s.stored.Date.After(today) {
		return
	}
	if s.stored.Date.Before(today) {
		s.t.Fatalf("%s %s: agenda entry %s of %s missed", s.name, today, s.stored.Action, s.stored.Date)
	}
	was := s.stored
	for range 4 {
		p := s.next()
		if p.Action == "" || p.Date.After(today) {
			// DUE_CHECK and BUCKET_MOVE run by writing the fresh plan; a
			// step or a promise check is never left for later.
			if was.Action != "" && was.Action != policy.DueCheck && was.Action != policy.BucketMove && !s.gated(p) {
				s.t.Fatalf("%s %s: agenda said %s today, Next says %s on %s (%s)", s.name, today, was.Action, p.Action, p.Date, p.Why)
			}
			if was.Action == policy.BucketMove {
				if p.Bucket == s.stored.Bucket {
					s.t.Fatalf("%s %s: BUCKET_MOVE without a bucket change (%s)", s.name, today, p.Bucket)
				}
				s.stats.moves++
			}
			s.write(p)
			return
		}
		s.execute(p)
		was = Plan{} // what follows an execution may be later
	}
	s.t.Fatalf("%s %s: more than 4 actions today", s.name, today)
}

func (s *sim) execute(p Plan) {
	today := s.f.Today
	switch p.Action {
	case policy.PromiseCheck:
		if s.rng.IntN(2) == 0 {
			for s.next().Delinquent {
				s.payOldest()
			}
		}
		s.f.Hold, s.f.PromiseDate = HoldNone, calendar.Date{}
		s.write(s.next())
		return
	case policy.DueCheck, policy.BucketMove:
		s.t.Fatalf("%s %s: %s planned for today", s.name, today, p.Action)
	}
	st, ex := *p.Step, s.f.Executed
	if today.Before(p.Payable.AddDays(st.DaysPastDue)) {
		s.t.Fatalf("%s %s: %s ran before its day (payable %s)", s.name, today, st.Action, p.Payable)
	}
	resend := st.Action == policy.BureauNotice && p.Why == WhyNoticeBeforeReport
	if st.DaysPastDue <= ex.LastStep && !resend {
		s.t.Fatalf("%s %s: %s (day %d) out of order after day %d", s.name, today, st.Action, st.DaysPastDue, ex.LastStep)
	}
	if ex.LastAt.Equal(today) {
		s.t.Fatalf("%s %s: a second step today (%s)", s.name, today, st.Action)
	}
	if i := index(s.f.Policy.Steps, policy.BureauNotice); i >= 0 && st.DaysPastDue > s.f.Policy.Steps[i].DaysPastDue &&
		index(s.ran, policy.BureauNotice) < 0 {
		s.t.Fatalf("%s %s: %s ran with the notice skipped (ran %v)", s.name, today, st.Action, s.ran)
	}
	if st.Action == policy.BureauReport {
		if ex.NoticeAt.IsZero() || today.Sub(ex.NoticeAt) < s.f.Policy.BureauNoticeToReportDays ||
			!slices.Contains(sliceOf(s.noticed), ex.NoticeAt.String()) {
			s.t.Fatalf("%s %s: BUREAU_REPORT with notice evidence %q (delivered %s)", s.name, today, ex.NoticeAt, s.noticed)
		}
		s.stats.reports++
	}
	if st.Action == policy.BureauNotice {
		s.stats.notices++
		if resend {
			s.stats.resent++
		}
		if s.rng.IntN(5) > 0 {
			s.transit = today.AddDays(s.rng.IntN(4))
		}
	}
	s.stats.steps++
	s.stats.skipped += len(p.Skipped)
	s.ran = append(s.ran, st)
	s.f.Executed = ex.Record(p, today)
	s.write(s.next())
}

// gated reports whether p is, or comes before, an owed report waiting for notice evidence:
// the one reason a planned step may move later.
// A BUCKET_MOVE may then come before it.
func (s *sim) gated(p Plan) bool {
	if p.Why == WhyNoticeBeforeReport || p.Why == WhyNoticeWait {
		return true
	}
	i := index(s.f.Policy.Steps, policy.BureauReport)
	return p.Action == policy.BucketMove && i >= 0 &&
		s.f.Executed.LastStep < s.f.Policy.Steps[i].DaysPastDue && s.f.Policy.Steps[i].DaysPastDue <= p.DaysPastDue
}

func sliceOf(dates string) []string {
	var out []string
	for i := 0; i+10 <= len(dates); i += 11 {
		out = append(out, dates[i:i+10])
	}
	return out
}

// dayStart checks, before anything happens today, that the plan written
// earlier still stands: never an earlier date (it would be missed), a
// later one only when an owed report waits for notice evidence, and a step
// only ever replaced by a later owed one (the latest-passed rule) or the
// notice a report needs. A DUE_CHECK may be overtaken by delinquency on a
// weekend before it.
func (s *sim) dayStart() {
	if s.stored.Action == "" || s.stored.Action == policy.DueCheck || !s.stored.Date.After(s.f.Today) {
		return
	}
	q := s.next()
	if q.Date.Before(s.stored.Date) || q.Date.After(s.stored.Date) && !s.gated(q) {
		s.t.Fatalf("%s %s: plan drifted from %s on %s to %s on %s", s.name, s.f.Today, s.stored.Action, s.stored.Date, q.Action, q.Date)
	}
	if q.Action != s.stored.Action && !s.gated(q) && (q.Step == nil || s.stored.Step == nil || q.Step.DaysPastDue <= s.stored.Step.DaysPastDue) {
		s.t.Fatalf("%s %s: plan changed from %s (%s) to %s on %s (%s D%d %+v hold %s)", s.name, s.f.Today, s.stored.Action, s.stored.Why, q.Action, q.Date, q.Why, q.DaysPastDue, s.f.Executed, s.f.Hold)
	}
}

// dayEnd checks the stored bucket is never stale: it changes only by a
// write, and boundaries are written on their day. The only lag is the
// first overdue days of a current contract, until its DUE_CHECK day.
func (s *sim) dayEnd() {
	if s.stored.Action != "" && !s.stored.Date.After(s.f.Today) {
		s.t.Fatalf("%s %s: %s of %s left undone", s.name, s.f.Today, s.stored.Action, s.stored.Date)
	}
	q := s.next()
	lag := s.stored.Bucket == "" && q.Bucket == BucketD001_030 && !s.stored.Date.After(s.f.Calendar.NextBusinessDay(q.Payable))
	if q.Bucket != s.stored.Bucket && !lag {
		s.t.Fatalf("%s %s: stored bucket %q, contract is in %q (D%d, hold %q, stored %s %s)", s.name, s.f.Today, s.stored.Bucket, q.Bucket, q.DaysPastDue, s.f.Hold, s.stored.Action, s.stored.Date)
	}
}

func TestSimulation(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(20260810, 43))
	stats := &simStats{}
	for c := range 600 {
		pol := randomPolicy(rng)
		first := calendar.D(2026, time.January, 1).AddDays(rng.IntN(700))
		insts := make([]Installment, 1+rng.IntN(12))
		for i := range insts {
			insts[i] = Installment{Seq: i + 1, Due: first.AddMonths(i), Open: true}
		}
		cal := calendar.National
		if rng.IntN(3) == 0 {
			cal = calendar.New(first.AddDays(rng.IntN(60)), first.AddDays(rng.IntN(200)), calendar.D(first.Year(), time.December, 31))
		}
		var override func(calendar.Date) bool
		if rng.IntN(3) == 0 {
			off := time.Weekday(rng.IntN(7))
			override = func(x calendar.Date) bool { return x.Weekday() != off }
		}
		s := &sim{t: t, rng: rng, stats: stats, name: fmt.Sprintf("contract %d (%v)", c, pol.Steps),
			f: Facts{Today: first.AddDays(rng.IntN(150) - 40), Calendar: cal, Policy: pol, ContactDay: override, Installments: insts}}
		s.write(s.next()) // onboarding: the contract enters the agenda
		for range 200 {
			s.dayStart()
			s.event()
			s.work()
			s.dayEnd()
			s.f.Today = s.f.Today.AddDays(1)
		}
	}
	t.Logf("%+v", *stats)
	if stats.steps < 1000 || stats.notices < 100 || stats.resent == 0 || stats.reports < 50 || stats.skipped < 100 || stats.moves < 100 || stats.promises < 50 || stats.agreements < 20 || stats.cures < 50 {
		t.Errorf("the simulation did not exercise the régua: %+v", *stats)
	}
}
