package piitest_test

import (
	"testing"

	"lastro/collections/pii/piitest"
)

func TestLeaks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		leak bool
	}{
		{"formatted CPF", `{"document":"529.982.247-25"}`, true},
		{"bare CNPJ", "x 11222333000181 y", true},
		{"name in upper case", "ZULEICA QUARESMA", true},
		{"phone digits", "tel 11987654321", true},
		{"e-mail", "to: zuleica.quaresma@example.test", true},
		{"debtor key and amounts", `{"debtorKey":"0123456789abcdef","amountCents":41230}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := piitest.Leaks(tt.s) != nil; got != tt.leak {
				t.Fatalf("Leaks(%q) = %v, want leak %v", tt.s, piitest.Leaks(tt.s), tt.leak)
			}
		})
	}
}
