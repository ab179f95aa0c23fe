package settlement

import (
	"context"

	"lastro/collections/errs"
	"lastro/tenant"
)

// ReasonNoTxID is why a Pix with no txid (received on the key, not for a
// charge) is unmatched.
const ReasonNoTxID = "NO_TXID"

// StatusFailed answers a payment of a Pix webhook that could not be
// processed this time: the call answers 503 so the PSP delivers it again.
const StatusFailed = "failed"

// StatusConflict answers a payment whose endToEndId was recorded with
// other facts (settlement_id_reused), or a refund whose rtrId was.
const StatusConflict = "conflict"

// PixResult is the answer for one payment of a Pix webhook.
type PixResult struct {
	EndToEndID string          `json:"endToEndId"`
	Status     string          `json:"status"` // applied | already_applied | unmatched | conflict | failed
	Settlement *Outcome        `json:"settlement,omitempty"`
	Refunds    []RefundOutcome `json:"devolucoes,omitempty"`
	Error      *ResultError    `json:"error,omitempty"` // with conflict and failed
}

// ResultError is why one payment or refund was not processed, as the
// error shape codes it.
type ResultError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// PixAnswer is the answer of a Pix webhook: one result per payment, in
// the order received.
type PixAnswer struct {
	Pix []PixResult `json:"pix"`
}

// Failed reports whether some payment or refund failed for a reason that
// may pass on a redelivery (the call answers 503).
func (a *PixAnswer) Failed() bool {
	for _, r := range a.Pix {
		if r.Status == StatusFailed {
			return true
		}
	}
	return false
}

// Conflicted reports whether some payment or refund contradicts what was
// recorded under its id (the call answers 409).
func (a *PixAnswer) Conflicted() bool {
	for _, r := range a.Pix {
		if r.Status == StatusConflict {
			return true
		}
	}
	return false
}

// ApplyPix applies a decoded Pix webhook: each payment exactly once by
// its endToEndId (Apply; a payment with no txid goes to suspense), then
// its refunds exactly once by their rtrId (Reverse). Each payment is its
// own transaction, so one that fails does not undo the others: its result
// says failed (or conflict), the rest are recorded, and a redelivery of
// the whole call answers those already_applied. A context cancelled
// midway stops the call with its error.
func (s *Service) ApplyPix(ctx context.Context, t *tenant.Tenant, payments []PixPayment) (*PixAnswer, error) {
	ans := &PixAnswer{Pix: make([]PixResult, 0, len(payments))}
	for _, p := range payments {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res := PixResult{EndToEndID: p.EndToEndID}
		var out *Outcome
		var err error
		if p.TxID == "" {
			out, err = s.unmatchedOnce(ctx, t, p.Payload(), ReasonNoTxID)
		} else {
			out, err = s.Apply(ctx, t, p.Payload())
		}
		if err != nil {
			res.Status, res.Error = failure(err)
			ans.Pix = append(ans.Pix, res)
			continue
		}
		res.Status, res.Settlement = out.Status, out
		for _, r := range p.Refunds {
			ro, err := s.Reverse(ctx, t, p.EndToEndID, r)
			if err == nil && r.Status == RefundReturned {
				s.noteReturned(ctx, t, p.EndToEndID, r)
			}
			if err != nil {
				st, e := failure(err)
				ro = &RefundOutcome{ID: r.ID, RtrID: r.RtrID, Status: st, AmountCents: r.ValorCents, Reason: e.Code}
				// The payment's status carries the worst of its refunds, so
				// the call's status code says a redelivery is owed.
				if res.Status != StatusFailed {
					res.Status, res.Error = st, e
				}
			}
			res.Refunds = append(res.Refunds, *ro)
		}
		ans.Pix = append(ans.Pix, res)
	}
	return ans, nil
}

// failure classifies one payment's error: a conflict (the same id with
// other facts: redelivering will not change it) or a failure worth
// another delivery. Only the public code and message are kept.
func failure(err error) (string, *ResultError) {
	_, code, msg := errs.Public(err)
	if errs.Is(err, errs.Conflict) {
		return StatusConflict, &ResultError{Code: code, Message: msg}
	}
	return StatusFailed, &ResultError{Code: code, Message: msg}
}

// unmatchedOnce records a settlement with no charge to look up in
// suspense, exactly once (the STL item is the idempotency record, as for
// every settlement).
func (s *Service) unmatchedOnce(ctx context.Context, t *tenant.Tenant, p Payload, reason string) (*Outcome, error) {
	return s.unmatched(ctx, t, p, s.clock.Now(), reason)
}
