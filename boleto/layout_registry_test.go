package boleto_test

import (
	"errors"
	"strings"
	"testing"

	"lastro/boleto"
	"lastro/collections/calendar"
)

// TestLayoutFor: the table gives a bank's layout built from the
// agreement, refuses a bank it does not know with ErrUnsupportedBank and
// an agreement the layout refuses with ErrInvalid; Banks names each bank
// of the table once.
func TestLayoutFor(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		a       boleto.Agreement
		wantErr error
	}{
		{"Banco do Brasil", boleto.Agreement{Bank: boleto.BankBB, Convenio: "1234567", Carteira: "17"}, nil},
		{"unknown bank", boleto.Agreement{Bank: "999", Convenio: "1234567", Carteira: "17"}, boleto.ErrUnsupportedBank},
		{"short convênio", boleto.Agreement{Bank: boleto.BankBB, Convenio: "123456", Carteira: "17"}, boleto.ErrInvalid},
		{"one-digit carteira", boleto.Agreement{Bank: boleto.BankBB, Convenio: "1234567", Carteira: "7"}, boleto.ErrInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, err := boleto.LayoutFor(tt.a)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !errors.Is(err, boleto.ErrInvalid) || l != nil {
					t.Fatalf("LayoutFor(%+v) = %v, %v; want %v", tt.a, l, err, tt.wantErr)
				}
				return
			}
			if err != nil || l.Bank() != tt.a.Bank {
				t.Fatalf("LayoutFor(%+v) = %v, %v", tt.a, l, err)
			}
			free, err := l.FreeField(tt.a.Convenio + "0000000001")
			if err != nil {
				t.Fatal(err)
			}
			if fields, err := l.Fields(free); err != nil || len(fields) == 0 {
				t.Fatalf("fields of %s: %v %v", free, fields, err)
			}
		})
	}
	banks := boleto.Banks()
	if len(banks) == 0 || !strings.HasPrefix(banks[0], boleto.BankBB+" ") {
		t.Fatalf("Banks() = %v", banks)
	}
}

// TestBBConvenioOfEightDigits: an 8-digit convênio issues nosso números
// of its 8 digits and a 9-digit sequence, and its fields are split there;
// read without the convênio, the free field says it cannot tell 7 from 8.
func TestBBConvenioOfEightDigits(t *testing.T) {
	t.Parallel()
	l, err := boleto.LayoutFor(boleto.Agreement{Bank: boleto.BankBB, Convenio: "12345678", Carteira: "17"})
	if err != nil {
		t.Fatal(err)
	}
	nn, err := l.NossoNumero("98765432100000042")
	if err != nil || nn != "12345678100000042" {
		t.Fatalf("nosso número %q %v", nn, err)
	}
	free, err := l.FreeField(nn)
	if err != nil {
		t.Fatal(err)
	}
	fields, err := l.Fields(free)
	if err != nil || fields[0].Value != "12345678" || fields[2].Value != "100000042" || fields[4].Value != "8" {
		t.Fatalf("fields %v %v", fields, err)
	}
	b, err := boleto.New(boleto.BankBB, calendar.MustParse("2026-10-10"), 100, free)
	if err != nil {
		t.Fatal(err)
	}
	generic, ok := b.Fields()
	if !ok || !strings.Contains(generic[4].Value, "7 or 8") {
		t.Fatalf("fields without the convênio %v", generic)
	}
}

// TestBankTable: every bank of the table has its code's check digit as
// the bank prints it, and each reads return files.
func TestBankTable(t *testing.T) {
	t.Parallel()
	for code, digit := range map[string]string{"001": "9", "033": "7", "104": "0", "237": "2", "341": "7", "756": "0", "085": "1", "748": "X"} {
		b, ok := boleto.BankOf(code)
		if !ok || b.Digit != digit || b.Return.Paid.From == 0 || b.Return.NossoNumero.From == 0 {
			t.Errorf("bank %s: %+v", code, b)
		}
	}
	if len(boleto.ReturnBanks()) < 8 {
		t.Errorf("return banks %v", boleto.ReturnBanks())
	}
}
