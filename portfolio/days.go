package portfolio

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// DaySummary is one civil date's counters as the stream consumer keeps
// them (ADR 0085): Counts holds every counted attribute (promisesKept,
// cures, contactsSMS, refusedLIMIT, ...), zero when absent.
type DaySummary struct {
	Date      string           `json:"date"`
	Counts    map[string]int64 `json:"counts"`
	UpdatedAt string           `json:"updatedAt"`
}

// maxDays bounds the dates one Days call reads (a month and a little).
const maxDays = 62

var errDays = errs.E(errs.Invalid, "invalid_days", "from and to must be dates YYYY-MM-DD, from ≤ to, at most 62 days apart")

// Days reads the day counters of from..to (inclusive): one Query of the
// tenant's partition between DSUM#from and DSUM#to, eventually
// consistent. A date the consumer counted nothing on has no item.
func (s *Service) Days(ctx context.Context, t *tenant.Tenant, from, to calendar.Date) ([]DaySummary, error) {
	if to.Before(from) || to.Sub(from) >= maxDays {
		return nil, errDays
	}
	ctx = kit.Within(ctx, "portfolio.days")
	db := s.kit.Tenant(t.ID, t.CursorKey())
	q := kit.Query{Partition: keys.Tenant(t.ID), Sort: kit.Between(keys.DaySummary(from.String()), keys.DaySummary(to.String()))}
	var out []DaySummary
	for cursor := ""; ; {
		page, err := db.QueryPage(ctx, q, cursor)
		if err != nil {
			return nil, fmt.Errorf("portfolio: day counters: %w", err)
		}
		for _, it := range page.Items {
			out = append(out, decodeDay(it))
		}
		if page.Next == "" {
			return out, nil
		}
		cursor = page.Next
	}
}

// decodeDay reads a day counters item: every number attribute is a count.
func decodeDay(it kit.Item) DaySummary {
	d := DaySummary{Counts: map[string]int64{}}
	for name, v := range it {
		switch x := v.(type) {
		case *types.AttributeValueMemberN:
			if n, err := strconv.ParseInt(x.Value, 10, 64); err == nil {
				d.Counts[name] = n
			}
		case *types.AttributeValueMemberS:
			switch name {
			case "date":
				d.Date = x.Value
			case "updatedAt":
				d.UpdatedAt = x.Value
			}
		}
	}
	return d
}
