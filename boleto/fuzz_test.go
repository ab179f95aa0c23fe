package boleto_test

import (
	"errors"
	"strings"
	"testing"

	"lastro/boleto"
	"lastro/boleto/cnabtest"
	"lastro/collections/calendar"
)

// FuzzParse: Parse never panics on any text; what it accepts it refuses
// with ErrInvalid otherwise, and an accepted line or barcode is a fixed
// point: its barcode and its line parse back to the same boleto.
func FuzzParse(f *testing.F) {
	b, err := boleto.New(boleto.BankBB, calendar.MustParse("2026-09-24"), 102467, "0000001234567000000000117")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b.Line())
	f.Add(b.Barcode())
	f.Add(b.LineDigits())
	f.Add("00190.00009 01234.567004 00000.001172 1 00000000000000")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := boleto.Parse(s)
		if err != nil {
			if !errors.Is(err, boleto.ErrInvalid) {
				t.Fatalf("Parse refused with %v, not ErrInvalid", err)
			}
			if len(s) >= 8 && strings.Contains(err.Error(), s) {
				t.Fatalf("the error %q echoes the input", err)
			}
			return
		}
		for _, again := range []string{got.Barcode(), got.Line(), got.LineDigits()} {
			b, err := boleto.Parse(again)
			if err != nil || b != got {
				t.Fatalf("%q parsed to %+v, which writes %q that parses to %+v (%v)", s, got, again, b, err)
			}
		}
	})
}

// FuzzParseReturn: a CNAB 240 return file, as a supervisor uploads it,
// never panics the parser; a refusal is a *ReturnError wrapping
// ErrInvalid (so the API answers 400 with its line), and a file it
// accepts holds titles whose amounts are not negative.
func FuzzParseReturn(f *testing.F) {
	good := cnabtest.Return("001",
		cnabtest.Title{Movement: "06", NossoNumero: "12345670000000001", DueDate: "24092026", FaceCents: 102467, PaidCents: 102467,
			PaidOn: "24092026", CreditOn: "25092026"})
	f.Add(good.CRLF())
	f.Add(good.LF())
	f.Add(strings.Join(good[:2], "\n"))
	f.Add("")
	f.Fuzz(func(t *testing.T, file string) {
		ret, err := boleto.ParseReturn(strings.NewReader(file))
		if err != nil {
			var re *boleto.ReturnError
			if !errors.Is(err, boleto.ErrInvalid) && !errors.As(err, &re) {
				t.Fatalf("ParseReturn refused with %v: neither ErrInvalid nor a ReturnError", err)
			}
			return
		}
		for _, ti := range ret.Titles {
			if ti.PaidCents < 0 || ti.FaceCents < 0 {
				t.Fatalf("a negative amount accepted: %+v", ti)
			}
		}
	})
}
