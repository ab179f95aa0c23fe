package settlement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/tenant"
)

// EvSettlementReversed is the event of a reversal (a Pix refund) on the
// audit trail of every instalment it reopened, or the contract's own (seq
// 0) when it reopened none (ADR 0040).
const EvSettlementReversed = "SettlementReversed"

// Reversal outcomes recorded on the REV item.
const (
	// ReversalReversed: the money was taken back from the contract: from
	// the payment's credit and the instalments it paid.
	ReversalReversed = "REVERSED"
	// ReversalReview: some or all of it could not be taken back by rule
	// (the payment is in suspense, its instalments were renegotiated, its
	// credit was spent): the reversal is recorded, with a review entry in
	// the suspense partition, and balances change only by what could be.
	ReversalReview = "REVIEW"
)

// Reasons a reversal needs review.
const (
	ReviewSettlementNotFound  = "SETTLEMENT_NOT_FOUND"
	ReviewSettlementUnmatched = "SETTLEMENT_UNMATCHED"
	ReviewContractNotFound    = "CONTRACT_NOT_FOUND"
	ReviewNotReversible       = "NOT_FULLY_REVERSIBLE"
)

// Refund answers.
const (
	RefundStatusReversed        = "reversed"
	RefundStatusAlreadyReversed = "already_reversed"
	RefundStatusReview          = "review"
	RefundStatusPending         = "pending"      // EM_PROCESSAMENTO: nothing moved yet
	RefundStatusNotReturned     = "not_returned" // NAO_REALIZADO: nothing moved
)

// revItem is a reversal's record, PK T#<t>#STL#<endToEndId>, SK
// REV#<rtrId>: written with attribute_not_exists in the transaction that
// reopens the balance, it is the reversal's idempotency record. No
// personal data.
type revItem struct {
	PK              string              `dynamodbav:"PK"`
	SK              string              `dynamodbav:"SK"`
	Type            string              `dynamodbav:"type"`
	SettlementID    string              `dynamodbav:"settlementId"`
	RefundID        string              `dynamodbav:"refundId"`
	RtrID           string              `dynamodbav:"rtrId"`
	AmountCents     int64               `dynamodbav:"amountCents"`
	ReturnedAt      string              `dynamodbav:"returnedAt,omitempty"`
	ReceivedAt      string              `dynamodbav:"receivedAt"`
	Outcome         string              `dynamodbav:"outcome"`
	Reason          string              `dynamodbav:"reason,omitempty"`
	DebtorKey       string              `dynamodbav:"debtorKey,omitempty"`
	ContractID      string              `dynamodbav:"contractId,omitempty"`
	FromCreditCents int64               `dynamodbav:"fromCreditCents"`
	ReopenedCents   int64               `dynamodbav:"reopenedCents"`
	UnreversedCents int64               `dynamodbav:"unreversedCents"`
	Lines           []contract.PaidLine `dynamodbav:"lines,omitempty"`
	ContractStatus  string              `dynamodbav:"contractStatus,omitempty"`
	Version         int                 `dynamodbav:"version"`
}

// reviewItem lists a reversal for review in the suspense partition, SK
// RVW#<receivedAt>#<rtrId>.
type reviewItem struct {
	PK              string `dynamodbav:"PK"`
	SK              string `dynamodbav:"SK"`
	Type            string `dynamodbav:"type"`
	SettlementID    string `dynamodbav:"settlementId"`
	RtrID           string `dynamodbav:"rtrId"`
	AmountCents     int64  `dynamodbav:"amountCents"`
	UnreversedCents int64  `dynamodbav:"unreversedCents"`
	ReceivedAt      string `dynamodbav:"receivedAt"`
	Reason          string `dynamodbav:"reason"`
	Version         int    `dynamodbav:"version"`
}

// RefundOutcome is the answer for one refund of a Pix webhook.
type RefundOutcome struct {
	ID              string `json:"id"`
	RtrID           string `json:"rtrId"`
	Status          string `json:"status"`            // reversed | already_reversed | review | pending | not_returned
	Outcome         string `json:"outcome,omitempty"` // REVERSED | REVIEW, as first recorded
	AmountCents     int64  `json:"amountCents"`
	FromCreditCents int64  `json:"fromCreditCents"`
	ReopenedCents   int64  `json:"reopenedCents"`   // put back on instalments
	UnreversedCents int64  `json:"unreversedCents"` // left for review
	ContractStatus  string `json:"contractStatus,omitempty"`
	Reason          string `json:"reason,omitempty"`
}

func (r revItem) outcome(status, id string) *RefundOutcome {
	return &RefundOutcome{ID: id, RtrID: r.RtrID, Status: status, Outcome: r.Outcome, AmountCents: r.AmountCents,
		FromCreditCents: r.FromCreditCents, ReopenedCents: r.ReopenedCents, UnreversedCents: r.UnreversedCents,
		ContractStatus: r.ContractStatus, Reason: r.Reason}
}

var errRefundReused = errs.E(errs.Conflict, "refund_reused",
	"this rtrId was already recorded with another payment or amount; nothing was changed")

// Reverse records a refund of settlement settlementID exactly once, by
// its rtrId. Only a DEVOLVIDO refund moved money: it takes the amount
// back from the payment's credit first, then from the instalments the
// payment paid (contract.Reverse), in one transaction with the REV
// record, the STL record's running totals (version-conditioned), the
// instalments and header (contract.Save) and a SettlementReversed event
// per instalment reopened. What cannot be taken back is recorded as
// unreversed with a review entry: a balance never changes without the
// event, and never silently.
func (s *Service) Reverse(ctx context.Context, t *tenant.Tenant, settlementID string, r PixRefund) (*RefundOutcome, error) {
	switch r.Status {
	case RefundInProcess:
		return &RefundOutcome{ID: r.ID, RtrID: r.RtrID, Status: RefundStatusPending, AmountCents: r.ValorCents}, nil
	case RefundNotDone:
		return &RefundOutcome{ID: r.ID, RtrID: r.RtrID, Status: RefundStatusNotReturned, AmountCents: r.ValorCents}, nil
	}
	ctx = kit.Within(ctx, "settlement.reverse")
	db := s.db(t)
	var out *RefundOutcome
	err := s.retry().Retry(ctx, func(attempt int) (bool, error) {
		now := s.clock.Now()
		actions, rev, err := s.reversal(ctx, t, settlementID, r, now)
		if err != nil {
			return false, err
		}
		if rev == nil { // already recorded
			out, err = s.reversalDuplicate(ctx, t, settlementID, r, nil)
			return false, err
		}
		if s.beforeWrite != nil {
			s.beforeWrite(attempt)
		}
		err = db.Transact(ctx, actions...)
		if err == nil {
			status := RefundStatusReversed
			if rev.Outcome == ReversalReview {
				status = RefundStatusReview
			}
			out = rev.outcome(status, r.ID)
			return false, nil
		}
		var tc *kit.TxCanceled
		if errors.As(err, &tc) && tc.Failed(0) {
			out, err = s.reversalDuplicate(ctx, t, settlementID, r, tc)
			return false, err
		}
		if errors.Is(err, kit.ErrThrottled) || errs.Is(err, errs.Transient) {
			return false, err
		}
		if errors.Is(err, kit.ErrConditionFailed) || errors.Is(err, kit.ErrConflict) {
			return true, nil // the STL record or the contract moved: read again
		}
		return false, fmt.Errorf("settlement: reverse: %w", err)
	})
	if errors.Is(err, kit.ErrAttemptsExhausted) {
		return nil, errContended
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// reversalDuplicate answers a refund whose REV record exists:
// already_reversed with the first outcome, or 409 when the rtrId came
// back with another payment or amount.
func (s *Service) reversalDuplicate(ctx context.Context, t *tenant.Tenant, settlementID string, r PixRefund, tc *kit.TxCanceled) (*RefundOutcome, error) {
	var old kit.Item
	if tc != nil && len(tc.Items) > 0 {
		old = tc.Items[0]
	}
	if old == nil {
		var err error
		if old, err = s.db(t).Get(ctx, kit.Key{PK: keys.Settlement(t.ID, settlementID), SK: keys.Reversal(r.RtrID)}, true); err != nil {
			return nil, fmt.Errorf("settlement: read reversal: %w", err)
		}
		if old == nil {
			return nil, errContended
		}
	}
	var first revItem
	if err := attributevalue.UnmarshalMap(old, &first); err != nil {
		return nil, fmt.Errorf("settlement: decode reversal: %w", err)
	}
	if first.SettlementID != settlementID || first.AmountCents != r.ValorCents || first.RefundID != r.ID {
		return nil, errRefundReused
	}
	return first.outcome(RefundStatusAlreadyReversed, r.ID), nil
}

// reversal reads what a refund reverses and builds its transaction; a nil
// record means the refund was already recorded.
func (s *Service) reversal(ctx context.Context, t *tenant.Tenant, settlementID string, r PixRefund, now time.Time) ([]kit.Action, *revItem, error) {
	db := s.db(t)
	pk := keys.Settlement(t.ID, settlementID)
	if it, err := db.Get(ctx, kit.Key{PK: pk, SK: keys.Reversal(r.RtrID)}, true); err != nil {
		return nil, nil, fmt.Errorf("settlement: read reversal: %w", err)
	} else if it != nil {
		return nil, nil, nil
	}
	rev := revItem{PK: pk, SK: keys.Reversal(r.RtrID), Type: "REVERSAL", SettlementID: settlementID, RefundID: r.ID, RtrID: r.RtrID,
		AmountCents: r.ValorCents, ReceivedAt: keys.Timestamp(now), Outcome: ReversalReversed, Version: 1}
	if !r.SettledAt.IsZero() {
		rev.ReturnedAt = instant(r.SettledAt)
	}
	stl, stlRaw, err := s.stlRecord(ctx, db, t, settlementID)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case stl == nil:
		return s.reviewOnly(t, rev, ReviewSettlementNotFound, now, nil)
	case stl.Outcome != OutcomeApplied:
		// The money is in suspense: nothing to reopen, but the record
		// counts the refund (version-conditioned), so a resolve can no
		// longer apply money that went back to the payer.
		stl.ReversedCents += r.ValorCents
		stl.Version++
		stlAV, err := attributevalue.MarshalMap(stl)
		if err != nil {
			return nil, nil, err
		}
		keepUnmodelled(stlAV, stlRaw)
		sameVersion := expression.Name("version").Equal(expression.Value(stl.Version - 1))
		return s.reviewOnly(t, rev, ReviewSettlementUnmatched, now, []kit.Action{kit.PutAction(stlAV, &sameVersion)})
	}
	rev.DebtorKey, rev.ContractID = stl.DebtorKey, stl.ContractID
	c, err := contract.Load(ctx, db, t.ID, stl.DebtorKey, stl.ContractID)
	if err != nil {
		return nil, nil, err
	}
	if c == nil {
		return s.reviewOnly(t, rev, ReviewContractNotFound, now, nil)
	}
	dv, err := contract.PolicyVersion(c.Header.DunningPolicy)
	if err != nil {
		return nil, nil, err
	}
	dunning, err := s.policies.Dunning(ctx, t, dv)
	if err != nil {
		return nil, nil, err
	}
	before := c.Header
	// The payment's own credit was the last of its money: it goes back
	// first, as far as it is still on the contract.
	h := &c.Header
	rev.FromCreditCents = min(r.ValorCents, max(stl.CreditCents-stl.ReversedCreditCents, 0), h.CreditCents)
	h.CreditCents -= rev.FromCreditCents
	taken, left := c.Reverse(r.ValorCents-rev.FromCreditCents, remaining(stl.Paid, stl.Reversed))
	rev.Lines, rev.UnreversedCents = taken, left
	for _, l := range taken {
		rev.ReopenedCents += l.Total()
	}
	c.RefreshAfterReversal(calendar.Today(now, t.Location), c.Header.Calendar(t), dunning)
	rev.ContractStatus = h.Status
	if left > 0 {
		rev.Outcome, rev.Reason = ReversalReview, ReviewNotReversible
	}

	// The STL record keeps the running totals, so a second partial refund
	// takes back only what the first left.
	stl.Reversed = addLines(stl.Reversed, taken)
	stl.ReversedCents += r.ValorCents - left
	stl.ReversedCreditCents += rev.FromCreditCents
	stl.Version++
	stlAV, err := attributevalue.MarshalMap(stl)
	if err != nil {
		return nil, nil, err
	}
	keepUnmodelled(stlAV, stlRaw)
	sameVersion := expression.Name("version").Equal(expression.Value(stl.Version - 1))
	revAV, err := attributevalue.MarshalMap(rev)
	if err != nil {
		return nil, nil, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	actions := []kit.Action{kit.PutAction(revAV, &notExists), kit.PutAction(stlAV, &sameVersion)}
	writes, err := c.Save(now)
	if err != nil {
		return nil, nil, err
	}
	actions = append(actions, writes...)
	summary := map[string]any{
		"settlementId": settlementID, "refundId": r.ID, "rtrId": r.RtrID, "amountCents": r.ValorCents, "returnedAt": rev.ReturnedAt,
		"fromCreditCents": rev.FromCreditCents, "reopenedCents": rev.ReopenedCents, "unreversedCents": left,
		"statusBefore": before.Status, "statusAfter": h.Status, "statusReason": h.StatusReason,
		"outstandingBefore": before.OutstandingCents, "outstandingAfter": h.OutstandingCents,
		"creditBefore": before.CreditCents, "creditAfter": h.CreditCents,
	}
	actor := contract.Actor{Role: "webhook"}
	for _, l := range taken {
		d := map[string]any{"line": l}
		for k, v := range summary {
			d[k] = v
		}
		a, err := contract.PutEvent(c.NewEvent(l.Seq, EvSettlementReversed, now, actor, d))
		if err != nil {
			return nil, nil, err
		}
		actions = append(actions, a)
	}
	if len(taken) == 0 {
		a, err := contract.PutEvent(c.NewEvent(0, EvSettlementReversed, now, actor, summary))
		if err != nil {
			return nil, nil, err
		}
		actions = append(actions, a)
	}
	if left > 0 {
		a, err := s.reviewAction(t, rev, now)
		if err != nil {
			return nil, nil, err
		}
		actions = append(actions, a)
	}
	if len(actions) > maxActions {
		return nil, nil, errs.E(errs.Rule, "reversal_too_large", "this refund touches too many instalments for one transaction")
	}
	return actions, &rev, nil
}

// keepUnmodelled copies into item the attributes of raw (the item as
// read) that stlItem does not model, such as a resolution's.
func keepUnmodelled(item, raw kit.Item) {
	for k, v := range raw {
		if _, ok := item[k]; !ok {
			item[k] = v
		}
	}
}

// reviewOnly is a reversal that moves no balance: its record, its review
// entry and the extra actions given.
func (s *Service) reviewOnly(t *tenant.Tenant, rev revItem, reason string, now time.Time, extra []kit.Action) ([]kit.Action, *revItem, error) {
	rev.Outcome, rev.Reason, rev.UnreversedCents = ReversalReview, reason, rev.AmountCents
	revAV, err := attributevalue.MarshalMap(rev)
	if err != nil {
		return nil, nil, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	a, err := s.reviewAction(t, rev, now)
	if err != nil {
		return nil, nil, err
	}
	return append([]kit.Action{kit.PutAction(revAV, &notExists), a}, extra...), &rev, nil
}

func (s *Service) reviewAction(t *tenant.Tenant, rev revItem, now time.Time) (kit.Action, error) {
	it, err := attributevalue.MarshalMap(reviewItem{PK: keys.Suspense(t.ID), SK: keys.ReversalReview(now, rev.RtrID), Type: "REVERSAL_REVIEW",
		SettlementID: rev.SettlementID, RtrID: rev.RtrID, AmountCents: rev.AmountCents, UnreversedCents: rev.UnreversedCents,
		ReceivedAt: rev.ReceivedAt, Reason: rev.Reason, Version: 1})
	if err != nil {
		return kit.Action{}, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	return kit.PutAction(it, &notExists), nil
}

// stlRecord reads the STL item, strongly consistent; nil when absent.
func (s *Service) stlRecord(ctx context.Context, db *kit.Tenant, t *tenant.Tenant, settlementID string) (*stlItem, kit.Item, error) {
	pk, sk := settlementKey(t.ID, settlementID)
	it, err := db.Get(ctx, kit.Key{PK: pk, SK: sk}, true)
	if err != nil {
		return nil, nil, fmt.Errorf("settlement: read record: %w", err)
	}
	if it == nil {
		return nil, nil, nil
	}
	var stl stlItem
	if err := attributevalue.UnmarshalMap(it, &stl); err != nil {
		return nil, nil, fmt.Errorf("settlement: decode record: %w", err)
	}
	return &stl, it, nil
}

// remaining is what a payment paid less what reversals took back, line
// by line, in the payment's order.
func remaining(paid, reversed []contract.PaidLine) []contract.PaidLine {
	out := make([]contract.PaidLine, 0, len(paid))
	for _, p := range paid {
		for _, r := range reversed {
			if r.Seq == p.Seq {
				p.Fine, p.LateInterest, p.Interest, p.Principal = p.Fine-r.Fine, p.LateInterest-r.LateInterest, p.Interest-r.Interest, p.Principal-r.Principal
			}
		}
		out = append(out, p)
	}
	return out
}

// addLines adds taken to the running totals, by instalment.
func addLines(total, taken []contract.PaidLine) []contract.PaidLine {
	for _, t := range taken {
		found := false
		for i := range total {
			if total[i].Seq == t.Seq {
				total[i].Fine += t.Fine
				total[i].LateInterest += t.LateInterest
				total[i].Interest += t.Interest
				total[i].Principal += t.Principal
				found = true
			}
		}
		if !found {
			total = append(total, t)
		}
	}
	return total
}
