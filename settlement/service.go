package settlement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/debtor"
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
// item, the header and the event take three.
const maxLines = 97

// Service applies settlements.
type Service struct {
	kit      *kit.Kit
	tenants  *tenant.Service
	policies *policy.Service
	clock    clock.Clock

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
}

// NewService returns the settlement service.
func NewService(d Deps) *Service {
	return &Service{kit: d.Kit, tenants: d.Tenants, policies: d.Policies, clock: d.Clock,
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
	var out *Outcome
	err = s.retry().Retry(ctx, func(attempt int) (bool, error) {
		c, err := charges.LoadContract(ctx, db, t.ID, lk.DebtorKey, lk.ContractID)
		if err != nil {
			return false, err
		}
		if c == nil {
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
	stl := stlItem{PK: pk, SK: sk, Type: "SETTLEMENT", SettlementID: p.SettlementID, ChargeID: p.ChargeID, AmountCents: p.AmountCents,
		PaidAt: instant(p.PaidAt), ReceivedAt: keys.Timestamp(received), Outcome: OutcomeUnmatched, Reason: reason, Version: 1}
	stlAV, err := attributevalue.MarshalMap(stl)
	if err != nil {
		return nil, err
	}
	susp, err := attributevalue.MarshalMap(suspenseItem{PK: keys.Suspense(t.ID), SK: keys.Unmatched(received, p.SettlementID), Type: "SUSPENSE",
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

// write is one attempt's transaction and the record it commits.
type write struct {
	stl     stlItem
	actions []kit.Action
}

// prepare computes the payment on the contract as read and builds the
// transaction: the STL item (attribute_not_exists, action 0), the
// instalments and the header (each conditioned on the version read) and
// the event with the whole computation.
func (s *Service) prepare(ctx context.Context, t *tenant.Tenant, c *charges.Contract, lk charges.Lookup, p Payload, now time.Time) (*write, error) {
	h := c.Header
	cv, err := charges.PolicyVersion(h.ChargesPolicy)
	if err != nil {
		return nil, err
	}
	pol, err := s.policies.Charges(ctx, t, cv)
	if err != nil {
		return nil, err
	}
	dv, err := charges.PolicyVersion(h.DunningPolicy)
	if err != nil {
		return nil, err
	}
	dunning, err := s.policies.Dunning(ctx, t, dv)
	if err != nil {
		return nil, err
	}
	cal := t.Calendar()
	var open []charges.State
	byseq := map[int]charges.Installment{}
	for _, in := range c.Installments {
		byseq[in.Seq] = in
		if !debtor.IsOpen(in.Status) {
			continue
		}
		st, err := in.State()
		if err != nil {
			return nil, err
		}
		open = append(open, st)
	}
	payDate := calendar.Of(p.PaidAt, t.Location)
	alloc := Allocate(Request{Policy: pol, Calendar: cal, PayDate: payDate, AmountCents: p.AmountCents, TargetSeq: lk.Seq, Open: open, MaxLines: maxLines})
	today := calendar.Today(now, t.Location)
	if h.Status == debtor.StatusSettled {
		// A contract already paid off keeps the money as credit.
		alloc = Allocation{Lines: []Line{}, CreditCents: p.AmountCents}
	}
	ch := planContract(h, c.Installments, alloc, today, cal, dunning)
	if h.Status == debtor.StatusSettled {
		ch = ContractChange{Status: h.Status, StatusReason: h.StatusReason}
	}

	pk := keys.Debtor(t.ID, lk.DebtorKey)
	ts := keys.Timestamp(now)
	eventID := debtor.NewEventID()
	evSK := keys.Event(lk.ContractID, lk.Seq, now, eventID)
	spk, ssk := settlementKey(t.ID, p.SettlementID)
	stl := stlItem{PK: spk, SK: ssk, Type: "SETTLEMENT", SettlementID: p.SettlementID, ChargeID: p.ChargeID, AmountCents: p.AmountCents,
		PaidAt: instant(p.PaidAt), ReceivedAt: ts, Outcome: OutcomeApplied, DebtorKey: lk.DebtorKey, ContractID: lk.ContractID, Seq: lk.Seq,
		AppliedCents: alloc.AppliedCents, CreditCents: alloc.CreditCents, ContractStatus: ch.Status, EventSK: evSK, Version: 1}
	for _, l := range alloc.Lines {
		stl.AppliedTo = append(stl.AppliedTo, keys.Installment(lk.ContractID, l.Seq))
	}
	stlAV, err := attributevalue.MarshalMap(stl)
	if err != nil {
		return nil, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	actions := []kit.Action{kit.PutAction(stlAV, &notExists)}
	for _, l := range alloc.Lines {
		actions = append(actions, installmentUpdate(pk, lk.ContractID, byseq[l.Seq], l))
	}
	actions = append(actions, headerUpdate(t, pk, h, ch, alloc, p, ts))
	ev, err := attributevalue.MarshalMap(debtor.Event{PK: pk, SK: evSK, Type: "EVENT", EventID: eventID, EventType: EvSettlementApplied,
		ContractID: lk.ContractID, Seq: &lk.Seq, At: ts, ActorRole: "webhook",
		Details: eventDetails(p, payDate, h, pol, alloc, ch), Version: 1})
	if err != nil {
		return nil, err
	}
	actions = append(actions, kit.PutAction(ev, &notExists))
	return &write{stl: stl, actions: actions}, nil
}

// EvSettlementApplied is the event a settlement writes on the charged
// instalment's audit trail (AP09).
const EvSettlementApplied = "SettlementApplied"

func installmentUpdate(pk, contractID string, in charges.Installment, l Line) kit.Action {
	a := l.After
	upd := expression.Set(expression.Name("paidCents"), expression.Value(a.PaidCents)).
		Set(expression.Name("fineCents"), expression.Value(a.FineCents)).
		Set(expression.Name("lateInterestCents"), expression.Value(a.LateInterestCents)).
		Set(expression.Name("finePaidCents"), expression.Value(a.FinePaidCents)).
		Set(expression.Name("lateInterestPaidCents"), expression.Value(a.LateInterestPaidCents)).
		Set(expression.Name("version"), expression.Value(in.Version+1))
	if !a.ChargedThrough.IsZero() {
		upd = upd.Set(expression.Name("chargedThrough"), expression.Value(a.ChargedThrough.String()))
	}
	if l.Settled {
		upd = upd.Set(expression.Name("status"), expression.Value(debtor.InstPaid))
	}
	cond := expression.Name("version").Equal(expression.Value(in.Version))
	return kit.UpdateAction(kit.Key{PK: pk, SK: keys.Installment(contractID, in.Seq)}, upd, &cond)
}

// headerUpdate writes the new balance and delinquency facts, conditioned
// on the version read. Removing an index key attribute takes the contract
// out of that index in the same commit: GSI2PK (portfolio) when it is no
// longer late, GSI1PK/GSI1SK (agenda) when nothing is scheduled.
func headerUpdate(t *tenant.Tenant, pk string, h charges.Header, ch ContractChange, alloc Allocation, p Payload, ts string) kit.Action {
	name := expression.Name
	upd := expression.Set(name("outstandingCents"), expression.Value(ch.OutstandingCents)).
		Set(name("status"), expression.Value(ch.Status)).
		Set(name("statusReason"), expression.Value(ch.StatusReason)).
		Set(name("version"), expression.Value(h.Version+1)).
		Set(name("updatedAt"), expression.Value(ts))
	// The latest payment instant, whatever order the provider delivers in.
	if prev, err := time.Parse(time.RFC3339Nano, h.LastPaymentAt); err != nil || p.PaidAt.After(prev) {
		upd = upd.Set(name("lastPaymentAt"), expression.Value(instant(p.PaidAt)))
	}
	if alloc.CreditCents > 0 {
		upd = upd.Set(name("creditCents"), expression.Value(h.CreditCents+alloc.CreditCents))
	}
	if ch.OldestOverdueDueDate != "" {
		upd = upd.Set(name("oldestOverdueDueDate"), expression.Value(ch.OldestOverdueDueDate)).
			Set(name("bucket"), expression.Value(ch.Bucket)).
			Set(name("GSI2PK"), expression.Value(keys.Bucket(t.ID, ch.Bucket)))
	} else {
		upd = upd.Remove(name("oldestOverdueDueDate")).Remove(name("bucket")).Remove(name("GSI2PK"))
	}
	switch {
	case ch.KeepAgenda:
	case ch.NextAction != "":
		upd = upd.Set(name("nextAction"), expression.Value(ch.NextAction)).
			Set(name("nextActionDate"), expression.Value(ch.NextActionDate)).
			Set(name("GSI1PK"), expression.Value(keys.Agenda(t.ID, ch.NextActionDate, h.Shard))).
			Set(name("GSI1SK"), expression.Value(keys.AgendaEntry(ch.NextAction, h.ContractID)))
	default:
		upd = upd.Remove(name("nextAction")).Remove(name("nextActionDate")).Remove(name("GSI1PK")).Remove(name("GSI1SK"))
	}
	cond := name("version").Equal(expression.Value(h.Version))
	return kit.UpdateAction(kit.Key{PK: pk, SK: keys.Contract(h.ContractID)}, upd, &cond)
}

// eventDetails is the whole computation, so the payment can be proven
// years later: the policy version and rates, the pay date, and per
// instalment the days late, the base, the charges assessed, what was owed
// and how the money was split. Compact names keep the event within one
// write unit for the usual one-instalment payment.
func eventDetails(p Payload, payDate calendar.Date, h charges.Header, pol *policy.Charges, alloc Allocation, ch ContractChange) map[string]any {
	lines := make([]map[string]any, 0, len(alloc.Lines))
	for _, l := range alloc.Lines {
		lines = append(lines, map[string]any{
			"seq": l.Seq, "payableUntil": l.Assessment.PayableUntil.String(), "daysLate": l.Assessment.DaysLate,
			"accrualDays": l.Assessment.AccrualDays, "baseCents": l.Assessment.BaseCents,
			"fineCents": l.Assessment.FineCents, "lateInterestCents": l.Assessment.LateInterest,
			"owed": l.Owed, "paid": l.Paid, "settled": l.Settled,
		})
	}
	return map[string]any{
		"settlementId": p.SettlementID, "chargeId": p.ChargeID, "amountCents": p.AmountCents, "paidAt": instant(p.PaidAt),
		"payDate": payDate.String(), "chargesPolicy": h.ChargesPolicy, "finePercent": pol.View().FinePercent,
		"lateInterestMonthlyPercent": pol.View().LateInterestMonthlyPercent, "imputationOrder": pol.ImputationOrder,
		"lines": lines, "appliedCents": alloc.AppliedCents, "creditCents": alloc.CreditCents,
		"statusBefore": h.Status, "statusAfter": ch.Status, "outstandingBefore": h.OutstandingCents, "outstandingAfter": ch.OutstandingCents,
		"cured": ch.Cured,
	}
}

// retry is the conflict retry policy (ADR 0010): exponential backoff
// with full jitter from baseDelay, capped at maxDelay, maxAttempts calls.
func (s *Service) retry() kit.Backoff {
	return kit.Backoff{Attempts: s.maxAttempts, Base: s.baseDelay, Max: maxDelay}
}
