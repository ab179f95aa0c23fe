package charges

import (
	"context"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/tenant"
)

// Due is what a contract owes if paid today: per open instalment the
// components a charge issued now would ask for (the same arithmetic as
// Issue, on the contract's frozen charges policy), and the totals a
// collector quotes — overdue (the late instalments) and the whole.
type Due struct {
	ContractID string `json:"contractId"`
	Today      string `json:"today"`
	// OverdueCents is what the late instalments owe today, fine and late
	// interest included: the "saldo atualizado" of what is in arrears.
	OverdueCents int64 `json:"overdueCents"`
	// TotalCents adds the instalments not yet due at their face value.
	TotalCents   int64            `json:"totalCents"`
	Installments []InstallmentDue `json:"installments"`
}

// InstallmentDue is one open instalment's amount due today.
type InstallmentDue struct {
	Seq          int        `json:"seq"`
	DueDate      string     `json:"dueDate"`
	PayableUntil string     `json:"payableUntil"` // the due date moved to the next business day
	DaysLate     int        `json:"daysLate"`
	Late         bool       `json:"late"`
	Owed         Components `json:"owed"`
	TotalCents   int64      `json:"totalCents"`
}

// Due quotes contract contractID of debtor dk as of today: one Query for
// the contract (contract.Load) and the charges policy it was created
// under. Nothing is written: the fine and interest become fact only when
// a payment is applied.
func (s *Service) Due(ctx context.Context, t *tenant.Tenant, dk, contractID string) (*Due, error) {
	if !keys.ValidDebtorKey(dk) {
		return nil, errs.E(errs.Invalid, "invalid_debtor_key", "debtorKey must be 16 lower-case hex characters")
	}
	if !keys.ValidIdentifier(contractID) {
		return nil, errs.E(errs.Invalid, "invalid_contract_id", "contractId must be 1-64 of A-Z a-z 0-9 - _ .")
	}
	ctx = kit.Within(ctx, "charge.due")
	c, err := contract.Load(ctx, s.db(t), t.ID, dk, contractID)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errContractNotFound
	}
	v, err := contract.PolicyVersion(c.Header.ChargesPolicy)
	if err != nil {
		return nil, err
	}
	p, err := s.policies.Charges(ctx, t, v)
	if err != nil {
		return nil, err
	}
	cal := c.Header.Calendar(t) // the debtor's state calendar (ADR 0065)
	today := calendar.Today(s.clock.Now(), t.Location)
	out := &Due{ContractID: contractID, Today: today.String(), Installments: []InstallmentDue{}}
	for i := range c.Installments {
		inst := &c.Installments[i]
		if !inst.Open() {
			continue
		}
		a, owed := AmountDue(p, cal, StateOf(inst), today)
		d := InstallmentDue{Seq: inst.Seq, DueDate: inst.DueDate, PayableUntil: a.PayableUntil.String(), DaysLate: a.DaysLate,
			Late: a.DaysLate > 0, Owed: owed, TotalCents: owed.Total()}
		if d.Late {
			out.OverdueCents += d.TotalCents
		}
		out.TotalCents += d.TotalCents
		out.Installments = append(out.Installments, d)
	}
	return out, nil
}
