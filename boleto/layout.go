package boleto

import "strings"

// Layout is a bank's free field (barcode positions 20-44): how a nosso
// número (the bank's number of the slip) and the beneficiary's agreement
// are written in it, and read back. Banks differ; add one by implementing
// Layout and returning it for its bank in tenant.BoletoSettings.Layout.
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

// Fields reads a boleto's free field with the layout its bank is known
// for (only Banco do Brasil's convênio-7 one so far); ok is false when no
// known layout reads it.
func (b Boleto) Fields() (fields []Field, ok bool) {
	if b.Bank == BankBB {
		if f, err := (BBConvenio7{}).Fields(b.FreeField); err == nil {
			return f, true
		}
	}
	return nil, false
}
