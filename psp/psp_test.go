package psp_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"lastro/psp"
)

func TestParseValor(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0.10", 10, true},
		{"1234.5", 123450, true},
		{"1234.56", 123456, true},
		{"7", 0, false}, // reais or cents? refused (ADR 0040)
		{"0.00", 0, false},
		{"001.00", 100, true},
		{"1e3", 0, false},
		{"-1.00", 0, false},
		{"1.234", 0, false},
		{"1.", 0, false},
		{".50", 0, false},
		{"", 0, false},
		{"1,00", 0, false},
		{"99999999999999.00", 0, false},
	} {
		got, err := psp.ParseValor(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseValor(%q) = %d, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if tt.ok && len(tt.in) > 4 && tt.in[0] != '0' && tt.in[len(tt.in)-3] == '.' && psp.FormatValor(got) != tt.in {
			t.Errorf("FormatValor(%d) = %s", got, psp.FormatValor(got))
		}
	}
}

func TestFormatPercent(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"2", "2.00", true}, {"1.00", "1.00", true}, {"0.5", "0.50", true}, {"0.3333", "", false}, {"-1", "", false},
	} {
		got, err := psp.FormatPercent(decimal.RequireFromString(tt.in))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("FormatPercent(%s) = %q, %v", tt.in, got, err)
		}
	}
}
