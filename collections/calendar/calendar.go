package calendar

import (
	"sync"
	"time"
)

// Calendar answers business-day questions: national bank holidays, a
// state's bank holidays when it is a state's calendar (In), plus a
// tenant's extra days (municipal holidays, for instance). Safe for
// concurrent use.
type Calendar struct {
	extra map[Date]bool
	uf    string // "" : national only

	mu     sync.Mutex
	years  map[int]map[Date]bool // national (and the state's) holidays, computed once per year
	states map[string]*Calendar  // In's answers, by UF
}

// New returns a calendar with the national bank holidays and extra days.
func New(extra ...Date) *Calendar {
	c := &Calendar{extra: map[Date]bool{}, years: map[int]map[Date]bool{}}
	for _, d := range extra {
		c.extra[d] = true
	}
	return c
}

// In is c for a debtor in uf: the same national holidays and extra days
// plus the state's bank holidays (StateBankHolidays). An unknown or empty
// uf is c itself, and so is a calendar that is already a state's. The
// answer is kept, so callers may ask for it on every contract.
func (c *Calendar) In(uf string) *Calendar {
	if c.uf != "" || !HasStateCalendar(uf) {
		return c
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.states[uf]; ok {
		return s
	}
	if c.states == nil {
		c.states = map[string]*Calendar{}
	}
	s := &Calendar{extra: c.extra, uf: uf, years: map[int]map[Date]bool{}}
	c.states[uf] = s
	return s
}

// UF is the state whose holidays c includes ("" for none).
func (c *Calendar) UF() string { return c.uf }

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
		for _, h := range StateBankHolidays(c.uf, year) {
			m[h.Date] = true
		}
		c.years[year] = m
	}
	return m
}

// IsHoliday reports whether d is a bank holiday (national, the state's or
// extra).
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
