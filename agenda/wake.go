package agenda

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/tenant"
)

// A wake-up (PK T#<t>, SK WAKE#<date>#<ts>) says that contacts of the run
// date wait for a window that opens at ts on the debtor's clock: written
// with the step that waits (ADR 0064), read by the scheduler with one
// strongly consistent Query of the date, and marked done once a run after
// ts finished every shard. One item per distinct opening, however many
// contracts wait for it.
type wakeItem struct {
	SK   string `dynamodbav:"SK"`
	At   string `dynamodbav:"at"`
	Done bool   `dynamodbav:"done"`
}

// wakeAction is the write, in the step's own transaction, of the wake-up
// of date at the instant at (fixed-width UTC): an update, so waiting
// contracts share the item, and it re-arms one marked done.
func wakeAction(t *tenant.Tenant, date calendar.Date, at string, clockNow time.Time) (kit.Action, error) {
	when, err := time.Parse("2006-01-02T15:04:05.000Z", at)
	if err != nil {
		return kit.Action{}, fmt.Errorf("agenda: wake-up instant %q: %w", at, err)
	}
	name, val := expression.Name, expression.Value
	upd := expression.Set(name("type"), val("AGENDA_WAKE")).Set(name("date"), val(date.String())).Set(name("at"), val(at)).
		Set(name("done"), val(false)).
		Set(name("expiresAt"), val(clockNow.Add(8*24*time.Hour).Unix()))
	return kit.UpdateAction(kit.Key{PK: keys.Tenant(t.ID), SK: keys.Wake(date.String(), when)}, upd, nil), nil
}

// dueWakes returns the wake-ups of date whose instant has come (at or
// before now) and that no finished run served yet.
func (r *Runner) dueWakes(ctx context.Context, t *tenant.Tenant, date calendar.Date, now time.Time) ([]wakeItem, error) {
	ctx = kit.Within(ctx, "agenda.wakes")
	q := kit.Query{Partition: keys.Tenant(t.ID), Sort: kit.BeginsWith(keys.WakesOn(date.String())), Consistent: true}
	ts := keys.Timestamp(now)
	var due []wakeItem
	for cursor := ""; ; {
		page, err := r.db(t).QueryPage(ctx, q, cursor)
		if err != nil {
			return nil, fmt.Errorf("agenda: wake-ups of %s: %w", date, err)
		}
		for _, it := range page.Items {
			var w wakeItem
			if err := attributevalue.UnmarshalMap(it, &w); err != nil {
				return nil, fmt.Errorf("agenda: decode wake-up: %w", err)
			}
			if !w.Done && w.At <= ts {
				due = append(due, w)
			}
		}
		if page.Next == "" {
			return due, nil
		}
		cursor = page.Next
	}
}

// wakesServed marks wake-ups done after a run that started after their
// instant finished every shard: conditioned on the instant they had, so a
// contract that re-armed one meanwhile (it cannot: its instant is in the
// future) would keep it.
func (r *Runner) wakesServed(ctx context.Context, t *tenant.Tenant, wakes []wakeItem) error {
	for _, w := range wakes {
		cond := expression.Name("at").Equal(expression.Value(w.At))
		upd := expression.Set(expression.Name("done"), expression.Value(true))
		if _, err := r.db(t).Update(ctx, kit.Key{PK: keys.Tenant(t.ID), SK: w.SK}, upd, &cond, types.ReturnValueNone); err != nil {
			return fmt.Errorf("agenda: wake-up served: %w", err)
		}
	}
	return nil
}

// waiting reports whether h's step due by date waits for a contact window
// that opens after now (contract.Header.ContactAfter).
func waiting(h *contract.Header, date calendar.Date, now time.Time) bool {
	return h.ContactAfter != "" && h.NextActionDate <= date.String() && keys.Timestamp(now) < h.ContactAfter
}
