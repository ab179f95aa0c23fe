// Package charges computes what an instalment costs on a given day under
// the charges policy version its contract was signed under
// (docs/design.md#late-charges), and issues charges (Pix or boleto) for that amount: the charge item
// and its strongly consistent lookup (AP06), written in one transaction.
//
// The arithmetic is pure and shared with settlement: late charges become
// fact when a payment is applied (never by a daily job), on the
// instalment's outstanding amount (principal + interest − paid), each
// component rounded half-up to the cent (ADR 0009).
package charges

import (
	"github.com/shopspring/decimal"

	"lastro/collections/calendar"
	"lastro/contract"
	"lastro/policy"
)

// State is what the arithmetic needs of an instalment, as stored.
type State struct {
	Seq            int
	DueDate        calendar.Date
	PrincipalCents int64
	InterestCents  int64
	// PaidCents is what was paid towards principal and interest: the
	// contractual debt, so PrincipalCents + InterestCents − PaidCents is
	// the base of the late charges.
	PaidCents int64
	// Late charges assessed so far (facts of earlier settlements) and
	// what was paid of them.
	FineCents             int64
	LateInterestCents     int64
	FinePaidCents         int64
	LateInterestPaidCents int64
	// ChargedThrough is the payment date late interest was last assessed
	// to; zero when no late payment was ever applied. Its presence also
	// says the fine was assessed: the fine is charged once.
	ChargedThrough calendar.Date
}

// Base is the outstanding contractual amount: principal + interest − paid.
func (s State) Base() int64 { return s.PrincipalCents + s.InterestCents - s.PaidCents }

// Assessment is what becomes fact if the instalment is paid on a date.
type Assessment struct {
	PayableUntil calendar.Date `json:"payableUntil"` // the due date moved to the next business day
	PayDate      calendar.Date `json:"payDate"`      // the payment's civil date in the tenant's time zone
	DaysLate     int           `json:"daysLate"`     // PayDate − PayableUntil, 0 when on time
	AccrualDays  int           `json:"accrualDays"`  // days of late interest assessed now (after ChargedThrough)
	BaseCents    int64         `json:"baseCents"`    // principal + interest − paid
	FineCents    int64         `json:"fineCents"`    // fine assessed now (charged once)
	LateInterest int64         `json:"lateInterestCents"`
}

// Assess computes the late charges of s if paid on payDate: none when the
// payment is on or before the due date adjusted to the next business day
// (a due date on a weekend or holiday is payable then without charges);
// otherwise the fine (once per instalment) and simple late interest, the
// monthly rate / 30 per day, for the days not yet assessed.
func Assess(p *policy.Charges, cal *calendar.Calendar, s State, payDate calendar.Date) Assessment {
	a := Assessment{PayableUntil: cal.Adjust(s.DueDate), PayDate: payDate, BaseCents: max(s.Base(), 0)}
	a.DaysLate = max(payDate.Sub(a.PayableUntil), 0)
	if a.DaysLate == 0 || a.BaseCents == 0 {
		return a
	}
	from := a.PayableUntil
	if !s.ChargedThrough.IsZero() && s.ChargedThrough.After(from) {
		from = s.ChargedThrough
	}
	a.AccrualDays = max(payDate.Sub(from), 0)
	if s.ChargedThrough.IsZero() {
		a.FineCents = Fine(p.FinePercent, a.BaseCents)
	}
	a.LateInterest = LateInterest(p.LateInterestMonthlyPercent, a.BaseCents, a.AccrualDays)
	return a
}

// Fine is percent % of base, rounded half-up to the cent.
func Fine(percent decimal.Decimal, base int64) int64 {
	return roundHalfUp(decimal.NewFromInt(base).Mul(percent), decimal.NewFromInt(100))
}

// LateInterest is simple interest at monthlyPercent % a month over days,
// a month being 30 days, rounded half-up to the cent.
func LateInterest(monthlyPercent decimal.Decimal, base int64, days int) int64 {
	if days <= 0 {
		return 0
	}
	num := decimal.NewFromInt(base).Mul(monthlyPercent).Mul(decimal.NewFromInt(int64(days)))
	return roundHalfUp(num, decimal.NewFromInt(3000))
}

// roundHalfUp returns num/den rounded to the nearest integer, halves up,
// computed exactly (num and den non-negative): no binary floating point
// and no truncated division decides a cent.
func roundHalfUp(num, den decimal.Decimal) int64 {
	q, r := num.QuoRem(den, 0)
	if r.Mul(decimal.NewFromInt(2)).GreaterThanOrEqual(den) {
		q = q.Add(decimal.NewFromInt(1))
	}
	return q.IntPart()
}

// Components is an amount split over the four components a payment can
// be imputed to.
type Components struct {
	Fine         int64 `json:"fine" dynamodbav:"fine"`
	LateInterest int64 `json:"lateInterest" dynamodbav:"lateInterest"`
	Interest     int64 `json:"interest" dynamodbav:"interest"`
	Principal    int64 `json:"principal" dynamodbav:"principal"`
}

// Total is the sum of the components.
func (c Components) Total() int64 { return c.Fine + c.LateInterest + c.Interest + c.Principal }

// Get returns the component named as in policy imputation orders.
func (c Components) Get(name string) int64 {
	switch name {
	case policy.Fine:
		return c.Fine
	case policy.LateInterest:
		return c.LateInterest
	case policy.Interest:
		return c.Interest
	case policy.Principal:
		return c.Principal
	}
	return 0
}

func (c *Components) add(name string, v int64) {
	switch name {
	case policy.Fine:
		c.Fine += v
	case policy.LateInterest:
		c.LateInterest += v
	case policy.Interest:
		c.Interest += v
	case policy.Principal:
		c.Principal += v
	}
}

// interestFirst reports whether the order imputes interest before
// principal. Both are fixed amounts, so how much of PaidCents went to each
// follows from the order alone.
func interestFirst(order []string) bool {
	for _, c := range order {
		switch c {
		case policy.Interest:
			return true
		case policy.Principal:
			return false
		}
	}
	return true
}

// Owed is what s owes per component after the assessment a: the charges
// assessed before and now, less what was paid of each.
func Owed(order []string, s State, a Assessment) Components {
	paidInterest := min(s.PaidCents, s.InterestCents)
	if !interestFirst(order) {
		paidInterest = max(s.PaidCents-s.PrincipalCents, 0)
	}
	return Components{
		Fine:         max(s.FineCents+a.FineCents-s.FinePaidCents, 0),
		LateInterest: max(s.LateInterestCents+a.LateInterest-s.LateInterestPaidCents, 0),
		Interest:     max(s.InterestCents-paidInterest, 0),
		Principal:    max(s.PrincipalCents-(s.PaidCents-paidInterest), 0),
	}
}

// AmountDue is what settles s on payDate: the assessment and what is owed
// per component then.
func AmountDue(p *policy.Charges, cal *calendar.Calendar, s State, payDate calendar.Date) (Assessment, Components) {
	a := Assess(p, cal, s, payDate)
	return a, Owed(p.ImputationOrder, s, a)
}

// Impute spends up to amount on owed in the policy's order, and returns
// what went to each component and what is left of amount.
func Impute(order []string, owed Components, amount int64) (Components, int64) {
	var got Components
	for _, name := range order {
		if amount == 0 {
			break
		}
		take := min(owed.Get(name), amount)
		got.add(name, take)
		amount -= take
	}
	return got, amount
}

// Apply returns s after the assessment a and a payment imputed as paid:
// the new charges become fact, the payment is recorded per component.
func Apply(s State, a Assessment, paid Components) State {
	s.FineCents += a.FineCents
	s.LateInterestCents += a.LateInterest
	if a.DaysLate > 0 && a.BaseCents > 0 && (s.ChargedThrough.IsZero() || a.PayDate.After(s.ChargedThrough)) {
		s.ChargedThrough = a.PayDate
	}
	s.FinePaidCents += paid.Fine
	s.LateInterestPaidCents += paid.LateInterest
	s.PaidCents += paid.Interest + paid.Principal
	return s
}

// StateOf is a stored instalment as the arithmetic sees it.
func StateOf(in *contract.Installment) State {
	s := State{Seq: in.Seq, DueDate: in.Due(), PrincipalCents: in.PrincipalCents, InterestCents: in.InterestCents, PaidCents: in.PaidCents,
		FineCents: in.FineCents, LateInterestCents: in.LateInterestCents, FinePaidCents: in.FinePaidCents,
		LateInterestPaidCents: in.LateInterestPaidCents}
	s.ChargedThrough, _ = calendar.Parse(in.ChargedThrough) // zero when never assessed
	return s
}
