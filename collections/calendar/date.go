// Package calendar is Lastro's notion of days: civil dates (never
// instants), Brazil's national bank holidays, business-day arithmetic and
// "today" in a tenant's time zone (docs/design.md#dates-and-calendar).
package calendar

import (
	"fmt"
	"time"
	// The zone database is embedded in every binary that uses dates: a
	// tenant's "today" depends on time.LoadLocation("America/Sao_Paulo"),
	// which must not fail (or silently differ) on a host or container
	// without /usr/share/zoneinfo.
	_ "time/tzdata"
)

// Date is a civil date: a day on the calendar, with no time of day and no
// time zone. Due dates are dates; "2026-08-10" is never an instant.
type Date struct {
	t time.Time // midnight UTC of the day; the zero value is the zero Date
}

// Layout is the ISO form dates are written in everywhere.
const Layout = "2006-01-02"

// D builds a date; out-of-range parts normalise like time.Date.
func D(year int, month time.Month, day int) Date {
	return Date{t: time.Date(year, month, day, 0, 0, 0, 0, time.UTC)}
}

// Parse reads an ISO date ("2026-08-10"), refusing impossible days such as
// 2026-02-30 and years outside 1900-2199.
func Parse(s string) (Date, error) {
	t, err := time.Parse(Layout, s)
	if err != nil || t.Format(Layout) != s {
		return Date{}, fmt.Errorf("calendar: %q is not a date (YYYY-MM-DD)", s)
	}
	if y := t.Year(); y < 1900 || y > 2199 {
		return Date{}, fmt.Errorf("calendar: year %d out of range", y)
	}
	return Date{t: t}, nil
}

// MustParse is Parse for constants and tests.
func MustParse(s string) Date {
	d, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return d
}

// Of is the civil date of instant t in loc.
func Of(t time.Time, loc *time.Location) Date {
	y, m, d := t.In(loc).Date()
	return D(y, m, d)
}

// Today is the civil date now in loc: a tenant's "today".
func Today(now time.Time, loc *time.Location) Date { return Of(now, loc) }

// String is the ISO form; the zero Date is "".
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return d.t.Format(Layout)
}

// IsZero reports whether d is the zero Date.
func (d Date) IsZero() bool { return d.t.IsZero() }

// Year, Month and Day are the date's parts.
func (d Date) Year() int             { return d.t.Year() }
func (d Date) Month() time.Month     { return d.t.Month() }
func (d Date) Day() int              { return d.t.Day() }
func (d Date) Weekday() time.Weekday { return d.t.Weekday() }

// AddDays returns d moved by n calendar days.
func (d Date) AddDays(n int) Date { return Date{t: d.t.AddDate(0, 0, n)} }

// AddMonths returns d moved by n months, clamped to the month's last day
// (Jan 31 + 1 month = Feb 28), as instalment schedules expect.
func (d Date) AddMonths(n int) Date {
	first := time.Date(d.Year(), d.Month()+time.Month(n), 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return D(first.Year(), first.Month(), min(d.Day(), last))
}

// Sub is the number of days from e to d (d − e).
func (d Date) Sub(e Date) int { return int(d.t.Sub(e.t).Hours() / 24) }

// Before, After and Equal compare dates.
func (d Date) Before(e Date) bool { return d.t.Before(e.t) }
func (d Date) After(e Date) bool  { return d.t.After(e.t) }
func (d Date) Equal(e Date) bool  { return d.t.Equal(e.t) }

// Compare returns -1, 0 or +1.
func (d Date) Compare(e Date) int { return d.t.Compare(e.t) }

// Midnight is the instant the date starts in loc.
func (d Date) Midnight(loc *time.Location) time.Time {
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc)
}
