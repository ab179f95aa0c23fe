package boleto_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"lastro/boleto"
	"lastro/collections/calendar"
)

func shipment(n int) boleto.Shipment {
	s := boleto.Shipment{Bank: boleto.BankBB, Sequence: 7,
		GeneratedAt: time.Date(2026, 9, 24, 18, 30, 5, 0, time.FixedZone("BRT", -3*3600)),
		Beneficiary: boleto.Beneficiary{Document: "11222333000181", Name: "Crediário Exemplo Ltda", Convenio: "1234567", Carteira: "17",
			Agencia: "1234", AgenciaDV: "5", Conta: "98765", ContaDV: "0"}}
	for i := range n {
		s.Titles = append(s.Titles, boleto.ShippedTitle{Movement: boleto.RemessaEntry, NossoNumero: fmt.Sprintf("12345670000000%03d", i+1),
			DocNumber: fmt.Sprintf("C-1/%d", i+1), DueDate: calendar.MustParse("2026-10-10"), AmountCents: int64(10000 + i),
			IssuedOn: calendar.MustParse("2026-09-24"), FineHundredths: 200, InterestHundredths: 100,
			Payer:     boleto.Payer{Document: "52998224725", Name: "Conceição Brandão", Address: "Rua Um, 10", City: "São Paulo", UF: "SP", ZIP: "01001000"},
			Reference: fmt.Sprintf("12345670000000%03d", i+1)})
	}
	s.Titles[n-1].Movement = boleto.RemessaCancel
	return s
}

// TestWriteRemessa: a shipping file of three boletos (the last a
// withdrawal) has 240-character records ended by CR LF, a header, a lot
// of one P, Q and R per boleto in sequence, and trailers that count them;
// P carries the nosso número, due date and amount where FEBRABAN puts
// them, Q the payer without accents, and the same shipment writes the
// same bytes.
func TestWriteRemessa(t *testing.T) {
	t.Parallel()
	s := shipment(3)
	raw, err := boleto.WriteRemessa(s)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := boleto.WriteRemessa(s)
	if !bytes.Equal(raw, again) {
		t.Fatal("the same shipment wrote other bytes")
	}
	if !strings.HasSuffix(string(raw), "\r\n") {
		t.Fatal("no final CR LF")
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\r\n"), "\r\n")
	if len(lines) != 3*3+4 {
		t.Fatalf("%d lines", len(lines))
	}
	var segments string
	for i, l := range lines {
		if len(l) != boleto.RecordLen {
			t.Fatalf("line %d has %d characters", i+1, len(l))
		}
		if l[7] == '3' {
			segments += l[13:14]
			if want := fmt.Sprintf("%05d", len(segments)); l[8:13] != want {
				t.Fatalf("line %d numbered %s, want %s", i+1, l[8:13], want)
			}
		}
	}
	if segments != "PQRPQRPQR" || strings.Count(segments, "P") != 3 {
		t.Fatalf("segments %s", segments)
	}
	h, lh, p, q, r := lines[0], lines[1], lines[2], lines[3], lines[4]
	for _, c := range []struct{ name, got, want string }{
		{"header bank and kind", h[:8], "00100000"},
		{"header remessa code", h[142:143], "1"},
		{"header date and time", h[143:157], "24092026183005"},
		{"header NSA", h[157:163], "000007"},
		{"header beneficiary", h[72:102], "CREDIARIO EXEMPLO LTDA        "},
		{"lot operation and service", lh[8:11], "R01"},
		{"P movement", p[15:17], "01"},
		{"P nosso número", p[37:57], "12345670000000001   "},
		{"P due date", p[77:85], "10102026"},
		{"P amount", p[85:100], "000000000010000"},
		{"P interest a month", p[117:141], "211102026000000000000100"},
		{"P reference", p[195:220], "12345670000000001        "},
		{"Q payer type and CPF", q[17:33], "1000052998224725"},
		{"Q payer name", q[33:73], "CONCEICAO BRANDAO                       "},
		{"Q city and UF", q[136:153], "SAO PAULO      SP"},
		{"R fine", r[65:89], "211102026000000000000200"},
		{"last P withdraws", lines[8][15:17], "02"},
		{"lot trailer count", lines[11][17:23], "000011"},
		{"file trailer counts", lines[12][:29], "00199999         000001000013"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}

// TestWriteRemessaRefuses: what a bank would refuse is refused here, with
// ErrInvalid and without the payer's data in the message.
func TestWriteRemessaRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*boleto.Shipment)
	}{
		{"no titles", func(s *boleto.Shipment) { s.Titles = nil }},
		{"a bank without a shipping layout", func(s *boleto.Shipment) { s.Bank = "033" }},
		{"sequence 0", func(s *boleto.Shipment) { s.Sequence = 0 }},
		{"payer document of 10 digits", func(s *boleto.Shipment) { s.Titles[0].Payer.Document = "5299822472" }},
		{"zero amount", func(s *boleto.Shipment) { s.Titles[0].AmountCents = 0 }},
		{"nosso número too long", func(s *boleto.Shipment) { s.Titles[0].NossoNumero = strings.Repeat("1", 21) }},
		{"unknown movement", func(s *boleto.Shipment) { s.Titles[0].Movement = "09" }},
	}
	for _, tt := range tests {
		s := shipment(2)
		tt.edit(&s)
		_, err := boleto.WriteRemessa(s)
		if !errors.Is(err, boleto.ErrInvalid) || strings.Contains(err.Error(), "5299822472") || strings.Contains(err.Error(), "Brand") {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}
