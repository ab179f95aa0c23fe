package ui

import (
	"testing"
	"time"
)

func TestMoney(t *testing.T) {
	t.Parallel()
	for cents, want := range map[int64]string{0: "R$ 0,00", 5: "R$ 0,05", 123456: "R$ 1.234,56", 100000000: "R$ 1.000.000,00", -2550: "-R$ 25,50"} {
		if got := portuguese.money(cents); got != want {
			t.Errorf("money(%d) = %q, want %q", cents, got, want)
		}
	}
	for cents, want := range map[int64]string{0: "R$ 0.00", 123456: "R$ 1,234.56", 100000000: "R$ 1,000,000.00", -2550: "-R$ 25.50"} {
		if got := english.money(cents); got != want {
			t.Errorf("English money(%d) = %q, want %q", cents, got, want)
		}
	}
}

func TestDatesAndTimes(t *testing.T) {
	t.Parallel()
	sp, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	const instant = "2026-09-29T17:05:00Z" // 14:05 in São Paulo
	for _, tt := range []struct {
		l          lang
		date, when string
	}{{portuguese, "29/09/2026", "29/09/2026 14:05"}, {english, "2026-09-29", "2026-09-29 14:05"}} {
		if got := tt.l.date("2026-09-29"); got != tt.date {
			t.Errorf("%s date = %q, want %q", tt.l, got, tt.date)
		}
		if got := tt.l.instant(sp, instant); got != tt.when {
			t.Errorf("%s instant = %q, want %q", tt.l, got, tt.when)
		}
		if got := tt.l.date("not a date"); got != "not a date" {
			t.Errorf("%s date of a non-date = %q", tt.l, got)
		}
	}
}

func TestParseCents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		l    lang
		in   string
		want int64
		ok   bool
	}{
		{portuguese, "150", 15000, true}, {portuguese, "150,5", 15050, true}, {portuguese, "1.234,56", 123456, true}, {portuguese, "1234.56", 123456, true},
		{portuguese, "R$ 10,00", 1000, true}, {portuguese, "", 0, false}, {portuguese, "1,234", 0, false}, {portuguese, "-5", 0, false},
		{portuguese, "abc", 0, false}, {portuguese, "1e3", 0, false},
		{english, "150", 15000, true}, {english, "150.5", 15050, true}, {english, "1,234.56", 123456, true}, {english, "R$ 1,000,000", 100000000, true},
		{english, "150,50", 0, false}, {english, "1,23", 0, false}, {english, "1.234,56", 0, false}, {english, "-5", 0, false},
	}
	for _, tt := range tests {
		got, err := tt.l.parseCents(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("%s parseCents(%q) = %d, %v; want %d, ok %v", tt.l, tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"/ui/suspense": "/ui/suspense", "//evil.example/ui/": "/", "https://evil.example/": "/",
		"/ui/\\evil": "/", "": "/", "/v1/tenant": "/"} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
