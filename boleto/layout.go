package boleto

import (
	"strings"
)

// Layout is a bank's free field (barcode positions 20-44): how a nosso
// número (the bank's number of the slip) and the beneficiary's agreement
// are written in it, and read back. Banks differ; add one by implementing
// Layout and giving its row of the bank table (banks.go) a build function.
type Layout interface {
	// Bank is the FEBRABAN code of the bank the layout belongs to.
	Bank() string
	// FreeField encodes a nosso número in the 25 digits.
	FreeField(nossoNumero string) (string, error)
	// Fields decodes a free field into its named parts, in order.
	Fields(free string) ([]Field, error)
	// NossoNumero makes a nosso número of the agreement from a number the
	// issuer drew (at least NossoNumeroLen digits, the first not zero):
	// the agreement's prefix, then as many of the number's last digits as
	// the layout leaves to the beneficiary.
	NossoNumero(drawn string) (string, error)
}

// Field is one named part of a free field.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// BankBB is Banco do Brasil's FEBRABAN code.
const BankBB = "001"

// BBConvenio is Banco do Brasil's free field for a convênio of 7 or 8
// digits (cobrança with a 17-digit nosso número): six zeros, the nosso
// número — the convênio, then a sequence of 10 digits (convênio of 7) or
// 9 (convênio of 8) — and the carteira:
//
//	000000 CCCCCCC  SSSSSSSSSS KK   (convênio of 7)
//	000000 CCCCCCCC SSSSSSSSS  KK   (convênio of 8)
//
// Both shapes are the same 25 digits, so a free field alone does not say
// which one it is: only the convênio does (Fields with Convenio set).
type BBConvenio struct {
	Convenio string // 7 or 8 digits, the first not zero; "" reads any
	Carteira string // 2 digits (e.g. 17)
}

// NossoNumeroLen is the length of a BB nosso número of a convênio of 7 or
// 8 digits.
const NossoNumeroLen = 17

// Bank implements Layout.
func (BBConvenio) Bank() string { return BankBB }

// Validate checks the convênio and carteira.
func (l BBConvenio) Validate() error {
	if n := len(l.Convenio); (n != 7 && n != 8) || !digits(l.Convenio) || l.Convenio[0] == '0' {
		return invalidf("a Banco do Brasil convênio has 7 or 8 digits, the first not zero")
	}
	if len(l.Carteira) != 2 || !digits(l.Carteira) {
		return invalidf("a carteira has 2 digits")
	}
	return nil
}

// FreeField implements Layout: the nosso número must be 17 digits that
// begin with the convênio.
func (l BBConvenio) FreeField(nossoNumero string) (string, error) {
	if err := l.Validate(); err != nil {
		return "", err
	}
	if len(nossoNumero) != NossoNumeroLen || !digits(nossoNumero) || !strings.HasPrefix(nossoNumero, l.Convenio) {
		return "", invalidf("the nosso número must be 17 digits beginning with the convênio")
	}
	return "000000" + nossoNumero + l.Carteira, nil
}

// NossoNumero implements Layout: the convênio, then the drawn number's
// last 10 digits (convênio of 7) or 9 (convênio of 8).
func (l BBConvenio) NossoNumero(drawn string) (string, error) {
	if err := l.Validate(); err != nil {
		return "", err
	}
	if len(drawn) < NossoNumeroLen || !digits(drawn) {
		return "", invalidf("the drawn number must be at least %d digits", NossoNumeroLen)
	}
	return l.Convenio + drawn[len(drawn)-(NossoNumeroLen-len(l.Convenio)):], nil
}

// Fields implements Layout. It reads any BB free field of this shape. With
// a convênio set and the free field beginning with it, the convênio and
// the sequence are split at its length; without one, the split of a
// convênio of 7 digits is given and the field "convenioDigits" says that
// the free field cannot tell 7 from 8.
func (l BBConvenio) Fields(free string) ([]Field, error) {
	if len(free) != FreeLen || !digits(free) {
		return nil, invalidf("the free field must be %d digits", FreeLen)
	}
	if free[:6] != "000000" {
		return nil, invalidf("not a Banco do Brasil convênio-7/8 free field (it begins with six zeros)")
	}
	nn := free[6:23]
	digitsNote := "7 or 8 (the free field does not tell; the convênio does)"
	cut := 7
	if n := len(l.Convenio); (n == 7 || n == 8) && strings.HasPrefix(nn, l.Convenio) {
		cut, digitsNote = n, string(rune('0'+n))
	}
	return []Field{
		{Name: "convenio", Value: nn[:cut]},
		{Name: "nossoNumero", Value: nn},
		{Name: "sequencia", Value: nn[cut:]},
		{Name: "carteira", Value: free[23:25]},
		{Name: "convenioDigits", Value: digitsNote},
	}, nil
}

// Agreement is a beneficiary's cobrança agreement with its bank, as a
// tenant sets it: the bank's FEBRABAN code and what the bank's layout
// needs of it.
type Agreement struct {
	Bank     string
	Convenio string
	Carteira string
}

// LayoutFor is the free-field layout of an agreement: its bank's row of
// the bank table (BankOf), built from the convênio and carteira and
// validated. A bank not in the table, or one whose free field is not laid
// out here, is ErrUnsupportedBank; an agreement its layout refuses wraps
// ErrInvalid.
func LayoutFor(a Agreement) (Layout, error) {
	b, ok := BankOf(a.Bank)
	if !ok || b.build == nil {
		return nil, ErrUnsupportedBank
	}
	l, err := b.build(a)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Fields reads a boleto's free field with its bank's layout; ok is false
// when no layout in the table reads it.
func (b Boleto) Fields() (fields []Field, ok bool) {
	bk, known := BankOf(b.Bank)
	if !known || bk.reader == nil {
		return nil, false
	}
	f, err := bk.reader.Fields(b.FreeField)
	return f, err == nil
}
