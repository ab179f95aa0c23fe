package contract

import (
	"lastro/collections/calendar"
)

// CreditLine is what contract credit paid on one instalment.
type CreditLine struct {
	Seq       int   `json:"seq"`
	Interest  int64 `json:"interestCents"`
	Principal int64 `json:"principalCents"`
	Settled   bool  `json:"settled"`
}

// ApplyCredit spends the contract's credit on the open instalments that
// have fallen due by today (payable date on or before it), oldest first:
// the money was there before each fell due, so it pays principal and
// interest at face value with no late charge (docs/design.md#allocation-and-credit: credit is
// applied when an instalment falls due, never before). Interest first,
// then principal, as the default imputation order has it.
func (c *Contract) ApplyCredit(today calendar.Date, cal *calendar.Calendar) []CreditLine {
	var lines []CreditLine
	h := &c.Header
	for i := range c.Installments {
		in := &c.Installments[i]
		if h.CreditCents == 0 {
			break
		}
		if !in.Open() || cal.Adjust(in.Due()).After(today) {
			continue
		}
		l := CreditLine{Seq: in.Seq}
		interestLeft := max(in.InterestCents-in.InterestPaidCents, 0)
		l.Interest = min(interestLeft, h.CreditCents)
		h.CreditCents -= l.Interest
		principalLeft := max(in.PrincipalCents-(in.PaidCents-in.InterestPaidCents), 0)
		l.Principal = min(principalLeft, h.CreditCents)
		h.CreditCents -= l.Principal
		in.InterestPaidCents += l.Interest
		in.PaidCents += l.Interest + l.Principal
		if in.PaidCents >= in.PrincipalCents+in.InterestCents && in.FineCents <= in.FinePaidCents && in.LateInterestCents <= in.LateInterestPaidCents {
			in.Status, l.Settled = InstPaid, true
		}
		if l.Interest+l.Principal > 0 {
			lines = append(lines, l)
		}
	}
	return lines
}
