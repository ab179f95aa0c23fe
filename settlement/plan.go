package settlement

import (
	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/debtor"
	"lastro/policy"
)

// Status reasons written by settlements.
const (
	ReasonPaidInFull = "PAID_IN_FULL"
	ReasonCured      = "CURED"
)

// ContractChange is what a payment does to the contract header. Empty
// strings in the delinquency and agenda fields mean "remove": the
// contract leaves the portfolio index (no bucket) or the agenda index (no
// next action) in the same commit as the payment.
type ContractChange struct {
	Status, StatusReason string
	OutstandingCents     int64
	OldestOverdueDueDate string
	Bucket               string
	NextAction           string
	NextActionDate       string
	// KeepAgenda leaves the next action as it is: a partial payment that
	// does not move the oldest overdue date does not move the régua.
	KeepAgenda bool
	Cured      bool // was delinquent, is not any more
}

// planContract derives the header after an allocation, on today (the
// tenant's civil date when the payment is applied): a fully paid contract
// is SETTLED and leaves both indexes; a cured one leaves the portfolio and
// waits for its next due date (DUE_CHECK); one still late keeps its régua
// unless its oldest overdue instalment was paid.
func planContract(h charges.Header, insts []charges.Installment, alloc Allocation, today calendar.Date,
	cal *calendar.Calendar, dunning *policy.Dunning) ContractChange {
	settled := map[int]bool{}
	after := map[int]charges.State{}
	for _, l := range alloc.Lines {
		after[l.Seq] = l.After
		settled[l.Seq] = l.Settled
	}
	var dues []debtor.Due
	var outstanding int64
	open := 0
	for _, in := range insts {
		if !debtor.IsOpen(in.Status) || settled[in.Seq] {
			continue
		}
		base := in.PrincipalCents + in.InterestCents - in.PaidCents
		if s, ok := after[in.Seq]; ok {
			base = s.Base()
		}
		outstanding += max(base, 0)
		open++
		if d, err := calendar.Parse(in.DueDate); err == nil {
			dues = append(dues, debtor.Due{Date: d, Open: true})
		}
	}
	ch := ContractChange{OutstandingCents: outstanding}
	wasLate := h.OldestOverdueDueDate != ""
	if open == 0 {
		ch.Status, ch.StatusReason, ch.Cured = debtor.StatusSettled, ReasonPaidInFull, wasLate
		return ch
	}
	st := debtor.Derive(dues, today, cal, dunning)
	ch.Status, ch.StatusReason = h.Status, h.StatusReason
	if st.OldestOverdue.IsZero() {
		ch.Cured = wasLate
		if wasLate || h.Status == debtor.StatusInCollection {
			ch.Status, ch.StatusReason = debtor.StatusActive, ReasonCured
		}
	} else {
		ch.Status, ch.StatusReason = debtor.StatusInCollection, debtor.ReasonOldestOverdue
		ch.OldestOverdueDueDate, ch.Bucket = st.OldestOverdue.String(), st.Bucket
		if ch.OldestOverdueDueDate == h.OldestOverdueDueDate && h.NextAction != "" {
			ch.KeepAgenda = true
			ch.NextAction, ch.NextActionDate = h.NextAction, h.NextActionDate
			return ch
		}
	}
	if st.NextAction != "" {
		ch.NextAction, ch.NextActionDate = st.NextAction, st.NextActionDate.String()
	}
	return ch
}
