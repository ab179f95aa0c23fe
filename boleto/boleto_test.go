package boleto

import (
	"errors"
	"strings"
	"testing"

	"lastro/collections/calendar"
)

// TestCheckDigits: the two digit rules on inputs small enough to work by
// hand, the arithmetic in the comments.
func TestCheckDigits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fn   func(string) byte
		in   string
		want byte
	}{
		// From the right, weights 2 1 2 1 ...: 0 0 0 0 0 9·1 1·2 0 0 → 9 + 2 =
		// 11; 10 - 1 = 9 (every Banco do Brasil line opens 00190.0000 9).
		{"mod10 BB prefix", mod10, "001900000", '9'},
		// 7·2 = 14 → 1 + 4 = 5; 10 - 5 = 5.
		{"mod10 sums a product's digits", mod10, "7", '5'},
		// A sum that is a multiple of ten gives 0: 5·2 = 10 → 1, 9·1 = 9: 10.
		{"mod10 zero", mod10, "95", '0'},
		// Ten fives weighted 2..9, 2, 3 from the right: 5 · 49 = 245; 245 mod
		// 11 = 3; 11 - 3 = 8.
		{"mod11", mod11, "5555555555", '8'},
		// 6·2 = 12; 12 mod 11 = 1; 11 - 1 = 10, which becomes 1.
		{"mod11 ten becomes one", mod11, "6", '1'},
		// 0; 11 - 0 = 11, which becomes 1.
		{"mod11 eleven becomes one", mod11, "0", '1'},
		// Weights cycle back to 2 after 9: 1·2 + 0·(3..9) + 1·2 = 4; 11 - 4 = 7.
		{"mod11 weights cycle", mod11, "100000001", '7'},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.fn(tt.in); got != tt.want {
				t.Fatalf("%s(%s) = %c, want %c", tt.name, tt.in, got, tt.want)
			}
		})
	}
}

// TestRoundTrips builds boletos, formats them both ways and parses each
// form back. The vectors are built here, not copied from a bank's manual;
// their line check digits were worked by hand (field 2 of the first,
// 0123456700: from the right 0·2 0·1 7·2=14→5 6 5·2=10→1 4 3·2 2 1·2 0,
// sum 26, check digit 4), the general ones by the modulo 11 above.
func TestRoundTrips(t *testing.T) {
	t.Parallel()
	bb := BBConvenio{Convenio: "1234567", Carteira: "17"}
	tests := []struct {
		name    string
		due     string
		cents   int64
		nosso   string
		barcode string
		line    string
		factor  int
	}{
		{"due before the restart", "2025-02-21", 150000, "12345670000000001",
			"00194999900001500000000001234567000000000117", "00190.00009 01234.567004 00000.001172 4 99990000150000", 9999},
		{"due on the restart day", "2025-02-22", 150000, "12345670000000001",
			"00191100000001500000000001234567000000000117", "00190.00009 01234.567004 00000.001172 1 10000000150000", 1000},
		{"due in 2026", "2026-09-24", 102467, "12345679876543210",
			"00191157900001024670000001234567987654321017", "00190.00009 01234.567988 76543.210173 1 15790000102467", 1579},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			free, err := bb.FreeField(tt.nosso)
			if err != nil {
				t.Fatal(err)
			}
			b, err := New(BankBB, calendar.MustParse(tt.due), tt.cents, free)
			if err != nil {
				t.Fatal(err)
			}
			if b.Factor != tt.factor || b.Barcode() != tt.barcode || b.Line() != tt.line {
				t.Fatalf("built %d %s %s\nwant  %d %s %s", b.Factor, b.Barcode(), b.Line(), tt.factor, tt.barcode, tt.line)
			}
			for _, in := range []string{tt.barcode, tt.line, strings.NewReplacer(".", "", " ", "").Replace(tt.line)} {
				got, err := Parse(in)
				if err != nil || got != b {
					t.Fatalf("Parse(%s) = %+v, %v; want %+v", in, got, err, b)
				}
				due, ok, err := got.DueDate(calendar.MustParse("2026-12-01"))
				if err != nil || !ok || due.String() != tt.due {
					t.Fatalf("due %s %v %v, want %s", due, ok, err, tt.due)
				}
			}
			fields, ok := b.Fields()
			if !ok || fields[0].Value != "1234567" || fields[1].Value != tt.nosso || fields[3].Value != "17" {
				t.Fatalf("fields %v %v", fields, ok)
			}
		})
	}
}

func TestDueFactorRestart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		date   string
		factor int
	}{
		{"2000-07-03", 1000}, // the first factor 1000: 1000 days after 1997-10-07
		{"2025-02-21", 9999}, // the last day of the first cycle
		{"2025-02-22", 1000}, // FEBRABAN's restart
		{"2025-02-23", 1001},
		{"2026-09-24", 1579},
		{"2049-10-13", 9999}, // 9000 days after 2025-02-21
		{"2049-10-14", 1000}, // the next restart
	}
	for _, tt := range tests {
		t.Run(tt.date, func(t *testing.T) {
			t.Parallel()
			d := calendar.MustParse(tt.date)
			f, err := DueFactor(d)
			if err != nil || f != tt.factor {
				t.Fatalf("DueFactor(%s) = %d, %v; want %d", tt.date, f, err, tt.factor)
			}
			// Decoded back with the reference on the date itself, at both
			// ends of the window.
			for _, ref := range []calendar.Date{d, d.AddDays(PastDays), d.AddDays(-FutureDays)} {
				if got, err := DateOfFactor(f, ref); err != nil || !got.Equal(d) {
					t.Fatalf("DateOfFactor(%d, %s) = %s, %v; want %s", f, ref, got, err, tt.date)
				}
			}
		})
	}
	if _, err := DueFactor(calendar.MustParse("2000-07-02")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a date before factor 1000: %v", err)
	}
}

// TestDateOfFactorWindow: the same factor means 2000, 2025 or 2049
// depending on the day it is read; outside the window it is refused.
func TestDateOfFactorWindow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		factor int
		ref    string
		want   string // "" : refused
	}{
		{1000, "2001-01-01", "2000-07-03"},
		{1000, "2026-12-01", "2025-02-22"},
		{1000, "2045-01-01", "2049-10-14"}, // 2025-02-22 is more than 3000 days back
		{9999, "2026-12-01", "2025-02-21"},
		{1579, "2026-12-01", "2026-09-24"},
		// 2026-12-01 + 5500 days is 2041-12-22 (factor 7147 of the second
		// cycle); 2026-12-01 - 3000 days is 2018-09-14 (factor 7647 of the
		// first): factors 7148-7646 name no date of the window.
		{7147, "2026-12-01", "2041-12-22"},
		{7148, "2026-12-01", ""},
		{7646, "2026-12-01", ""},
		{7647, "2026-12-01", "2018-09-14"},
		{6500, "2026-12-01", "2040-03-15"},
		{999, "2026-12-01", ""},
		{10000, "2026-12-01", ""},
	}
	for _, tt := range tests {
		got, err := DateOfFactor(tt.factor, calendar.MustParse(tt.ref))
		if tt.want == "" {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("DateOfFactor(%d, %s) = %s, %v; want refused", tt.factor, tt.ref, got, err)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("DateOfFactor(%d, %s) = %s, %v; want %s", tt.factor, tt.ref, got, err, tt.want)
		}
	}
}

func TestParseRefusesMalformedInput(t *testing.T) {
	t.Parallel()
	const line = "00190.00009 01234.567004 00000.001172 1 10000000150000"
	const barcode = "00191100000001500000000001234567000000000117"
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "47 digits"},
		{"letters", "0019O.00009 01234.567004 00000.001172 1 10000000150000", "only digits"},
		{"46 digits", line[:len(line)-1], "not 46"},
		{"48 digits", line + "0", "not 48"},
		{"field 1 check digit", "00190.00008 01234.567004 00000.001172 1 10000000150000", "field 1"},
		{"field 2 check digit", "00190.00009 01234.567005 00000.001172 1 10000000150000", "field 2"},
		{"field 3 check digit", "00190.00009 01234.567004 00000.001173 2 10000000150000", "field 3"},
		{"general check digit in the line", "00190.00009 01234.567004 00000.001172 2 10000000150000", "general check digit"},
		{"general check digit in the barcode", "00192100000001500000000001234567000000000117", "general check digit"},
		{"amount changed in the barcode", barcode[:18] + "1" + barcode[19:], "general check digit"},
		{"factor below 1000", "00190.00009 01234.567004 00000.001172 2 09990000150000", "due factor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.in)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse(%q) = %v, want an ErrInvalid holding %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestNewAndLayoutRefuseBadParts(t *testing.T) {
	t.Parallel()
	free := "0000001234567000000000117"
	tests := []struct {
		name string
		err  error
	}{
		{"bank of 2 digits", func() error { _, err := New("01", calendar.Date{}, 1, free); return err }()},
		{"negative amount", func() error { _, err := New("001", calendar.Date{}, -1, free); return err }()},
		{"amount over ten digits", func() error { _, err := New("001", calendar.Date{}, MaxAmountCents+1, free); return err }()},
		{"short free field", func() error { _, err := New("001", calendar.Date{}, 1, free[1:]); return err }()},
		{"due before 2000-07-03", func() error { _, err := New("001", calendar.MustParse("1999-01-01"), 1, free); return err }()},
		{"convênio of 6 digits", func() error { _, err := (BBConvenio{"123456", "17"}).FreeField("12345670000000001"); return err }()},
		{"convênio starting with 0", func() error { _, err := (BBConvenio{"0234567", "17"}).FreeField("02345670000000001"); return err }()},
		{"carteira of 3 digits", func() error { _, err := (BBConvenio{"1234567", "017"}).FreeField("12345670000000001"); return err }()},
		{"nosso número of another convênio", func() error { _, err := (BBConvenio{"1234567", "17"}).FreeField("76543210000000001"); return err }()},
		{"nosso número of 16 digits", func() error { _, err := (BBConvenio{"1234567", "17"}).FreeField("1234567000000001"); return err }()},
		{"free field not BB", func() error { _, err := (BBConvenio{}).Fields("1000001234567000000000117"); return err }()},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tt.name, tt.err)
		}
	}
	// No due date: factor 0000, and DueDate says so.
	b, err := New("001", calendar.Date{}, 0, free)
	if err != nil || b.Factor != 0 || b.Barcode()[5:19] != "00000000000000" {
		t.Fatalf("no due date: %+v %v", b, err)
	}
	if _, ok, err := b.DueDate(calendar.MustParse("2026-12-01")); ok || err != nil {
		t.Fatalf("DueDate of factor 0: %v %v", ok, err)
	}
}

// TestParsePublishedLines reads two linhas digitáveis published by
// others, so Parse is checked against check digits it did not compute.
// Neither is from a bank's or FEBRABAN's manual: the first is the example
// of Pluggy's payments documentation ("Bank Slips (Boleto) Payments"), a
// Banco do Brasil boleto of R$ 1,00; the second the example of the README
// of the boleto_parser JavaScript package, a Banco Inter boleto of
// R$ 151,30 that the README says is due on 2022-05-31.
func TestParsePublishedLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line, ref, barcode, bank, due string
		factor                        int
		cents                         int64
	}{
		{"00190500954014481606906809350314337370000000100", "2008-01-15", "00193373700000001000500940144816060680935031", "001", "2007-12-31", 3737, 100},
		{"07790.00116 12064.449908 08159.365561 7 90020000015130", "2022-05-01", "07797900200000151300001112064449900815936556", "077", "2022-05-31", 9002, 15130},
	}
	for _, tt := range tests {
		b, err := Parse(tt.line)
		if err != nil {
			t.Fatalf("Parse(%s): %v", tt.line, err)
		}
		due, ok, err := b.DueDate(calendar.MustParse(tt.ref))
		if b.Bank != tt.bank || b.Factor != tt.factor || b.AmountCents != tt.cents || b.Barcode() != tt.barcode || err != nil || !ok || due.String() != tt.due {
			t.Fatalf("Parse(%s) = %+v due %s %v; want bank %s factor %d cents %d due %s", tt.line, b, due, err, tt.bank, tt.factor, tt.cents, tt.due)
		}
		if strings.ReplaceAll(strings.ReplaceAll(b.Line(), ".", ""), " ", "") != strings.ReplaceAll(strings.ReplaceAll(tt.line, ".", ""), " ", "") {
			t.Fatalf("Line() = %s, want %s", b.Line(), tt.line)
		}
		// Read from the barcode, the same boleto.
		if fromBars, err := Parse(tt.barcode); err != nil || fromBars != b {
			t.Fatalf("Parse(%s) = %+v, %v", tt.barcode, fromBars, err)
		}
	}
}
