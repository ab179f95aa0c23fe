package arrangement

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/google/uuid"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/contract/regua"
	"lastro/policy"
	"lastro/tenant"
)

// Dispute statuses.
const (
	DisputeOpen     = "OPEN"
	DisputeResolved = "RESOLVED"
)

// Event types of disputes and write-off (seq 0).
const (
	EvDisputeOpened   = "DisputeOpened"
	EvDisputeResolved = "DisputeResolved"
	EvWrittenOff      = "WrittenOff"
)

// TypeDispute is the dispute item's type.
const TypeDispute = "DISPUTE"

// Dispute is a debtor's contestation of a contract, CT#<c>#DSP#<id>:
// while open the contract holds DISPUTE (no régua step, no contact, no
// bureau report) until a supervisor resolves it.
type Dispute struct {
	PK         string `dynamodbav:"PK" json:"-"`
	SK         string `dynamodbav:"SK" json:"-"`
	Type       string `dynamodbav:"type" json:"-"`
	DisputeID  string `dynamodbav:"disputeId" json:"disputeId"`
	ContractID string `dynamodbav:"contractId" json:"contractId"`
	Reason     string `dynamodbav:"reason" json:"reason"`
	Status     string `dynamodbav:"status" json:"status"`
	Outcome    string `dynamodbav:"outcome,omitempty" json:"outcome,omitempty"`
	OpenedAt   string `dynamodbav:"openedAt" json:"openedAt"`
	ResolvedAt string `dynamodbav:"resolvedAt,omitempty" json:"resolvedAt,omitempty"`
	Version    int    `dynamodbav:"version" json:"-"`
}

// DisputeInput is the body of POST .../disputes.
type DisputeInput struct {
	Reason string `json:"reason"`
}

// ResolveInput is the body of POST .../disputes/{id}/resolve.
type ResolveInput struct {
	Outcome string `json:"outcome"`
}

// OpenDispute opens a dispute: the DSP item, the contract's DISPUTE hold
// and a DisputeOpened event in one transaction. The régua pauses; the
// step already on the agenda stays there when it comes first, so its day
// leaves the evidence of a contact refused with reason DISPUTE.
func (s *Service) OpenDispute(ctx context.Context, t *tenant.Tenant, dk, contractID string, in DisputeInput, actor contract.Actor) (*Dispute, error) {
	ctx = kit.Within(ctx, "arrangement.dispute")
	if err := validCode("reason", in.Reason); err != nil {
		return nil, err
	}
	var out *Dispute
	err := s.change(ctx, t, dk, contractID, func(c *contract.Contract, dunning *policy.Dunning, now time.Time) ([]kit.Action, error) {
		h := &c.Header
		switch {
		case h.Status == contract.StatusSettled || h.Status == contract.StatusWrittenOff:
			return nil, errClosed
		case h.Hold == regua.HoldDispute:
			return nil, errs.E(errs.Conflict, "dispute_open", "the contract already has an open dispute")
		case h.Hold == regua.HoldPromise:
			return nil, errs.E(errs.Conflict, "promise_open", "the contract has an open promise; it is kept or broken first")
		case h.Hold != "":
			return nil, errs.E(errs.Conflict, "contract_on_hold", "the contract is on hold (%s)", h.Hold)
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, err
		}
		d := &Dispute{PK: h.PK, SK: keys.Dispute(h.ContractID, id.String()), Type: TypeDispute, DisputeID: id.String(), ContractID: h.ContractID,
			Reason: in.Reason, Status: DisputeOpen, OpenedAt: keys.Timestamp(now), Version: 1}
		before := *h
		h.Hold, h.HoldID = regua.HoldDispute, d.DisputeID
		c.Refresh(calendar.Today(now, t.Location), c.Header.Calendar(t), dunning)
		if policy.IsStep(before.NextAction) && (h.NextAction == "" || before.NextActionDate <= h.NextActionDate) {
			h.NextAction, h.NextActionDate = before.NextAction, before.NextActionDate
		}
		da, err := putNew(d)
		if err != nil {
			return nil, err
		}
		ev, err := contract.PutEvent(c.NewEvent(0, EvDisputeOpened, now, actor, map[string]any{"disputeId": d.DisputeID, "reason": d.Reason}))
		if err != nil {
			return nil, err
		}
		out = d
		return []kit.Action{da, ev}, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ResolveDispute closes an open dispute with the supervisor's outcome and
// lifts the contract's DISPUTE hold: the régua resumes at the step it is
// owed, in the same transaction as the dispute's write and its event.
func (s *Service) ResolveDispute(ctx context.Context, t *tenant.Tenant, dk, contractID, disputeID string, in ResolveInput, actor contract.Actor) (*Dispute, error) {
	ctx = kit.Within(ctx, "arrangement.resolve-dispute")
	if !keys.ValidIdentifier(disputeID) {
		return nil, errs.E(errs.Invalid, "invalid_dispute_id", "disputeId must be 1-64 of A-Z a-z 0-9 - _ .")
	}
	if err := validCode("outcome", in.Outcome); err != nil {
		return nil, err
	}
	var out *Dispute
	err := s.change(ctx, t, dk, contractID, func(c *contract.Contract, dunning *policy.Dunning, now time.Time) ([]kit.Action, error) {
		h := &c.Header
		it, err := s.db(t).Get(ctx, kit.Key{PK: h.PK, SK: keys.Dispute(h.ContractID, disputeID)}, true)
		if err != nil {
			return nil, fmt.Errorf("read dispute: %w", err)
		}
		if it == nil {
			return nil, errs.E(errs.NotFound, "dispute_not_found", "dispute not found")
		}
		var d Dispute
		if err := attributevalue.UnmarshalMap(it, &d); err != nil {
			return nil, fmt.Errorf("decode dispute: %w", err)
		}
		if d.Status != DisputeOpen {
			return nil, errs.E(errs.Conflict, "dispute_resolved", "the dispute was already resolved")
		}
		read := d.Version
		d.Status, d.Outcome, d.ResolvedAt, d.Version = DisputeResolved, in.Outcome, keys.Timestamp(now), read+1
		if h.Hold == regua.HoldDispute && h.HoldID == d.DisputeID {
			h.Hold, h.HoldID = "", ""
		}
		c.Refresh(calendar.Today(now, t.Location), c.Header.Calendar(t), dunning)
		av, err := attributevalue.MarshalMap(d)
		if err != nil {
			return nil, err
		}
		cond := expression.Name("version").Equal(expression.Value(read)).And(expression.Name("status").Equal(expression.Value(DisputeOpen)))
		ev, err := contract.PutEvent(c.NewEvent(0, EvDisputeResolved, now, actor, map[string]any{"disputeId": d.DisputeID, "outcome": d.Outcome,
			"nextAction": h.NextAction, "nextActionDate": h.NextActionDate}))
		if err != nil {
			return nil, err
		}
		out = &d
		return []kit.Action{kit.PutAction(av, &cond), ev}, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func putNew(v any) (kit.Action, error) {
	av, err := attributevalue.MarshalMap(v)
	if err != nil {
		return kit.Action{}, fmt.Errorf("marshal: %w", err)
	}
	absent := expression.AttributeNotExists(expression.Name("PK"))
	return kit.PutAction(av, &absent), nil
}

// WriteOffInput is the body of POST .../write-off.
type WriteOffInput struct {
	Reason string `json:"reason"`
}

// WriteOffResult is the answer of a write-off.
type WriteOffResult struct {
	ContractID       string `json:"contractId"`
	Status           string `json:"status"`
	StatusReason     string `json:"statusReason"`
	OutstandingCents int64  `json:"outstandingCents"`
}

// WriteOff writes the contract off (supervisor): WRITTEN_OFF with the
// reason, out of the agenda and the portfolio in the same commit (the
// header's index keys follow its facts, ADR 0012), history kept. An open
// promise is cancelled in that transaction; a later payment is applied
// and recorded but never brings the contract back (contract.Refresh keeps
// WRITTEN_OFF).
func (s *Service) WriteOff(ctx context.Context, t *tenant.Tenant, dk, contractID string, in WriteOffInput, actor contract.Actor) (*WriteOffResult, error) {
	ctx = kit.Within(ctx, "arrangement.write-off")
	if err := validCode("reason", in.Reason); err != nil {
		return nil, err
	}
	var out *WriteOffResult
	err := s.change(ctx, t, dk, contractID, func(c *contract.Contract, dunning *policy.Dunning, now time.Time) ([]kit.Action, error) {
		h := &c.Header
		switch h.Status {
		case contract.StatusWrittenOff:
			return nil, errs.E(errs.Conflict, "already_written_off", "the contract is already written off")
		case contract.StatusSettled:
			return nil, errs.E(errs.Rule, "nothing_to_write_off", "the contract is settled")
		}
		var actions []kit.Action
		p, err := OpenPromise(ctx, s.db(t), c)
		if err != nil {
			return nil, err
		}
		if p != nil {
			p.resolve(c, PromiseCancelled, "write-off", now)
			pa, err := p.write()
			if err != nil {
				return nil, err
			}
			actions = append(actions, pa)
		}
		before := *h
		h.Status, h.StatusReason = contract.StatusWrittenOff, in.Reason
		h.Hold, h.PromiseDate, h.HoldID = "", "", ""
		c.Refresh(calendar.Today(now, t.Location), c.Header.Calendar(t), dunning)
		ev, err := contract.PutEvent(c.NewEvent(0, EvWrittenOff, now, actor, map[string]any{"reason": in.Reason, "statusBefore": before.Status,
			"outstandingCents": h.OutstandingCents, "bucketBefore": before.Bucket, "oldestOverdueDueDate": before.OldestOverdueDueDate}))
		if err != nil {
			return nil, err
		}
		out = &WriteOffResult{ContractID: h.ContractID, Status: h.Status, StatusReason: h.StatusReason, OutstandingCents: h.OutstandingCents}
		return append(actions, ev), nil
	})
	if err != nil {
		return nil, err
	}
	if s.charges != nil {
		// Nothing is collected any more: the contract's open Pix charges
		// are removed at the PSP, best effort (ADR 0048).
		s.charges.Supersede(ctx, t, dk, contractID, nil, "")
	}
	return out, nil
}
