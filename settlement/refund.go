package settlement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/psp"
	"lastro/tenant"
)

// A lender-initiated Pix refund (devolução, docs/adr/0069): the tenant
// asks to return part or all of a payment to its payer. The ask is
// recorded first, exactly once by the refund id the tenant gives (an RFD
// item under the payment's STL partition, attribute_not_exists, in one
// transaction with the STL record's running total of refunds asked,
// version-conditioned), so the amounts asked can never exceed the
// payment; only then is the PSP asked (PUT /pix/{e2eid}/devolucao/{id},
// the same id). The money comes back off the contract only when the PSP
// says DEVOLVIDO — in its answer, a later read, or the webhook's
// devolucoes — through Reverse, exactly once by the refund's rtrId.

// Refund statuses as the engine records and answers them.
const (
	RefundRequested  = "REQUESTED" // recorded; the PSP has not acknowledged it yet
	RefundRejected   = "REJECTED"  // the PSP refused it: nothing moved, the amount is free again
	RefundProcessing = psp.RefundInProcess
	RefundDone       = psp.RefundReturned
	RefundFailed     = psp.RefundNotDone // the PSP could not return it: nothing moved
)

// RefundInput is the body of POST /v1/settlements/{settlementId}/refunds.
type RefundInput struct {
	// RefundID is the tenant's id of the refund, 1-35 letters and digits
	// (the Pix API's devolução id): asking again with it answers the same
	// refund, never a second one.
	RefundID    string `json:"refundId"`
	AmountCents int64  `json:"amountCents"`
	// Description is shown to the payer (at most 140 characters); it must
	// not carry personal data.
	Description string `json:"description,omitempty"`
}

// Refunded is the answer: the refund as recorded, and the reversal of the
// balance once the PSP returned the money.
type Refunded struct {
	SettlementID string `json:"settlementId"`
	RefundID     string `json:"refundId"`
	AmountCents  int64  `json:"amountCents"`
	// Status is REQUESTED, EM_PROCESSAMENTO, DEVOLVIDO, NAO_REALIZADO or
	// REJECTED.
	Status string `json:"status"`
	RtrID  string `json:"rtrId,omitempty"`
	// AlreadyRequested is true when this refund id was asked before:
	// nothing was asked of the PSP again.
	AlreadyRequested bool `json:"alreadyRequested"`
	// Reversal is what the refund took back from the contract (DEVOLVIDO).
	Reversal *RefundOutcome `json:"reversal,omitempty"`
}

// refundItem is a refund asked of a Pix payment, PK T#<t>#STL#<e2e>, SK
// RFD#<refundId>: its idempotency record. No personal data.
type refundItem struct {
	PK           string `dynamodbav:"PK"`
	SK           string `dynamodbav:"SK"`
	Type         string `dynamodbav:"type"`
	SettlementID string `dynamodbav:"settlementId"`
	RefundID     string `dynamodbav:"refundId"`
	AmountCents  int64  `dynamodbav:"amountCents"`
	Description  string `dynamodbav:"description,omitempty"`
	Status       string `dynamodbav:"status"`
	RtrID        string `dynamodbav:"rtrId,omitempty"`
	RequestedAt  string `dynamodbav:"requestedAt"`
	ReturnedAt   string `dynamodbav:"returnedAt,omitempty"`
	Version      int    `dynamodbav:"version"`
}

// TypeRefund is the refund record's item type.
const TypeRefund = "REFUND"

var (
	errRefundIDReused = errs.E(errs.Conflict, "refund_id_reused",
		"this refundId was already asked for this payment with another amount or description; nothing was changed")
	errNotPix         = errs.E(errs.Rule, "not_a_pix_payment", "only a Pix payment (its settlementId is the endToEndId) can be refunded through the PSP")
	errStlNotFound    = errs.E(errs.NotFound, "settlement_not_found", "settlement not found")
	errRefundTooLarge = func(left int64) error {
		return errs.E(errs.Rule, "refund_exceeds_payment", "the refunds asked of this payment would exceed it: at most %d cents remain", left)
	}
)

func (in RefundInput) validate(settlementID string) error {
	if !ValidEndToEndID(settlementID) || settlementID[0] != 'E' {
		return errNotPix
	}
	if !validRefundID(in.RefundID) {
		return invalid("invalid_refund_id", "refundId must be 1-35 letters and digits")
	}
	if in.AmountCents <= 0 || in.AmountCents > 999_999_999_999 {
		return invalid("invalid_amount", "amountCents must be a positive number of cents")
	}
	if len([]rune(in.Description)) > 140 {
		return invalid("invalid_description", "description is at most 140 characters")
	}
	for _, r := range in.Description {
		if r < 0x20 || r == 0x7f {
			return invalid("invalid_description", "description is printable text")
		}
	}
	return nil
}

// Refund asks the tenant's PSP to return amount of the Pix payment
// settlementID (its endToEndId) to the payer, exactly once by
// in.RefundID: the ask is recorded before the PSP is called, the same id
// again answers the same refund (a retry after a timeout resumes it: the
// PSP is read before it is asked again), and the balance is reversed
// when the PSP says DEVOLVIDO, through Reverse, exactly once.
func (s *Service) Refund(ctx context.Context, t *tenant.Tenant, settlementID string, in RefundInput) (*Refunded, error) {
	if err := in.validate(settlementID); err != nil {
		return nil, err
	}
	if s.charges == nil {
		return nil, errNoCharges
	}
	ctx = kit.Within(ctx, "settlement.refund")
	p, err := s.charges.PSP(ctx, t)
	if err != nil {
		return nil, err
	}
	rf, created, err := s.recordRefund(ctx, t, settlementID, in)
	if err != nil {
		return nil, err
	}
	out := &Refunded{SettlementID: settlementID, RefundID: rf.RefundID, AmountCents: rf.AmountCents, AlreadyRequested: !created}
	switch rf.Status {
	case RefundRejected, RefundFailed:
		out.Status, out.RtrID = rf.Status, rf.RtrID
		return out, nil
	case RefundDone:
		return s.reverseRefund(ctx, t, rf, out)
	}
	at, err := s.askPSP(ctx, p, rf, created)
	if err != nil {
		if errors.Is(err, psp.ErrRejected) || errors.Is(err, psp.ErrNotFound) {
			// Refused: nothing moved. The amount is free again, and the
			// record says so, so the same id answers REJECTED from now on.
			if rerr := s.settleRefund(ctx, t, rf, RefundRejected, ""); rerr != nil {
				return nil, rerr
			}
			return nil, errs.Wrap(errs.Rule, "psp_rejected", err, "the tenant's PSP refused the refund: "+err.Error())
		}
		return nil, errs.Wrap(errs.Transient, "psp_unavailable", err, "the tenant's PSP is unavailable; ask again with the same refundId")
	}
	if err := s.settleRefund(ctx, t, rf, at.Status, at.RtrID); err != nil {
		return nil, err
	}
	out.Status, out.RtrID = rf.Status, rf.RtrID
	if rf.Status == RefundDone {
		if rf.ReturnedAt == "" {
			rf.ReturnedAt = at.SettledAt
		}
		return s.reverseRefund(ctx, t, rf, out)
	}
	return out, nil
}

// askPSP gets the PSP's refund for rf: read back first unless the ask is
// new (a retry may follow a PUT whose answer was lost, and the API
// refuses an id used twice), asked (PUT) when the PSP has none.
func (s *Service) askPSP(ctx context.Context, p psp.PSP, rf *refundItem, created bool) (*psp.Refund, error) {
	if !created {
		got, err := p.GetRefund(ctx, rf.SettlementID, rf.RefundID)
		if err == nil {
			return s.checkPSPRefund(got, rf)
		}
		if !errors.Is(err, psp.ErrNotFound) {
			return nil, err
		}
	}
	got, err := p.Refund(ctx, psp.RefundInput{EndToEndID: rf.SettlementID, ID: rf.RefundID, AmountCents: rf.AmountCents, Description: rf.Description})
	if err != nil {
		return nil, err
	}
	return s.checkPSPRefund(got, rf)
}

// checkPSPRefund refuses a PSP's answer that is not the refund asked.
func (s *Service) checkPSPRefund(got *psp.Refund, rf *refundItem) (*psp.Refund, error) {
	if got.ID != rf.RefundID || got.AmountCents != rf.AmountCents || !ValidEndToEndID(got.RtrID) || got.RtrID[0] != 'D' {
		return nil, fmt.Errorf("%w: the PSP answered another refund than the one asked", psp.ErrUnavailable)
	}
	return got, nil
}

// recordRefund records the ask, or finds it: created false when the
// refund id was asked before (409 when with other facts).
func (s *Service) recordRefund(ctx context.Context, t *tenant.Tenant, settlementID string, in RefundInput) (*refundItem, bool, error) {
	db := s.db(t)
	pk := keys.Settlement(t.ID, settlementID)
	var rf *refundItem
	created := false
	err := s.retry().Retry(ctx, func(int) (bool, error) {
		old, err := s.refundRecord(ctx, t, settlementID, in.RefundID)
		if err != nil {
			return false, err
		}
		if old != nil {
			if old.AmountCents != in.AmountCents || old.Description != in.Description {
				return false, errRefundIDReused
			}
			rf = old
			return false, nil
		}
		stl, stlRaw, err := s.stlRecord(ctx, db, t, settlementID)
		if err != nil {
			return false, err
		}
		if stl == nil {
			return false, errStlNotFound
		}
		if left := stl.AmountCents - stl.RefundRequestedCents; in.AmountCents > left {
			return false, errRefundTooLarge(max(left, 0))
		}
		stl.RefundRequestedCents += in.AmountCents
		stl.Version++
		stlAV, err := attributevalue.MarshalMap(stl)
		if err != nil {
			return false, err
		}
		keepUnmodelled(stlAV, stlRaw)
		item := refundItem{PK: pk, SK: keys.Refund(in.RefundID), Type: TypeRefund, SettlementID: settlementID, RefundID: in.RefundID,
			AmountCents: in.AmountCents, Description: in.Description, Status: RefundRequested, RequestedAt: keys.Timestamp(s.clock.Now()), Version: 1}
		av, err := attributevalue.MarshalMap(item)
		if err != nil {
			return false, err
		}
		notExists := expression.AttributeNotExists(expression.Name("PK"))
		sameVersion := expression.Name("version").Equal(expression.Value(stl.Version - 1))
		err = db.Transact(ctx, kit.PutAction(av, &notExists), kit.PutAction(stlAV, &sameVersion))
		if err == nil {
			rf, created = &item, true
			return false, nil
		}
		if errors.Is(err, kit.ErrThrottled) || errs.Is(err, errs.Transient) {
			return false, err
		}
		var tc *kit.TxCanceled
		if errors.As(err, &tc) || errors.Is(err, kit.ErrConditionFailed) || errors.Is(err, kit.ErrConflict) {
			return true, nil // asked concurrently, or the payment's record moved: read again
		}
		return false, fmt.Errorf("settlement: record refund: %w", err)
	})
	if errors.Is(err, kit.ErrAttemptsExhausted) {
		return nil, false, errContended
	}
	return rf, created, err
}

func (s *Service) refundRecord(ctx context.Context, t *tenant.Tenant, settlementID, refundID string) (*refundItem, error) {
	it, err := s.db(t).Get(ctx, kit.Key{PK: keys.Settlement(t.ID, settlementID), SK: keys.Refund(refundID)}, true)
	if err != nil {
		return nil, fmt.Errorf("settlement: read refund: %w", err)
	}
	if it == nil {
		return nil, nil
	}
	var rf refundItem
	if err := attributevalue.UnmarshalMap(it, &rf); err != nil {
		return nil, fmt.Errorf("settlement: decode refund: %w", err)
	}
	return &rf, nil
}

// settleRefund records the PSP's status of rf, conditioned on its
// version; a refund that moved nothing (REJECTED, NAO_REALIZADO) frees
// its amount on the STL record in the same transaction. A status already
// recorded changes nothing.
func (s *Service) settleRefund(ctx context.Context, t *tenant.Tenant, rf *refundItem, status, rtrID string) error {
	if rf.Status == status && rf.RtrID == rtrID {
		return nil
	}
	key := kit.Key{PK: rf.PK, SK: rf.SK}
	upd := expression.Set(expression.Name("status"), expression.Value(status)).Set(expression.Name("version"), expression.Value(rf.Version+1))
	if rtrID != "" {
		upd = upd.Set(expression.Name("rtrId"), expression.Value(rtrID))
	}
	if status == RefundDone {
		upd = upd.Set(expression.Name("returnedAt"), expression.Value(keys.Timestamp(s.clock.Now())))
	}
	cond := expression.Name("version").Equal(expression.Value(rf.Version))
	var err error
	if status == RefundRejected || status == RefundFailed {
		free := expression.Set(expression.Name("refundRequestedCents"), expression.Name("refundRequestedCents").Minus(expression.Value(rf.AmountCents))).
			Set(expression.Name("version"), expression.Name("version").Plus(expression.Value(1)))
		exists := expression.AttributeExists(expression.Name("refundRequestedCents"))
		err = s.db(t).Transact(ctx, kit.UpdateAction(key, upd, &cond),
			kit.UpdateAction(kit.Key{PK: rf.PK, SK: keys.SettlementSK}, free, &exists))
	} else {
		_, err = s.db(t).Update(ctx, key, upd, &cond, types.ReturnValueNone)
	}
	if err != nil {
		var tc *kit.TxCanceled
		if errors.Is(err, kit.ErrConditionFailed) || errors.As(err, &tc) {
			// Another call recorded a status first — the webhook's
			// DEVOLVIDO may outrun the PUT's own answer. A final status,
			// or the one we meant, stands and is adopted.
			cur, rerr := s.refundRecord(ctx, t, rf.SettlementID, rf.RefundID)
			if rerr == nil && cur != nil && (cur.Status == status || finalRefund(cur.Status)) {
				*rf = *cur
				return nil
			}
			return errs.E(errs.Transient, "refund_contended", "the refund is changing concurrently; ask again with the same refundId")
		}
		return fmt.Errorf("settlement: record the refund's status: %w", err)
	}
	rf.Status, rf.Version = status, rf.Version+1
	if rtrID != "" {
		rf.RtrID = rtrID
	}
	return nil
}

// finalRefund reports whether a refund's status can change no more.
func finalRefund(status string) bool {
	return status == RefundDone || status == RefundFailed || status == RefundRejected
}

// reverseRefund takes a returned refund back off the contract through
// Reverse, exactly once by its rtrId (the webhook's devolucoes may have
// done it already: already_reversed).
func (s *Service) reverseRefund(ctx context.Context, t *tenant.Tenant, rf *refundItem, out *Refunded) (*Refunded, error) {
	r := PixRefund{ID: rf.RefundID, RtrID: rf.RtrID, ValorCents: rf.AmountCents, Status: RefundReturned}
	if at, err := time.Parse(time.RFC3339Nano, rf.ReturnedAt); err == nil {
		r.SettledAt = at
	}
	ro, err := s.Reverse(ctx, t, rf.SettlementID, r)
	if err != nil {
		return nil, err
	}
	out.Status, out.RtrID, out.Reversal = RefundDone, rf.RtrID, ro
	return out, nil
}

// noteReturned records, best effort, that a refund the tenant asked was
// returned, when the webhook's devolucoes say so: the record then
// answers DEVOLVIDO without asking the PSP. Its error is dropped: the
// reversal, keyed by rtrId, is what counts.
func (s *Service) noteReturned(ctx context.Context, t *tenant.Tenant, settlementID string, r PixRefund) {
	rf, err := s.refundRecord(ctx, t, settlementID, r.ID)
	if err != nil || rf == nil || rf.Status == RefundDone || rf.AmountCents != r.ValorCents {
		return
	}
	_ = s.settleRefund(ctx, t, rf, RefundDone, r.RtrID)
}
