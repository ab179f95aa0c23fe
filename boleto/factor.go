package boleto

import "lastro/collections/calendar"

// The due factor is the number of days from the base date 1997-10-07 to
// the due date, in four digits. It reached 9999 on 2025-02-21; FEBRABAN
// restarted it at 1000 on 2025-02-22, so every 9000 days the same factor
// names a new date (docs/adr/0034).
const (
	MinFactor = 1000
	MaxFactor = 9999
	cycle     = MaxFactor - MinFactor + 1 // 9000 days
)

// Base is the date of factor 0: days are counted from it.
var Base = calendar.D(1997, 10, 7)

// Restart is the first day of the restarted factor (factor 1000 again).
var Restart = calendar.D(2025, 2, 22)

// The window in which a factor is decoded around a reference date (the
// day the boleto is read): up to PastDays before it and FutureDays after.
// 3000 + 5500 + 1 days is less than a cycle, so at most one date of the
// window has a given factor.
const (
	PastDays   = 3000
	FutureDays = 5500
)

// DueFactor is the factor of a due date: the days since Base while they
// fit (up to 2025-02-21, factor 9999), then 1000 again from 2025-02-22
// and on, cycling every 9000 days. Dates before 2000-07-03 (factor 1000
// of the first cycle) are refused: no boleto due then is payable.
func DueFactor(d calendar.Date) (int, error) {
	days := d.Sub(Base)
	if days < MinFactor {
		return 0, invalidf("the due date %s is before the first factor 1000 (2000-07-03)", d)
	}
	return MinFactor + (days-MinFactor)%cycle, nil
}

// DateOfFactor decodes a factor (1000-9999) to the one date that has it
// within [ref - PastDays, ref + FutureDays]: a boleto read today may be
// years overdue or due years ahead, never a whole cycle away. A factor
// whose dates all fall outside the window is refused.
func DateOfFactor(factor int, ref calendar.Date) (calendar.Date, error) {
	if factor < MinFactor || factor > MaxFactor {
		return calendar.Date{}, invalidf("the due factor must be %d-%d", MinFactor, MaxFactor)
	}
	lo := ref.AddDays(-PastDays)
	// The first date with this factor, then whole cycles forward to the
	// first one not before the window's start.
	d := Base.AddDays(factor)
	if gap := lo.Sub(d); gap > 0 {
		d = d.AddDays((gap + cycle - 1) / cycle * cycle)
	}
	if d.After(ref.AddDays(FutureDays)) {
		return calendar.Date{}, invalidf("the due factor %d names no date from %d days before to %d days after %s", factor, PastDays, FutureDays, ref)
	}
	return d, nil
}

// NearestDatesOfFactor are the dates with factor (1000-9999) closest to
// the window around ref (DateOfFactor): the last one before its start and
// the first one after its end; zero when there is none (a date before
// 2000-07-03, or a factor out of range). For a factor in the window's
// gap, they tell a reader what the boleto may have meant.
func NearestDatesOfFactor(factor int, ref calendar.Date) (before, after calendar.Date) {
	if factor < MinFactor || factor > MaxFactor {
		return calendar.Date{}, calendar.Date{}
	}
	lo, hi := ref.AddDays(-PastDays), ref.AddDays(FutureDays)
	for d := Base.AddDays(factor); !d.After(hi.AddDays(cycle)); d = d.AddDays(cycle) {
		switch {
		case d.Before(lo):
			before = d
		case d.After(hi):
			return before, d
		}
	}
	return before, after
}
