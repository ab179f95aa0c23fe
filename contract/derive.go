package contract

import (
	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/contract/regua"
	"lastro/policy"
)

// Facts are the régua's facts about the contract on today. Executed
// steps are the header's record of the current delinquency.
func (c *Contract) Facts(today calendar.Date, cal *calendar.Calendar, dunning *policy.Dunning) regua.Facts {
	f := regua.Facts{Today: today, Calendar: cal, Policy: dunning, Hold: c.Header.Hold,
		Executed: regua.Executed{LastStep: c.Header.LastStep}}
	f.Executed.LastAt, _ = calendar.Parse(c.Header.LastStepAt)
	f.Executed.NoticeAt, _ = calendar.Parse(c.Header.NoticeAt)
	f.Executed.NoticeSkipped = c.Header.NoticeSkippedAt != ""
	f.Executed.ReminderDue, _ = calendar.Parse(c.Header.ReminderDue)
	f.Executed.ReminderStep = c.Header.ReminderStep
	f.Since, _ = calendar.Parse(c.Header.DelinquentSince)
	if d, err := calendar.Parse(c.Header.PromiseDate); err == nil {
		f.PromiseDate = d
	}
	switch c.Header.Status {
	case StatusInAgreement:
		if f.Hold == "" {
			f.Hold = regua.HoldAgreement
		}
	case StatusWrittenOff:
		f.Hold = regua.HoldWrittenOff
	}
	for i := range c.Installments {
		in := &c.Installments[i]
		f.Installments = append(f.Installments, regua.Installment{Seq: in.Seq, Due: in.Due(), Open: in.Open(),
			Cents: max(in.PrincipalCents+in.InterestCents-in.PaidCents, 0), Agreement: in.AgreementID != ""})
	}
	return f
}

// Refresh re-derives the header from the instalments on today: the
// balance, the delinquency facts (oldestOverdueDueDate, bucket), the status
// where this package owns it, and the one next action. It is the only
// place a contract enters or leaves the portfolio and the agenda (the
// index attributes follow from these facts when the header is written).
//
// Status ownership (docs/design.md#status-ownership): ACTIVE, IN_COLLECTION and SETTLED
// follow the instalments; IN_AGREEMENT and WRITTEN_OFF belong to the
// agreement and the write-off and are never overwritten here (a payment
// on them changes balances only). A cured contract forgets the régua
// steps of its delinquency, so a new one starts from the first step.
//
// contactDay, when given, further restricts the days a step may run (the
// agenda passes one that excludes a day whose contact was blocked).
func (c *Contract) Refresh(today calendar.Date, cal *calendar.Calendar, dunning *policy.Dunning, contactDay ...func(calendar.Date) bool) regua.Plan {
	h := &c.Header
	h.AgendaAction, h.AgendaDate = "", ""
	var outstanding int64
	open := 0
	for i := range c.Installments {
		in := &c.Installments[i]
		if !in.Open() {
			continue
		}
		open++
		outstanding += max(in.PrincipalCents+in.InterestCents-in.PaidCents, 0)
	}
	h.OutstandingCents = outstanding
	wasLate := h.OldestOverdueDueDate != ""
	switch {
	case h.Status == StatusWrittenOff:
		// Out of the agenda and the portfolio for good; money received is
		// recovery, recorded on the balance only.
		h.OldestOverdueDueDate, h.Bucket, h.NextAction, h.NextActionDate = "", "", "", ""
		return regua.Plan{}
	case h.Status == StatusInAgreement && open > 0:
		// The agreement owns the status and the delinquency facts; the
		// régua's agreement hold still plans its next DUE_CHECK, so the
		// agreement's instalments are watched (never a régua step).
		f := c.Facts(today, cal, dunning)
		f.Hold = regua.HoldAgreement
		if len(contactDay) > 0 {
			f.ContactDay = contactDay[0]
		}
		p := regua.Next(f)
		if c.agreementMarked() {
			// The instalments outside the agreement are the contract's
			// delinquency during it, dunned and shown (ADR 0068).
			if p.Delinquent {
				h.OldestOverdueDueDate, h.Bucket = p.OldestOverdue.String(), p.Bucket
			} else {
				h.OldestOverdueDueDate, h.Bucket = "", ""
				h.LastStep, h.LastStepAt, h.NoticeAt, h.NoticeSkippedAt = 0, "", "", ""
			}
		}
		h.NextAction, h.NextActionDate = p.Action, ""
		if p.Action != "" {
			h.NextActionDate = p.Date.String()
		}
		return p
	case open == 0:
		h.Status, h.StatusReason = StatusSettled, ReasonPaidInFull
		h.OldestOverdueDueDate, h.Bucket, h.NextAction, h.NextActionDate = "", "", "", ""
		h.LastStep, h.LastStepAt, h.NoticeAt, h.Hold, h.PromiseDate, h.HoldID = 0, "", "", "", "", ""
		h.forgetDelinquency()
		h.owedRemoval(today)
		return regua.Plan{}
	}
	f := c.Facts(today, cal, dunning)
	if len(contactDay) > 0 {
		f.ContactDay = contactDay[0]
	}
	p := regua.Next(f)
	if p.Delinquent {
		h.OldestOverdueDueDate, h.Bucket = p.OldestOverdue.String(), p.Bucket
	} else {
		// Not delinquent: the régua's record of a delinquency, the notice's
		// evidence included, does not carry over to the next one.
		h.OldestOverdueDueDate, h.Bucket = "", ""
		h.LastStep, h.LastStepAt, h.NoticeAt = 0, "", ""
		h.forgetDelinquency()
	}
	switch h.Status {
	case StatusActive, StatusInCollection, StatusSettled, "":
		switch {
		case p.Delinquent:
			h.Status, h.StatusReason = StatusInCollection, ReasonOldestOverdue
		case wasLate || h.Status == StatusInCollection || h.Status == StatusSettled:
			h.Status, h.StatusReason = StatusActive, ReasonCured
		case h.Status == "":
			h.Status, h.StatusReason = StatusActive, ReasonSigned
		}
	}
	h.NextAction, h.NextActionDate = p.Action, ""
	if p.Action != "" {
		h.NextActionDate = p.Date.String()
	}
	if !p.Delinquent {
		h.owedRemoval(today)
	} else if h.ReportedAt != "" && h.ReportedCents > 0 && p.OverdueCents != h.ReportedCents {
		// The bureau holds another amount than what is overdue now (a
		// partial payment, an instalment that fell due): it is owed an
		// UPDATE today, before anything else (ADR 0067).
		h.NextAction, h.NextActionDate = policy.BureauUpdate, today.String()
	}
	return p
}

// forgetDelinquency drops what the header keeps of a delinquency that
// ended (cured or settled): the next one starts afresh.
func (h *Header) forgetDelinquency() {
	h.NoticeSkippedAt, h.DelinquentSince, h.PriorLastStep, h.PriorNoticeAt = "", "", 0, ""
}

// agreementMarked reports whether the contract's agreement instalments
// carry their agreement's id (every agreement signed since ADR 0068).
func (c *Contract) agreementMarked() bool {
	for i := range c.Installments {
		if c.Installments[i].AgreementID != "" {
			return true
		}
	}
	return false
}

// OverdueCents is what the contract's open instalments overdue on today
// (payable date passed) still owe of principal and interest, late
// charges excluded: the residue rule's measure and what a bureau
// inclusion reports (ADR 0067).
func (c *Contract) OverdueCents(today calendar.Date, cal *calendar.Calendar) int64 {
	var sum int64
	for i := range c.Installments {
		in := &c.Installments[i]
		if in.Open() && cal.IsOverdue(in.Due(), today) {
			sum += max(in.PrincipalCents+in.InterestCents-in.PaidCents, 0)
		}
	}
	return sum
}

// owedRemoval schedules the removal of the contract's credit-bureau record
// for today when it is reported and no longer delinquent: the creditor
// must remove the record once the debt is paid, so it comes before any
// other action.
func (h *Header) owedRemoval(today calendar.Date) {
	if h.ReportedAt != "" {
		h.NextAction, h.NextActionDate = policy.BureauRemoval, today.String()
	}
}

// index derives the index attributes from the header's facts: a contract
// is in the portfolio (GSI2, by bucket, largest balance first) exactly
// while it has a bucket, and on the agenda (GSI1, sparse and sharded)
// exactly while it has a next action. Every header write goes through
// here, so removing a fact removes the index entry in the same commit.
func (h *Header) index() {
	h.GSI2PK = ""
	if h.Bucket != "" {
		h.GSI2PK = keys.Bucket(h.TenantID, h.Bucket)
	}
	h.GSI1PK, h.GSI1SK = "", ""
	switch {
	case h.AgendaAction != "" && h.AgendaDate != "" && h.NextAction != "":
		// An earlier entry kept in place for the agenda to re-plan.
		h.GSI1PK = keys.Agenda(h.TenantID, h.AgendaDate, h.Shard)
		h.GSI1SK = keys.AgendaEntry(h.AgendaAction, h.ContractID)
	case h.NextAction != "" && h.NextActionDate != "":
		h.GSI1PK = keys.Agenda(h.TenantID, h.NextActionDate, h.Shard)
		h.GSI1SK = keys.AgendaEntry(h.NextAction, h.ContractID)
	}
}

// DaysPastDue is today − the payable date of the oldest overdue
// instalment (its due date moved to the next business day), 0 when the
// contract is current: derived on every read, never stored.
func (h *Header) DaysPastDue(today calendar.Date, cal *calendar.Calendar) int {
	return DaysPastDue(h.OldestOverdueDueDate, today, cal)
}

// DaysPastDue is today − the payable date of a due date ("" or invalid:
// 0), never negative.
func DaysPastDue(dueDate string, today calendar.Date, cal *calendar.Calendar) int {
	d, err := calendar.Parse(dueDate)
	if err != nil {
		return 0
	}
	return max(today.Sub(cal.Adjust(d)), 0)
}

// RefreshAfterPayment is Refresh for a payment: the next action and its
// date are re-derived at once, so the 360 never shows a plan the payment
// made stale (a partial payment that moves the oldest overdue instalment
// moves the régua with it; ADR 0068). When the stored agenda entry comes
// no later than the new plan, the entry itself stays where it is
// (AgendaAction, AgendaDate): the agenda visits it then and re-derives,
// and not moving its key keeps a payment's index writes within 3 WRU —
// the portfolio entry moves (its sort key is the balance), the agenda
// entry only has its projection updated (ADR 0010).
func (c *Contract) RefreshAfterPayment(today calendar.Date, cal *calendar.Calendar, dunning *policy.Dunning) regua.Plan {
	before := c.Header
	p := c.Refresh(today, cal, dunning)
	h := &c.Header
	at, action := before.NextActionDate, before.NextAction
	if before.AgendaDate != "" {
		at, action = before.AgendaDate, before.AgendaAction
	}
	if h.Bucket != "" && before.Bucket != "" && action != "" && h.NextAction != "" && at <= h.NextActionDate &&
		(at != h.NextActionDate || action != h.NextAction) {
		h.AgendaAction, h.AgendaDate = action, at
	}
	return p
}

// IsDelinquent reports whether the header says an instalment is overdue.
func (h *Header) IsDelinquent() bool { return h.OldestOverdueDueDate != "" }

// FactsOn is the header's facts as answers show them on today, with the
// delinquency re-derived from the instalments: the agenda writes it when
// a DUE_CHECK or BUCKET_MOVE runs, so between a due date and that run (or
// after a downtime longer than the catch-up window) the stored facts lag,
// and an answer must not. Statuses this package does not own are shown
// as stored. c must hold all of the contract's instalments.
func (c *Contract) FactsOn(today calendar.Date, cal *calendar.Calendar) Facts {
	f := c.Header.View(today, cal)
	switch c.Header.Status {
	case StatusActive, StatusInCollection:
	default:
		return f
	}
	fa := c.Facts(today, cal, nil)
	fa.Hold = "" // delinquency only: the schedule is the agenda's
	p := regua.Next(fa)
	if p.Delinquent {
		f.Status, f.StatusReason = StatusInCollection, ReasonOldestOverdue
		f.OldestOverdueDueDate, f.Bucket, f.DaysPastDue = ptr(p.OldestOverdue.String()), ptr(p.Bucket), p.DaysPastDue
	}
	return f
}
