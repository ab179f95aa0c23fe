package agenda

import (
	"context"
	"errors"
	"fmt"
	"time"

	"lastro/collections/calendar"
	"lastro/contract"
	"lastro/policy"
	"lastro/tenant"
)

// EvBureauUpdated is the event of an UPDATE sent to the bureau.
const EvBureauUpdated = "BureauUpdated"

// update sends the bureau the overdue amount of a reported contract that
// changed since it was reported or last updated (ADR 0067): submitted as
// the visit runs, like a removal (the bureau tolerates the same record
// twice), and recorded on the header so it is owed once per change.
func (r *Runner) update(ctx context.Context, t *tenant.Tenant, c *contract.Contract, w *work, date calendar.Date, now time.Time) error {
	if r.d.Bureau == nil {
		return errors.New("agenda: no bureau configured for BUREAU_UPDATE")
	}
	h := &c.Header
	amount := c.OverdueCents(date, c.Header.Calendar(t))
	if h.ReportedAt == "" || amount == h.ReportedCents || amount == 0 {
		return nil // nothing reported, nothing changed, or cured: the removal says it
	}
	rec := Record{Kind: Update, TenantID: t.ID, DebtorKey: h.DebtorKey, ContractID: h.ContractID, AmountCents: amount,
		OldestOverdue: h.OldestOverdueDueDate, ReportedAt: h.ReportedAt, At: now.UTC().Format(time.RFC3339)}
	if err := r.d.Bureau.Submit(ctx, t, rec); err != nil {
		return fmt.Errorf("bureau: %w", err)
	}
	w.events = append(w.events, c.NewEvent(0, EvBureauUpdated, now, actor, map[string]any{"reportedAt": h.ReportedAt,
		"amountCents": amount, "previousCents": h.ReportedCents, "oldestOverdueDueDate": h.OldestOverdueDueDate, "on": date.String()}))
	h.ReportedCents = amount
	w.out.executed = append(w.out.executed, policy.BureauUpdate)
	return nil
}
