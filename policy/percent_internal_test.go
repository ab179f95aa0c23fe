package policy

import (
	"runtime"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"lastro/collections/errs"
)

func TestPercentIsAPlainDecimal(t *testing.T) {
	t.Parallel()
	hundred := decimal.NewFromInt(100)
	tests := []struct {
		s    string
		ok   bool
		want string
	}{
		{"0", true, "0"},
		{"2", true, "2"},
		{"1.00", true, "1"},
		{"0.0333", true, "0.0333"},
		{"100.0000", true, "100"},
		{"1e0", false, ""},
		{"1E0", false, ""},
		{"2e-2", false, ""},
		{"0.02e2", false, ""},
		{"+1.00", false, ""},
		{"-0", false, ""},
		{"-1", false, ""},
		{" 1.00", false, ""},
		{"1.00 ", false, ""},
		{".5", false, ""},
		{"1.", false, ""},
		{"1,00", false, ""},
		{"1.00001", false, ""},
		{"1000", false, ""},
		{"0x1p0", false, ""},
		{"١", false, ""}, // an Arabic-Indic digit: \d is ASCII only
		{"", false, ""},
		{"100.0001", false, ""},
	}
	for _, tt := range tests {
		d, err := percent("finePercent", tt.s, hundred)
		if (err == nil) != tt.ok {
			t.Errorf("percent(%q): %v, want ok %v", tt.s, err, tt.ok)
			continue
		}
		if !tt.ok {
			if _, code, _ := errs.Public(err); code != "invalid_percent" {
				t.Errorf("percent(%q): code %s, want invalid_percent", tt.s, code)
			}
		} else if d.String() != tt.want {
			t.Errorf("percent(%q) = %s, want %s", tt.s, d, tt.want)
		}
	}
}

// TestHugePercentIsRefusedWithoutParsing: a million-digit percent (inside
// the 1 MiB body limit) is refused by its length before the decimal
// parser sees it, whose cost grows with the square of the digits. The
// proof is the refusal's allocations, not its time: bytes far below the
// big integer parsing would build, and as many as refusing "abc". Not
// parallel: the allocation counters are the process's, and parallel
// tests only start once the sequential ones are done.
func TestHugePercentIsRefusedWithoutParsing(t *testing.T) {
	hundred := decimal.NewFromInt(100)
	huge := "0." + strings.Repeat("7", 1_000_000)
	refuse := func(s string) func() {
		return func() {
			if _, err := percent("finePercent", s, hundred); err == nil {
				t.Fatalf("percent of %d characters accepted", len(s))
			}
		}
	}
	// Bytes first, once: parsing would allocate gigabytes (and take a
	// minute), so a regression fails here before the repeated runs below.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	refuse(huge)()
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Fatalf("refusing a million digits allocated %d bytes: it was parsed", n)
	}
	small := testing.AllocsPerRun(20, refuse("abc"))
	big := testing.AllocsPerRun(20, refuse(huge))
	// The counters are the process's: a runtime goroutine may allocate
	// during a run, so one or two more than "abc" is noise, not parsing.
	if big > small+2 || big > 10 {
		t.Errorf("refusing a million digits: %v allocations, refusing \"abc\": %v; want the same small number", big, small)
	}
}
