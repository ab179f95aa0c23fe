package calendar

import (
	"sync"
	"time"
)

// Calendar answers business-day questions: national bank holidays plus a
// tenant's extra days (municipal holidays, for instance). Safe for
// concurrent use.
type Calendar struct {
	extra map[Date]bool

	mu    sync.Mutex
	years map[int]map[Date]bool // national holidays, computed once per year
}

// New returns a calendar with the national bank holidays and extra days.
func New(extra ...Date) *Calendar {
	c := &Calendar{extra: map[Date]bool{}, years: map[int]map[Date]bool{}}
	for _, d := range extra {
		c.extra[d] = true
	}
	return c
}

// National is the calendar of national bank holidays only.
var National = New()

func (c *Calendar) national(year int) map[Date]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.years[year]
	if !ok {
		m = map[Date]bool{}
		for _, h := range NationalBankHolidays(year) {
			m[h.Date] = true
		}
		c.years[year] = m
	}
	return m
}

// IsHoliday reports whether d is a bank holiday (national or extra).
func (c *Calendar) IsHoliday(d Date) bool { return c.extra[d] || c.national(d.Year())[d] }

// IsBusinessDay reports whether banks do business on d: a weekday that is
// not a holiday.
func (c *Calendar) IsBusinessDay(d Date) bool {
	wd := d.Weekday()
	return wd != time.Saturday && wd != time.Sunday && !c.IsHoliday(d)
}

// Adjust returns d when it is a business day, else the next one: a due
// date on a weekend or holiday is payable then without charges.
func (c *Calendar) Adjust(d Date) Date {
	for !c.IsBusinessDay(d) {
		d = d.AddDays(1)
	}
	return d
}

// NextBusinessDay is the first business day strictly after d.
func (c *Calendar) NextBusinessDay(d Date) Date { return c.Adjust(d.AddDays(1)) }

// AddBusinessDays moves d by n business days (n may be negative); with
// n = 0 it returns d unchanged.
func (c *Calendar) AddBusinessDays(d Date, n int) Date {
	step := 1
	if n < 0 {
		step, n = -1, -n
	}
	for n > 0 {
		d = d.AddDays(step)
		if c.IsBusinessDay(d) {
			n--
		}
	}
	return d
}

// FirstDayOverdue is the first day an instalment due on d is late: the
// business day after the day it is payable without charges.
func (c *Calendar) FirstDayOverdue(d Date) Date { return c.NextBusinessDay(c.Adjust(d)) }

// IsOverdue reports whether an instalment due on d is late on today.
func (c *Calendar) IsOverdue(due, today Date) bool { return today.After(c.Adjust(due)) }
