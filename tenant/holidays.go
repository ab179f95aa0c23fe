package tenant

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
)

// MaxHolidays bounds a tenant's extra days (a few municipal holidays a
// year for some years ahead).
const MaxHolidays = 200

// HolidaysInput is the body of PUT /v1/tenant/holidays: the complete list
// of the tenant's extra non-business days.
type HolidaysInput struct {
	Dates []string `json:"dates"`
}

// HolidaysView lists a year's non-business days of the tenant.
type HolidaysView struct {
	Year     int           `json:"year"`
	National []HolidayView `json:"national"`
	Tenant   []string      `json:"tenant"`
}

// HolidayView is one national holiday.
type HolidayView struct {
	Date string `json:"date"`
	Name string `json:"name"`
}

// SetHolidays replaces the tenant's extra non-business days. Due dates on
// them are payable the next business day, like on national holidays.
// Contracts already signed keep their stored agenda dates.
func (s *Service) SetHolidays(ctx context.Context, t *Tenant, in HolidaysInput) ([]string, error) {
	if len(in.Dates) > MaxHolidays {
		return nil, errs.E(errs.Invalid, "too_many_holidays", "at most %d dates", MaxHolidays)
	}
	seen := map[string]bool{}
	dates := []string{}
	for i, d := range in.Dates {
		if _, err := calendar.Parse(d); err != nil {
			return nil, errs.E(errs.Invalid, "invalid_date", "dates[%d] must be a real date YYYY-MM-DD", i)
		}
		if !seen[d] {
			seen[d] = true
			dates = append(dates, d)
		}
	}
	sort.Strings(dates)
	ctx, _ = kit.Operation(ctx, "tenant.holidays")
	var list any = dates
	upd := expression.Set(expression.Name("holidays"), expression.Value(list)).
		Set(expression.Name("version"), expression.Name("version").Plus(expression.Value(1))).
		Set(expression.Name("updatedAt"), expression.Value(keys.Timestamp(s.clock.Now())))
	cond := expression.Name("version").Equal(expression.Value(t.Version))
	_, err := s.kit.Tenant(t.ID, nil).Update(ctx, kit.Key{PK: keys.Tenant(t.ID), SK: keys.TenantSK}, upd, &cond, types.ReturnValueNone)
	s.Invalidate(t.ID)
	if errors.Is(err, kit.ErrConditionFailed) {
		return nil, errs.E(errs.Conflict, "tenant_changed", "the tenant changed concurrently; retry")
	}
	if err != nil {
		return nil, fmt.Errorf("set holidays: %w", err)
	}
	return dates, nil
}
