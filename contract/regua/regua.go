// Package regua is the dunning rule (the régua) as pure functions: from a
// contract's instalments, the steps it already ran and its hold, Next
// derives its delinquency (oldest open overdue instalment, days past due,
// bucket) and the one next agenda action with its date (docs/design.md#dunning-rule,
// ADRs 0014 and 0015). There is no I/O here: the contract package calls
// Next when a contract is created, when a payment, promise, agreement or
// dispute changes it and when a worker runs an action, and writes what it
// answers (nextAction, nextActionDate, bucket, oldestOverdueDueDate).
package regua

import (
	"slices"

	"lastro/collections/calendar"
	"lastro/policy"
)

// Buckets of delinquency by days past due (docs/design.md#delinquency-and-buckets).
const (
	BucketD001_030  = "D001_030"
	BucketD031_060  = "D031_060"
	BucketD061_090  = "D061_090"
	BucketD091_PLUS = "D091_PLUS"
)

// boundaries are the first days past due of D031_060, D061_090, D091_PLUS.
var boundaries = [...]int{31, 61, 91}

// Holds: why the régua does not run as usual.
const (
	HoldNone       = ""
	HoldPromise    = "PROMISE"     // PROMISE_CHECK on the promised date
	HoldDispute    = "DISPUTE"     // paused: no contact, no report
	HoldAgreement  = "AGREEMENT"   // the agreement's instalments are checked, no steps
	HoldWrittenOff = "WRITTEN_OFF" // out of agenda and portfolio
	HoldSettled    = "SETTLED"     // nothing owed
)

// Reasons (Plan.Why), machine-readable; written into the action's event.
const (
	WhyNextDue            = "NEXT_DUE"              // current: DUE_CHECK of the next instalment
	WhyNoOpen             = "NO_OPEN_INSTALMENT"    // current and nothing open: no action
	WhyPromise            = "PROMISE"               // PROMISE_CHECK on the promised date
	WhyAgreementBreak     = "AGREEMENT_BREAK_CHECK" // an agreement instalment reaches the break days
	WhyOnHold             = "ON_HOLD"               // dispute, write-off, settled: no action
	WhyUnknownHold        = "UNKNOWN_HOLD"          // a hold this package does not know: paused
	WhyLatestPassedStep   = "LATEST_PASSED_STEP"    // the latest step already owed runs now
	WhyNoticeFirst        = "NOTICE_NOT_SKIPPED"    // BUREAU_NOTICE runs before the later owed steps
	WhyReportFirst        = "REPORT_NOT_SKIPPED"    // BUREAU_REPORT runs before the later owed steps
	WhyNoticeBeforeReport = "NOTICE_BEFORE_REPORT"  // report owed without notice evidence: the notice instead
	WhyNoticeWait         = "NOTICE_WAIT"           // report waits for notice + bureauNoticeToReportDays
	WhyNextStep           = "NEXT_STEP"             // the next step, on its day
	WhyBucketBoundary     = "BUCKET_BOUNDARY"       // BUCKET_MOVE at the crossing date
	WhyReguaDone          = "REGUA_DONE"            // past the last step and boundary: off the agenda
	WhyNoContactDay       = "NO_CONTACT_DAY"        // no contact day in 400 days: off the agenda
	// WhyOwedInOrder: the steps owed by the first day the instalment could
	// be late (a due date before Carnival) run one a contact day, in order.
	WhyOwedInOrder  = "OWED_IN_ORDER"
	WhyBelowMinimum = "BELOW_MINIMUM"    // what is overdue is below the policy's minimumDunnedCents: no step
	WhyPreDue       = "PRE_DUE_REMINDER" // a reminder before the next instalment's due date
)

// Installment is what the régua needs of an instalment.
type Installment struct {
	Seq  int
	Due  calendar.Date // original due date
	Open bool          // neither paid nor renegotiated
	// Cents is what the instalment still owes of principal and interest
	// (the residue rule and the bureau's overdue amount add these up).
	Cents int64
	// Agreement marks an instalment of the agreement the contract is in:
	// under the agreement hold the break is measured on these, and the
	// contract's other instalments are dunned (ADR 0068).
	Agreement bool
}

// Executed is what the contract already ran in its current delinquency;
// the integrator resets it when the contract is cured.
type Executed struct {
	LastStep int           // daysPastDue of the last régua step run (0: none)
	LastAt   calendar.Date // civil date that step ran; zero: none
	NoticeAt calendar.Date // civil date the BUREAU_NOTICE was delivered (evidence); zero: none
	// NoticeSkipped is set when the notice could not be sent for want of
	// an address on any of its channels: the report it would allow is
	// passed over instead of the notice being retried every
	// bureauNoticeToReportDays (ADR 0067).
	NoticeSkipped bool
	// ReminderDue and ReminderStep are the last pre-due reminder run: the
	// due date it was for and its (negative) days.
	ReminderDue  calendar.Date
	ReminderStep int
}

// Record is e after the régua step of p ran on day on: LastStep never goes
// back (a re-sent notice leaves it), and LastAt keeps a second step off
// that day. Delivery evidence of a notice is not execution: NoticeAt is set
// by the caller when the evidence arrives. Plans without a step leave e.
func (e Executed) Record(p Plan, on calendar.Date) Executed {
	if p.Step == nil {
		return e
	}
	if p.Why == WhyPreDue {
		e.ReminderDue, e.ReminderStep = p.ReminderFor, p.Step.DaysPastDue
		return e
	}
	e.LastStep = max(e.LastStep, p.Step.DaysPastDue)
	e.LastAt = on
	return e
}

// Facts is everything Next decides on.
type Facts struct {
	Today    calendar.Date      // the tenant's civil date
	Calendar *calendar.Calendar // nil: calendar.National
	Policy   *policy.Dunning    // the contract's version; nil: policy.DefaultDunning
	// ContactDay, when set, further restricts contact days (per-state
	// windows, say): a step runs only on a day both the policy and it allow.
	ContactDay   func(calendar.Date) bool
	Installments []Installment
	Executed     Executed
	Hold         string        // one of the Hold constants
	PromiseDate  calendar.Date // with HoldPromise
	// Since, when set, is the original oldest overdue due date of a
	// delinquency an agreement interrupted: after the agreement breaks the
	// delinquency is measured from it (ADR 0068). Ignored under the
	// agreement hold and when nothing is overdue.
	Since calendar.Date
}

// Plan is a contract's delinquency on Facts.Today and its one next action.
type Plan struct {
	Delinquent    bool
	OldestOverdue calendar.Date // original due date of the oldest open overdue instalment
	Payable       calendar.Date // its payable date (next business day when due on another day)
	DaysPastDue   int           // Today − Payable; derived, never stored
	Bucket        string        // portfolio bucket; "" when current, written off or settled
	Seq           int           // the instalment the action concerns (oldest overdue, or DUE_CHECK's)
	// OverdueCents is what the open overdue instalments still owe of
	// principal and interest (no late charges): the residue rule's
	// measure and the amount a bureau inclusion carries.
	OverdueCents int64
	// ReminderFor is the due date a pre-due reminder (Why WhyPreDue) is
	// about.
	ReminderFor calendar.Date

	Action string        // "" when nothing is scheduled (the contract leaves the agenda)
	Date   calendar.Date // when Action runs; never before Today
	Step   *policy.Step  // the régua step when Action is one (points into Policy.Steps: read only)
	// Skipped are the owed steps this one supersedes (a contract onboarded
	// late): the event of the step records them, so none is skipped
	// silently. Read only (a sub-slice of Policy.Steps).
	Skipped []policy.Step
	Why     string // one of the Why constants
}

// Bucket is the delinquency bucket of a number of days past due ("" when
// not late).
func Bucket(daysPastDue int) string {
	switch {
	case daysPastDue <= 0:
		return ""
	case daysPastDue < boundaries[0]:
		return BucketD001_030
	case daysPastDue < boundaries[1]:
		return BucketD031_060
	case daysPastDue < boundaries[2]:
		return BucketD061_090
	}
	return BucketD091_PLUS
}

// nextBoundary is the first day past due of the next bucket after
// daysPastDue (0: none left).
func nextBoundary(daysPastDue int) int {
	for _, b := range boundaries {
		if daysPastDue < b {
			return b
		}
	}
	return 0
}

// Next derives the contract's delinquency on f.Today and its next action:
//   - current: DUE_CHECK on the first business day after the next open
//     instalment's payable date; nothing open, no action;
//   - delinquent: the owed régua step (BUREAU_NOTICE first, then
//     BUREAU_REPORT, else only the latest owed one), or the next step on its
//     day; every step on a contact day, never two on one day, the report
//     only bureauNoticeToReportDays after a delivered notice (else the
//     notice); BUCKET_MOVE at a boundary that comes strictly first; past the
//     last step and boundary, no action;
//   - holds: PROMISE_CHECK on the promised date, AGREEMENT the DUE_CHECK
//     of its next instalment, DISPUTE paused, never a step; a held
//     contract still gets BUCKET_MOVE when delinquent and the next
//     DUE_CHECK when current (ADR 0015); WRITTEN_OFF and SETTLED nothing.
func Next(f Facts) Plan {
	cal := f.Calendar
	if cal == nil {
		cal = calendar.National
	}
	pol := f.Policy
	if pol == nil {
		pol = policy.DefaultDunning()
	}

	var p Plan
	var next Installment // the next open instalment not yet overdue
	var nextPayable calendar.Date
	// Under the agreement hold the agreement's own instalments only decide
	// its break (agr); the contract's other instalments are its
	// delinquency, dunned as usual (ADR 0068). A contract whose agreement
	// instalments carry no mark (signed before the mark existed) counts
	// them all as the agreement's, as it always did.
	split := f.Hold == HoldAgreement && slices.ContainsFunc(f.Installments, func(in Installment) bool { return in.Agreement })
	var agr Plan
	for _, in := range f.Installments {
		if !in.Open {
			continue
		}
		pay := cal.Adjust(in.Due)
		if f.Today.After(pay) {
			q := &p
			if f.Hold == HoldAgreement && (in.Agreement || !split) {
				q = &agr
			}
			q.OverdueCents += in.Cents
			if !q.Delinquent || earlier(in, q.OldestOverdue, q.Seq) {
				q.Delinquent, q.OldestOverdue, q.Payable, q.Seq = true, in.Due, pay, in.Seq
			}
		} else if nextPayable.IsZero() || earlier(in, next.Due, next.Seq) {
			next, nextPayable = in, pay
		}
	}
	if p.Delinquent && f.Hold != HoldAgreement && !f.Since.IsZero() && f.Since.Before(p.OldestOverdue) {
		// The delinquency an agreement interrupted resumes from its
		// original oldest due date once the agreement broke.
		p.OldestOverdue, p.Payable = f.Since, cal.Adjust(f.Since)
	}
	if p.Delinquent {
		p.DaysPastDue = f.Today.Sub(p.Payable)
		p.Bucket = Bucket(p.DaysPastDue)
	}
	// dueCheck plans the next instalment's DUE_CHECK unless something
	// earlier is planned: it is what notices the instalment falls due
	// (delinquency, bucket, credit applied), held contract or not.
	dueCheck := func() {
		if nextPayable.IsZero() {
			if p.Action == "" && p.Why == "" {
				p.Why = WhyNoOpen
			}
			return
		}
		if at := cal.NextBusinessDay(nextPayable); p.Action == "" || at.Before(p.Date) {
			p.Action, p.Date, p.Seq, p.Why = policy.DueCheck, at, next.Seq, WhyNextDue
		}
	}

	switch f.Hold {
	case HoldNone:
		if p.Delinquent {
			p.step(f, pol, cal)
		} else {
			dueCheck()
			p.reminder(f, pol, cal, next)
		}
	case HoldWrittenOff, HoldSettled:
		p.Bucket, p.Why = "", WhyOnHold
		return p
	case HoldAgreement:
		if p.Delinquent {
			// An instalment outside the agreement fell due during it: it
			// is dunned like any delinquency (ADR 0068).
			p.step(f, pol, cal)
		}
		dueCheck()
		p = p.bucketMoveFirst()
		if !split && agr.Delinquent && !p.Delinquent {
			// Unmarked agreement instalments: the delinquency shown is the
			// agreement's, as it always was.
			p.Delinquent, p.OldestOverdue, p.Payable, p.Seq, p.OverdueCents = true, agr.OldestOverdue, agr.Payable, agr.Seq, agr.OverdueCents
			p.DaysPastDue = f.Today.Sub(p.Payable)
			p.Bucket = Bucket(p.DaysPastDue)
			p = p.bucketMoveFirst()
		}
		if agr.Delinquent {
			// An overdue agreement instalment is checked again the day it
			// is past the policy's agreementBreakDays: then the agreement
			// breaks (ADR 0027). A bucket move on that day is the same check
			// (the agenda runs the agreement's on either); a day already
			// past is not planned again, so nothing loops on today.
			if at := agr.Payable.AddDays(pol.AgreementBreak() + 1); at.After(f.Today) && (p.Action == "" || at.Before(p.Date)) {
				p.Action, p.Date, p.Step, p.Skipped, p.Why, p.Seq = policy.DueCheck, at, nil, nil, WhyAgreementBreak, agr.Seq
			}
		}
		return p
	case HoldPromise:
		// The check runs the day after the promised date: the debtor has
		// the whole promised day to pay (SPEC AP04).
		p.Action, p.Date, p.Why = policy.PromiseCheck, later(f.PromiseDate.AddDays(1), f.Today), WhyPromise
		if !p.Delinquent {
			dueCheck()
		}
	case HoldDispute:
		p.Why = WhyOnHold
		if !p.Delinquent {
			dueCheck()
		}
	default:
		p.Why = WhyUnknownHold
		if !p.Delinquent {
			dueCheck()
		}
	}
	return p.bucketMoveFirst()
}

// earlier orders instalments by due date, then sequence.
func earlier(in Installment, due calendar.Date, seq int) bool {
	if c := in.Due.Compare(due); c != 0 {
		return c < 0
	}
	return in.Seq < seq
}

func later(a, b calendar.Date) calendar.Date {
	if a.After(b) {
		return a
	}
	return b
}

// step chooses the régua step of a delinquent contract (ADR 0014).
func (p *Plan) step(f Facts, pol *policy.Dunning, cal *calendar.Calendar) {
	steps := pol.Steps
	if !slices.IsSortedFunc(steps, byDays) {
		steps = slices.SortedStableFunc(slices.Values(steps), byDays)
	}
	ex := f.Executed
	if ex.NoticeSkipped && ex.NoticeAt.IsZero() {
		// No address for the notice: without it no report is lawful, so
		// the report is passed over rather than the notice re-sent.
		steps = slices.DeleteFunc(slices.Clone(steps), func(s policy.Step) bool { return s.Action == policy.BureauReport })
	}
	if pol.MinimumDunnedCents > 0 && p.OverdueCents < pol.MinimumDunnedCents {
		// A residue below the policy's minimum is not dunned; the
		// contract stays delinquent (bucket moves) and a payment or a
		// later instalment brings the régua back.
		p.Why = WhyBelowMinimum
		return
	}
	lo, _ := slices.BinarySearchFunc(steps, max(ex.LastStep+1, 1), cmpDays) // pre-due reminders are not delinquency steps
	hi, _ := slices.BinarySearchFunc(steps, p.DaysPastDue+1, cmpDays)
	hi = max(hi, lo)
	pending := steps[lo:hi]

	// The steps whose day comes no later than the first business day the
	// instalment is late came due while nobody could see the delinquency
	// (a Friday due date before Carnival is first late on Ash Wednesday,
	// 5 days on): they are not a late arrival's backlog, so they run in
	// order, one a contact day, instead of collapsing into the latest.
	seen := cal.FirstDayOverdue(p.OldestOverdue).Sub(p.Payable)
	inOrder := len(pending) > 1 && pending[len(pending)-1].DaysPastDue <= seen

	chosen, why := -1, ""
	if i := index(pending, policy.BureauNotice); i >= 0 {
		chosen, why = lo+i, WhyNoticeFirst
	} else if i := index(pending, policy.BureauReport); i >= 0 {
		chosen, why = lo+i, WhyReportFirst
	} else if inOrder {
		chosen, why = lo, WhyOwedInOrder
	} else if len(pending) > 0 {
		chosen, why = hi-1, WhyLatestPassedStep
	}
	if chosen == hi-1 && len(pending) > 0 {
		why = WhyLatestPassedStep
	}
	if chosen >= 0 {
		p.Skipped = slices.Clip(steps[lo:chosen])
	} else if lo < len(steps) {
		chosen, why = lo, WhyNextStep
	} else {
		p.Why = WhyReguaDone
		return
	}

	// The earliest day the step may run: its own day, today, and the day
	// after the last step ran (one step a day).
	s := &steps[chosen]
	at := later(p.Payable.AddDays(s.DaysPastDue), f.Today)
	if !ex.LastAt.IsZero() {
		at = later(at, ex.LastAt.AddDays(1))
	}
	if s.Action == policy.BureauReport {
		if ex.NoticeAt.IsZero() {
			s, why, p.Skipped = noticeStep(steps, ex.LastStep), WhyNoticeBeforeReport, nil
			if s.DaysPastDue <= ex.LastStep && !ex.LastAt.IsZero() {
				// A notice ran and its evidence has not come (yet): send it
				// again only when a report would have been allowed, not days
				// after the first one.
				at = later(at, ex.LastAt.AddDays(pol.BureauNoticeToReportDays))
			}
		} else if ready := ex.NoticeAt.AddDays(pol.BureauNoticeToReportDays); ready.After(at) {
			at, why = ready, WhyNoticeWait
		}
	}
	contact := func(d calendar.Date) bool {
		return isContactDay(pol, cal, d) && (f.ContactDay == nil || f.ContactDay(d))
	}
	day, ok := nextDay(contact, at)
	if !ok {
		p.Why, p.Skipped = WhyNoContactDay, nil
		return
	}
	p.Action, p.Date, p.Step, p.Why = s.Action, day, s, why
}

// bucketMoveFirst replaces the plan's action by BUCKET_MOVE when the
// contract crosses a bucket boundary strictly before it (the action of the
// same day wins: its write refreshes the bucket).
func (p Plan) bucketMoveFirst() Plan {
	if !p.Delinquent || p.Bucket == "" {
		return p
	}
	b := nextBoundary(p.DaysPastDue)
	if b == 0 {
		return p
	}
	at := p.Payable.AddDays(b)
	if p.Action != "" && !at.Before(p.Date) {
		return p
	}
	p.Action, p.Date, p.Step, p.Skipped, p.Why = policy.BucketMove, at, nil, nil, WhyBucketBoundary
	return p
}

// noticeStep is the policy's BUREAU_NOTICE step, re-sent in place of a
// report that has no delivery evidence; a policy without one (refused by
// policy validation) gets a notice that does not advance LastStep.
func noticeStep(steps []policy.Step, lastStep int) *policy.Step {
	if i := index(steps, policy.BureauNotice); i >= 0 {
		return &steps[i]
	}
	return &policy.Step{DaysPastDue: lastStep, Action: policy.BureauNotice}
}

func index(steps []policy.Step, action string) int {
	return slices.IndexFunc(steps, func(s policy.Step) bool { return s.Action == action })
}

func byDays(a, b policy.Step) int { return a.DaysPastDue - b.DaysPastDue }

func cmpDays(s policy.Step, days int) int { return s.DaysPastDue - days }

// reminder plans the policy's pre-due reminder owed before the next open
// instalment's due date (steps with negative days; the latest owed one
// when several are), on a contact day before that date, unless an
// earlier action is planned or it already ran for that date.
func (p *Plan) reminder(f Facts, pol *policy.Dunning, cal *calendar.Calendar, next Installment) {
	pre := pol.PreDue()
	if len(pre) == 0 || next.Due.IsZero() {
		return
	}
	done := f.Executed.ReminderDue == next.Due
	chosen := -1
	for i, s := range pre {
		if done && s.DaysPastDue <= f.Executed.ReminderStep {
			continue
		}
		if day := next.Due.AddDays(s.DaysPastDue); !day.After(f.Today) || chosen < 0 {
			chosen = i
			if day.After(f.Today) {
				break
			}
		}
	}
	if chosen < 0 {
		return
	}
	s := &pre[chosen]
	contact := func(d calendar.Date) bool {
		return isContactDay(pol, cal, d) && (f.ContactDay == nil || f.ContactDay(d))
	}
	day, ok := nextDay(contact, later(next.Due.AddDays(s.DaysPastDue), f.Today))
	if !ok || !day.Before(next.Due) || (p.Action != "" && !day.Before(p.Date)) {
		return
	}
	p.Action, p.Date, p.Step, p.Seq, p.Why, p.ReminderFor = s.Action, day, s, next.Seq, WhyPreDue, next.Due
}
