package agenda

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/arrangement"
	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/kit"
	"lastro/contactlimit"
	"lastro/contract"
	"lastro/contract/regua"
	"lastro/policy"
	"lastro/tenant"
)

// Event types the agenda writes on a contract's audit trail (AP09).
const (
	EvStepExecuted  = "StepExecuted"  // a régua step ran: its contact attempt, the steps it superseded
	EvStepBlocked   = "StepBlocked"   // the gateway refused the step's contact: rescheduled, or passed over (opt-out)
	EvCreditApplied = "CreditApplied" // contract credit paid an instalment that fell due
	EvBureauReport  = "BureauReported"
	EvBureauRemoved = "BureauRemoved"
	EvNoticeProof   = "NoticeDelivered" // delivery evidence of the bureau notice
	EvPromiseKept   = arrangement.EvPromiseKept
	EvPromiseBroken = arrangement.EvPromiseBroken
)

// actor is how the agenda signs the events it writes.
var actor = contract.Actor{Role: "system:agenda"}

// entry is one agenda index entry (GSI1's projection).
type entry struct {
	SK         string `dynamodbav:"GSI1SK"`
	DebtorKey  string `dynamodbav:"debtorKey"`
	ContractID string `dynamodbav:"contractId"`
	Action     string `dynamodbav:"nextAction"`
	Date       string `dynamodbav:"nextActionDate"`
}

func decodeEntry(it kit.Item) (entry, error) {
	var e entry
	if err := attributevalue.UnmarshalMap(it, &e); err != nil {
		return e, fmt.Errorf("agenda: decode entry: %w", err)
	}
	return e, nil
}

// outcome is what handling one entry did.
type outcome struct {
	executed []string
	blocked  contactlimit.Reason
	skipped  bool
	failed   bool
}

func (o outcome) count(rep *ShardReport) {
	for _, a := range o.executed {
		rep.Executed[a]++
	}
	if o.blocked != "" {
		rep.Blocked[string(o.blocked)]++
	}
	if o.skipped {
		rep.Skipped++
	}
	if o.failed {
		rep.Failed++
	}
}

// delivery is a contact the agenda reserved: its counter, evidence and
// outbox entry commit with the step's own write (ADR 0062), and it is
// delivered only after that write committed.
type delivery struct {
	res    *contactlimit.Reservation
	notice bool // a BUREAU_NOTICE: its delivery is the evidence the report waits for
}

// execute handles one entry: it reads the contract (strongly consistent),
// skips it when its next action is no longer due by the run date (paid or
// changed meanwhile), otherwise runs what is due — the bureau removal it
// owes, credit on instalments that fell due, the derivation a DUE_CHECK or
// BUCKET_MOVE stands for, and the régua step the régua says runs today —
// and writes the result with the next action, conditioned on the version
// read. A contact is reserved before that write and written with it (the
// day's counter, the PENDING evidence, the outbox entry): a payment that
// commits in between fails the whole write, so nothing of the contact is
// spent, and the contract is re-read. It is delivered after the commit;
// a crash before its outcome leaves the outbox entry for the dispatcher.
func (r *Runner) execute(ctx context.Context, t *tenant.Tenant, date calendar.Date, e entry, dels *contactlimit.Deletions) (outcome, error) {
	db := r.db(t)
	var out outcome
	limited := false // the last write failed on the day's contact limit
	err := conflicts.Retry(ctx, func(int) (bool, error) {
		// The charges come with the contract: a step's message names the
		// open one's Pix code (messageFacts), at no read of its own.
		c, err := contract.LoadAlso(ctx, db, t.ID, e.DebtorKey, e.ContractID, charges.ItemType)
		if err != nil {
			return false, err
		}
		if c != nil && c.Header.AgendaDate != "" && c.Header.AgendaDate <= date.String() && c.Header.NextActionDate > date.String() {
			// An entry a payment left in place while the plan moved later
			// (contract.RefreshAfterPayment): re-derived now, it moves to
			// the plan's date, nothing else done.
			dunning, err := r.dunning(ctx, t, c)
			if err != nil {
				return false, err
			}
			c.Refresh(date, c.Header.Calendar(t), dunning)
			out = outcome{skipped: true}
			err = r.save(ctx, db, c, r.d.Clock.Now(), nil)
			return changed(err), err
		}
		if c == nil || c.Header.NextAction == "" || c.Header.NextActionDate > date.String() {
			out = outcome{skipped: true}
			return false, nil
		}
		now := r.d.Clock.Now()
		if waiting(&c.Header, date, now) {
			// Its step waits for a window that opens later today on the
			// debtor's clock: the wake-up at that instant serves it.
			out = outcome{skipped: true}
			return false, nil
		}
		dunning, err := r.dunning(ctx, t, c)
		if err != nil {
			return false, err
		}
		w, err := r.work(ctx, t, c, dunning, date, now, limited)
		if err != nil {
			return false, err
		}
		if r.beforeSave != nil {
			r.beforeSave(e.ContractID)
		}
		// The write and what follows it happen even if the run is being
		// stopped: a write abandoned in flight may still commit, unknown to
		// the run's report, and a recorded step's message is sent now
		// rather than by the outbox's dispatcher later.
		after, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		err = r.save(after, db, c, now, w.events, w.writes...)
		if err == nil {
			out = w.out
			if w.report != nil {
				// Recorded first (reportedAt: the removal is owed when it is
				// cured), submitted after: a payment that lands in between
				// fails the write, and nothing reaches the bureau.
				if err := r.d.Bureau.Submit(after, t, *w.report); err != nil {
					return false, fmt.Errorf("bureau: %w", err)
				}
			}
			if w.send != nil {
				return false, r.deliver(after, t, date, c, *w.send, dels)
			}
			return false, nil
		}
		if w.reserved && contactlimit.LimitReached(err) {
			// The day's contacts ran out between the reservation and the
			// write, or another contract's step took the day's contact on
			// the channel: decided again, this time as blocked by LIMIT or
			// joined to that contact (contactlimit.Refuse).
			limited = true
			return true, err
		}
		return changed(err), err
	})
	return out, err
}

// conflicts is how often an action re-reads a contract that changed under
// it (a payment landing between the read and the write), or retries a
// write that collided with another transaction on the same debtor's
// counter (its contracts run at once: the counter is in every contact
// step's transaction, ADR 0062).
var conflicts = kit.Backoff{Attempts: 8, Base: 2 * time.Millisecond, Max: 100 * time.Millisecond}

// changed reports whether a write failed because the contract changed
// since it was read: worth a fresh read.
func changed(err error) bool {
	return errors.Is(err, kit.ErrConditionFailed) || errors.Is(err, kit.ErrConflict)
}

// dunning is the dunning policy version the contract was signed under.
func (r *Runner) dunning(ctx context.Context, t *tenant.Tenant, c *contract.Contract) (*policy.Dunning, error) {
	v, err := contract.PolicyVersion(c.Header.DunningPolicy)
	if err != nil {
		return nil, err
	}
	return r.d.Policies.Dunning(ctx, t, v)
}

// save writes the contract's changes, events and extra items (a
// promise's resolution) in one write.
func (r *Runner) save(ctx context.Context, db *kit.Tenant, c *contract.Contract, now time.Time, events []contract.Event, extra ...kit.Action) error {
	writes, err := c.Save(now)
	if err != nil {
		return err
	}
	writes = append(extra, writes...)
	for _, ev := range events {
		a, err := contract.PutEvent(ev)
		if err != nil {
			return err
		}
		writes = append(writes, a)
	}
	return db.Write(ctx, writes...)
}

// work is one attempt's changes to a contract.
type work struct {
	out    outcome
	events []contract.Event
	send   *delivery
	report *Record      // a bureau inclusion, submitted once the step is recorded
	writes []kit.Action // other items written with the contract (a promise resolved)
	// reserved says writes lead with a contact's reservation (a message's
	// or a call's): a failure of its first action is the day's counter.
	reserved bool
}

func (r *Runner) work(ctx context.Context, t *tenant.Tenant, c *contract.Contract, dunning *policy.Dunning, date calendar.Date, now time.Time, limited bool) (*work, error) {
	w, err := r.steps(ctx, t, c, dunning, date, now, limited)
	if err != nil {
		return nil, err
	}
	// A removal that became owed during this visit (credit or a kept
	// promise cured a reported contract) runs now, not on the next run.
	if h := &c.Header; h.NextAction == policy.BureauRemoval && h.NextActionDate <= date.String() && w.send == nil && w.report == nil {
		if err := r.removal(ctx, t, c, w, date, now); err != nil {
			return nil, err
		}
		c.Refresh(date, c.Header.Calendar(t), dunning)
	}
	// Likewise an update the bureau became owed during this visit (a
	// report whose amount changed since).
	if h := &c.Header; h.NextAction == policy.BureauUpdate && h.NextActionDate <= date.String() && w.report == nil {
		if err := r.update(ctx, t, c, w, date, now); err != nil {
			return nil, err
		}
		c.Refresh(date, c.Header.Calendar(t), dunning)
	}
	return w, nil
}

func (r *Runner) steps(ctx context.Context, t *tenant.Tenant, c *contract.Contract, dunning *policy.Dunning, date calendar.Date, now time.Time, limited bool) (*work, error) {
	w := &work{}
	h := &c.Header
	cal := c.Header.Calendar(t)
	due := h.NextAction
	if due == policy.BureauRemoval {
		if err := r.removal(ctx, t, c, w, date, now); err != nil {
			return nil, err
		}
	}
	if due == policy.BureauUpdate {
		if err := r.update(ctx, t, c, w, date, now); err != nil {
			return nil, err
		}
	}
	if due == policy.PromiseCheck && h.Hold == regua.HoldPromise && h.PromiseDate < date.String() {
		// The promised date came: kept when the payments it counted reach
		// its amount (or nothing is overdue any more), else broken; either
		// way the régua resumes at the step it is owed. The promise's write
		// is conditioned on it being open: a settlement that kept it
		// meanwhile fails this write, and the re-read sees no hold.
		p, err := arrangement.OpenPromise(ctx, r.db(t), c)
		if err != nil {
			return nil, err
		}
		c.Refresh(date, cal, dunning)
		res, err := arrangement.Check(c, p, date, c.Header.IsDelinquent(), now, actor)
		if err != nil {
			return nil, err
		}
		w.events = append(w.events, res.Event)
		w.writes = append(w.writes, res.Actions...)
	}
	if h.CreditCents > 0 {
		for _, l := range c.ApplyCredit(date, cal) {
			w.events = append(w.events, c.NewEvent(l.Seq, EvCreditApplied, now, actor, map[string]any{
				"seq": l.Seq, "interestCents": l.Interest, "principalCents": l.Principal, "settled": l.Settled,
				"creditLeft": h.CreditCents, "on": date.String()}))
		}
	}
	if h.Hold == regua.HoldAgreement && (due == policy.DueCheck || due == policy.BucketMove) {
		// The agreement's own check: effective once its down payment is
		// paid, lapsed when it was not by its date, broken when one of its
		// instalments is overdue past the policy's days (ADR 0027). The
		// agreement's write is conditioned on its status and version.
		a, err := arrangement.CurrentAgreement(ctx, r.db(t), c)
		if err != nil {
			return nil, err
		}
		evs, acts, err := arrangement.AgreementDue(c, a, date, cal, dunning, now, actor)
		if err != nil {
			return nil, err
		}
		w.events = append(w.events, evs...)
		w.writes = append(w.writes, acts...)
	}
	plan := c.Refresh(date, cal, dunning)
	if due == policy.DueCheck || due == policy.BucketMove || due == policy.PromiseCheck {
		w.out.executed = append(w.out.executed, due)
	}
	if h.Hold == regua.HoldDispute && policy.IsStep(due) {
		return w, r.disputed(ctx, t, c, w, due, date, now, dunning)
	}
	if plan.Step == nil || plan.Date != date {
		return w, nil
	}
	if policy.KindOf(*plan.Step) == policy.KindReport {
		return w, r.report(ctx, t, c, w, plan, date, now, dunning)
	}
	// What the step does follows from the step table (ADR 0066).
	return w, r.contact(ctx, t, c, w, plan, date, now, dunning, limited)
}

// record notes on the header that plan's step ran on date.
func record(c *contract.Contract, plan regua.Plan, date calendar.Date) {
	f := c.Facts(date, nil, nil)
	ex := f.Executed.Record(plan, date)
	if plan.Why == regua.WhyPreDue {
		// A reminder before the due date is not a step of a delinquency.
		c.Header.ReminderDue, c.Header.ReminderStep = ex.ReminderDue.String(), ex.ReminderStep
		return
	}
	c.Header.LastStep, c.Header.LastStepAt = ex.LastStep, ex.LastAt.String()
}

func skipped(p regua.Plan) []string {
	out := []string{}
	for _, s := range p.Skipped {
		out = append(out, s.Action)
	}
	return out
}

// report records the contract's report to the bureau (AP10), submitted
// once recorded: the régua only plans BUREAU_REPORT once a delivered
// notice is old enough (ADR 0014).
func (r *Runner) report(_ context.Context, t *tenant.Tenant, c *contract.Contract, w *work, plan regua.Plan, date calendar.Date, now time.Time, dunning *policy.Dunning) error {
	if r.d.Bureau == nil {
		return errors.New("agenda: no bureau configured for BUREAU_REPORT")
	}
	h := &c.Header
	// The inclusion carries what is overdue and its due date, not the
	// whole balance: only an overdue debt may be reported (ADR 0067).
	rec := Record{Kind: Inclusion, TenantID: t.ID, DebtorKey: h.DebtorKey, ContractID: h.ContractID, AmountCents: plan.OverdueCents,
		OldestOverdue: plan.OldestOverdue.String(), NoticeAt: h.NoticeAt, At: now.UTC().Format(time.RFC3339)}
	w.report = &rec
	record(c, plan, date)
	h.ReportedAt, h.ReportedCents = date.String(), rec.AmountCents
	c.Refresh(date, c.Header.Calendar(t), dunning)
	w.events = append(w.events, c.NewEvent(0, EvBureauReport, now, actor, map[string]any{
		"daysPastDue": plan.DaysPastDue, "amountCents": rec.AmountCents, "noticeAt": h.NoticeAt, "oldestOverdueDueDate": rec.OldestOverdue}))
	w.out.executed = append(w.out.executed, policy.BureauReport)
	return nil
}

// removal sends the bureau the removal a cured or settled contract is owed.
func (r *Runner) removal(ctx context.Context, t *tenant.Tenant, c *contract.Contract, w *work, date calendar.Date, now time.Time) error {
	if r.d.Bureau == nil {
		return errors.New("agenda: no bureau configured for BUREAU_REMOVAL")
	}
	h := &c.Header
	reason := "CURED"
	if h.Status == contract.StatusSettled {
		reason = "SETTLED"
	}
	rec := Record{Kind: Removal, TenantID: t.ID, DebtorKey: h.DebtorKey, ContractID: h.ContractID, ReportedAt: h.ReportedAt,
		Reason: reason, At: now.UTC().Format(time.RFC3339)}
	if err := r.d.Bureau.Submit(ctx, t, rec); err != nil {
		return fmt.Errorf("bureau: %w", err)
	}
	w.events = append(w.events, c.NewEvent(0, EvBureauRemoved, now, actor, map[string]any{"reportedAt": h.ReportedAt, "reason": reason, "on": date.String()}))
	h.ReportedAt = ""
	w.out.executed = append(w.out.executed, policy.BureauRemoval)
	return nil
}

// deliver sends a recorded contact right after its commit; its outbox
// entry's deletion joins the shard's batch dels (flushed by the run at
// every page). A delivered
// bureau notice is the evidence its report waits for: noticeAt is written
// on the contract before the outbox entry goes. A failure that may pass
// leaves the attempt PENDING for the dispatcher.
func (r *Runner) deliver(ctx context.Context, t *tenant.Tenant, date calendar.Date, c *contract.Contract, d delivery, dels *contactlimit.Deletions) error {
	var sent func(context.Context, contactlimit.Attempt) error
	if d.notice {
		sent = func(ctx context.Context, a contactlimit.Attempt) error {
			return r.noticeDelivered(ctx, t, c.Header.DebtorKey, c.Header.ContractID, date, a.AttemptID)
		}
	}
	got, err := r.d.Contacts.DeliverReserved(ctx, t, d.res.Pending, sent, dels)
	if err != nil {
		// The step and its attempt are recorded: the dispatcher finishes
		// the delivery. Only the run's own stop is the run's concern.
		r.d.Logger.WarnContext(ctx, "agenda contact left to the dispatcher", "tenant", t.ID, "contract", c.Header.ContractID, "error", err.Error())
		return nil
	}
	if o := got.Attempt.Outcome; o != contactlimit.OutcomeSent && !got.Skipped {
		r.d.Logger.WarnContext(ctx, "agenda contact not delivered", "tenant", t.ID, "contract", c.Header.ContractID,
			"outcome", o, "detail", got.Attempt.OutcomeDetail)
	}
	return nil
}

// noticeDelivered writes the notice's delivery evidence on the contract
// and replans it: with the evidence the régua plans the report. It runs
// again after a crash before the outbox entry was deleted, so evidence
// already there for that date is left as it is.
func (r *Runner) noticeDelivered(ctx context.Context, t *tenant.Tenant, dk, contractID string, date calendar.Date, attemptID string) error {
	db := r.db(t)
	return conflicts.Retry(ctx, func(int) (bool, error) {
		c, err := contract.Load(ctx, db, t.ID, dk, contractID)
		if err != nil || c == nil {
			return false, err
		}
		dunning, err := r.dunning(ctx, t, c)
		if err != nil {
			return false, err
		}
		if !c.Header.IsDelinquent() {
			return false, nil // paid meanwhile: the notice proves nothing for a later delinquency
		}
		if c.Header.NoticeAt == date.String() {
			return false, nil // recorded before a crash
		}
		now := r.d.Clock.Now()
		c.Header.NoticeAt = date.String()
		c.Refresh(date, c.Header.Calendar(t), dunning)
		err = r.save(ctx, db, c, now, []contract.Event{c.NewEvent(0, EvNoticeProof, now, actor, map[string]any{"attemptId": attemptID, "on": date.String()})})
		return changed(err), err
	})
}

// disputed records the régua step that came due on a disputed contract as
// blocked: its contact goes to the gateway marked disputed, so the
// evidence says DISPUTE, and a bureau report is never submitted (CDC art.
// 43). The contract was already replanned without the step by Refresh.
func (r *Runner) disputed(ctx context.Context, t *tenant.Tenant, c *contract.Contract, w *work, action string, date calendar.Date, now time.Time,
	dunning *policy.Dunning) error {
	h := &c.Header
	details := map[string]any{"action": action, "reason": string(contactlimit.ReasonDispute), "outcome": "PAUSED", "disputeId": h.HoldID}
	if action != policy.BureauReport && stepChannel(dunning, action) != "" {
		claim := contactlimit.Claim{DebtorKey: h.DebtorKey, ContractID: h.ContractID, Channel: stepChannel(dunning, action), Template: action,
			Action: action, At: now, Disputed: true, Actor: actor, AmountCents: h.OutstandingCents, DueDate: h.OldestOverdueDueDate}
		a, err := r.d.Contacts.Claim(ctx, t, claim)
		if err != nil {
			return fmt.Errorf("claim contact: %w", err)
		}
		details["attemptId"], details["reason"] = a.AttemptID, string(a.Reason)
		if a.Allowed {
			// The gateway refuses every disputed claim; an allowed one would
			// be a bug there, and is cancelled rather than sent.
			if _, err := r.d.Contacts.Record(ctx, t, a, contactlimit.OutcomeFailed, "contract_disputed"); err != nil {
				return err
			}
		}
		w.out.blocked = a.Reason
	} else {
		w.out.blocked = contactlimit.ReasonDispute
	}
	w.events = append(w.events, c.NewEvent(0, EvStepBlocked, now, actor, details))
	return nil
}
