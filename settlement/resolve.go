package settlement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/charges"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/tenant"
)

// EvSettlementResolved is the contract-level event (seq 0) of a
// suspended settlement assigned to one of the contract's charges: who
// assigned it and what had arrived, next to the SettlementApplied events
// on the instalments the money moved.
const EvSettlementResolved = "SettlementResolved"

// Resolver is who assigns a suspended settlement: the role and request
// id recorded on the event (never personal data).
type Resolver struct {
	Role      string
	RequestID string
}

// Resolution is the answer of a resolve: the settlement's outcome, as
// applied the first time, and the charge it was assigned to.
type Resolution struct {
	Outcome
	ResolvedChargeID string `json:"resolvedChargeId"`
	ResolvedAt       string `json:"resolvedAt"`
	UnmatchedReason  string `json:"unmatchedReason"`
}

// resolution is what a resolve adds to the STL item. ChargeID stays the
// charge the provider sent, so a late redelivery of the original webhook
// still matches the record and answers already_applied.
type resolution struct {
	ResolvedChargeID string `dynamodbav:"resolvedChargeId"`
	ResolvedAt       string `dynamodbav:"resolvedAt"`
	UnmatchedReason  string `dynamodbav:"unmatchedReason"`
}

var (
	errSettlementNotFound = errs.E(errs.NotFound, "settlement_not_found", "settlement not found")
	errChargeNotFound     = errs.E(errs.NotFound, "charge_not_found", "charge not found")
	errContractNotFound   = errs.E(errs.NotFound, "contract_not_found", "the charge's contract was not found")
	errAlreadyApplied     = errs.E(errs.Conflict, "settlement_already_applied", "this settlement was applied when it arrived: there is nothing to resolve")
	errResolvedElsewhere  = errs.E(errs.Conflict, "settlement_already_resolved", "this settlement was already assigned to another charge")
	errInvalidSettlement  = errs.E(errs.Invalid, "invalid_settlement_id", "settlementId must be 1-64 of A-Z a-z 0-9 - _ .")
	errInvalidCharge      = errs.E(errs.Invalid, "invalid_charge_id", "chargeId must be 1-64 of A-Z a-z 0-9 - _ .")
	errResolveTooLarge    = errs.E(errs.Rule, "resolve_too_large", "this payment touches too many instalments to resolve in one transaction")
	errReversed           = errs.E(errs.Rule, "settlement_reversed", "this suspended payment was refunded to the payer, in whole or in part (a Pix refund): it is left for review, not applied")
)

// maxActions is DynamoDB's limit of actions in one transaction.
const maxActions = 100

// Resolve applies a suspended (UNMATCHED) settlement to chargeID exactly
// once. One transaction replaces the STL record (conditioned on it still
// being UNMATCHED at the version read), closes the suspense entry
// (deleted, conditioned on existing) and applies the payment as the
// webhook would (prepare: instalments, header, events), plus a
// SettlementResolved event. A second resolve to the same charge answers
// the first outcome; to another charge, or of a settlement applied when
// it arrived, 409; an unknown settlement, charge or contract, 404.
func (s *Service) Resolve(ctx context.Context, t *tenant.Tenant, settlementID, chargeID string, by Resolver) (*Resolution, error) {
	if !keys.ValidIdentifier(settlementID) {
		return nil, errInvalidSettlement
	}
	if !keys.ValidIdentifier(chargeID) {
		return nil, errInvalidCharge
	}
	ctx = kit.Within(ctx, "settlement.resolve")
	db := s.db(t)
	var out *Resolution
	err := s.retry().Retry(ctx, func(attempt int) (bool, error) {
		stl, res, raw, err := s.record(ctx, db, t, settlementID)
		if err != nil {
			return false, err
		}
		switch {
		case stl.Outcome == OutcomeApplied && res.ResolvedChargeID == "":
			return false, errAlreadyApplied
		case stl.Outcome == OutcomeApplied && res.ResolvedChargeID != chargeID:
			return false, errResolvedElsewhere
		case stl.Outcome == OutcomeApplied:
			out = &Resolution{Outcome: *stl.outcome(StatusAlreadyApplied), ResolvedChargeID: res.ResolvedChargeID,
				ResolvedAt: res.ResolvedAt, UnmatchedReason: res.UnmatchedReason}
			return false, nil
		case stl.Outcome != OutcomeUnmatched:
			return false, fmt.Errorf("settlement: record %s has outcome %q", settlementID, stl.Outcome)
		case stl.ReversedCents > 0:
			return false, errReversed
		}
		actions, resolved, err := s.resolveActions(ctx, t, stl, raw, chargeID, by)
		if err != nil {
			return false, err
		}
		if s.beforeWrite != nil {
			s.beforeWrite(attempt)
		}
		err = db.Transact(ctx, actions...)
		if err == nil {
			out = resolved
			return false, nil
		}
		if errors.Is(err, kit.ErrThrottled) || errs.Is(err, errs.Transient) {
			return false, err
		}
		if errors.Is(err, kit.ErrConditionFailed) || errors.Is(err, kit.ErrConflict) {
			// Another resolve, or a write on the contract, came first:
			// read everything again.
			return true, nil
		}
		return false, fmt.Errorf("settlement: resolve: %w", err)
	})
	if errors.Is(err, kit.ErrAttemptsExhausted) {
		return nil, errContended
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// record reads the STL item, strongly consistent, with its resolution;
// errSettlementNotFound when there is none.
func (s *Service) record(ctx context.Context, db *kit.Tenant, t *tenant.Tenant, settlementID string) (*stlItem, *resolution, kit.Item, error) {
	stl, it, err := s.stlRecord(ctx, db, t, settlementID)
	if err != nil {
		return nil, nil, nil, err
	}
	if stl == nil {
		return nil, nil, nil, errSettlementNotFound
	}
	var res resolution
	if err := attributevalue.UnmarshalMap(it, &res); err != nil {
		return nil, nil, nil, fmt.Errorf("settlement: decode record: %w", err)
	}
	return stl, &res, it, nil
}

// resolveActions builds the resolve's transaction from prepare's: its
// action 0 (the STL put for a new settlement) is replaced by the put of
// the resolved record over the UNMATCHED one, and the suspense entry's
// delete and the resolution event are added.
func (s *Service) resolveActions(ctx context.Context, t *tenant.Tenant, old *stlItem, oldItem kit.Item, chargeID string, by Resolver) ([]kit.Action, *Resolution, error) {
	db := s.db(t)
	it, err := db.Get(ctx, kit.Key{PK: keys.Charge(t.ID, chargeID), SK: keys.ChargeSK}, true)
	if err != nil {
		return nil, nil, fmt.Errorf("settlement: find charge: %w", err)
	}
	if it == nil {
		return nil, nil, errChargeNotFound
	}
	var lk charges.Lookup
	if err := attributevalue.UnmarshalMap(it, &lk); err != nil {
		return nil, nil, fmt.Errorf("settlement: decode charge: %w", err)
	}
	paidAt, err := time.Parse(time.RFC3339Nano, old.PaidAt)
	if err != nil {
		return nil, nil, fmt.Errorf("settlement: recorded paidAt: %w", err)
	}
	received, err := time.Parse(time.RFC3339Nano, old.ReceivedAt)
	if err != nil {
		return nil, nil, fmt.Errorf("settlement: recorded receivedAt: %w", err)
	}
	c, err := contract.Load(ctx, db, t.ID, lk.DebtorKey, lk.ContractID)
	if err != nil {
		return nil, nil, err
	}
	if c == nil {
		return nil, nil, errContractNotFound
	}
	now := s.clock.Now()
	// The payment is computed as if it had arrived for this charge: on its
	// own payment instant, against the charge's quote.
	w, err := s.prepare(ctx, t, c, lk, Payload{SettlementID: old.SettlementID, ChargeID: chargeID, AmountCents: old.AmountCents, PaidAt: paidAt}, now)
	if err != nil {
		return nil, nil, err
	}
	if len(w.actions)+2 > maxActions {
		return nil, nil, errResolveTooLarge
	}
	stl := w.stl
	stl.ChargeID, stl.ReceivedAt, stl.Version = old.ChargeID, old.ReceivedAt, old.Version+1
	res := resolution{ResolvedChargeID: chargeID, ResolvedAt: keys.Timestamp(now), UnmatchedReason: old.Reason}
	stlAV, err := attributevalue.MarshalMap(stl)
	if err != nil {
		return nil, nil, err
	}
	resAV, err := attributevalue.MarshalMap(res)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range resAV {
		stlAV[k] = v
	}
	stillUnmatched := expression.Name("outcome").Equal(expression.Value(OutcomeUnmatched)).
		And(expression.Name("version").Equal(expression.Value(old.Version)))
	exists := expression.AttributeExists(expression.Name("PK"))
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	seq0 := 0
	evID := contract.NewEventID()
	ev, err := attributevalue.MarshalMap(contract.Event{PK: keys.Debtor(t.ID, lk.DebtorKey), SK: keys.Event(lk.ContractID, 0, now, evID),
		Type: contract.TypeEvent, EventID: evID, EventType: EvSettlementResolved, ContractID: lk.ContractID, Seq: &seq0,
		At: keys.Timestamp(now), ActorRole: by.Role, RequestID: by.RequestID, Version: 1,
		Details: map[string]any{"settlementId": old.SettlementID, "unmatchedChargeId": old.ChargeID, "unmatchedReason": old.Reason,
			"chargeId": chargeID, "chargedSeq": lk.Seq, "amountCents": old.AmountCents, "paidAt": old.PaidAt, "receivedAt": old.ReceivedAt,
			"appliedCents": stl.AppliedCents, "creditCents": stl.CreditCents}})
	if err != nil {
		return nil, nil, err
	}
	actions := append([]kit.Action{kit.PutAction(stlAV, &stillUnmatched)}, w.actions[1:]...)
	actions = append(actions,
		kit.DeleteAction(kit.Key{PK: keys.Suspense(t.ID), SK: keys.Unmatched(received, old.SettlementID)}, &exists),
		kit.PutAction(ev, &notExists))
	return actions, &Resolution{Outcome: *stl.outcome(StatusApplied), ResolvedChargeID: chargeID, ResolvedAt: res.ResolvedAt,
		UnmatchedReason: old.Reason}, nil
}
