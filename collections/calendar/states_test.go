package calendar

import (
	"testing"
	"time"
)

// TestStateBankHolidays pins each state's table: every date listed for a
// state is a holiday in that state's calendar, a business weekday in a
// state that does not list it, and nowhere national unless it is.
func TestStateBankHolidays(t *testing.T) {
	t.Parallel()
	tests := []struct {
		uf   string
		want []string // 2026's state bank holidays
	}{
		{"AC", []string{"2026-01-20", "2026-01-23", "2026-03-08", "2026-06-15", "2026-09-05", "2026-11-17"}},
		{"AL", []string{"2026-06-24", "2026-06-29", "2026-09-16"}},
		{"AM", []string{"2026-09-05"}},
		{"AP", []string{"2026-03-19", "2026-09-13"}},
		{"BA", []string{"2026-07-02"}},
		{"CE", []string{"2026-03-19", "2026-03-25"}},
		{"DF", []string{"2026-04-21", "2026-11-30"}},
		{"ES", nil},
		{"GO", nil},
		{"MA", []string{"2026-07-28"}},
		{"MG", []string{"2026-04-21"}},
		{"MS", []string{"2026-10-11"}},
		{"MT", []string{"2026-11-20"}},
		{"PA", []string{"2026-08-15"}},
		{"PB", []string{"2026-08-05"}},
		{"PE", []string{"2026-03-06", "2026-06-24"}},
		{"PI", []string{"2026-03-13", "2026-10-19"}},
		{"PR", []string{"2026-12-19"}},
		{"RJ", []string{"2026-04-23", "2026-11-20"}},
		{"RN", []string{"2026-10-03"}},
		{"RO", []string{"2026-01-04", "2026-06-18"}},
		{"RR", []string{"2026-10-05"}},
		{"RS", []string{"2026-09-20"}},
		{"SC", []string{"2026-08-11", "2026-11-25"}},
		{"SE", []string{"2026-07-08"}},
		{"SP", []string{"2026-07-09"}},
		{"TO", []string{"2026-03-18", "2026-09-08", "2026-10-05"}},
	}
	if len(tests) != 27 || len(stateHolidays) != 27 {
		t.Fatalf("%d cases and %d state tables, want 27 each", len(tests), len(stateHolidays))
	}
	for _, tt := range tests {
		t.Run(tt.uf, func(t *testing.T) {
			t.Parallel()
			got := StateBankHolidays(tt.uf, 2026)
			if len(got) != len(tt.want) {
				t.Fatalf("%d holidays %v, want %v", len(got), got, tt.want)
			}
			cal := National.In(tt.uf)
			if cal.UF() != tt.uf || !HasStateCalendar(tt.uf) {
				t.Fatalf("In(%s) is the calendar of %q", tt.uf, cal.UF())
			}
			other := National.In("GO") // a state without holidays of its own here
			if tt.uf == "GO" {
				other = National.In("ES")
			}
			for i, w := range tt.want {
				d := MustParse(w)
				if got[i].Date != d || got[i].Name == "" {
					t.Errorf("holiday %d = %v, want %s", i, got[i], w)
				}
				if !cal.IsHoliday(d) || cal.IsBusinessDay(d) {
					t.Errorf("%s is not a bank holiday in %s", w, tt.uf)
				}
				if !National.IsHoliday(d) && other.IsHoliday(d) {
					t.Errorf("%s of %s leaks into %s", w, tt.uf, other.UF())
				}
			}
		})
	}
}

func TestStateCalendarPayableDates(t *testing.T) {
	t.Parallel()
	extra := New(MustParse("2026-07-10")) // a tenant's own day, kept by every state's calendar
	tests := []struct {
		name string
		cal  *Calendar
		due  string
		pay  string
	}{
		{"SP 9 July (Thursday) is payable on Friday", National.In("SP"), "2026-07-09", "2026-07-10"},
		{"RJ 9 July is an ordinary Thursday", National.In("RJ"), "2026-07-09", "2026-07-09"},
		{"RJ São Jorge (Thursday)", National.In("RJ"), "2026-04-23", "2026-04-24"},
		{"no state: national only", National, "2026-07-09", "2026-07-09"},
		{"unknown state: national only", National.In("XX"), "2026-07-09", "2026-07-09"},
		{"SP plus the tenant's day", extra.In("SP"), "2026-07-09", "2026-07-13"},
		{"AC Tratado de Petrópolis (Tuesday)", National.In("AC"), "2026-11-17", "2026-11-18"},
		{"RS Farroupilha on a Sunday", National.In("RS"), "2026-09-20", "2026-09-21"},
	}
	for _, tt := range tests {
		if got := tt.cal.Adjust(MustParse(tt.due)).String(); got != tt.pay {
			t.Errorf("%s: %s payable %s, want %s", tt.name, tt.due, got, tt.pay)
		}
	}
	first, again := National.In("SP"), National.In("SP")
	if first != again || first.In("RJ").UF() != "SP" {
		t.Error("In keeps its answer and a state's calendar stays that state's")
	}
	if !National.In("SP").IsHoliday(MustParse("2026-12-25")) {
		t.Error("a state's calendar keeps the national holidays")
	}
}

func TestZoneOfUF(t *testing.T) {
	t.Parallel()
	want := map[string]string{"AC": "America/Rio_Branco", "AM": "America/Manaus", "MT": "America/Cuiaba",
		"MS": "America/Campo_Grande", "RO": "America/Porto_Velho", "RR": "America/Boa_Vista", "SP": "America/Sao_Paulo",
		"RJ": "America/Sao_Paulo", "PE": "America/Sao_Paulo", "DF": "America/Sao_Paulo", "": "", "XX": ""}
	for uf, z := range want {
		if got := ZoneOfUF(uf); got != z {
			t.Errorf("ZoneOfUF(%q) = %q, want %q", uf, got, z)
		}
	}
	// The embedded zone database answers every zone a profile may name,
	// and the offsets are Brazil's four.
	at := time.Date(2026, 8, 10, 12, 0, 0, 0, time.UTC)
	offsets := map[string]int{ZoneRioBranco: -5, ZoneEirunepe: -5, ZoneManaus: -4, ZoneCuiaba: -4, ZoneSaoPaulo: -3, ZoneNoronha: -2}
	for _, name := range BrazilianZones {
		loc, err := LoadZone(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, off := at.In(loc).Zone()
		if h, ok := offsets[name]; ok && off != h*3600 {
			t.Errorf("%s is UTC%+d, want UTC%+d", name, off/3600, h)
		}
	}
}
