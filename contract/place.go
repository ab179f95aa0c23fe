package contract

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// Calendar is the business calendar of the contract: the tenant's, with
// the bank holidays of the debtor's state the header records (ADR 0065).
func (h *Header) Calendar(t *tenant.Tenant) *calendar.Calendar { return t.CalendarIn(h.UF) }

// MaxRelocated bounds the contracts one profile change may move to
// another state's calendar: they are written in the profile's own
// transaction (100 actions, two of them the profile and its event).
const MaxRelocated = 98

// ErrTooManyContracts refuses a change of state for a debtor with more
// contracts than one transaction can move.
var ErrTooManyContracts = errs.E(errs.Rule, "too_many_contracts",
	"the debtor has more than %d contracts: a change of state cannot move them all at once", MaxRelocated)

// Relocate returns the writes that move every contract of dk whose header
// does not record uf yet to the calendar of uf, for the caller to commit
// in one transaction with the profile's change: each conditioned on the
// header's version read and bumping it, so an agenda visit or a payment
// that read the header before fails its own version-conditioned write
// and re-reads the new state. The headers are found with one strongly
// consistent Query of the debtor's contracts (CT#), filtered to headers:
// a change of state is rare, and it is the only keyed way to list them.
// Stored agenda dates stay as they are; the next visit re-derives them
// (ADR 0014: a plan never moves a step earlier than owed).
func Relocate(ctx context.Context, db *kit.Tenant, tenantID, dk, uf string, now time.Time) ([]kit.Action, error) {
	only := expression.Name("type").Equal(expression.Value(TypeHeader))
	q := kit.Query{Partition: keys.Debtor(tenantID, dk), Sort: kit.BeginsWith(keys.Contract("")), Consistent: true, Filter: &only, Tag: "relocate"}
	var out []kit.Action
	for cursor := ""; ; {
		page, err := db.QueryPage(ctx, q, cursor)
		if err != nil {
			return nil, fmt.Errorf("list contracts: %w", err)
		}
		for _, it := range page.Items {
			var h struct {
				SK      string `dynamodbav:"SK"`
				UF      string `dynamodbav:"uf"`
				Version int    `dynamodbav:"version"`
			}
			if err := attributevalue.UnmarshalMap(it, &h); err != nil {
				return nil, fmt.Errorf("decode contract header: %w", err)
			}
			if h.UF == uf {
				continue
			}
			if len(out) == MaxRelocated {
				return nil, ErrTooManyContracts
			}
			var upd expression.UpdateBuilder
			if uf == "" {
				upd = expression.Remove(expression.Name("uf"))
			} else {
				upd = expression.Set(expression.Name("uf"), expression.Value(uf))
			}
			upd = upd.Set(expression.Name("version"), expression.Value(h.Version+1)).
				Set(expression.Name("updatedAt"), expression.Value(keys.Timestamp(now)))
			cond := expression.Name("version").Equal(expression.Value(h.Version))
			out = append(out, kit.UpdateAction(kit.Key{PK: keys.Debtor(tenantID, dk), SK: h.SK}, upd, &cond))
		}
		if page.Next == "" {
			return out, nil
		}
		cursor = page.Next
	}
}
