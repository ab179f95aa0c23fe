package slip_test

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/oned"
	"github.com/makiuchi-d/gozxing/qrcode"

	"lastro/boleto"
	"lastro/boleto/slip"
	"lastro/collections/calendar"
)

func sample(t *testing.T) boleto.Boleto {
	t.Helper()
	free, err := boleto.BBConvenio{Convenio: "1234567", Carteira: "17"}.FreeField("12345670000000001")
	if err != nil {
		t.Fatal(err)
	}
	b, err := boleto.New(boleto.BankBB, calendar.MustParse("2026-09-24"), 102467, free)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBarsDecodeToTheBarcode: the Interleaved 2 of 5 symbol drawn from a
// boleto's 44 digits reads back, with an independent decoder, as those 44
// digits; it has 405 modules (start, 22 digit pairs of 18, stop).
func TestBarsDecodeToTheBarcode(t *testing.T) {
	t.Parallel()
	b := sample(t)
	bars, err := slip.Bars(b.Barcode())
	if err != nil {
		t.Fatal(err)
	}
	if len(bars) != 4+22*18+5 {
		t.Fatalf("%d modules", len(bars))
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(slip.BarsImage(bars, 2, 60))
	if err != nil {
		t.Fatal(err)
	}
	got, err := oned.NewITFReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_ALLOWED_LENGTHS: []int{44}})
	if err != nil || got.GetText() != b.Barcode() {
		t.Fatalf("decoded %v %v, want %s", got, err, b.Barcode())
	}
	if _, err := slip.Bars("123"); err == nil {
		t.Fatal("3 digits drawn")
	}
}

// TestQRPNGDecodesToTheCode: the PNG is a QR that an independent decoder
// reads as the BR Code it was made of.
func TestQRPNGDecodesToTheCode(t *testing.T) {
	t.Parallel()
	code := "00020101021226830014br.gov.bcb.pix2561qrpix.example/qr/v2/cobv/5f3c1a2b3c4d5e6f708192a3b4c5d6e75204000053039865802BR5913Lastro Demo 6009Sao Paulo62070503***63041D3A"
	raw, err := slip.QRPNG(code, 320)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	got, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	if err != nil || got.GetText() != code {
		t.Fatalf("decoded %v %v", got, err)
	}
	if _, err := slip.QRPNG("", 100); err == nil {
		t.Fatal("an empty code drawn")
	}
}

// TestBoletoPDF: the slip is a PDF that prints the linha digitável, the
// bank code with its digit, the amount and the beneficiary and payer as
// given; the same slip renders the same bytes.
func TestBoletoPDF(t *testing.T) {
	t.Parallel()
	b := sample(t)
	bank, _ := boleto.BankOf(b.Bank)
	v := slip.Boleto{Bank: bank, Boleto: b, DueDate: calendar.MustParse("2026-09-24"), NossoNumero: "12345670000000001", DocNumber: "C-1/001",
		Carteira: "17", AgencyCode: "1234-5 / 12345-6", IssuedOn: calendar.MustParse("2026-09-20"),
		Beneficiary: slip.Party{Name: "Crediário Exemplo", Document: "11.222.333/0001-81"}, Payer: slip.Party{Name: "Pessoa Sintética", Document: "***.456.789-**"},
		Instructions: []string{"Após o vencimento, multa de 2,00% e juros de 1,00% ao mês"}, CreatedAt: time.Date(2026, 9, 20, 12, 0, 0, 0, time.UTC)}
	raw, err := slip.BoletoPDF(v)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := slip.BoletoPDF(v)
	if !bytes.HasPrefix(raw, []byte("%PDF-")) || !bytes.Equal(raw, again) {
		t.Fatalf("not a stable PDF: %q", raw[:8])
	}
	for _, want := range []string{b.Line(), "001-9", "R$ 1.024,67", "24/09/2026", "12345670000000001", "***.456.789-**"} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("the slip lacks %q", want)
		}
	}
}

// TestPixPDF: a Pix slip is a PDF with the QR image and the code's text.
func TestPixPDF(t *testing.T) {
	t.Parallel()
	code := "00020101021226830014br.gov.bcb.pix2561qrpix.example/qr/v2/cob/abc5204000053039865802BR5913Lastro Demo 6009Sao Paulo62070503***6304ABCD"
	raw, err := slip.PixPDF(slip.Pix{AmountCents: 5000, ValidUntil: "2026-09-25T10:00:00-03:00", Code: code,
		Beneficiary: slip.Party{Name: "Crediário Exemplo", Document: "11.222.333/0001-81"}, Payer: slip.Party{Name: "Pessoa", Document: "***.456.789-**"}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte("%PDF-")) || !bytes.Contains(raw, []byte("/Subtype /Image")) || !bytes.Contains(raw, []byte(code[:40])) {
		t.Fatal("not a Pix slip")
	}
	if !strings.Contains(slip.BRL(123456789), "1.234.567,89") || slip.BRL(5) != "R$ 0,05" {
		t.Fatalf("BRL %s %s", slip.BRL(123456789), slip.BRL(5))
	}
}
