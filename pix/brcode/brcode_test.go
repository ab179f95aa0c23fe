package brcode_test

import (
	"errors"
	"strings"
	"testing"

	"lastro/pix/brcode"
)

// manualExample is the static BR Code printed in the Central Bank's
// "Manual de Padrões para Iniciação do Pix" (Anexo I, page 16): Pix key
// 123e4567-e12b-12d1-a456-426655440000, "Fulano de Tal", BRASILIA, CRC 1D3D.
const manualExample = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-426655440000" +
	"5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D"

func TestCRC16(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want uint16
	}{
		{"123456789", 0x29B1}, // the CRC-16/CCITT-FALSE check value
		{"", 0xFFFF},
		{strings.TrimSuffix(manualExample, "1D3D"), 0x1D3D},
	} {
		if got := brcode.CRC16(tt.in); got != tt.want {
			t.Errorf("CRC16(%q) = %04X, want %04X", tt.in, got, tt.want)
		}
	}
}

func TestParseManualExample(t *testing.T) {
	t.Parallel()
	c, err := brcode.Parse(manualExample)
	if err != nil {
		t.Fatal(err)
	}
	want := brcode.Code{Key: "123e4567-e12b-12d1-a456-426655440000", Category: "0000", Name: "Fulano de Tal", City: "BRASILIA",
		TxID: "***", CRC: "1D3D"}
	if *c != want {
		t.Fatalf("Parse = %+v, want %+v", *c, want)
	}
	// Built back from its fields, the example comes out byte for byte.
	again, err := brcode.Build(*c)
	if err != nil || again != manualExample {
		t.Fatalf("Build = %q, %v", again, err)
	}
}

func TestBuildDynamicRoundTrips(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		code brcode.Code
		has  []string
	}{
		{"with amount", brcode.Code{Dynamic: true, URL: "pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25",
			AmountCents: 102467, Name: "Demo Crediario", City: "SAO PAULO"}, []string{"010212", "5407" + "1024.67", "62070503***"}},
		{"no amount", brcode.Code{Dynamic: true, URL: "psp.example/loc/1", Name: "N", City: "C"}, []string{"010212", "62070503***"}},
		{"cents only", brcode.Code{Dynamic: true, URL: "psp.example/loc/2", AmountCents: 5, Name: "N", City: "C"}, []string{"54040.05"}},
		{"long name cut to 25", brcode.Code{Dynamic: true, URL: "psp.example/loc/3", Name: strings.Repeat("Á", 30), City: "São Paulo"},
			[]string{"5925" + strings.Repeat("Á", 25) + "6009São Paulo"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := brcode.Build(tt.code)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range tt.has {
				if !strings.Contains(s, h) {
					t.Errorf("%s lacks %q", s, h)
				}
			}
			c, err := brcode.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Dynamic || c.URL != tt.code.URL || c.AmountCents != tt.code.AmountCents || c.TxID != "***" || c.Category != "0000" {
				t.Fatalf("Parse(%s) = %+v", s, c)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	body := strings.TrimSuffix(manualExample, "1D3D")
	for _, tt := range []struct {
		name    string
		payload string
		want    error
	}{
		{"wrong CRC", body + "1D3E", brcode.ErrCRC},
		{"changed content", strings.Replace(manualExample, "Fulano", "Fulana", 1), brcode.ErrCRC},
		{"lower-case CRC is still the CRC", body + "1d3d", nil},
		{"no CRC field", "000201", brcode.ErrMalformed},
		{"non-hex CRC", body + "ZZZZ", brcode.ErrMalformed},
		{"empty", "", brcode.ErrMalformed},
		{"too long", strings.Repeat("0", 2000), brcode.ErrMalformed},
		{"length past the end", withCRC("000201269914br.gov.bcb.pix"), brcode.ErrMalformed},
		{"missing city", withCRC("00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal62070503***"), brcode.ErrMalformed},
		{"foreign currency", withCRC("00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053038405802BR5913Fulano de Tal6008BRASILIA62070503***"), brcode.ErrMalformed},
		{"float amount", withCRC("00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-42665544000052040000530398654031e35802BR5913Fulano de Tal6008BRASILIA62070503***"), brcode.ErrMalformed},
		{"dynamic without URL", withCRC("000201010212" + "26580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***"), brcode.ErrMalformed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := brcode.Parse(tt.payload)
			if !errors.Is(err, tt.want) && !(tt.want == nil && err == nil) {
				t.Fatalf("Parse: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestBuildRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []brcode.Code{
		{Dynamic: true, Name: "N", City: "C"},                                 // no URL
		{Dynamic: true, URL: "https://psp.example/loc", Name: "N", City: "C"}, // scheme
		{URL: "psp.example/loc", Name: "N", City: "C"},                        // URL on a static code
		{Dynamic: true, URL: strings.Repeat("x", 100), Name: "N", City: "C"},  // field over 99
		{Key: "k", AmountCents: -1, Name: "N", City: "C"},                     // negative
	} {
		if _, err := brcode.Build(c); !errors.Is(err, brcode.ErrMalformed) {
			t.Errorf("Build(%+v) = %v, want ErrMalformed", c, err)
		}
	}
}

// withCRC appends field 63 with the CRC of s.
func withCRC(s string) string {
	s += "6304"
	return s + strings.ToUpper(hex4(brcode.CRC16(s)))
}

func hex4(v uint16) string {
	const h = "0123456789ABCDEF"
	return string([]byte{h[v>>12], h[v>>8&0xF], h[v>>4&0xF], h[v&0xF]})
}
