package regua

import (
	"time"

	"lastro/collections/calendar"
	"lastro/policy"
)

// contactHorizon bounds the search for a contact day, so a policy or an
// override that forbids every day answers "none" instead of looping.
const contactHorizon = 400

// IsContactDay reports whether the policy lets the debtor be contacted at
// some time on d: the window of that weekday exists, and a bank holiday of
// cal (national ones, Carnival, the tenant's extra days) follows
// Sunday's window. A nil policy is policy.DefaultDunning and a nil calendar
// is calendar.National.
func IsContactDay(p *policy.Dunning, cal *calendar.Calendar, d calendar.Date) bool {
	if p == nil {
		p = policy.DefaultDunning()
	}
	if cal == nil {
		cal = calendar.National
	}
	return isContactDay(p, cal, d)
}

func isContactDay(p *policy.Dunning, cal *calendar.Calendar, d calendar.Date) bool {
	w := p.ContactWindow
	switch {
	case d.Weekday() == time.Sunday || cal.IsHoliday(d):
		return w.Sunday != nil
	case d.Weekday() == time.Saturday:
		return w.Saturday != nil
	}
	return w.Weekdays != nil
}

// NextContactDay is the first contact day (IsContactDay) on or after d; ok
// is false when the policy allows none in the next 400 days.
func NextContactDay(p *policy.Dunning, cal *calendar.Calendar, d calendar.Date) (day calendar.Date, ok bool) {
	return nextDay(func(x calendar.Date) bool { return IsContactDay(p, cal, x) }, d)
}

// nextDay is the first day on or after d that ok accepts, within the
// horizon.
func nextDay(ok func(calendar.Date) bool, d calendar.Date) (calendar.Date, bool) {
	for range contactHorizon {
		if ok(d) {
			return d, true
		}
		d = d.AddDays(1)
	}
	return calendar.Date{}, false
}
