// Package slip renders what a debtor pays from: a boleto's printable slip
// in FEBRABAN's layout (recibo do pagador above the cut, ficha de
// compensação below, with its Interleaved 2 of 5 barcode), a Pix charge's
// slip (its QR and copia-e-cola) and the QR alone as a PNG
// (docs/adr/0071). It is pure: the caller passes what to print, already
// read and masked.
package slip

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"time"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/qr"
	"github.com/boombuler/barcode/twooffive"
	"github.com/go-pdf/fpdf"

	"lastro/boleto"
	"lastro/collections/calendar"
)

// ErrInvalid is wrapped by the errors of what cannot be printed.
var ErrInvalid = errors.New("slip: invalid")

// Bars are the modules of a barcode's Interleaved 2 of 5 symbol, left to
// right, true for a bar: a narrow bar or space is one module, a wide one
// three (FEBRABAN's 1:3), between the start (narrow bar, space, bar,
// space) and the stop (wide bar, narrow space, narrow bar) patterns.
func Bars(digits string) ([]bool, error) {
	if len(digits) != boleto.BarcodeLen {
		return nil, fmt.Errorf("%w: a boleto barcode has %d digits", ErrInvalid, boleto.BarcodeLen)
	}
	bc, err := twooffive.Encode(digits, true)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	w := bc.Bounds().Dx()
	out := make([]bool, w)
	for x := range w {
		r, _, _, _ := bc.At(x, 0).RGBA()
		out[x] = r == 0
	}
	return out, nil
}

// BarsImage draws bars as a grey image: scale pixels a module, height
// pixels tall, with a quiet zone of ten modules each side.
func BarsImage(bars []bool, scale, height int) image.Image {
	quiet := 10 * scale
	img := image.NewGray(image.Rect(0, 0, len(bars)*scale+2*quiet, height))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for i, b := range bars {
		if !b {
			continue
		}
		for x := quiet + i*scale; x < quiet+(i+1)*scale; x++ {
			for y := range height {
				img.SetGray(x, y, color.Gray{})
			}
		}
	}
	return img
}

// QRPNG is a BR Code as a QR image in PNG, size pixels square, error
// correction M (what the Central Bank's manual asks of a BR Code).
func QRPNG(code string, size int) ([]byte, error) {
	if code == "" {
		return nil, fmt.Errorf("%w: no code to draw", ErrInvalid)
	}
	q, err := qr.Encode(code, qr.M, qr.Auto)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if q, err = barcode.Scale(q, size, size); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, q); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Party is a beneficiary or a payer as printed; Document is already
// formatted and, for a payer, masked (the slip is handed to operators who
// may not see a full document, docs/adr/0071).
type Party struct {
	Name     string
	Document string
}

// Boleto is what a boleto slip prints.
type Boleto struct {
	Bank         boleto.Bank
	Boleto       boleto.Boleto // the barcode's content
	DueDate      calendar.Date
	NossoNumero  string
	DocNumber    string
	Carteira     string
	AgencyCode   string // agência / código do beneficiário
	IssuedOn     calendar.Date
	Beneficiary  Party
	Payer        Party
	Instructions []string
	CreatedAt    time.Time // the PDF's creation date: the charge's, so the same charge prints the same file
}

// Pix is what a Pix charge's slip prints.
type Pix struct {
	AmountCents int64
	ValidUntil  string // as the API answers it (RFC 3339)
	DueDate     calendar.Date
	Code        string // the BR Code (copia e cola)
	Beneficiary Party
	Payer       Party
	CreatedAt   time.Time
}

// BRL formats cents as reais: R$ 1.024,67.
func BRL(cents int64) string {
	neg := cents < 0
	if neg {
		cents = -cents
	}
	whole := fmt.Sprint(cents / 100)
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	s := fmt.Sprintf("R$ %s,%02d", b.String(), cents%100)
	if neg {
		s = "-" + s
	}
	return s
}

func brDate(d calendar.Date) string {
	if d.IsZero() {
		return ""
	}
	return fmt.Sprintf("%02d/%02d/%04d", d.Day(), int(d.Month()), d.Year())
}

// page is an A4 document with the slip's fonts, deterministic: no
// compression (the texts stay searchable), fixed dates and sorted catalog.
func page(created time.Time) (*fpdf.Fpdf, func(string) string) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCompression(false)
	pdf.SetCreationDate(created)
	pdf.SetModificationDate(created)
	pdf.SetCatalogSort(true)
	pdf.SetMargins(10, 10, 10)
	pdf.SetAutoPageBreak(false, 0)
	pdf.AddPage()
	return pdf, pdf.UnicodeTranslatorFromDescriptor("")
}

// cell is one labelled box of the slip: a small caption and its value.
func cell(pdf *fpdf.Fpdf, tr func(string) string, x, y, w, h float64, label, value, align string) {
	pdf.Rect(x, y, w, h, "D")
	pdf.SetFont("Helvetica", "", 6)
	pdf.SetXY(x+0.8, y+0.6)
	pdf.CellFormat(w-1.6, 2.6, tr(label), "", 0, "L", false, 0, "")
	pdf.SetFont("Helvetica", "B", 8.5)
	pdf.SetXY(x+0.8, y+3.4)
	pdf.CellFormat(w-1.6, h-3.8, tr(value), "", 0, align, false, 0, "")
}

func output(pdf *fpdf.Fpdf) ([]byte, error) {
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("slip: render: %w", err)
	}
	return buf.Bytes(), nil
}

// BoletoPDF renders a boleto's slip: the recibo do pagador (what the payer
// keeps), a cut line, and the ficha de compensação (what the bank reads):
// bank code with its digit, the linha digitável, payment place, due date,
// beneficiary, agency and code, document data, nosso número, amount,
// instructions, payer, and the barcode of the 44 digits.
func BoletoPDF(v Boleto) ([]byte, error) {
	bars, err := Bars(v.Boleto.Barcode())
	if err != nil {
		return nil, err
	}
	pdf, tr := page(v.CreatedAt)
	bankCode := v.Bank.Code + "-" + v.Bank.Digit
	amount := BRL(v.Boleto.AmountCents)
	due := brDate(v.DueDate)
	if due == "" {
		due = "Contra apresentação"
	}
	header := func(y float64, right string) {
		pdf.SetFont("Helvetica", "B", 11)
		pdf.SetXY(10, y)
		pdf.CellFormat(50, 8, tr(v.Bank.Name), "B", 0, "L", false, 0, "")
		pdf.SetFont("Helvetica", "B", 14)
		pdf.CellFormat(20, 8, bankCode, "LRB", 0, "C", false, 0, "")
		pdf.SetFont("Helvetica", "B", 10)
		pdf.CellFormat(120, 8, tr(right), "B", 0, "R", false, 0, "")
	}
	ben := v.Beneficiary.Name + " - CNPJ " + v.Beneficiary.Document
	payer := v.Payer.Name + " - " + v.Payer.Document

	// Recibo do pagador.
	header(10, "Recibo do Pagador")
	y := 19.0
	cell(pdf, tr, 10, y, 140, 9, "Beneficiário", ben, "L")
	cell(pdf, tr, 150, y, 50, 9, "Vencimento", due, "R")
	y += 9
	cell(pdf, tr, 10, y, 70, 9, "Agência / Código do Beneficiário", v.AgencyCode, "L")
	cell(pdf, tr, 80, y, 70, 9, "Nosso Número", v.NossoNumero, "L")
	cell(pdf, tr, 150, y, 50, 9, "(=) Valor do Documento", amount, "R")
	y += 9
	cell(pdf, tr, 10, y, 140, 9, "Pagador", payer, "L")
	cell(pdf, tr, 150, y, 50, 9, "Número do Documento", v.DocNumber, "R")
	y += 9
	pdf.SetFont("Helvetica", "", 8)
	pdf.SetXY(10, y+1)
	pdf.CellFormat(190, 5, tr("Linha digitável: "+v.Boleto.Line()), "", 0, "L", false, 0, "")
	pdf.SetXY(10, y+6)
	pdf.CellFormat(190, 4, tr("Autenticação mecânica"), "", 0, "R", false, 0, "")

	// The cut.
	pdf.SetDashPattern([]float64{1, 1}, 0)
	pdf.Line(10, 80, 200, 80)
	pdf.SetDashPattern(nil, 0)
	pdf.SetFont("Helvetica", "", 6)
	pdf.SetXY(10, 80.5)
	pdf.CellFormat(190, 3, tr("Corte na linha pontilhada"), "", 0, "R", false, 0, "")

	// Ficha de compensação.
	header(88, v.Boleto.Line())
	y = 97
	cell(pdf, tr, 10, y, 140, 9, "Local de Pagamento", "Pagável em qualquer banco, Pix ou lotérica até o vencimento", "L")
	cell(pdf, tr, 150, y, 50, 9, "Vencimento", due, "R")
	y += 9
	cell(pdf, tr, 10, y, 140, 9, "Beneficiário", ben, "L")
	cell(pdf, tr, 150, y, 50, 9, "Agência / Código do Beneficiário", v.AgencyCode, "R")
	y += 9
	cell(pdf, tr, 10, y, 30, 9, "Data do Documento", brDate(v.IssuedOn), "L")
	cell(pdf, tr, 40, y, 45, 9, "Número do Documento", v.DocNumber, "L")
	cell(pdf, tr, 85, y, 20, 9, "Espécie Doc.", "DS", "L")
	cell(pdf, tr, 105, y, 12, 9, "Aceite", "N", "L")
	cell(pdf, tr, 117, y, 33, 9, "Data Processamento", brDate(v.IssuedOn), "L")
	cell(pdf, tr, 150, y, 50, 9, "Nosso Número", v.NossoNumero, "R")
	y += 9
	cell(pdf, tr, 10, y, 30, 9, "Uso do Banco", "", "L")
	cell(pdf, tr, 40, y, 20, 9, "Carteira", v.Carteira, "L")
	cell(pdf, tr, 60, y, 20, 9, "Espécie", "R$", "L")
	cell(pdf, tr, 80, y, 35, 9, "Quantidade", "", "L")
	cell(pdf, tr, 115, y, 35, 9, "Valor", "", "L")
	cell(pdf, tr, 150, y, 50, 9, "(=) Valor do Documento", amount, "R")
	y += 9
	pdf.Rect(10, y, 140, 36, "D")
	pdf.SetFont("Helvetica", "", 6)
	pdf.SetXY(10.8, y+0.6)
	pdf.CellFormat(138, 2.6, tr("Instruções (texto de responsabilidade do beneficiário)"), "", 0, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 8)
	for i, line := range v.Instructions {
		pdf.SetXY(10.8, y+4+float64(i)*4.2)
		pdf.CellFormat(138, 4, tr(line), "", 0, "L", false, 0, "")
	}
	for i, label := range []string{"(-) Desconto / Abatimento", "(-) Outras Deduções", "(+) Mora / Multa", "(+) Outros Acréscimos"} {
		cell(pdf, tr, 150, y+float64(i)*7.2, 50, 7.2, label, "", "R")
	}
	cell(pdf, tr, 150, y+28.8, 50, 7.2, "(=) Valor Cobrado", "", "R")
	y += 36
	cell(pdf, tr, 10, y, 190, 12, "Pagador", payer, "L")
	y += 12
	pdf.SetFont("Helvetica", "", 6)
	pdf.SetXY(10, y+0.5)
	pdf.CellFormat(190, 3, tr("Autenticação mecânica - Ficha de Compensação"), "", 0, "R", false, 0, "")

	// The bars: 103 mm wide and 13 mm tall, as FEBRABAN sizes them.
	module := 103.0 / float64(len(bars))
	x0, y0 := 12.0, y+4.5
	for i := 0; i < len(bars); {
		if !bars[i] {
			i++
			continue
		}
		j := i
		for j < len(bars) && bars[j] {
			j++
		}
		pdf.Rect(x0+float64(i)*module, y0, float64(j-i)*module, 13, "F")
		i = j
	}
	return output(pdf)
}

// PixPDF renders a Pix charge's slip: the amount and its validity, the QR
// of the BR Code and the BR Code itself to copy and paste.
func PixPDF(v Pix) ([]byte, error) {
	img, err := QRPNG(v.Code, 600)
	if err != nil {
		return nil, err
	}
	pdf, tr := page(v.CreatedAt)
	pdf.SetFont("Helvetica", "B", 16)
	pdf.SetXY(10, 12)
	pdf.CellFormat(190, 10, tr("Pagamento por Pix"), "B", 0, "L", false, 0, "")
	y := 26.0
	cell(pdf, tr, 10, y, 140, 9, "Beneficiário", v.Beneficiary.Name+" - CNPJ "+v.Beneficiary.Document, "L")
	cell(pdf, tr, 150, y, 50, 9, "Valor", BRL(v.AmountCents), "R")
	y += 9
	cell(pdf, tr, 10, y, 140, 9, "Pagador", v.Payer.Name+" - "+v.Payer.Document, "L")
	validity := v.ValidUntil
	if !v.DueDate.IsZero() {
		validity = "Vencimento " + brDate(v.DueDate)
	}
	cell(pdf, tr, 150, y, 50, 9, "Validade", validity, "R")
	pdf.RegisterImageOptionsReader("qr", fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(img))
	pdf.ImageOptions("qr", 65, 52, 80, 80, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	pdf.SetFont("Helvetica", "", 8)
	pdf.SetXY(10, 137)
	pdf.CellFormat(190, 5, tr("Aponte a câmera do aplicativo do seu banco para o QR ou use o Pix copia e cola:"), "", 1, "C", false, 0, "")
	pdf.SetFont("Courier", "", 8)
	pdf.SetX(20)
	pdf.MultiCell(170, 4, v.Code, "1", "L", false)
	return output(pdf)
}
