package settlement

import (
	"context"
	"time"

	"lastro/collections/errs"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/psp"
	"lastro/tenant"
)

// Reconciled is the answer of POST /v1/charges/{chargeId}/reconcile: the
// charge's status at its PSP and what became of each payment it lists.
type Reconciled struct {
	ChargeID  string      `json:"chargeId"`
	PSPStatus string      `json:"pspStatus"` // ATIVA | CONCLUIDA | REMOVIDA_PELO_USUARIO_RECEBEDOR | REMOVIDA_PELO_PSP
	Payments  []PixResult `json:"payments"`  // in the PSP's order: applied | already_applied | conflict | failed
}

var errNoCharges = errs.E(errs.Rule, "psp_not_configured", "the engine has no Pix PSPs configured")

// Reconcile reads a Pix charge back from the tenant's PSP (GET) and
// applies every payment it lists exactly once, through the webhook's own
// path (ApplyPix: the endToEndId is the settlement id), so a webhook
// that was lost, or refused while the engine was down, cannot leave a
// paid charge unapplied. Running it again, or the webhook arriving
// later, answers already_applied. A payment the PSP lists malformed is
// answered failed and nothing is applied for it; a cancelled charge's
// payments are applied all the same (ADR 0048).
func (s *Service) Reconcile(ctx context.Context, t *tenant.Tenant, chargeID string) (*Reconciled, error) {
	if s.charges == nil {
		return nil, errNoCharges
	}
	ctx = kit.Within(ctx, "settlement.reconcile")
	ch, err := s.charges.AtPSP(ctx, t, chargeID)
	if err != nil {
		return nil, err
	}
	listed := ch.Payments
	if len(listed) > MaxPixPayments {
		return nil, errs.E(errs.Rule, "too_many_payments", "the PSP lists more than %d payments for the charge", MaxPixPayments)
	}
	out := &Reconciled{ChargeID: chargeID, PSPStatus: ch.Status, Payments: make([]PixResult, len(listed))}
	var valid []PixPayment
	var at []int // the position in listed of each valid payment
	seen := map[string]bool{}
	for i, p := range listed {
		pp, e := listedPayment(p, chargeID)
		if e == nil && seen[pp.EndToEndID] {
			e = &ResultError{Code: "psp_bad_answer", Message: "the PSP lists an endToEndId twice"}
		}
		if e != nil {
			out.Payments[i] = PixResult{EndToEndID: pp.EndToEndID, Status: StatusFailed, Error: e}
			continue
		}
		seen[pp.EndToEndID] = true
		valid, at = append(valid, pp), append(at, i)
	}
	ans, err := s.ApplyPix(ctx, t, valid)
	if err != nil {
		return nil, err
	}
	for j, r := range ans.Pix {
		out.Payments[at[j]] = r
	}
	return out, nil
}

// listedPayment checks one payment the PSP listed as the webhook's
// decoder would; its error never echoes the PSP's values (a malformed
// endToEndId is dropped from the answer too).
func listedPayment(p psp.Payment, chargeID string) (PixPayment, *ResultError) {
	bad := func(msg string) (PixPayment, *ResultError) {
		id := p.EndToEndID
		if !ValidEndToEndID(id) {
			id = ""
		}
		return PixPayment{EndToEndID: id}, &ResultError{Code: "psp_bad_answer", Message: msg}
	}
	if !ValidEndToEndID(p.EndToEndID) || p.EndToEndID[0] != 'E' {
		return bad("the PSP lists a payment whose endToEndId is not 32 letters and digits starting with E")
	}
	if p.TxID != "" && p.TxID != chargeID {
		return bad("the PSP lists a payment of another txid under the charge")
	}
	cents, err := psp.ParseValor(p.Valor)
	if err != nil {
		return bad("the PSP lists a payment whose valor is not an amount of reais")
	}
	when, err := time.Parse(time.RFC3339Nano, p.Horario)
	if err != nil {
		return bad("the PSP lists a payment whose horario is not an RFC 3339 instant")
	}
	return PixPayment{EndToEndID: p.EndToEndID, TxID: chargeID, ValorCents: cents, Horario: when}, nil
}

// cancelSuperseded cancels, best effort, the other open Pix charges of
// the instalments a settlement just paid off — all of the contract's
// when it settled the contract — so no debtor pays a quote no longer
// owed (ADR 0048). It runs after the settlement committed and never
// changes its outcome.
func (s *Service) cancelSuperseded(ctx context.Context, t *tenant.Tenant, out *Outcome, debtorKey string) {
	if s.charges == nil || out == nil || out.Status != StatusApplied || out.ContractID == "" {
		return
	}
	var seqs []int
	if out.ContractStatus != contract.StatusSettled {
		for _, a := range out.AppliedTo {
			if a.Settled {
				seqs = append(seqs, a.Seq)
			}
		}
		if len(seqs) == 0 {
			return
		}
	}
	s.charges.Supersede(ctx, t, debtorKey, out.ContractID, seqs, out.ChargeID)
}

// ReconcileRun is what one scheduled pass over a tenant's open Pix
// charges did.
type ReconcileRun struct {
	Checked     int `json:"checked"`     // charges read back from the PSP
	Applied     int `json:"applied"`     // payments applied by the pass (their webhook was lost or late)
	Closed      int `json:"closed"`      // checks closed: paid and applied, removed, or past their validity
	Rescheduled int `json:"rescheduled"` // checks moved later: still open, or failed for now
	Failed      int `json:"failed"`      // checks that failed this time (retried later)
}

// MaxChecksPerPass bounds the charges one pass reads back for a tenant,
// so a backlog is worked through over several passes, each short.
const MaxChecksPerPass = 200

// ReconcileOpen reads back, at the tenant's PSP, the open Pix charges
// whose check is due (charges.DueChecks: one keyed Query, no Scan) and
// applies every payment they list through Reconcile — the webhook's own
// path, so a payment already applied answers already_applied and one
// whose webhook was lost is applied exactly once. A paid charge whose
// payments are all recorded, a removed one, or one past its validity is
// closed; one still open, or whose read failed, is checked again later
// (docs/adr/0070).
func (s *Service) ReconcileOpen(ctx context.Context, t *tenant.Tenant) (*ReconcileRun, error) {
	if s.charges == nil {
		return &ReconcileRun{}, nil
	}
	ctx = kit.Within(ctx, "settlement.reconcile_open")
	now := s.clock.Now()
	due, err := s.charges.DueChecks(ctx, t, now, MaxChecksPerPass)
	if err != nil {
		return nil, err
	}
	run := &ReconcileRun{}
	for _, c := range due {
		if err := ctx.Err(); err != nil {
			return run, err
		}
		run.Checked++
		out, err := s.Reconcile(ctx, t, c.ChargeID)
		done := false
		_, code, _ := errs.Public(err)
		switch {
		case err != nil && (errs.Is(err, errs.NotFound) || code == "charge_not_at_psp" || code == "psp_not_configured"):
			// Unknown here, or no longer at a PSP: nothing to heal by
			// reading it again. (A PSP's refusal is retried: it may be
			// the tenant's settings, fixed meanwhile.)
			done = true
		case err != nil:
			run.Failed++
		default:
			ans := PixAnswer{Pix: out.Payments}
			for _, p := range out.Payments {
				if p.Status == StatusApplied {
					run.Applied++
				}
			}
			if ans.Failed() {
				run.Failed++
				break
			}
			switch out.PSPStatus {
			case psp.StatusPaid, psp.StatusRemoved, psp.StatusRemovedByPSP:
				done = true
			}
		}
		if done {
			if err := s.charges.CloseCheck(ctx, t, c); err != nil {
				return run, err
			}
			run.Closed++
			continue
		}
		kept, err := s.charges.NextCheck(ctx, t, c, now)
		if err != nil {
			return run, err
		}
		if kept {
			run.Rescheduled++
		} else {
			run.Closed++
		}
	}
	return run, nil
}
