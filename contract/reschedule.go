package contract

import (
	"context"
	"errors"
	"fmt"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/kit"
	"lastro/tenant"
)

// ErrStale is returned when the contract changed since the caller read
// it: re-read and decide again (a paid contract is skipped).
var ErrStale = errs.E(errs.Conflict, "contract_changed", "the contract changed since it was read")

// Reschedule moves a contract's next action — its entry in the agenda
// index — to action on date, only if the header is still at version
// expected (the version the caller read). This is how the agenda
// reschedules: a settlement that cured or settled the contract in the
// meantime bumped the version, so the reschedule fails instead of putting
// a paid contract back on the régua (docs/design.md#sparse-indexes). A settled or
// missing contract is refused whatever its version.
func (s *Service) Reschedule(ctx context.Context, t *tenant.Tenant, dk, contractID string, expected int, action string, date calendar.Date) error {
	ctx = kit.Within(ctx, "agenda.reschedule")
	db := s.db(t)
	c, err := Load(ctx, db, t.ID, dk, contractID)
	if err != nil {
		return err
	}
	if c == nil || c.Header.Version != expected || c.Header.Status == StatusSettled {
		return ErrStale
	}
	c.Header.NextAction, c.Header.NextActionDate = action, date.String()
	actions, err := c.Save(s.clock.Now())
	if err != nil {
		return err
	}
	if err := db.Write(ctx, actions...); err != nil {
		if errors.Is(err, kit.ErrConditionFailed) || errors.Is(err, kit.ErrConflict) {
			return ErrStale
		}
		return fmt.Errorf("reschedule: %w", err)
	}
	return nil
}
