package settlement

import (
	"sort"

	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/policy"
)

// Request is what an allocation depends on, and nothing else: the same
// request always gives the same allocation, which is what lets a retry
// after a version conflict recompute it from fresh reads.
type Request struct {
	Policy      *policy.Charges // the version the contract was signed under
	Calendar    *calendar.Calendar
	PayDate     calendar.Date // the payment's civil date in the tenant's time zone
	AmountCents int64
	TargetSeq   int // the instalment the charge was issued for
	// QuoteDate, when set, is the date the charge's quote was computed
	// for: the charged instalment is assessed as of then, so a payment of
	// the quote within its validity pays what the quote covered in full
	// (docs/design.md#charges-are-quotes).
	QuoteDate calendar.Date
	Open      []charges.State // the contract's open instalments
	MaxLines  int             // most instalments one payment may touch; 0 for no limit
}

// Line is what a payment did to one instalment.
type Line struct {
	Seq        int                `json:"seq"`
	Assessment charges.Assessment `json:"assessment"`
	Owed       charges.Components `json:"owed"` // before the payment, with the charges assessed now
	Paid       charges.Components `json:"paid"`
	After      charges.State      `json:"-"`
	Settled    bool               `json:"settled"` // nothing left to pay on it
}

// Allocation is the outcome of a payment.
type Allocation struct {
	Lines        []Line `json:"lines"`
	AppliedCents int64  `json:"appliedCents"`
	CreditCents  int64  `json:"creditCents"` // the rest, kept on the contract
}

// Allocate imputes a payment: first to the charged instalment, then, when
// money is left, to the other instalments overdue or due by the pay date,
// oldest first (due date, then sequence); each instalment's late charges
// become fact as of the pay date (the charged one's as of its quote)
// before the money is split over its components in the policy's order.
// Whatever is left becomes contract credit: future instalments are not
// prepaid at face value, since early payment is owed a proportional
// interest rebate (CDC art. 52 §2) this engine does not model; the credit
// is applied to each instalment when it falls due. An instalment that is
// not touched gets no charges assessed: charges become fact only with a
// payment.
func Allocate(r Request) Allocation {
	order := r.Policy.ImputationOrder
	queue := make([]charges.State, 0, len(r.Open))
	var rest []charges.State
	for _, s := range r.Open {
		switch {
		case s.Seq == r.TargetSeq:
			queue = append(queue, s)
		case !s.DueDate.After(r.PayDate):
			rest = append(rest, s)
		}
	}
	sort.SliceStable(rest, func(i, j int) bool {
		a, b := rest[i], rest[j]
		if c := a.DueDate.Compare(b.DueDate); c != 0 {
			return c < 0
		}
		return a.Seq < b.Seq
	})
	queue = append(queue, rest...)
	out := Allocation{Lines: []Line{}}
	left := r.AmountCents
	for _, s := range queue {
		if left == 0 || (r.MaxLines > 0 && len(out.Lines) == r.MaxLines) {
			break
		}
		on := r.PayDate
		if s.Seq == r.TargetSeq && !r.QuoteDate.IsZero() {
			on = r.QuoteDate
		}
		a, owed := charges.AmountDue(r.Policy, r.Calendar, s, on)
		if owed.Total() == 0 {
			continue
		}
		paid, remaining := charges.Impute(order, owed, left)
		after := charges.Apply(s, a, paid)
		out.Lines = append(out.Lines, Line{Seq: s.Seq, Assessment: a, Owed: owed, Paid: paid, After: after,
			Settled: paid.Total() == owed.Total()})
		out.AppliedCents += left - remaining
		left = remaining
	}
	out.CreditCents = left
	return out
}
