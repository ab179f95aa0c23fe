// Package boleto builds and reads Brazilian bank slips (boletos de
// cobrança) as FEBRABAN lays them out — the 44-digit barcode and the
// 47-digit linha digitável with every check digit, the due factor and its
// 2025 restart — and parses CNAB 240 return files (cnab240.go). It is pure:
// no store, no clock, no HTTP.
//
// The barcode, position by position (1-based):
//
//	1-3    bank code (FEBRABAN compensation code, e.g. 001 Banco do Brasil)
//	4      currency: 9 is the real
//	5      general check digit (modulo 11 over the other 43 digits)
//	6-9    due factor (DueFactor); 0000 when the slip has no due date
//	10-19  amount in cents; zeros when the payer keys it in
//	20-44  free field, laid out by the bank (Layout)
//
// The linha digitável is the same content re-ordered in five fields, the
// first three closed by a modulo 10 check digit:
//
//	AAABC.CCCCX DDDDD.DDDDDY EEEEE.EEEEEZ K UUUUVVVVVVVVVV
//
// AAA bank, B currency, C..C free field 1-5, D..D free field 6-15, E..E
// free field 16-25, K the general check digit, UUUU the factor and V..V
// the amount.
package boleto

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"lastro/collections/calendar"
)

// CurrencyReal is the currency digit of a boleto in reais.
const CurrencyReal = '9'

// MaxAmountCents is the largest amount the barcode's ten digits hold:
// R$ 99,999,999.99.
const MaxAmountCents = 9_999_999_999

// Sizes of the two representations.
const (
	BarcodeLen = 44
	LineLen    = 47
	FreeLen    = 25
)

// ErrInvalid is wrapped by every error of Parse, New and the layouts, so
// callers tell bad input from a bug with errors.Is.
var ErrInvalid = errors.New("boleto: invalid")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Boleto is the content of a barcode.
type Boleto struct {
	Bank        string // three digits
	Currency    byte   // '9' for reais
	Factor      int    // due factor: 0 (no due date) or 1000-9999
	AmountCents int64  // 0: the payer keys the amount in
	FreeField   string // 25 digits, laid out by the bank
}

// New builds a boleto in reais due on due (the zero Date: no due date).
func New(bank string, due calendar.Date, amountCents int64, freeField string) (Boleto, error) {
	b := Boleto{Bank: bank, Currency: CurrencyReal, AmountCents: amountCents, FreeField: freeField}
	if !due.IsZero() {
		f, err := DueFactor(due)
		if err != nil {
			return Boleto{}, err
		}
		b.Factor = f
	}
	if err := b.validate(); err != nil {
		return Boleto{}, err
	}
	return b, nil
}

func (b Boleto) validate() error {
	switch {
	case len(b.Bank) != 3 || !digits(b.Bank):
		return invalidf("the bank code must be 3 digits")
	case b.Currency < '0' || b.Currency > '9':
		return invalidf("the currency must be a digit")
	case b.Factor != 0 && (b.Factor < MinFactor || b.Factor > MaxFactor):
		return invalidf("the due factor must be 0000 or %d-%d", MinFactor, MaxFactor)
	case b.AmountCents < 0 || b.AmountCents > MaxAmountCents:
		return invalidf("the amount must be 0-%d cents", int64(MaxAmountCents))
	case len(b.FreeField) != FreeLen || !digits(b.FreeField):
		return invalidf("the free field must be %d digits", FreeLen)
	}
	return nil
}

// body is the barcode without its check digit (43 digits).
func (b Boleto) body() string {
	return fmt.Sprintf("%s%c%04d%010d%s", b.Bank, b.Currency, b.Factor, b.AmountCents, b.FreeField)
}

// CheckDigit is the barcode's general check digit (position 5).
func (b Boleto) CheckDigit() byte { return mod11(b.body()) }

// Barcode is the 44 digits the bars encode.
func (b Boleto) Barcode() string {
	body := b.body()
	return body[:4] + string(mod11(body)) + body[4:]
}

// Line is the linha digitável as printed: five fields separated by
// spaces, the first three with a dot after their fifth digit.
func (b Boleto) Line() string {
	d := b.LineDigits()
	return d[0:5] + "." + d[5:10] + " " + d[10:15] + "." + d[15:21] + " " + d[21:26] + "." + d[26:32] + " " + d[32:33] + " " + d[33:]
}

// LineDigits is the linha digitável without separators (47 digits).
func (b Boleto) LineDigits() string {
	bc := b.Barcode()
	f1 := bc[0:4] + bc[19:24]
	f2 := bc[24:34]
	f3 := bc[34:44]
	return f1 + string(mod10(f1)) + f2 + string(mod10(f2)) + f3 + string(mod10(f3)) + bc[4:5] + bc[5:19]
}

// DueDate decodes the factor to a date within the window around ref
// (DateOfFactor) that tells the restarted factor's cycles apart. ok is false
// when the boleto has no due date (factor 0000).
func (b Boleto) DueDate(ref calendar.Date) (d calendar.Date, ok bool, err error) {
	if b.Factor == 0 {
		return calendar.Date{}, false, nil
	}
	d, err = DateOfFactor(b.Factor, ref)
	return d, err == nil, err
}

// Parse reads a linha digitável (47 digits, with or without the dots and
// spaces it is printed with) or a barcode (44 digits), and verifies every
// check digit. Anything else is refused with an error wrapping
// ErrInvalid; the error never echoes the input.
func Parse(s string) (Boleto, error) {
	var clean strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			clean.WriteRune(r)
		case r == '.' || r == ' ' || r == '-' || r == '\t':
		default:
			return Boleto{}, invalidf("only digits, dots and spaces are allowed")
		}
	}
	d := clean.String()
	var bc string
	switch len(d) {
	case BarcodeLen:
		bc = d
	case LineLen:
		for i, f := range [][2]int{{0, 9}, {10, 20}, {21, 31}} {
			field := d[f[0]:f[1]]
			if mod10(field) != d[f[1]] {
				return Boleto{}, invalidf("field %d of the line fails its check digit", i+1)
			}
		}
		bc = d[0:4] + d[32:33] + d[33:47] + d[4:9] + d[10:20] + d[21:31]
	default:
		return Boleto{}, invalidf("a linha digitável has 47 digits and a barcode 44, not %d", len(d))
	}
	factor, _ := strconv.Atoi(bc[5:9])
	amount, _ := strconv.ParseInt(bc[9:19], 10, 64)
	b := Boleto{Bank: bc[0:3], Currency: bc[3], Factor: factor, AmountCents: amount, FreeField: bc[19:44]}
	if err := b.validate(); err != nil {
		return Boleto{}, err
	}
	if b.CheckDigit() != bc[4] {
		return Boleto{}, invalidf("the general check digit does not match")
	}
	return b, nil
}

// mod10 is the check digit of a line field: digits weighted 2, 1, 2, 1...
// from the right, each product's digits summed, then the complement of
// the sum to the next multiple of ten.
func mod10(s string) byte {
	sum, w := 0, 2
	for i := len(s) - 1; i >= 0; i-- {
		p := int(s[i]-'0') * w
		sum += p/10 + p%10
		w = 3 - w
	}
	return byte('0' + (10-sum%10)%10)
}

// mod11 is the barcode's general check digit: digits weighted 2 to 9 from
// the right (cycling), 11 minus the sum's remainder by 11, where a result
// of 0, 10 or 11 becomes 1 (the digit is never 0).
func mod11(s string) byte {
	sum, w := 0, 2
	for i := len(s) - 1; i >= 0; i-- {
		sum += int(s[i]-'0') * w
		if w++; w > 9 {
			w = 2
		}
	}
	dv := 11 - sum%11
	if dv == 0 || dv == 10 || dv == 11 {
		dv = 1
	}
	return byte('0' + dv)
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
