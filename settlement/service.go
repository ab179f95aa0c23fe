package settlement

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/arrangement"
	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/policy"
	"lastro/tenant"
)

// Retry policy for version conflicts (ADR 0010): a conflict means another
// writer changed the contract between our read and our write, so the
// payment is recomputed from fresh reads. Attempts are bounded so a
// contended contract answers 503 (the provider retries later) instead of
// holding a request; the backoff is exponential with full jitter so
// concurrent deliveries of the same contract spread out.
const (
	DefaultMaxAttempts = 6
	DefaultBaseDelay   = 4 * time.Millisecond
	maxDelay           = 200 * time.Millisecond
)

// maxLines keeps a transaction within DynamoDB's 100 actions: the STL
// item and the header, per instalment touched its update and its event,
// and an open promise's write and its PromiseKept event, or (never both: a
// contract in an agreement takes no promise) the agreement made EFFECTIVE
// and its event (2 + 2k + 2 ≤ 100).
const maxLines = 48

// Service applies settlements.
type Service struct {
	kit      *kit.Kit
	tenants  *tenant.Service
	policies *policy.Service
	clock    clock.Clock
	// charges reads Pix charges back from their PSP and cancels those a
	// settlement superseded; nil: neither (no PSPs).
	charges *charges.Service

	maxAttempts int
	baseDelay   time.Duration
	// beforeWrite, when set, runs between the reads and the transaction of
	// every attempt: tests use it to force interleavings.
	beforeWrite func(attempt int)
}

// Deps are what the service needs.
type Deps struct {
	Kit      *kit.Kit
	Tenants  *tenant.Service
	Policies *policy.Service
	Clock    clock.Clock
	// Charges, when set, lets reconcile read a Pix charge back from its
	// PSP and a settlement cancel the Pix charges it made pointless.
	Charges *charges.Service
}

// NewService returns the settlement service.
func NewService(d Deps) *Service {
	return &Service{kit: d.Kit, tenants: d.Tenants, policies: d.Policies, clock: d.Clock, charges: d.Charges,
		maxAttempts: DefaultMaxAttempts, baseDelay: DefaultBaseDelay}
}

func (s *Service) db(t *tenant.Tenant) *kit.Tenant { return s.kit.Tenant(t.ID, t.CursorKey()) }

var (
	errReused = errs.E(errs.Conflict, "settlement_id_reused",
		"this settlementId was already recorded with another charge, amount or payment instant; nothing was changed")
	errContended = errs.E(errs.Transient, "settlement_contended", "the contract is changing concurrently; retry")
)

// Apply records a settlement exactly once: applied to the charge's
// contract, recorded as UNMATCHED when the charge is unknown, or answered
// with the first outcome when the settlement id was seen before.
func (s *Service) Apply(ctx context.Context, t *tenant.Tenant, p Payload) (*Outcome, error) {
	ctx = kit.Within(ctx, "settlement.apply")
	db := s.db(t)
	received := s.clock.Now()
	// AP06: the charge by its lookup item, strongly consistent — an index
	// could still miss a charge created a second ago.
	it, err := db.Get(ctx, kit.Key{PK: keys.Charge(t.ID, p.ChargeID), SK: keys.ChargeSK}, true)
	if err != nil {
		return nil, fmt.Errorf("settlement: find charge: %w", err)
	}
	if it == nil {
		return s.unmatched(ctx, t, p, received, ReasonChargeNotFound)
	}
	var lk charges.Lookup
	if err := attributevalue.UnmarshalMap(it, &lk); err != nil {
		return nil, fmt.Errorf("settlement: decode charge: %w", err)
	}
	if reason := implausible(p, lk, received); reason != "" {
		return s.unmatched(ctx, t, p, received, reason)
	}
	var out *Outcome
	err = s.retry().Retry(ctx, func(attempt int) (bool, error) {
		c, err := contract.Load(ctx, db, t.ID, lk.DebtorKey, lk.ContractID)
		if err != nil {
			return false, err
		}
		if c == nil {
			// A debtor-key rotation may have moved the debtor after the
			// lookup was read (docs/adr/0075): follow it once.
			to, err := contract.MovedTo(ctx, db, t.ID, lk.DebtorKey)
			if err != nil {
				return false, err
			}
			if to != "" && to != lk.DebtorKey {
				lk.DebtorKey = to
				return true, nil
			}
			out, err = s.unmatched(ctx, t, p, received, ReasonContractNotFound)
			return false, err
		}
		w, err := s.prepare(ctx, t, c, lk, p, received)
		if err != nil {
			return false, err
		}
		if s.beforeWrite != nil {
			s.beforeWrite(attempt)
		}
		err = db.Transact(ctx, w.actions...)
		if err == nil {
			out = w.stl.outcome(StatusApplied)
			return false, nil
		}
		done, first, err := s.settled(ctx, t, p, err)
		out = first
		// Not done: a version conflict or a concurrent transaction, read again.
		return !done, err
	})
	if errors.Is(err, kit.ErrAttemptsExhausted) {
		return nil, errContended
	}
	if err != nil {
		return nil, err
	}
	s.cancelSuperseded(ctx, t, out, lk.DebtorKey)
	return out, nil
}

// settled interprets a failed transaction: the STL item already exists
// (a duplicate: answer the first outcome), a transient failure (503), or
// a conflict worth another attempt (done false).
func (s *Service) settled(ctx context.Context, t *tenant.Tenant, p Payload, err error) (bool, *Outcome, error) {
	var tc *kit.TxCanceled
	if errors.As(err, &tc) && tc.Failed(0) {
		out, err := s.duplicate(ctx, t, p, tc)
		return true, out, err
	}
	if errors.Is(err, kit.ErrThrottled) || errs.Is(err, errs.Transient) {
		return true, nil, err
	}
	if errors.Is(err, kit.ErrConditionFailed) || errors.Is(err, kit.ErrConflict) {
		return false, nil, nil
	}
	return true, nil, fmt.Errorf("settlement: apply: %w", err)
}

// duplicate answers a settlement whose STL item exists: already_applied
// with the first outcome, or 409 when the id came back with other facts.
func (s *Service) duplicate(ctx context.Context, t *tenant.Tenant, p Payload, tc *kit.TxCanceled) (*Outcome, error) {
	var old kit.Item
	if len(tc.Items) > 0 {
		old = tc.Items[0]
	}
	if old == nil {
		pk, sk := settlementKey(t.ID, p.SettlementID)
		var err error
		if old, err = s.db(t).Get(ctx, kit.Key{PK: pk, SK: sk}, true); err != nil {
			return nil, fmt.Errorf("settlement: read first outcome: %w", err)
		}
		if old == nil {
			return nil, errContended
		}
	}
	var first stlItem
	if err := attributevalue.UnmarshalMap(old, &first); err != nil {
		return nil, fmt.Errorf("settlement: decode first outcome: %w", err)
	}
	paidAt, _ := time.Parse(time.RFC3339Nano, first.PaidAt)
	if first.ChargeID != p.ChargeID || first.AmountCents != p.AmountCents || !paidAt.Equal(p.PaidAt) {
		return nil, errReused
	}
	return first.outcome(StatusAlreadyApplied), nil
}

// unmatched records a settlement whose charge (or contract) is unknown:
// the STL item with outcome UNMATCHED and a suspense entry, in one
// transaction. Money is never dropped.
func (s *Service) unmatched(ctx context.Context, t *tenant.Tenant, p Payload, received time.Time, reason string) (*Outcome, error) {
	pk, sk := settlementKey(t.ID, p.SettlementID)
	stl := stlItem{PK: pk, SK: sk, Type: TypeSettlement, SettlementID: p.SettlementID, ChargeID: p.ChargeID, AmountCents: p.AmountCents,
		PaidAt: instant(p.PaidAt), ReceivedAt: keys.Timestamp(received), Outcome: OutcomeUnmatched, Reason: reason, Bank: p.Bank, Version: 1}
	stlAV, err := attributevalue.MarshalMap(stl)
	if err != nil {
		return nil, err
	}
	susp, err := attributevalue.MarshalMap(suspenseItem{PK: keys.Suspense(t.ID), SK: keys.Unmatched(received, p.SettlementID), Type: TypeSuspense,
		SettlementID: p.SettlementID, ChargeID: p.ChargeID, AmountCents: p.AmountCents, PaidAt: stl.PaidAt, ReceivedAt: stl.ReceivedAt,
		Reason: reason, Version: 1})
	if err != nil {
		return nil, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	var out *Outcome
	err = s.retry().Retry(ctx, func(int) (bool, error) {
		err := s.db(t).Transact(ctx, kit.PutAction(stlAV, &notExists), kit.PutAction(susp, &notExists))
		if err == nil {
			out = stl.outcome(StatusUnmatched)
			return false, nil
		}
		done, first, err := s.settled(ctx, t, p, err)
		out = first
		return !done, err
	})
	if errors.Is(err, kit.ErrAttemptsExhausted) {
		return nil, errContended
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// maxFuture is how far after its reception a payment instant may be: a
// provider's clock ahead of ours, or a frozen demo clock (LASTRO_NOW), is
// tolerated up to a day; a payment dated later than that is a wrong
// payload, kept in suspense rather than refused, so the money is never
// dropped.
const maxFuture = 24 * time.Hour

// implausible says why a settlement's payment instant cannot be applied
// to its charge ("" when it can): paid before the charge existed, or in
// the future. Such a settlement goes to suspense with the reason.
func implausible(p Payload, lk charges.Lookup, received time.Time) string {
	if created, err := time.Parse(time.RFC3339Nano, lk.CreatedAt); err == nil && p.PaidAt.Before(created.Truncate(time.Second)) {
		return ReasonPaidBeforeCharge
	}
	if p.PaidAt.After(received.Add(maxFuture)) {
		return ReasonPaidInFuture
	}
	return ""
}

// write is one attempt's transaction and the record it commits.
type write struct {
	stl     stlItem
	actions []kit.Action
}

// prepare computes the payment on the contract as read and builds the
// transaction: the STL item (attribute_not_exists, action 0), the
// instalments touched and the header (each conditioned on the version
// read, through contract.Save) and one event under each instalment
// touched, with the whole computation, so AP09 of any of them shows the
// payment (docs/design.md#settlement-transaction).
func (s *Service) prepare(ctx context.Context, t *tenant.Tenant, c *contract.Contract, lk charges.Lookup, p Payload, now time.Time) (*write, error) {
	h := &c.Header
	before := *h
	cv, err := contract.PolicyVersion(h.ChargesPolicy)
	if err != nil {
		return nil, err
	}
	pol, err := s.policies.Charges(ctx, t, cv)
	if err != nil {
		return nil, err
	}
	dv, err := contract.PolicyVersion(h.DunningPolicy)
	if err != nil {
		return nil, err
	}
	dunning, err := s.policies.Dunning(ctx, t, dv)
	if err != nil {
		return nil, err
	}
	cal := c.Header.Calendar(t)
	var open []charges.State
	for i := range c.Installments {
		if in := &c.Installments[i]; in.Open() {
			open = append(open, charges.StateOf(in))
		}
	}
	payDate := calendar.Of(p.PaidAt, t.Location)
	req := Request{Policy: pol, Calendar: cal, PayDate: payDate, AmountCents: p.AmountCents, TargetSeq: lk.Seq, Open: open, MaxLines: maxLines}
	// A quote covers its instalment only while that instalment is open.
	target := c.Installment(lk.Seq)
	quoted := quoteHonoured(lk, p) && target != nil && target.Open()
	if quoted {
		req.QuoteDate, _ = calendar.Parse(lk.ComputedFor)
	}
	alloc := Allocate(req)
	if h.Status == contract.StatusSettled {
		// A contract already paid off keeps the money as credit.
		alloc = Allocation{Lines: []Line{}, CreditCents: p.AmountCents}
	}
	for _, l := range alloc.Lines {
		in := c.Installment(l.Seq)
		a := l.After
		in.PaidCents, in.FineCents, in.LateInterestCents = a.PaidCents, a.FineCents, a.LateInterestCents
		in.FinePaidCents, in.LateInterestPaidCents = a.FinePaidCents, a.LateInterestPaidCents
		in.InterestPaidCents += l.Paid.Interest
		if !a.ChargedThrough.IsZero() {
			in.ChargedThrough = a.ChargedThrough.String()
		}
		if l.Settled {
			in.Status = contract.InstPaid
		}
	}
	h.CreditCents += alloc.CreditCents
	// The latest payment instant, whatever order the provider delivers in.
	if prev, err := time.Parse(time.RFC3339Nano, h.LastPaymentAt); err != nil || p.PaidAt.After(prev) {
		h.LastPaymentAt = instant(p.PaidAt)
	}
	// The contract's open promise counts the payment in this transaction,
	// conditioned on the promise still being open (ADR 0026).
	promise, err := arrangement.OpenPromise(ctx, s.db(t), c)
	if err != nil {
		return nil, err
	}
	kept, err := arrangement.OnPayment(c, promise, arrangement.Payment{SettlementID: p.SettlementID, PaidAt: p.PaidAt, PayDate: payDate,
		AmountCents: p.AmountCents}, now)
	if err != nil {
		return nil, err
	}
	// The payment of an agreement's down payment makes it EFFECTIVE in
	// this transaction, conditioned on it still being SIGNED (ADR 0027).
	agreement, err := arrangement.CurrentAgreement(ctx, s.db(t), c)
	if err != nil {
		return nil, err
	}
	effective, err := arrangement.OnAgreementPayment(c, agreement, p.SettlementID, now)
	if err != nil {
		return nil, err
	}
	today := calendar.Today(now, t.Location)
	if kept.Kept {
		// The PROMISE_CHECK entry must go: the whole plan is re-derived.
		c.Refresh(today, cal, dunning)
	} else {
		c.RefreshAfterPayment(today, cal, dunning)
	}
	cured := before.OldestOverdueDueDate != "" && h.OldestOverdueDueDate == ""

	pk := keys.Debtor(t.ID, lk.DebtorKey)
	ts := keys.Timestamp(now)
	spk, ssk := settlementKey(t.ID, p.SettlementID)
	stl := stlItem{PK: spk, SK: ssk, Type: TypeSettlement, SettlementID: p.SettlementID, ChargeID: p.ChargeID, AmountCents: p.AmountCents,
		PaidAt: instant(p.PaidAt), ReceivedAt: ts, Outcome: OutcomeApplied, DebtorKey: lk.DebtorKey, ContractID: lk.ContractID, Seq: lk.Seq,
		AppliedCents: alloc.AppliedCents, CreditCents: alloc.CreditCents, ContractStatus: h.Status, QuoteHonoured: quoted, Bank: p.Bank, Version: 1}
	for _, l := range alloc.Lines {
		stl.AppliedTo = append(stl.AppliedTo, Applied{Seq: l.Seq, Cents: l.Paid.Total(), Settled: l.Settled})
		stl.Paid = append(stl.Paid, contract.PaidLine{Seq: l.Seq, Fine: l.Paid.Fine, LateInterest: l.Paid.LateInterest,
			Interest: l.Paid.Interest, Principal: l.Paid.Principal})
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	summary := map[string]any{
		"settlementId": p.SettlementID, "chargeId": p.ChargeID, "chargedSeq": lk.Seq, "amountCents": p.AmountCents, "paidAt": instant(p.PaidAt),
		"payDate": payDate.String(), "quoteHonoured": quoted, "chargesPolicy": h.ChargesPolicy, "finePercent": pol.View().FinePercent,
		"lateInterestMonthlyPercent": pol.View().LateInterestMonthlyPercent, "imputationOrder": pol.ImputationOrder,
		"appliedCents": alloc.AppliedCents, "creditCents": alloc.CreditCents, "statusBefore": before.Status, "statusAfter": h.Status,
		"statusReason": h.StatusReason, "outstandingBefore": before.OutstandingCents, "outstandingAfter": h.OutstandingCents, "cured": cured,
	}
	var events []kit.Item
	event := func(seq int, details map[string]any) error {
		id := contract.NewEventID()
		ev, err := attributevalue.MarshalMap(contract.Event{PK: pk, SK: keys.Event(lk.ContractID, seq, now, id), Type: contract.TypeEvent,
			EventID: id, EventType: EvSettlementApplied, ContractID: lk.ContractID, Seq: &seq, At: ts, ActorRole: "webhook",
			Details: details, Version: 1})
		events = append(events, ev)
		return err
	}
	for _, l := range alloc.Lines {
		d := maps.Clone(summary)
		d["line"] = lineDetails(l)
		if err := event(l.Seq, d); err != nil {
			return nil, err
		}
	}
	if len(alloc.Lines) == 0 {
		// Nothing owed took the money (a contract paid off): the event is
		// the contract's own.
		if err := event(0, summary); err != nil {
			return nil, err
		}
	}
	stlAV, err := attributevalue.MarshalMap(stl)
	if err != nil {
		return nil, err
	}
	writes, err := c.Save(now)
	if err != nil {
		return nil, err
	}
	actions := append([]kit.Action{kit.PutAction(stlAV, &notExists)}, writes...)
	for _, ev := range events {
		actions = append(actions, kit.PutAction(ev, &notExists))
	}
	actions = append(actions, kept.Actions...)
	actions = append(actions, effective...)
	return &write{stl: stl, actions: actions}, nil
}

// quoteHonoured reports whether a payment pays its charge's quote: at
// least the quoted amount, within the charge's validity.
func quoteHonoured(lk charges.Lookup, p Payload) bool {
	_, expires, _, err := lk.Quote()
	return err == nil && p.AmountCents >= lk.AmountCents && !p.PaidAt.After(expires)
}

// EvSettlementApplied is the event a settlement writes on the audit trail
// (AP09) of every instalment it touched.
const EvSettlementApplied = "SettlementApplied"

// lineDetails is what the payment did to one instalment: the days late,
// the base, the charges assessed, what was owed and how the money was
// split. Compact, so each event stays within one write unit.
func lineDetails(l Line) map[string]any {
	return map[string]any{
		"seq": l.Seq, "assessedOn": l.Assessment.PayDate.String(), "payableUntil": l.Assessment.PayableUntil.String(),
		"daysLate": l.Assessment.DaysLate, "accrualDays": l.Assessment.AccrualDays, "baseCents": l.Assessment.BaseCents,
		"fineCents": l.Assessment.FineCents, "lateInterestCents": l.Assessment.LateInterest,
		"owed": l.Owed, "paid": l.Paid, "settled": l.Settled,
	}
}

// retry is the conflict retry policy (ADR 0010): exponential backoff
// with full jitter from baseDelay, capped at maxDelay, maxAttempts calls.
func (s *Service) retry() kit.Backoff {
	return kit.Backoff{Attempts: s.maxAttempts, Base: s.baseDelay, Max: maxDelay}
}
