package contract

import (
	"lastro/collections/calendar"
	"lastro/policy"
)

// ReasonPaymentReversed is the status reason of a contract a reversed
// payment took out of SETTLED (ADR 0040).
const ReasonPaymentReversed = "PAYMENT_REVERSED"

// PaidLine is what one payment paid on one instalment, by component.
type PaidLine struct {
	Seq          int   `json:"seq" dynamodbav:"seq"`
	Fine         int64 `json:"fine" dynamodbav:"fine"`
	LateInterest int64 `json:"lateInterest" dynamodbav:"lateInterest"`
	Interest     int64 `json:"interest" dynamodbav:"interest"`
	Principal    int64 `json:"principal" dynamodbav:"principal"`
}

// Total is the line's cents.
func (l PaidLine) Total() int64 { return l.Fine + l.LateInterest + l.Interest + l.Principal }

// Reverse takes back up to amount cents a payment had paid on the
// contract's instalments, the money going back to the payer (a Pix
// refund). paid is what the payment paid, one line per instalment in the
// order it paid them, less what earlier reversals of it took back. The
// payment is undone from its end: the last line first and, within a line,
// principal, interest, late interest, then fine — the imputation order
// backwards, so a partial refund leaves the charges paid first still paid.
// An instalment is never taken below zero on any component, and one that
// is no longer open or paid (renegotiated into an agreement, cancelled)
// is not touched: what it cannot take back is left, for a person to
// review. An instalment that owes again is OPEN. The late charges stay
// assessed: they became fact with the payment (ADR 0009), and what of
// them is no longer paid is owed again. The caller re-derives the header
// (RefreshAfterReversal) and writes it all with Save.
func (c *Contract) Reverse(amount int64, paid []PaidLine) (taken []PaidLine, left int64) {
	left = amount
	for i := len(paid) - 1; i >= 0 && left > 0; i-- {
		in := c.Installment(paid[i].Seq)
		if in == nil || !(in.Open() || in.Status == InstPaid) {
			continue
		}
		p := paid[i]
		t := PaidLine{Seq: p.Seq}
		principalPaid := max(in.PaidCents-in.InterestPaidCents, 0)
		t.Principal = min(left, p.Principal, principalPaid)
		left -= t.Principal
		t.Interest = min(left, p.Interest, in.InterestPaidCents)
		left -= t.Interest
		t.LateInterest = min(left, p.LateInterest, in.LateInterestPaidCents)
		left -= t.LateInterest
		t.Fine = min(left, p.Fine, in.FinePaidCents)
		left -= t.Fine
		if t.Total() == 0 {
			continue
		}
		in.PaidCents -= t.Principal + t.Interest
		in.InterestPaidCents -= t.Interest
		in.LateInterestPaidCents -= t.LateInterest
		in.FinePaidCents -= t.Fine
		if in.Status == InstPaid {
			in.Status = InstOpen
		}
		taken = append(taken, t)
	}
	return taken, left
}

// RefreshAfterReversal is Refresh after Reverse: a contract that was
// SETTLED and owes again says why (PAYMENT_REVERSED) unless it is
// delinquent again, which says so itself.
func (c *Contract) RefreshAfterReversal(today calendar.Date, cal *calendar.Calendar, dunning *policy.Dunning) {
	was := c.Header.Status
	c.Refresh(today, cal, dunning)
	if was == StatusSettled && c.Header.Status == StatusActive {
		c.Header.StatusReason = ReasonPaymentReversed
	}
}
