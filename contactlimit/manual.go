package contactlimit

import (
	"context"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/contract"
	"lastro/contract/regua"
	"lastro/tenant"
)

var errContractNotFound = errs.E(errs.NotFound, "contract_not_found", "contract not found for this debtor")

// manual checks an operator's contact against the contract it names and
// fills the claim's facts from it: the contract must exist in the
// debtor's collection (404 otherwise: a message never names another
// debtor's debt), its open dispute blocks the contact (DISPUTE, as the
// régua's), and the message says what the contract says.
func (g *Gateway) manual(ctx context.Context, t *tenant.Tenant, c *Claim) error {
	// Bad input is a 400 before the contract is looked for.
	if err := c.validate(g.clock.Now()); err != nil {
		return err
	}
	k, err := contract.Load(ctx, g.db(t), t.ID, c.DebtorKey, c.ContractID)
	if err != nil {
		return err
	}
	if k == nil {
		return errContractNotFound
	}
	h := &k.Header
	c.Disputed = h.Hold == regua.HoldDispute
	today := calendar.Today(g.clock.Now(), t.Location)
	c.DueDate = h.OldestOverdueDueDate
	c.AmountCents = k.OverdueCents(today, h.Calendar(t))
	c.DaysPastDue = h.DaysPastDue(today, h.Calendar(t))
	c.Message.OutstandingCents = h.OutstandingCents
	return nil
}
