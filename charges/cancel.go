package charges

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// StatusCancelled is a charge item's status once its PSP charge was
// removed (REMOVIDA_PELO_USUARIO_RECEBEDOR).
const StatusCancelled = "CANCELLED"

// Why a charge was cancelled.
const (
	ReasonRequested  = "REQUESTED"  // DELETE /v1/charges/{chargeId}
	ReasonSuperseded = "SUPERSEDED" // its instalment was paid by another settlement
)

// Cancelled is the answer of DELETE /v1/charges/{chargeId}.
type Cancelled struct {
	ChargeID  string `json:"chargeId"`
	Status    string `json:"status"`    // CANCELLED
	PSPStatus string `json:"pspStatus"` // the PSP charge's status: REMOVIDA_PELO_USUARIO_RECEBEDOR (or REMOVIDA_PELO_PSP)
	// AlreadyCancelled is true when the charge was cancelled before this
	// call: nothing changed.
	AlreadyCancelled bool   `json:"alreadyCancelled"`
	CancelledAt      string `json:"cancelledAt"`
	Reason           string `json:"reason"`
}

var (
	errChargeNotFound  = errs.E(errs.NotFound, "charge_not_found", "charge not found")
	errNotAtPSP        = errs.E(errs.Rule, "charge_not_at_psp", "only a Pix charge issued at the tenant's PSP (with a pixType) can be read back or cancelled there")
	errNoPSP           = errs.E(errs.Rule, "psp_not_configured", "the tenant has no Pix PSP: configure one with PUT /v1/tenant/psp")
	errPaidAtPSP       = errs.E(errs.Conflict, "charge_paid_at_psp", "the charge was paid at the PSP and cannot be cancelled; POST /v1/charges/{chargeId}/reconcile applies its payment")
	errCancelContended = errs.E(errs.Transient, "charge_contended", "the charge is changing concurrently; retry")
)

// load reads a charge's item through its lookup, strongly consistent;
// only a Pix charge made at a PSP passes.
func (s *Service) load(ctx context.Context, t *tenant.Tenant, chargeID string) (*chargeItem, error) {
	if !keys.ValidIdentifier(chargeID) {
		return nil, errs.E(errs.Invalid, "invalid_charge_id", "chargeId must be 1-64 of A-Z a-z 0-9 - _ .")
	}
	db := s.db(t)
	it, err := db.Get(ctx, kit.Key{PK: keys.Charge(t.ID, chargeID), SK: keys.ChargeSK}, true)
	if err != nil {
		return nil, fmt.Errorf("charges: read lookup: %w", err)
	}
	if it == nil {
		return nil, errChargeNotFound
	}
	var lk Lookup
	if err := attributevalue.UnmarshalMap(it, &lk); err != nil {
		return nil, fmt.Errorf("charges: decode lookup: %w", err)
	}
	item, err := s.item(ctx, t, kit.Key{PK: keys.Debtor(t.ID, lk.DebtorKey), SK: keys.ContractCharge(lk.ContractID, chargeID)})
	if err != nil {
		return nil, err
	}
	if item.Method != PIX || item.PixType == "" {
		return nil, errNotAtPSP
	}
	return item, nil
}

func (s *Service) item(ctx context.Context, t *tenant.Tenant, key kit.Key) (*chargeItem, error) {
	it, err := s.db(t).Get(ctx, key, true)
	if err != nil {
		return nil, fmt.Errorf("charges: read charge: %w", err)
	}
	if it == nil {
		return nil, errChargeNotFound
	}
	var item chargeItem
	if err := attributevalue.UnmarshalMap(it, &item); err != nil {
		return nil, fmt.Errorf("charges: decode charge: %w", err)
	}
	return &item, nil
}

func (s *Service) provider(ctx context.Context, t *tenant.Tenant) (psp.PSP, error) {
	if s.psps == nil {
		return nil, errNoPSP
	}
	p, err := s.psps.For(ctx, t)
	if err != nil {
		return nil, pspError(err)
	}
	if p == nil {
		return nil, errNoPSP
	}
	return p, nil
}

// AtPSP reads a Pix charge back from the tenant's PSP (GET /cob|cobv/{txid}):
// its status and the payments it lists, whatever the engine recorded.
func (s *Service) AtPSP(ctx context.Context, t *tenant.Tenant, chargeID string) (*psp.Charge, error) {
	ctx = kit.Within(ctx, "charge.at_psp")
	item, err := s.load(ctx, t, chargeID)
	if err != nil {
		return nil, err
	}
	p, err := s.provider(ctx, t)
	if err != nil {
		return nil, err
	}
	ch, err := p.Get(ctx, psp.Kind(item.PixType), chargeID)
	if err != nil {
		return nil, pspError(err)
	}
	return ch, nil
}

// Cancel removes a Pix charge at the tenant's PSP (PATCH, status
// REMOVIDA_PELO_USUARIO_RECEBEDOR) and marks its charge item cancelled,
// so no debtor is shown a code that would pay a quote no longer owed.
// Idempotent: a cancelled charge answers AlreadyCancelled. A charge the
// PSP says was paid is not cancelled (409): its payment is applied, by
// the webhook or by reconcile — cancelling never refuses money (ADR 0048).
func (s *Service) Cancel(ctx context.Context, t *tenant.Tenant, chargeID string) (*Cancelled, error) {
	ctx = kit.Within(ctx, "charge.cancel")
	// A boleto is withdrawn through the bank's next shipping file
	// (registration.go), not at a PSP.
	if key, ok, err := s.boletoKey(ctx, t, chargeID); err != nil || ok {
		if err != nil {
			return nil, err
		}
		return s.cancelBoleto(ctx, t, key)
	}
	item, err := s.load(ctx, t, chargeID)
	if err != nil {
		return nil, err
	}
	if item.Status == StatusCancelled {
		return cancelledOf(item, true), nil
	}
	p, err := s.provider(ctx, t)
	if err != nil {
		return nil, err
	}
	return s.cancel(ctx, t, p, item, ReasonRequested)
}

// cancel removes item's charge at p, then records it cancelled.
func (s *Service) cancel(ctx context.Context, t *tenant.Tenant, p psp.PSP, item *chargeItem, reason string) (*Cancelled, error) {
	kind := psp.Kind(item.PixType)
	ch, err := p.Cancel(ctx, kind, item.ChargeID)
	if errors.Is(err, psp.ErrRejected) {
		// Refused: already removed (a retry after our write failed), or
		// paid meanwhile. The PSP's own status decides.
		if ch, err = p.Get(ctx, kind, item.ChargeID); err == nil && ch.Status == psp.StatusPaid {
			return nil, errPaidAtPSP
		}
	}
	if err != nil {
		return nil, pspError(err)
	}
	if ch.Status != psp.StatusRemoved && ch.Status != psp.StatusRemovedByPSP {
		if ch.Status == psp.StatusPaid {
			return nil, errPaidAtPSP
		}
		return nil, errs.E(errs.Transient, "psp_bad_answer", "the PSP answered the charge %s instead of removed; retry", ch.Status)
	}
	return s.markCancelled(ctx, t, item, reason, ch.Status)
}

// markCancelled records the cancellation on the charge item, conditioned
// on the version read; a concurrent cancel that won answers as done.
func (s *Service) markCancelled(ctx context.Context, t *tenant.Tenant, item *chargeItem, reason, pspStatus string) (*Cancelled, error) {
	for range 3 {
		now := keys.Timestamp(s.clock.Now())
		upd := expression.Set(expression.Name("status"), expression.Value(StatusCancelled)).
			Set(expression.Name("cancelledAt"), expression.Value(now)).
			Set(expression.Name("cancelReason"), expression.Value(reason)).
			Set(expression.Name("version"), expression.Value(item.Version+1))
		cond := expression.Name("version").Equal(expression.Value(item.Version))
		_, err := s.db(t).Update(ctx, kit.Key{PK: item.PK, SK: item.SK}, upd, &cond, types.ReturnValueNone)
		if err == nil {
			item.Status, item.CancelledAt, item.CancelReason = StatusCancelled, now, reason
			out := cancelledOf(item, false)
			out.PSPStatus = pspStatus
			return out, nil
		}
		if !errors.Is(err, kit.ErrConditionFailed) {
			return nil, fmt.Errorf("charges: mark cancelled: %w", err)
		}
		if item, err = s.item(ctx, t, kit.Key{PK: item.PK, SK: item.SK}); err != nil {
			return nil, err
		}
		if item.Status == StatusCancelled {
			return cancelledOf(item, true), nil
		}
	}
	return nil, errCancelContended
}

func cancelledOf(item *chargeItem, already bool) *Cancelled {
	return &Cancelled{ChargeID: item.ChargeID, Status: StatusCancelled, PSPStatus: psp.StatusRemoved, AlreadyCancelled: already,
		CancelledAt: item.CancelledAt, Reason: item.CancelReason}
}

// CancelSuperseded cancels, best effort, the open Pix charges of a
// contract that a settlement made pointless: those of the instalments
// seqs (all of the contract's when seqs is nil) except the charge that
// was paid. It finds them with one keyed Query of the contract's charge
// items under the debtor's partition. A charge the PSP refuses to cancel
// (paid meanwhile, or the PSP down) is left as it is: its payment is
// applied when it arrives, and DELETE /v1/charges/{chargeId} retries.
// It answers the charges cancelled and the first error met.
func (s *Service) CancelSuperseded(ctx context.Context, t *tenant.Tenant, dk, contractID string, seqs []int, except string) ([]string, error) {
	if s.psps == nil {
		return nil, nil
	}
	ctx = kit.Within(ctx, "charge.cancel_superseded")
	// The PSP first: a tenant without one (no Pix charge can be at a PSP)
	// pays no Query for this on every settlement.
	p, err := s.psps.For(ctx, t)
	if err != nil || p == nil {
		return nil, err
	}
	var open []*chargeItem
	q := kit.Query{Partition: keys.Debtor(t.ID, dk), Sort: kit.BeginsWith(keys.ContractCharge(contractID, "")), Consistent: true}
	for cursor := ""; ; {
		page, err := s.db(t).QueryPage(ctx, q, cursor)
		if err != nil {
			return nil, fmt.Errorf("charges: list the contract's charges: %w", err)
		}
		for _, it := range page.Items {
			var item chargeItem
			if err := attributevalue.UnmarshalMap(it, &item); err != nil {
				return nil, fmt.Errorf("charges: decode charge: %w", err)
			}
			if item.Method == PIX && item.PixType != "" && item.Status == "" && item.ChargeID != except &&
				(seqs == nil || slices.Contains(seqs, item.Seq)) {
				open = append(open, &item)
			}
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	var done []string
	var first error
	for _, item := range open {
		if _, err := s.cancel(ctx, t, p, item, ReasonSuperseded); err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		done = append(done, item.ChargeID)
	}
	return done, first
}

// supersedeTimeout bounds Supersede's PSP calls, so a slow PSP does not
// hold the answer of the call that triggered them for long.
const supersedeTimeout = 5 * time.Second

// Supersede is CancelSuperseded as a follow-up of a committed change (a
// settlement, a write-off, an agreement): detached from the caller's
// cancellation, bounded in time, its errors dropped — it never changes
// what was committed, a charge it could not cancel stays payable and its
// payment is applied when it comes (ADR 0048).
func (s *Service) Supersede(ctx context.Context, t *tenant.Tenant, dk, contractID string, seqs []int, except string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), supersedeTimeout)
	defer cancel()
	_, _ = s.CancelSuperseded(ctx, t, dk, contractID, seqs, except)
}

// PSP is the tenant's Pix PSP for a call that is not about one charge (a
// refund of a payment): 422 psp_not_configured when it has none.
func (s *Service) PSP(ctx context.Context, t *tenant.Tenant) (psp.PSP, error) {
	return s.provider(ctx, t)
}
