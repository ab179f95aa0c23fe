package debtor

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// ErrStale is returned by Reschedule when the contract changed since the
// caller read it: re-read and decide again (a paid contract is skipped).
var ErrStale = errs.E(errs.Conflict, "contract_changed", "the contract changed since it was read")

// Reschedule moves a contract's next action — its entry in the agenda
// index — to action on date, only if the header is still at version
// expected (the version the caller read). This is how the agenda must
// reschedule: a settlement that cured or settled the contract in the
// meantime bumped the version, so the reschedule fails instead of putting
// a paid contract back on the régua (seed 001 section 4). The condition
// also refuses a settled contract whatever its version, and a contract
// that does not exist.
func (s *Service) Reschedule(ctx context.Context, t *tenant.Tenant, dk, contractID string, expected int, action string, date calendar.Date) error {
	ctx = kit.Within(ctx, "agenda.reschedule")
	h := kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.Contract(contractID)}
	shard := Shard(contractID, t.Shards)
	upd := expression.Set(expression.Name("nextAction"), expression.Value(action)).
		Set(expression.Name("nextActionDate"), expression.Value(date.String())).
		Set(expression.Name("GSI1PK"), expression.Value(keys.Agenda(t.ID, date.String(), shard))).
		Set(expression.Name("GSI1SK"), expression.Value(keys.AgendaEntry(action, contractID))).
		Set(expression.Name("version"), expression.Value(expected+1)).
		Set(expression.Name("updatedAt"), expression.Value(keys.Timestamp(s.clock.Now())))
	cond := expression.Name("version").Equal(expression.Value(expected)).
		And(expression.Name("status").NotEqual(expression.Value(StatusSettled)))
	if _, err := s.db(t).Update(ctx, h, upd, &cond, types.ReturnValueNone); err != nil {
		if errors.Is(err, kit.ErrConditionFailed) {
			return ErrStale
		}
		return fmt.Errorf("reschedule: %w", err)
	}
	return nil
}
