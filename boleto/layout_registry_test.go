package boleto_test

import (
	"errors"
	"strings"
	"testing"

	"lastro/boleto"
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
