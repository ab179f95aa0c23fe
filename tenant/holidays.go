package tenant

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/labstack/echo/v4"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/web"
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

// HolidayRoutes registers the calendar endpoints of a tenant.
func (s *Service) HolidayRoutes(srv *web.Server) {
	srv.Handle(web.Doc{Method: http.MethodPut, Path: "/v1/tenant/holidays",
		Summary: "Replace the tenant's extra non-business days (municipal holidays...); national bank holidays are built in",
		Roles:   []web.Role{web.Supervisor}, Request: HolidaysInput{Dates: []string{"2027-01-25"}}, Response: HolidaysInput{}}, s.putHolidays)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/tenant/holidays", Summary: "A year's national bank holidays and the tenant's extra days (?year=)",
		Roles: []web.Role{web.Operator, web.Supervisor, web.Compliance}, Response: HolidaysView{}, Query: []string{"year"}}, s.getHolidays)
}

func (s *Service) putHolidays(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	var in HolidaysInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	dates, err := s.SetHolidays(c.Request().Context(), t, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, HolidaysInput{Dates: dates})
}

func (s *Service) getHolidays(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	year := calendar.Today(s.clock.Now(), t.Location).Year()
	if q := c.QueryParam("year"); q != "" {
		if year, err = strconv.Atoi(q); err != nil || year < 1900 || year > 2199 {
			return errs.E(errs.Invalid, "invalid_year", "year must be 1900-2199")
		}
	}
	out := HolidaysView{Year: year, National: []HolidayView{}, Tenant: []string{}}
	for _, h := range calendar.NationalBankHolidays(year) {
		out.National = append(out.National, HolidayView{Date: h.Date.String(), Name: h.Name})
	}
	for _, d := range t.Holidays {
		if len(d) >= 4 && d[:4] == strconv.Itoa(year) {
			out.Tenant = append(out.Tenant, d)
		}
	}
	return c.JSON(http.StatusOK, out)
}
