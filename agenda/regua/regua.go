// Package regua is the dunning rule (régua de cobrança): from a contract's
// facts on a day, its one next action. Pure functions, no I/O.
//
// Interim version: the old delinquency derivation behind the package's
// API, replaced by the full rule (ADR 0014).
package regua

import (
	"lastro/collections/calendar"
	"lastro/policy"
)

// Installment is what the rule needs of an instalment.
type Installment struct {
	Seq  int
	Due  calendar.Date
	Open bool // neither paid nor renegotiated
}

// Executed records the steps already run in the current delinquency.
type Executed struct {
	LastStep int           // daysPastDue of the last régua step executed (0: none)
	NoticeAt calendar.Date // civil date the BUREAU_NOTICE was delivered; zero: none
}

// Holds that stop or replace the régua.
const (
	HoldPromise    = "PROMISE"
	HoldDispute    = "DISPUTE"
	HoldAgreement  = "AGREEMENT"
	HoldWrittenOff = "WRITTEN_OFF"
	HoldSettled    = "SETTLED"
)

// Facts are everything the rule looks at.
type Facts struct {
	Today        calendar.Date
	Calendar     *calendar.Calendar
	Policy       *policy.Dunning
	ContactDay   func(calendar.Date) bool
	Installments []Installment
	Executed     Executed
	Hold         string
	PromiseDate  calendar.Date
}

// Plan is the contract's derived state and next action on Facts.Today.
type Plan struct {
	Delinquent    bool
	OldestOverdue calendar.Date
	Payable       calendar.Date
	DaysPastDue   int
	Bucket        string
	Action        string
	Date          calendar.Date
	Step          *policy.Step
	Why           string
}

// Buckets of delinquency, by days past due.
const (
	B001_030  = "D001_030"
	B031_060  = "D031_060"
	B061_090  = "D061_090"
	B091_PLUS = "D091_PLUS"
)

// Bucket is the delinquency bucket of a number of days past due ("" when
// not late).
func Bucket(daysPastDue int) string {
	switch {
	case daysPastDue <= 0:
		return ""
	case daysPastDue <= 30:
		return B001_030
	case daysPastDue <= 60:
		return B031_060
	case daysPastDue <= 90:
		return B061_090
	}
	return B091_PLUS
}

func nextBoundary(daysPastDue int) int {
	for _, b := range []int{31, 61, 91} {
		if daysPastDue < b {
			return b
		}
	}
	return 0
}

// Next is the contract's state and next action on f.Today.
func Next(f Facts) Plan {
	var p Plan
	var nextDue calendar.Date
	for _, in := range f.Installments {
		if !in.Open {
			continue
		}
		if f.Calendar.IsOverdue(in.Due, f.Today) {
			if p.OldestOverdue.IsZero() || in.Due.Before(p.OldestOverdue) {
				p.OldestOverdue = in.Due
			}
		} else if nextDue.IsZero() || in.Due.Before(nextDue) {
			nextDue = in.Due
		}
	}
	if p.OldestOverdue.IsZero() {
		if !nextDue.IsZero() {
			p.Action, p.Date = policy.DueCheck, f.Calendar.FirstDayOverdue(nextDue)
		}
		return p
	}
	p.Delinquent = true
	p.Payable = f.Calendar.Adjust(p.OldestOverdue)
	p.DaysPastDue = f.Today.Sub(p.Payable)
	p.Bucket = Bucket(p.DaysPastDue)
	if step, ok := f.Policy.NextStep(p.DaysPastDue); ok {
		p.Action, p.Date = step.Action, p.Payable.AddDays(step.DaysPastDue)
	}
	if b := nextBoundary(p.DaysPastDue); b > 0 {
		at := p.Payable.AddDays(b)
		if p.Action == "" || at.Before(p.Date) {
			p.Action, p.Date = policy.BucketMove, at
		}
	}
	return p
}
