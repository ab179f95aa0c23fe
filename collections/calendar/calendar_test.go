package calendar

import (
	"fmt"
	"testing"
	"time"
)

func TestEaster(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		year int
		want string
	}{
		{2000, "2000-04-23"}, {2019, "2019-04-21"}, {2024, "2024-03-31"}, {2025, "2025-04-20"},
		{2026, "2026-04-05"}, {2027, "2027-03-28"}, {2028, "2028-04-16"}, {2038, "2038-04-25"},
	} {
		if got := Easter(tt.year).String(); got != tt.want {
			t.Errorf("Easter(%d) = %s, want %s", tt.year, got, tt.want)
		}
	}
}

func TestMovableBankHolidays(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		year                                      int
		carnivalMon, carnivalTue, goodFri, corpus string
	}{
		{2024, "2024-02-12", "2024-02-13", "2024-03-29", "2024-05-30"},
		{2025, "2025-03-03", "2025-03-04", "2025-04-18", "2025-06-19"},
		{2026, "2026-02-16", "2026-02-17", "2026-04-03", "2026-06-04"},
		{2027, "2027-02-08", "2027-02-09", "2027-03-26", "2027-05-27"},
	} {
		got := map[string]string{}
		for _, h := range NationalBankHolidays(tt.year) {
			got[h.Date.String()] = h.Name
		}
		for _, d := range []string{tt.carnivalMon, tt.carnivalTue, tt.goodFri, tt.corpus} {
			if got[d] == "" {
				t.Errorf("%d: %s is not a bank holiday (%v)", tt.year, d, got)
			}
		}
		if n := len(got); n != 14 && !(tt.year < 2024 && n == 13) {
			t.Errorf("%d: %d holidays", tt.year, n)
		}
		if eve := fmt.Sprintf("%d-12-31", tt.year); got[eve] == "" {
			t.Errorf("%d: Dec 31 is not a bank holiday (%v)", tt.year, got)
		}
	}
	// Nov 20 is national from 2024 on.
	if National.IsHoliday(MustParse("2023-11-20")) || !National.IsHoliday(MustParse("2024-11-20")) {
		t.Error("Consciência Negra from 2024")
	}
}

func TestBusinessDays(t *testing.T) {
	t.Parallel()
	extra := New(MustParse("2026-01-26")) // a municipal holiday (Monday)
	tests := []struct {
		name string
		cal  *Calendar
		fn   func(*Calendar, Date) Date
		in   string
		want string
	}{
		{"adjust weekday", National, (*Calendar).Adjust, "2026-08-10", "2026-08-10"},
		{"adjust saturday", National, (*Calendar).Adjust, "2026-08-08", "2026-08-10"},
		{"adjust carnival", National, (*Calendar).Adjust, "2026-02-14", "2026-02-18"},
		{"adjust good friday", National, (*Calendar).Adjust, "2026-04-03", "2026-04-06"},
		{"adjust new year", National, (*Calendar).Adjust, "2027-01-01", "2027-01-04"},
		{"adjust tenant extra", extra, (*Calendar).Adjust, "2026-01-24", "2026-01-27"},
		{"next after friday", National, (*Calendar).NextBusinessDay, "2026-08-07", "2026-08-10"},
		{"next after the eve of corpus christi", National, (*Calendar).NextBusinessDay, "2026-06-03", "2026-06-05"},
		{"first day overdue, weekday", National, (*Calendar).FirstDayOverdue, "2026-08-10", "2026-08-11"},
		{"first day overdue, sunday", National, (*Calendar).FirstDayOverdue, "2026-08-09", "2026-08-11"},
		{"first day overdue, before christmas", National, (*Calendar).FirstDayOverdue, "2026-12-24", "2026-12-28"},
		{"adjust dec 31 (Thursday), then new year and a weekend", National, (*Calendar).Adjust, "2026-12-31", "2027-01-04"},
		{"next after dec 30", National, (*Calendar).NextBusinessDay, "2026-12-30", "2027-01-04"},
		{"first day overdue, dec 31", National, (*Calendar).FirstDayOverdue, "2026-12-31", "2027-01-05"},
	}
	for _, tt := range tests {
		if got := tt.fn(tt.cal, MustParse(tt.in)).String(); got != tt.want {
			t.Errorf("%s: %s → %s, want %s", tt.name, tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"2026-08-07", 1, "2026-08-10"}, {"2026-08-07", 5, "2026-08-14"}, {"2026-02-13", 1, "2026-02-18"},
		{"2026-08-10", -1, "2026-08-07"}, {"2026-08-10", 0, "2026-08-10"}, {"2026-04-02", 1, "2026-04-06"},
	} {
		if got := National.AddBusinessDays(MustParse(tt.in), tt.n).String(); got != tt.want {
			t.Errorf("AddBusinessDays(%s, %d) = %s, want %s", tt.in, tt.n, got, tt.want)
		}
	}
	if National.IsBusinessDay(MustParse("2025-12-31")) || !National.IsHoliday(MustParse("2028-12-31")) {
		t.Error("Dec 31 has no banking to the public, every year")
	}
	if !National.IsOverdue(MustParse("2026-08-08"), MustParse("2026-08-11")) || National.IsOverdue(MustParse("2026-08-08"), MustParse("2026-08-10")) {
		t.Error("a Saturday due date is payable on Monday and late on Tuesday")
	}
}

func TestDates(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"2026-02-30", "2026-13-01", "2026-1-5", "26-01-05", "", "2026-02-29", "1899-12-31", "2200-01-01", "2026-01-05T00:00:00Z"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if _, err := Parse("2028-02-29"); err != nil {
		t.Errorf("leap day: %v", err)
	}
	a, b := MustParse("2026-09-24"), MustParse("2026-08-10")
	if a.Sub(b) != 45 || b.Sub(a) != -45 {
		t.Errorf("Sub = %d", a.Sub(b))
	}
	if got := MustParse("2026-01-31").AddMonths(1).String(); got != "2026-02-28" {
		t.Errorf("AddMonths clamps: %s", got)
	}
	sp, _ := time.LoadLocation("America/Sao_Paulo")
	// 02:30 UTC on Aug 11 is still Aug 10 in São Paulo.
	now := time.Date(2026, 8, 11, 2, 30, 0, 0, time.UTC)
	if got := Today(now, sp).String(); got != "2026-08-10" {
		t.Errorf("Today = %s", got)
	}
	if got := Today(now, time.UTC).String(); got != "2026-08-11" {
		t.Errorf("Today UTC = %s", got)
	}
	if (Date{}).String() != "" || !(Date{}).IsZero() {
		t.Error("zero date")
	}
}
