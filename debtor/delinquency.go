package debtor

import (
	"lastro/collections/calendar"
	"lastro/policy"
)

// Contract statuses (SPEC section 3).
const (
	StatusActive       = "ACTIVE"
	StatusInCollection = "IN_COLLECTION"
	StatusInAgreement  = "IN_AGREEMENT"
	StatusSettled      = "SETTLED"
	StatusWrittenOff   = "WRITTEN_OFF"
)

// Instalment statuses.
const (
	InstOpen         = "OPEN"
	InstOverdue      = "OVERDUE"
	InstPaid         = "PAID"
	InstRenegotiated = "RENEGOTIATED"
)

// Status reasons written by this package.
const (
	ReasonSigned        = "SIGNED"
	ReasonOldestOverdue = "OLDEST_INSTALLMENT_OVERDUE"
)

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

// nextBoundary is the first day past due of the next bucket (0: none).
func nextBoundary(daysPastDue int) int {
	for _, b := range []int{31, 61, 91} {
		if daysPastDue < b {
			return b
		}
	}
	return 0
}

// due is what the delinquency rules need of an instalment.
type due struct {
	Date calendar.Date
	Open bool // not paid nor renegotiated
}

// State is a contract's delinquency, derived from its instalments on a day.
type State struct {
	Status         string
	StatusReason   string
	OldestOverdue  calendar.Date // zero when current
	DaysPastDue    int
	Bucket         string
	NextAction     string // "" when nothing is scheduled
	NextActionDate calendar.Date
	Overdue        map[calendar.Date]bool // due dates late on the day
}

// Derive computes a contract's state on today: delinquency belongs to the
// contract and is measured by its oldest open overdue instalment (a due
// date on a weekend or holiday is payable the next business day). A
// current contract's next action is DUE_CHECK on the first day its next
// instalment can be late; a delinquent one's is the earlier of the next
// régua step (on or after today) and the next bucket boundary (BUCKET_MOVE),
// the step winning a tie.
func Derive(insts []due, today calendar.Date, cal *calendar.Calendar, dunning *policy.Dunning) State {
	st := State{Overdue: map[calendar.Date]bool{}}
	var nextDue calendar.Date
	for _, in := range insts {
		if !in.Open {
			continue
		}
		if cal.IsOverdue(in.Date, today) {
			st.Overdue[in.Date] = true
			if st.OldestOverdue.IsZero() || in.Date.Before(st.OldestOverdue) {
				st.OldestOverdue = in.Date
			}
		} else if nextDue.IsZero() || in.Date.Before(nextDue) {
			nextDue = in.Date
		}
	}
	if st.OldestOverdue.IsZero() {
		st.Status, st.StatusReason = StatusActive, ReasonSigned
		if !nextDue.IsZero() {
			st.NextAction, st.NextActionDate = policy.DueCheck, cal.FirstDayOverdue(nextDue)
		}
		return st
	}
	st.Status, st.StatusReason = StatusInCollection, ReasonOldestOverdue
	st.DaysPastDue = today.Sub(st.OldestOverdue)
	st.Bucket = Bucket(st.DaysPastDue)
	if step, ok := dunning.NextStep(st.DaysPastDue); ok {
		st.NextAction, st.NextActionDate = step.Action, st.OldestOverdue.AddDays(step.DaysPastDue)
	}
	if b := nextBoundary(st.DaysPastDue); b > 0 {
		at := st.OldestOverdue.AddDays(b)
		if st.NextAction == "" || at.Before(st.NextActionDate) {
			st.NextAction, st.NextActionDate = policy.BucketMove, at
		}
	}
	if st.NextAction == "" && !nextDue.IsZero() {
		// Past the last step and the last boundary: watch the next due date.
		st.NextAction, st.NextActionDate = policy.DueCheck, cal.FirstDayOverdue(nextDue)
	}
	return st
}
