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
