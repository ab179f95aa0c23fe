package arrangement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/google/uuid"

	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/contract/regua"
	"lastro/policy"
	"lastro/tenant"
)

// Agreement statuses (ADR 0027). SIGNED until its down payment settles
// (EFFECTIVE) or is not paid by its date (LAPSED: the renegotiated
// instalments are restored); an EFFECTIVE agreement whose instalment is
// overdue past the policy's agreementBreakDays is BROKEN. Every change is
// conditioned on the status and version read, so it happens exactly once.
const (
	AgreementSigned    = "SIGNED"
	AgreementEffective = "EFFECTIVE"
	AgreementLapsed    = "LAPSED"
	AgreementBroken    = "BROKEN"
)

// Agreement events: AgreementSigned (seq 0) with InstallmentRenegotiated
// under each renegotiated instalment, and the agreement's resolutions.
const (
	EvAgreementSigned         = "AgreementSigned"
	EvInstallmentRenegotiated = "InstallmentRenegotiated"
	EvAgreementEffective      = "AgreementEffective"
	EvAgreementLapsed         = "AgreementLapsed"
	EvInstallmentRestored     = "InstallmentRestored"
	EvAgreementBroken         = "AgreementBroken"
)

// Status reasons an agreement writes on the header.
const (
	ReasonAgreementSigned = "AGREEMENT_SIGNED"
)

// TypeAgreement is the agreement item's type.
const TypeAgreement = "AGREEMENT"

// MaxRenegotiated is the most overdue instalments one agreement
// renegotiates: their updates and events go in the transaction that
// commits the header (2 actions each, with the header, the agreement and
// its event), so only the new instalments are chunked (ADR 0027).
const MaxRenegotiated = 48

// AgreementInput is the body of POST .../agreements.
type AgreementInput struct {
	DownPaymentCents int64  `json:"downPaymentCents"`
	Installments     int    `json:"installments"`
	FirstDueDate     string `json:"firstDueDate"`
}

// Renegotiated is one overdue instalment as the agreement computed it at
// its date: the base and the late charges made fact, and what the
// instalment held before (restored if the agreement lapses).
type Renegotiated struct {
	Seq               int    `dynamodbav:"seq" json:"seq"`
	DueDate           string `dynamodbav:"dueDate" json:"dueDate"`
	DaysLate          int    `dynamodbav:"daysLate" json:"daysLate"`
	BaseCents         int64  `dynamodbav:"baseCents" json:"baseCents"`
	FineCents         int64  `dynamodbav:"fineCents" json:"fineCents"`
	LateInterestCents int64  `dynamodbav:"lateInterestCents" json:"lateInterestCents"`
	TotalCents        int64  `dynamodbav:"totalCents" json:"totalCents"`

	BeforeFine           int64  `dynamodbav:"beforeFine" json:"-"`
	BeforeLateInterest   int64  `dynamodbav:"beforeLateInterest" json:"-"`
	BeforeChargedThrough string `dynamodbav:"beforeChargedThrough,omitempty" json:"-"`
}

// ScheduleLine is one instalment of the agreement's schedule.
type ScheduleLine struct {
	Seq         int    `dynamodbav:"seq" json:"seq"`
	DueDate     string `dynamodbav:"dueDate" json:"dueDate"`
	AmountCents int64  `dynamodbav:"amountCents" json:"amountCents"`
	DownPayment bool   `dynamodbav:"downPayment,omitempty" json:"downPayment,omitempty"`
	Status      string `dynamodbav:"-" json:"status,omitempty"` // the instalment's, on read
}

// Agreement is the agreement item CT#<c>#AG#<id>: its terms and the whole
// computation, fixed when signed (its lists never grow).
type Agreement struct {
	PK               string         `dynamodbav:"PK" json:"-"`
	SK               string         `dynamodbav:"SK" json:"-"`
	Type             string         `dynamodbav:"type" json:"-"`
	AgreementID      string         `dynamodbav:"agreementId" json:"agreementId"`
	ContractID       string         `dynamodbav:"contractId" json:"contractId"`
	Status           string         `dynamodbav:"status" json:"status"`
	AgreedOn         string         `dynamodbav:"agreedOn" json:"agreedOn"`
	ChargesPolicy    string         `dynamodbav:"chargesPolicy" json:"chargesPolicy"`
	DownPaymentCents int64          `dynamodbav:"downPaymentCents" json:"downPaymentCents"`
	DownPaymentSeq   int            `dynamodbav:"downPaymentSeq" json:"downPaymentSeq"`
	Installments     int            `dynamodbav:"installments" json:"installments"`
	FirstDueDate     string         `dynamodbav:"firstDueDate" json:"firstDueDate"`
	Renegotiated     []Renegotiated `dynamodbav:"renegotiated" json:"renegotiated"`
	TotalCents       int64          `dynamodbav:"totalCents" json:"totalCents"`
	Schedule         []ScheduleLine `dynamodbav:"schedule" json:"schedule"`
	CreatedAt        string         `dynamodbav:"createdAt" json:"createdAt"`
	ResolvedAt       string         `dynamodbav:"resolvedAt,omitempty" json:"resolvedAt,omitempty"`
	ResolvedBy       string         `dynamodbav:"resolvedBy,omitempty" json:"resolvedBy,omitempty"`
	Version          int            `dynamodbav:"version" json:"-"`

	// Answers of the creation only.
	Charge       *charges.Issued `dynamodbav:"-" json:"downPaymentCharge,omitempty"`
	Transactions int             `dynamodbav:"-" json:"transactions,omitempty"`

	read int
}

func decodeAgreement(it kit.Item) (*Agreement, error) {
	var a Agreement
	if err := attributevalue.UnmarshalMap(it, &a); err != nil {
		return nil, fmt.Errorf("decode agreement: %w", err)
	}
	a.read = a.Version
	return &a, nil
}

// write is the Put of the agreement as changed: a new one only if absent,
// an existing one only at the version and status read.
func (a *Agreement) write(readStatus string) (kit.Action, error) {
	a.Version = a.read + 1
	it, err := attributevalue.MarshalMap(a)
	if err != nil {
		return kit.Action{}, fmt.Errorf("marshal agreement: %w", err)
	}
	cond := expression.AttributeNotExists(expression.Name("PK"))
	if a.read > 0 {
		cond = expression.Name("version").Equal(expression.Value(a.read)).And(expression.Name("status").Equal(expression.Value(readStatus)))
	}
	return kit.PutAction(it, &cond), nil
}

// CurrentAgreement reads the agreement behind c's AGREEMENT hold, strongly
// consistent; nil when the contract holds none.
func CurrentAgreement(ctx context.Context, db *kit.Tenant, c *contract.Contract) (*Agreement, error) {
	h := &c.Header
	if h.Hold != regua.HoldAgreement || h.HoldID == "" {
		return nil, nil
	}
	it, err := db.Get(ctx, kit.Key{PK: h.PK, SK: keys.Agreement(h.ContractID, h.HoldID)}, true)
	if err != nil {
		return nil, fmt.Errorf("read agreement: %w", err)
	}
	if it == nil {
		return nil, nil
	}
	return decodeAgreement(it)
}

var errAgreementNotFound = errs.E(errs.NotFound, "agreement_not_found", "agreement not found")

// MakeAgreement renegotiates the contract's overdue instalments into a
// down payment and in.Installments new instalments (ADR 0027): the
// overdue instalments become RENEGOTIATED with their late charges made
// fact today under the contract's charges policy; the agreement item, the
// new instalments, the header (IN_AGREEMENT, hold AGREEMENT) and the
// events commit together — chunked, header last, when they exceed one
// transaction. The down payment's Pix charge is issued once committed.
func (s *Service) MakeAgreement(ctx context.Context, t *tenant.Tenant, dk, contractID string, in AgreementInput, actor contract.Actor) (*Agreement, error) {
	ctx = kit.Within(ctx, "arrangement.agreement")
	first, err := calendar.Parse(in.FirstDueDate)
	if err != nil {
		return nil, errs.E(errs.Invalid, "invalid_first_due_date", "firstDueDate must be a date YYYY-MM-DD")
	}
	if in.DownPaymentCents <= 0 {
		return nil, errs.E(errs.Invalid, "invalid_down_payment", "downPaymentCents must be a positive number of cents")
	}
	if in.Installments < 0 || in.Installments > contract.MaxInstallments {
		return nil, errs.E(errs.Invalid, "invalid_installments", "installments must be 0-%d", contract.MaxInstallments)
	}
	if !keys.ValidDebtorKey(dk) {
		return nil, errInvalidDebtorKey
	}
	if !keys.ValidIdentifier(contractID) {
		return nil, errInvalidContractID
	}
	db := s.db(t)
	var out *Agreement
	err = conflicts.Retry(ctx, func(int) (bool, error) {
		c, err := contract.Load(ctx, db, t.ID, dk, contractID)
		if err != nil {
			return false, err
		}
		if c == nil {
			return false, errNotFound
		}
		a, actions, err := s.agreement(ctx, t, c, first, in, actor)
		if err != nil {
			return false, err
		}
		txs, err := writeChunked(ctx, db, actions)
		if errors.Is(err, kit.ErrConditionFailed) || errors.Is(err, kit.ErrConflict) {
			return true, err
		}
		if err != nil {
			return false, err
		}
		a.Transactions = txs
		out = a
		return false, nil
	})
	if errors.Is(err, kit.ErrAttemptsExhausted) {
		return nil, errContended
	}
	if err != nil {
		return nil, err
	}
	if s.charges != nil {
		// The renegotiated instalments' Pix charges would now pay a debt
		// the agreement replaced: removed at the PSP, best effort, before
		// the down payment's charge is issued (ADR 0048).
		var seqs []int
		for _, r := range out.Renegotiated {
			seqs = append(seqs, r.Seq)
		}
		if len(seqs) > 0 {
			s.charges.Supersede(ctx, t, dk, contractID, seqs, "")
		}
		// The agreement is committed and its answer must say so: a charge
		// that cannot be issued now (a payment already settled the down
		// payment, a store error) is left out of the answer and issued
		// through POST /v1/charges for the down payment's seq.
		if ch, err := s.charges.Issue(ctx, t, charges.Input{DebtorKey: dk, ContractID: contractID, Seq: out.DownPaymentSeq, Method: charges.PIX}); err == nil {
			out.Charge = ch
		}
	}
	return out, nil
}

// agreement decides the agreement on c as read and builds its writes:
// the new instalments' Puts first (movable to earlier chunks), then the
// rest (renegotiated instalments, agreement, events, header last).
func (s *Service) agreement(ctx context.Context, t *tenant.Tenant, c *contract.Contract, first calendar.Date, in AgreementInput,
	actor contract.Actor) (*Agreement, agreementWrites, error) {
	var w agreementWrites
	h := &c.Header
	now := s.clock.Now()
	cal := h.Calendar(t)
	today := calendar.Today(now, t.Location)
	switch {
	case h.Status == contract.StatusSettled || h.Status == contract.StatusWrittenOff:
		return nil, w, errClosed
	case h.Status == contract.StatusInAgreement:
		return nil, w, errs.E(errs.Conflict, "contract_in_agreement", "the contract already is in an agreement")
	case h.Hold != "":
		return nil, w, errs.E(errs.Conflict, "contract_on_hold", "the contract is on hold (%s)", h.Hold)
	case !first.After(today):
		return nil, w, errs.E(errs.Rule, "first_due_date_not_future", "firstDueDate must be after today (%s)", today)
	}
	var overdue []*contract.Installment
	for i := range c.Installments {
		if inst := &c.Installments[i]; inst.Open() && cal.IsOverdue(inst.Due(), today) {
			overdue = append(overdue, inst)
		}
	}
	switch {
	case len(overdue) == 0:
		return nil, w, errs.E(errs.Rule, "nothing_overdue", "the contract has no overdue instalment to renegotiate")
	case len(overdue) > MaxRenegotiated:
		return nil, w, errs.E(errs.Rule, "too_many_overdue", "an agreement renegotiates at most %d overdue instalments", MaxRenegotiated)
	case len(c.Installments)+1+in.Installments > contract.MaxInstallments:
		return nil, w, errs.E(errs.Rule, "too_many_installments", "the contract would exceed %d instalments", contract.MaxInstallments)
	}
	v, err := contract.PolicyVersion(h.ChargesPolicy)
	if err != nil {
		return nil, w, err
	}
	pol, err := s.policies.Charges(ctx, t, v)
	if err != nil {
		return nil, w, err
	}
	dv, err := contract.PolicyVersion(h.DunningPolicy)
	if err != nil {
		return nil, w, err
	}
	dunning, err := s.policies.Dunning(ctx, t, dv)
	if err != nil {
		return nil, w, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, w, err
	}
	a := &Agreement{PK: h.PK, SK: keys.Agreement(h.ContractID, id.String()), Type: TypeAgreement, AgreementID: id.String(),
		ContractID: h.ContractID, Status: AgreementSigned, AgreedOn: today.String(), ChargesPolicy: h.ChargesPolicy,
		DownPaymentCents: in.DownPaymentCents, Installments: in.Installments, FirstDueDate: first.String(), CreatedAt: keys.Timestamp(now)}
	var events []contract.Event
	for _, inst := range overdue {
		as, owed := charges.AmountDue(pol, cal, charges.StateOf(inst), today)
		r := Renegotiated{Seq: inst.Seq, DueDate: inst.DueDate, DaysLate: as.DaysLate, BaseCents: as.BaseCents, FineCents: owed.Fine,
			LateInterestCents: owed.LateInterest, TotalCents: owed.Total(),
			BeforeFine: inst.FineCents, BeforeLateInterest: inst.LateInterestCents, BeforeChargedThrough: inst.ChargedThrough}
		a.Renegotiated = append(a.Renegotiated, r)
		a.TotalCents += r.TotalCents
		// The late charges become fact at the agreement date.
		inst.FineCents += as.FineCents
		inst.LateInterestCents += as.LateInterest
		inst.ChargedThrough = today.String()
		inst.Status = contract.InstRenegotiated
		events = append(events, c.NewEvent(inst.Seq, EvInstallmentRenegotiated, now, actor, map[string]any{"agreementId": a.AgreementID,
			"agreedOn": a.AgreedOn, "chargesPolicy": h.ChargesPolicy, "daysLate": r.DaysLate, "baseCents": r.BaseCents,
			"fineCents": r.FineCents, "lateInterestCents": r.LateInterestCents, "totalCents": r.TotalCents}))
	}
	rest := a.TotalCents - in.DownPaymentCents
	switch {
	case rest < 0:
		return nil, w, errs.E(errs.Rule, "down_payment_exceeds_debt", "downPaymentCents %d is more than the renegotiated debt %d", in.DownPaymentCents, a.TotalCents)
	case rest > 0 && in.Installments == 0:
		return nil, w, errs.E(errs.Rule, "agreement_does_not_cover_debt", "no instalments after a down payment of %d leave %d of the debt %d uncovered",
			in.DownPaymentCents, rest, a.TotalCents)
	case rest == 0 && in.Installments > 0:
		return nil, w, errs.E(errs.Rule, "nothing_to_split", "the down payment covers the debt: installments must be 0")
	case in.Installments > 0 && rest < int64(in.Installments):
		return nil, w, errs.E(errs.Rule, "installments_below_one_cent", "%d cents cannot be split into %d instalments", rest, in.Installments)
	}
	// The down payment is an instalment of its own, due on the agreement
	// date, so settlement pays it like any other and its DUE_CHECK decides
	// whether the agreement took effect or lapsed (ADR 0027).
	seq := c.Installments[len(c.Installments)-1].Seq + 1
	a.DownPaymentSeq = seq
	add := func(seq int, due calendar.Date, cents int64, down bool) {
		c.Installments = append(c.Installments, contract.Installment{PK: h.PK, SK: keys.Installment(h.ContractID, seq), Type: contract.TypeInstallment,
			Seq: seq, OriginalDueDate: due.String(), DueDate: due.String(), PrincipalCents: cents, Status: contract.InstOpen, AgreementID: a.AgreementID})
		a.Schedule = append(a.Schedule, ScheduleLine{Seq: seq, DueDate: due.String(), AmountCents: cents, DownPayment: down})
	}
	add(seq, today, in.DownPaymentCents, true)
	for i := range in.Installments {
		cents := rest / int64(in.Installments)
		if i == in.Installments-1 {
			cents = rest - cents*int64(in.Installments-1)
		}
		add(seq+1+i, first.AddMonths(i), cents, false)
	}
	h.Status, h.StatusReason = contract.StatusInAgreement, ReasonAgreementSigned
	h.Hold, h.HoldID, h.PromiseDate = regua.HoldAgreement, a.AgreementID, ""
	// The delinquency the agreement renegotiates is kept aside: a break
	// resumes it from its oldest due date without replaying its steps,
	// while an instalment outside the agreement that falls due during it
	// is a delinquency of its own, dunned from the first step (ADR 0068).
	for _, inst := range overdue {
		if h.DelinquentSince == "" || inst.DueDate < h.DelinquentSince {
			h.DelinquentSince = inst.DueDate
		}
	}
	h.PriorLastStep, h.PriorNoticeAt = max(h.PriorLastStep, h.LastStep), h.NoticeAt
	h.LastStep, h.LastStepAt, h.NoticeAt, h.NoticeSkippedAt = 0, "", "", ""
	h.OldestOverdueDueDate, h.Bucket = "", "" // out of the portfolio: the agreement is what is owed
	plan := c.Refresh(today, cal, dunning)
	saved, err := c.Save(now)
	if err != nil {
		return nil, w, err
	}
	n := c.Added()
	w.added, w.header = saved[:n], saved[len(saved)-1]
	w.rest = append(w.rest, saved[n:len(saved)-1]...)
	ag, err := a.write("")
	if err != nil {
		return nil, w, err
	}
	w.rest = append(w.rest, ag)
	events = append(events, c.NewEvent(0, EvAgreementSigned, now, actor, map[string]any{"agreementId": a.AgreementID,
		"agreedOn": a.AgreedOn, "chargesPolicy": h.ChargesPolicy, "renegotiated": len(a.Renegotiated), "totalCents": a.TotalCents,
		"downPaymentCents": a.DownPaymentCents, "downPaymentSeq": a.DownPaymentSeq, "installments": a.Installments,
		"firstDueDate": a.FirstDueDate, "nextAction": h.NextAction, "nextActionDate": h.NextActionDate, "nextActionWhy": plan.Why}))
	for _, ev := range events {
		act, err := contract.PutEvent(ev)
		if err != nil {
			return nil, w, err
		}
		w.rest = append(w.rest, act)
	}
	w.headerKey, w.readVersion = kit.Key{PK: h.PK, SK: h.SK}, h.Version
	return a, w, nil
}

// agreementWrites are an agreement's writes: the new instalments, which
// may go ahead in chunks, and what must commit with the header.
type agreementWrites struct {
	added       []kit.Action
	rest        []kit.Action
	header      kit.Action
	headerKey   kit.Key
	readVersion int
}

const maxActions = 100

// writeChunked writes w in one transaction, or — when it exceeds one —
// the new instalments first in chunks, each checking the header is still
// at the version read, and the header last with everything else (ADR
// 0027). Chunks of a commit that then fails stay past the header's
// instalment count, invisible to Load, and are overwritten by the retry.
func writeChunked(ctx context.Context, db *kit.Tenant, w agreementWrites) (int, error) {
	added := w.added
	final := len(w.rest) + 1
	if final > maxActions {
		return 0, errs.E(errs.Rule, "agreement_too_large", "the agreement needs %d writes in its commit; at most %d", final, maxActions)
	}
	txs := 0
	same := expression.Name("version").Equal(expression.Value(w.readVersion))
	for final+len(added) > maxActions {
		n := min(maxActions-1, len(added)-(maxActions-final))
		actions := append([]kit.Action{kit.CheckAction(w.headerKey, same)}, added[:n]...)
		if err := db.Transact(ctx, actions...); err != nil {
			return txs, fmt.Errorf("agreement chunk: %w", err)
		}
		txs++
		added = added[n:]
	}
	actions := append(append(append([]kit.Action{}, added...), w.rest...), w.header)
	if err := db.Transact(ctx, actions...); err != nil {
		return txs, fmt.Errorf("agreement: %w", err)
	}
	return txs + 1, nil
}

// GetAgreement answers GET .../agreements/{id}: the terms, the
// computation, the schedule with each instalment's status, and the
// agreement's status.
func (s *Service) GetAgreement(ctx context.Context, t *tenant.Tenant, dk, contractID, agreementID string) (*Agreement, error) {
	if !keys.ValidDebtorKey(dk) {
		return nil, errInvalidDebtorKey
	}
	if !keys.ValidIdentifier(contractID) {
		return nil, errInvalidContractID
	}
	if !keys.ValidIdentifier(agreementID) {
		return nil, errAgreementNotFound
	}
	db := s.db(t)
	it, err := db.Get(ctx, kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.Agreement(contractID, agreementID)}, true)
	if err != nil {
		return nil, fmt.Errorf("read agreement: %w", err)
	}
	if it == nil {
		return nil, errAgreementNotFound
	}
	a, err := decodeAgreement(it)
	if err != nil {
		return nil, err
	}
	c, err := contract.Load(ctx, db, t.ID, dk, contractID)
	if err != nil {
		return nil, err
	}
	if c != nil {
		for i := range a.Schedule {
			if inst := c.Installment(a.Schedule[i].Seq); inst != nil {
				a.Schedule[i].Status = inst.Status
			}
		}
	}
	return a, nil
}

// OnAgreementPayment makes the contract's agreement EFFECTIVE in the
// settlement transaction that pays its down payment: the agreement's
// write is conditioned on SIGNED and its version, so a DUE_CHECK that
// lapsed it meanwhile fails the settlement instead of being overwritten.
// Nil actions when there is nothing to do.
func OnAgreementPayment(c *contract.Contract, a *Agreement, settlementID string, now time.Time) ([]kit.Action, error) {
	if a == nil || a.Status != AgreementSigned {
		return nil, nil
	}
	dp := c.Installment(a.DownPaymentSeq)
	if dp == nil || dp.Status != contract.InstPaid {
		return nil, nil
	}
	return a.resolve(c, AgreementEffective, "settlement", now, contract.Actor{Role: "webhook"}, map[string]any{"settlementId": settlementID})
}

func (a *Agreement) resolve(c *contract.Contract, status, by string, now time.Time, actor contract.Actor, details map[string]any) ([]kit.Action, error) {
	readStatus := a.Status
	a.Status, a.ResolvedAt, a.ResolvedBy = status, keys.Timestamp(now), by
	w, err := a.write(readStatus)
	if err != nil {
		return nil, err
	}
	kind := map[string]string{AgreementEffective: EvAgreementEffective, AgreementLapsed: EvAgreementLapsed, AgreementBroken: EvAgreementBroken}[status]
	d := map[string]any{"agreementId": a.AgreementID, "by": by, "downPaymentSeq": a.DownPaymentSeq}
	for k, v := range details {
		d[k] = v
	}
	ev, err := contract.PutEvent(c.NewEvent(0, kind, now, actor, d))
	if err != nil {
		return nil, err
	}
	return []kit.Action{w, ev}, nil
}

// AgreementDue is the agreement's part of a DUE_CHECK on date, for the
// agenda's write: a paid down payment makes it EFFECTIVE (when the
// settlement did not); an unpaid one past its payable date LAPSES it — the
// agreement's open instalments CANCELLED, the renegotiated ones restored
// to OPEN with the charges they held, the hold lifted so the régua
// resumes; an EFFECTIVE agreement with an instalment overdue past the
// policy's agreementBreakDays (any instalment the contract still owes)
// BREAKS — the hold lifted, the contract back
// in collection with what it still owes. The caller refreshes and saves.
func AgreementDue(c *contract.Contract, a *Agreement, date calendar.Date, cal *calendar.Calendar, dunning *policy.Dunning,
	now time.Time, actor contract.Actor) ([]contract.Event, []kit.Action, error) {
	if a == nil {
		return nil, nil, nil
	}
	h := &c.Header
	// release hands the contract back to the régua. A lapse or a break
	// resumes the delinquency the agreement interrupted: measured from its
	// original oldest due date (the header's DelinquentSince), with the
	// steps it had run, so none is replayed (ADR 0068).
	release := func(bool) {
		h.Status, h.StatusReason = contract.StatusInCollection, contract.ReasonOldestOverdue
		h.Hold, h.HoldID, h.PromiseDate = "", "", ""
		h.LastStep = max(h.LastStep, h.PriorLastStep)
		if h.NoticeAt == "" {
			h.NoticeAt = h.PriorNoticeAt
		}
		h.PriorLastStep, h.PriorNoticeAt = 0, ""
	}
	var actions []kit.Action
	if a.Status == AgreementSigned {
		dp := c.Installment(a.DownPaymentSeq)
		switch {
		case dp == nil:
			return nil, nil, fmt.Errorf("agreement %s: down payment instalment %d missing", a.AgreementID, a.DownPaymentSeq)
		case dp.Status == contract.InstPaid:
			acts, err := a.resolve(c, AgreementEffective, "check", now, actor, map[string]any{"on": date.String()})
			if err != nil {
				return nil, nil, err
			}
			actions = append(actions, acts...)
			a.read, a.Status = a.Version, AgreementEffective
		case date.After(cal.Adjust(dp.Due())):
			var events []contract.Event
			for _, l := range a.Schedule {
				if inst := c.Installment(l.Seq); inst != nil && inst.Open() {
					inst.Status = contract.InstCancelled
				}
			}
			for _, r := range a.Renegotiated {
				inst := c.Installment(r.Seq)
				if inst == nil || inst.Status != contract.InstRenegotiated {
					continue
				}
				inst.Status, inst.FineCents, inst.LateInterestCents, inst.ChargedThrough = contract.InstOpen, r.BeforeFine, r.BeforeLateInterest, r.BeforeChargedThrough
				events = append(events, c.NewEvent(r.Seq, EvInstallmentRestored, now, actor, map[string]any{"agreementId": a.AgreementID, "on": date.String()}))
			}
			release(false)
			acts, err := a.resolve(c, AgreementLapsed, "check", now, actor, map[string]any{"on": date.String(), "downPaymentDueDate": dp.DueDate})
			if err != nil {
				return nil, nil, err
			}
			return events, append(actions, acts...), nil
		}
	}
	if a.Status != AgreementEffective {
		return nil, actions, nil
	}
	// The break is measured on the agreement's own instalments (its
	// schedule): an instalment outside it that falls due meanwhile is
	// dunned by the régua instead (ADR 0068).
	for _, l := range a.Schedule {
		inst := c.Installment(l.Seq)
		if inst == nil || !inst.Open() {
			continue
		}
		if late := date.Sub(cal.Adjust(inst.Due())); late > dunning.AgreementBreak() {
			release(true)
			acts, err := a.resolve(c, AgreementBroken, "check", now, actor, map[string]any{"on": date.String(), "seq": inst.Seq,
				"daysLate": late, "agreementBreakDays": dunning.AgreementBreak()})
			if err != nil {
				return nil, nil, err
			}
			// An EFFECTIVE resolved in this same check is superseded by the
			// break: one write of the item.
			if len(actions) > 0 {
				a.read = a.Version - 2
				w, err := a.write(AgreementSigned)
				if err != nil {
					return nil, nil, err
				}
				actions[0], acts = w, acts[1:]
			}
			return nil, append(actions, acts...), nil
		}
	}
	return nil, actions, nil
}
