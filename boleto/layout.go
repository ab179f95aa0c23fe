package boleto

import (
	"fmt"
	"sort"
	"strings"
)

// Layout is a bank's free field (barcode positions 20-44): how a nosso
// número (the bank's number of the slip) and the beneficiary's agreement
// are written in it, and read back. Banks differ; add one by implementing
// Layout and registering it in the layouts table below (LayoutFor).
type Layout interface {
	// Bank is the FEBRABAN code of the bank the layout belongs to.
	Bank() string
	// FreeField encodes a nosso número in the 25 digits.
	FreeField(nossoNumero string) (string, error)
	// Fields decodes a free field into its named parts, in order.
	Fields(free string) ([]Field, error)
}

// Field is one named part of a free field.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// BankBB is Banco do Brasil's FEBRABAN code.
const BankBB = "001"

// BBConvenio7 is Banco do Brasil's free field for a 7-digit convênio
// (cobrança with a 17-digit nosso número): six zeros, the nosso número —
// the convênio's 7 digits then a 10-digit sequence — and the carteira:
//
//	000000 CCCCCCC SSSSSSSSSS KK
type BBConvenio7 struct {
	Convenio string // 7 digits, the first not zero
	Carteira string // 2 digits (e.g. 17)
}

// NossoNumeroLen is the length of a BB convênio-7 nosso número.
const NossoNumeroLen = 17

// Bank implements Layout.
func (BBConvenio7) Bank() string { return BankBB }

// Validate checks the convênio and carteira.
func (l BBConvenio7) Validate() error {
	if len(l.Convenio) != 7 || !digits(l.Convenio) || l.Convenio[0] == '0' {
		return invalidf("a Banco do Brasil convênio has 7 digits, the first not zero")
	}
	if len(l.Carteira) != 2 || !digits(l.Carteira) {
		return invalidf("a carteira has 2 digits")
	}
	return nil
}

// FreeField implements Layout: the nosso número must be 17 digits that
// begin with the convênio.
func (l BBConvenio7) FreeField(nossoNumero string) (string, error) {
	if err := l.Validate(); err != nil {
		return "", err
	}
	if len(nossoNumero) != NossoNumeroLen || !digits(nossoNumero) || !strings.HasPrefix(nossoNumero, l.Convenio) {
		return "", invalidf("the nosso número must be 17 digits beginning with the convênio")
	}
	return "000000" + nossoNumero + l.Carteira, nil
}

// Fields implements Layout. It reads any BB convênio-7 free field, not
// only one of l's convênio.
func (BBConvenio7) Fields(free string) ([]Field, error) {
	if len(free) != FreeLen || !digits(free) {
		return nil, invalidf("the free field must be %d digits", FreeLen)
	}
	if free[:6] != "000000" {
		return nil, invalidf("not a Banco do Brasil convênio-7 free field (it begins with six zeros)")
	}
	return []Field{
		{Name: "convenio", Value: free[6:13]},
		{Name: "nossoNumero", Value: free[6:23]},
		{Name: "sequencia", Value: free[13:23]},
		{Name: "carteira", Value: free[23:25]},
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

// bankLayout is one row of the layouts table: a bank's name, how an
// agreement becomes its Layout, and the Layout that reads any of its
// free fields.
type bankLayout struct {
	name   string
	build  func(Agreement) (Layout, error)
	reader Layout
}

// layouts is the table of the banks whose free field is laid out, by
// FEBRABAN code. It is only read; a bank is added here, in one place.
var layouts = map[string]bankLayout{
	BankBB: {name: "Banco do Brasil (convênio of 7 digits)", reader: BBConvenio7{}, build: func(a Agreement) (Layout, error) {
		l := BBConvenio7{Convenio: a.Convenio, Carteira: a.Carteira}
		return l, l.Validate()
	}},
}

// ErrUnsupportedBank is LayoutFor's answer for a bank with no layout in
// the table; it wraps ErrInvalid.
var ErrUnsupportedBank = fmt.Errorf("%w: no free-field layout for this bank", ErrInvalid)

// LayoutFor is the free-field layout of an agreement: its bank's, built
// from the convênio and carteira and validated. A bank not in the table
// is ErrUnsupportedBank; an agreement its layout refuses wraps ErrInvalid.
func LayoutFor(a Agreement) (Layout, error) {
	bl, ok := layouts[a.Bank]
	if !ok {
		return nil, ErrUnsupportedBank
	}
	l, err := bl.build(a)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Banks lists the banks LayoutFor knows, "code name", by code.
func Banks() []string {
	var out []string
	for code, bl := range layouts {
		out = append(out, code+" "+bl.name)
	}
	sort.Strings(out)
	return out
}

// Fields reads a boleto's free field with its bank's layout; ok is false
// when no layout in the table reads it.
func (b Boleto) Fields() (fields []Field, ok bool) {
	bl, known := layouts[b.Bank]
	if !known {
		return nil, false
	}
	f, err := bl.reader.Fields(b.FreeField)
	return f, err == nil
}
