package agenda

import (
	"context"
	"fmt"
	"slices"
	"time"

	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/contactlimit"
	"lastro/contract"
	"lastro/contract/regua"
	"lastro/policy"
	"lastro/tenant"
	"lastro/worklist"
)

// Outcomes a step's event records beside EXECUTED.
const (
	outcomePassedOver     = "PASSED_OVER"                        // refused (opt-out) or no channel: the régua moves on
	outcomeRescheduled    = "RESCHEDULED"                        // not today: the next contact day
	outcomeSkippedAddress = contactlimit.OutcomeSkippedNoAddress // no address on any of its channels: the régua moves on
	reasonNoChannel       = contactlimit.Reason("NO_CHANNEL")    // a legacy step whose channel could not be derived
	reasonJoined          = contactlimit.Reason("JOINED")        // counted in the report only: the step joined the debtor's contact of the day on its channel
)

// contact runs the régua step of plan through the step table (ADR 0066):
// a message or the bureau notice is reserved (ADR 0062) and, once the
// step is recorded with the reservation, delivered; a call is reserved
// and leaves a task on the day's call list instead of a message; a step
// without a channel, or whose channels have no address, is passed over on
// the record without spending a contact. limited says the step's last
// write failed on the day's counter: the reservation is then refused, or
// joins the attempt that took the day's contact on its channel.
func (r *Runner) contact(ctx context.Context, t *tenant.Tenant, c *contract.Contract, w *work, plan regua.Plan, date calendar.Date,
	now time.Time, dunning *policy.Dunning, limited bool) error {
	h := &c.Header
	cal := c.Header.Calendar(t) // the debtor's state calendar (ADR 0065)
	step := *plan.Step
	kind := policy.KindOf(step)
	details := map[string]any{"action": plan.Action, "daysPastDue": plan.DaysPastDue, "why": plan.Why, "skipped": skipped(plan), "kind": string(kind)}
	chans := step.Channels()
	if len(chans) == 0 {
		// A step of an old policy version whose name names no channel:
		// never guessed (it used to go as SMS); passed over, visibly.
		record(c, plan, date)
		details["reason"], details["outcome"] = string(reasonNoChannel), outcomePassedOver
		c.Refresh(date, cal, dunning)
		w.events = append(w.events, c.NewEvent(0, EvStepBlocked, now, actor, details))
		w.out.blocked = reasonNoChannel
		return nil
	}
	facts, err := r.messageFacts(ctx, t, c, plan, date, now, dunning)
	if err != nil {
		return err
	}
	var fallbacks []contactlimit.Channel
	for _, ch := range chans[1:] {
		fallbacks = append(fallbacks, contactlimit.Channel(ch))
	}
	due := h.OldestOverdueDueDate
	if plan.Why == regua.WhyPreDue {
		due = plan.ReminderFor.String()
	}
	claim := contactlimit.Claim{DebtorKey: h.DebtorKey, ContractID: h.ContractID, Channel: contactlimit.Channel(chans[0]), Fallbacks: fallbacks,
		Template: plan.Action, Action: plan.Action, At: now, Disputed: h.Hold == regua.HoldDispute, Actor: actor, Policy: dunning,
		AmountCents: facts.AmountDueCents, DueDate: due, DaysPastDue: plan.DaysPastDue, Message: facts, Join: true}
	res, err := r.d.Contacts.Reserve(ctx, t, claim, h.Shard)
	if err == nil && limited && res.Attempt.Allowed {
		res.Attempt, err = r.d.Contacts.Refuse(ctx, t, res)
	}
	if err != nil {
		return fmt.Errorf("claim contact: %w", err)
	}
	a := res.Attempt
	h.ContactAfter = "" // served or judged again now
	details["channel"], details["attemptId"] = string(a.Channel), a.AttemptID
	if !a.Allowed {
		w.out.blocked = a.Reason
		details["reason"] = string(a.Reason)
		switch {
		case a.RetryAt != "" && a.Reason != contactlimit.ReasonOptOut && a.Reason != contactlimit.ReasonNoAddress:
			// The window opens later today on the debtor's clock: the step
			// stays due today and waits for then (ADR 0064).
			wake, err := wakeAction(t, date, a.RetryAt, now)
			if err != nil {
				return err
			}
			h.ContactAfter = a.RetryAt
			details["outcome"], details["retryAt"] = "WAITING", a.RetryAt
			w.writes = append(w.writes, wake)
			w.events = append(w.events, c.NewEvent(0, EvStepBlocked, now, actor, details))
			return nil
		case a.Reason == contactlimit.ReasonOptOut || a.Reason == contactlimit.ReasonNoAddress:
			// The debtor refused the channel, or can be reached on none of
			// the step's: the step is passed over, on the record, no contact
			// spent, and the régua moves on — a notice without an address
			// does not come back every bureauNoticeToReportDays (its report
			// is passed over with it).
			record(c, plan, date)
			details["outcome"] = outcomePassedOver
			if a.Reason == contactlimit.ReasonNoAddress {
				details["outcome"] = outcomeSkippedAddress
				if kind == policy.KindNotice {
					h.NoticeSkippedAt = date.String()
				}
			}
			c.Refresh(date, cal, dunning)
		default:
			// Not today (window closed, holiday, limit reached): the next
			// contact day.
			details["outcome"] = outcomeRescheduled
			c.Refresh(date, cal, dunning, func(d calendar.Date) bool { return d != date })
		}
		w.events = append(w.events, c.NewEvent(0, EvStepBlocked, now, actor, details))
		return nil
	}
	if kind == policy.KindCall {
		// One call a day per debtor, whatever the number of its contracts:
		// a second contract's call joins the first's attempt (its own task,
		// no second contact spent).
		if a.JoinedTo != "" {
			return r.callTask(t, c, w, plan, date, now, dunning, a.JoinedTo, a.SK, a.TimeZone, a.UF, details, true)
		}
		// The counter and the PENDING evidence commit with the task; a
		// call's reservation has no outbox entry, so nothing is sent.
		w.writes, w.reserved = slices.Concat(res.Actions, w.writes), true
		return r.callTask(t, c, w, plan, date, now, dunning, a.AttemptID, a.SK, a.TimeZone, a.UF, details, false)
	}
	if a.JoinedTo != "" {
		// The debtor already has today's contact on this channel (another
		// contract's step): this step is executed by it, nothing more is
		// sent or spent (ADR 0066).
		record(c, plan, date)
		details["joinedTo"], details["outcome"] = a.JoinedTo, contactlimit.OutcomeJoined
		c.Refresh(date, cal, dunning)
		w.events = append(w.events, c.NewEvent(0, EvStepExecuted, now, actor, details))
		w.out.executed = append(w.out.executed, plan.Action)
		w.out.blocked = reasonJoined
		return nil
	}
	record(c, plan, date)
	h.LastContactAt = keys.Timestamp(now)
	c.Refresh(date, cal, dunning)
	w.events = append(w.events, c.NewEvent(0, EvStepExecuted, now, actor, details))
	w.out.executed = append(w.out.executed, plan.Action)
	// The reservation leads the write: its counter is the action a failed
	// limit names (contactlimit.LimitReached).
	w.writes, w.reserved = slices.Concat(res.Actions, w.writes), true
	w.send = &delivery{res: res, notice: kind == policy.KindNotice}
	return nil
}

// callTask records a CALL step as executed with its task on the day's
// call list, written with the step: no message is sent, the attempt stays
// PENDING (JOINED for a second contract's) until the desk that works the
// call records its outcome on the evidence at attemptKey (ADR 0085).
func (r *Runner) callTask(t *tenant.Tenant, c *contract.Contract, w *work, plan regua.Plan, date calendar.Date, now time.Time, dunning *policy.Dunning,
	attemptID, attemptKey, zone, uf string, details map[string]any, joined bool) error {
	h := &c.Header
	task := worklist.Task{TenantID: h.TenantID, Date: date.String(), DebtorKey: h.DebtorKey, ContractID: h.ContractID, Action: plan.Action,
		AttemptID: attemptID, AttemptKey: attemptKey, DaysPastDue: plan.DaysPastDue, AmountDueCents: plan.OverdueCents, OutstandingCents: h.OutstandingCents,
		OldestDueDate: h.OldestOverdueDueDate, LastContactAt: h.LastContactAt, CreatedAt: keys.Timestamp(now),
		TimeZone: zone, UF: uf}
	put, err := worklist.Put(task)
	if err != nil {
		return err
	}
	w.writes = append(w.writes, put)
	details["channel"], details["attemptId"], details["outcome"] = policy.ChannelCall, attemptID, "CALL_LISTED"
	if joined {
		details["joined"] = true
		w.out.blocked = reasonJoined
	}
	record(c, plan, date)
	if !joined {
		h.LastContactAt = keys.Timestamp(now)
	}
	c.Refresh(date, c.Header.Calendar(t), dunning)
	w.events = append(w.events, c.NewEvent(0, EvStepExecuted, now, actor, details))
	w.out.executed = append(w.out.executed, plan.Action)
	return nil
}

// messageFacts are what the step's message may say of the contract on
// date: what is overdue with its fine and late interest as of date (a
// charge quote's arithmetic, under the contract's charges policy), the
// balance, the oldest due date, the open charge's Pix code and link, and
// a notice's report date (ADR 0067).
func (r *Runner) messageFacts(ctx context.Context, t *tenant.Tenant, c *contract.Contract, plan regua.Plan, date calendar.Date,
	now time.Time, dunning *policy.Dunning) (contactlimit.MessageFacts, error) {
	h := &c.Header
	f := contactlimit.MessageFacts{ContractIDs: []string{h.ContractID}, OutstandingCents: h.OutstandingCents, OldestDueDate: h.OldestOverdueDueDate}
	v, err := contract.PolicyVersion(h.ChargesPolicy)
	if err != nil {
		return f, err
	}
	pol, err := r.d.Policies.Charges(ctx, t, v)
	if err != nil {
		return f, err
	}
	cal := c.Header.Calendar(t)
	for i := range c.Installments {
		in := &c.Installments[i]
		if in.Open() && cal.IsOverdue(in.Due(), date) {
			_, owed := charges.AmountDue(pol, cal, charges.StateOf(in), date)
			f.AmountDueCents += owed.Total()
		}
	}
	if plan.Action == policy.BureauNotice {
		// The first day the report may follow this notice (CDC art. 43
		// §2): the debtor has until the day before to pay or contest.
		f.ReportDate = date.AddDays(dunning.BureauNoticeToReportDays).String()
	}
	seq := plan.Seq
	if seq == 0 {
		return f, nil
	}
	// The contract was read with its charges (execute): no Query here.
	open, err := charges.OpenAmong(c.Also, seq, now)
	if err != nil {
		return f, err
	}
	if open != nil {
		f.PixCopiaECola, f.PaymentLink = open.PixCopiaECola, open.PaymentLink
	}
	return f, nil
}

// stepChannel is the channel of the policy's step named action ("" when
// the policy has no such step or it names none).
func stepChannel(dunning *policy.Dunning, action string) contactlimit.Channel {
	for _, s := range dunning.Steps {
		if s.Action == action {
			return contactlimit.Channel(s.Channel)
		}
	}
	return ""
}
