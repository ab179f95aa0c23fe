// Package debtor is the debtor's item collection: registration under an
// HMAC debtor key with the personal data encrypted in the PROFILE item,
// contracts and their instalments, and the reads of docs/design.md#access-patterns (AP01
// the 360 view, AP02 open instalments, AP09 an instalment's audit trail).
package debtor

import (
	"math/rand/v2"
	"strings"

	"lastro/collections/errs"
)

// DocType is the kind of a document.
type DocType string

// Document kinds.
const (
	CPF  DocType = "CPF"  // individual, 11 digits
	CNPJ DocType = "CNPJ" // company, 14 characters (alphanumeric from July 2026)
)

// Document is a validated, normalised document number. Its String never
// prints the number.
type Document struct {
	Type   DocType
	digits string // normalised: digits (and, for new CNPJs, upper-case letters)
}

// String is the masked form, so a Document can never leak through %v.
func (d Document) String() string { return d.Masked() }

// Digits is the normalised number: what the debtor key is computed from.
func (d Document) Digits() string { return d.digits }

// ErrInvalidDocument is the answer to any document that does not validate;
// it never echoes the input.
var ErrInvalidDocument = errs.E(errs.Invalid, "invalid_document", "document is not a valid CPF or CNPJ")

// ParseDocument normalises a CPF or CNPJ written with or without its
// punctuation (dots, dash, slash, spaces) and validates its check digits.
func ParseDocument(s string) (Document, error) {
	if len(s) > 32 {
		return Document{}, ErrInvalidDocument
	}
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch {
		case r == '.' || r == '-' || r == '/' || r == ' ':
		case r >= '0' && r <= '9', r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		default:
			return Document{}, ErrInvalidDocument
		}
	}
	n := b.String()
	switch {
	case len(n) == 11 && allDigits(n) && validCPF(n):
		return Document{Type: CPF, digits: n}, nil
	case len(n) == 14 && allDigits(n[12:]) && validCNPJ(n):
		return Document{Type: CNPJ, digits: n}, nil
	}
	return Document{}, ErrInvalidDocument
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func allSame(s string) bool { return strings.Count(s, s[:1]) == len(s) }

// cpfCheck computes one CPF check digit over the first n digits.
func cpfCheck(d string, n int) byte {
	sum := 0
	for i := 0; i < n; i++ {
		sum += int(d[i]-'0') * (n + 1 - i)
	}
	r := sum * 10 % 11
	if r == 10 {
		r = 0
	}
	return byte('0' + r)
}

func validCPF(d string) bool {
	return !allSame(d) && cpfCheck(d, 9) == d[9] && cpfCheck(d, 10) == d[10]
}

// cnpjCheck computes one CNPJ check digit over the first n characters; a
// character is worth its ASCII code minus 48, which covers the
// alphanumeric CNPJ (Receita Federal, IN 2.229/2024) and the numeric one.
func cnpjCheck(d string, n int) byte {
	weights := []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}[13-n:]
	sum := 0
	for i := 0; i < n; i++ {
		sum += int(d[i]-'0') * weights[i]
	}
	r := sum % 11
	if r < 2 {
		return '0'
	}
	return byte('0' + 11 - r)
}

func validCNPJ(d string) bool {
	return !allSame(d) && cnpjCheck(d, 12) == d[12] && cnpjCheck(d, 13) == d[13]
}

// Masked shows only the middle of the number: ***.456.789-** for a CPF,
// **.345.678/****-** for a CNPJ. It is the only form kept in clear.
func (d Document) Masked() string {
	n := d.digits
	switch d.Type {
	case CPF:
		return "***." + n[3:6] + "." + n[6:9] + "-**"
	case CNPJ:
		return "**." + n[2:5] + "." + n[5:8] + "/****-**"
	}
	return ""
}

// Formatted is the usual punctuated form (123.456.789-09,
// 12.345.678/0001-95); only reveal shows it.
func (d Document) Formatted() string {
	n := d.digits
	switch d.Type {
	case CPF:
		return n[:3] + "." + n[3:6] + "." + n[6:9] + "-" + n[9:]
	case CNPJ:
		return n[:2] + "." + n[2:5] + "." + n[5:8] + "/" + n[8:12] + "-" + n[12:]
	}
	return ""
}

// GenerateCPF returns a random valid CPF (synthetic data for demos and
// tests).
func GenerateCPF(rng *rand.Rand) Document {
	for {
		b := make([]byte, 11)
		for i := range 9 {
			b[i] = byte('0' + rng.IntN(10))
		}
		b[9] = cpfCheck(string(b), 9)
		b[10] = cpfCheck(string(b), 10)
		if d := string(b); !allSame(d) {
			return Document{Type: CPF, digits: d}
		}
	}
}

// GenerateCNPJ returns a random valid numeric CNPJ of a head office
// (branch 0001).
func GenerateCNPJ(rng *rand.Rand) Document {
	b := make([]byte, 14)
	for i := range 8 {
		b[i] = byte('0' + rng.IntN(10))
	}
	copy(b[8:], "0001")
	b[12] = cnpjCheck(string(b), 12)
	b[13] = cnpjCheck(string(b), 13)
	return Document{Type: CNPJ, digits: string(b)}
}
