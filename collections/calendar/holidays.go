package calendar

import "time"

// Easter returns Easter Sunday of year in the Gregorian calendar (the
// anonymous Gregorian algorithm, Meeus/Jones/Butcher).
func Easter(year int) Date {
	a := year % 19
	b, c := year/100, year%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return D(year, time.Month(month), day)
}

// Holiday is a named day without bank business.
type Holiday struct {
	Date Date
	Name string
}

// fixed are the national holidays on fixed dates. Black Consciousness Day
// (Nov 20) is national from 2024 on (Lei 14.759/2023). Dec 31 is no
// holiday by law, but the national banking calendar has no banking to the
// public on it, so a due date then is payable on the next business day
// without charges (docs/design.md#dates-and-calendar): here it counts as one.
var fixed = []struct {
	month time.Month
	day   int
	name  string
	from  int // first year it applies
}{
	{time.January, 1, "Confraternização Universal", 0},
	{time.April, 21, "Tiradentes", 0},
	{time.May, 1, "Dia do Trabalho", 0},
	{time.September, 7, "Independência do Brasil", 0},
	{time.October, 12, "Nossa Senhora Aparecida", 0},
	{time.November, 2, "Finados", 0},
	{time.November, 15, "Proclamação da República", 0},
	{time.November, 20, "Dia Nacional de Zumbi e da Consciência Negra", 2024},
	{time.December, 25, "Natal", 0},
	{time.December, 31, "Último dia do ano (sem expediente bancário ao público)", 0},
}

// NationalBankHolidays lists the days of year on which Brazilian banks do
// no business nationwide: the fixed national holidays and Dec 31 (no
// banking to the public), plus Carnival Monday and Tuesday, Good Friday and
// Corpus Christi, which move with Easter. Sorted by date.
func NationalBankHolidays(year int) []Holiday {
	e := Easter(year)
	out := []Holiday{
		{e.AddDays(-48), "Carnaval (segunda-feira)"},
		{e.AddDays(-47), "Carnaval (terça-feira)"},
		{e.AddDays(-2), "Sexta-feira Santa"},
		{e.AddDays(60), "Corpus Christi"},
	}
	for _, f := range fixed {
		if year >= f.from {
			out = append(out, Holiday{D(year, f.month, f.day), f.name})
		}
	}
	sortHolidays(out)
	return out
}

func sortHolidays(h []Holiday) {
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && h[j].Date.Before(h[j-1].Date); j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}
