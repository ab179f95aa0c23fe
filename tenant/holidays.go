package tenant

import (
	"context"
	"sort"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/calendar"
	"lastro/collections/errs"
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
	var list any = dates
	if err := s.setVersioned(ctx, t, "holidays", expression.Set(expression.Name("holidays"), expression.Value(list))); err != nil {
		return nil, err
	}
	return dates, nil
}
