package tenant

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/boleto"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
)

// BoletoSettings are the tenant's agreement with the bank that issues its
// boletos: the bank's FEBRABAN code, the convênio and the carteira, read
// by the bank's layout (boleto.LayoutFor), and the beneficiary as the bank
// knows it — the lender's name, CNPJ, agência and conta — which the
// shipping files and the printed slip carry (docs/adr/0072). The CNPJ is
// the lending company's, not a debtor's.
type BoletoSettings struct {
	Bank     string `json:"bank" dynamodbav:"bank"`         // "001"
	Convenio string `json:"convenio" dynamodbav:"convenio"` // the bank's layout says its digits (BB: 7 or 8)
	Carteira string `json:"carteira" dynamodbav:"carteira"` // 2 digits
	// The beneficiary; empty until set, and then no shipping file is
	// written (422 boleto_beneficiary_incomplete).
	BeneficiaryName     string `json:"beneficiaryName,omitempty" dynamodbav:"beneficiaryName,omitempty"`
	BeneficiaryDocument string `json:"beneficiaryDocument,omitempty" dynamodbav:"beneficiaryDocument,omitempty"` // CNPJ, 14 digits
	Agencia             string `json:"agencia,omitempty" dynamodbav:"agencia,omitempty"`                         // digits, without its check digit
	AgenciaDV           string `json:"agenciaDv,omitempty" dynamodbav:"agenciaDv,omitempty"`
	Conta               string `json:"conta,omitempty" dynamodbav:"conta,omitempty"` // digits, without its check digit
	ContaDV             string `json:"contaDv,omitempty" dynamodbav:"contaDv,omitempty"`
	// Default is true when the tenant set nothing and these are the
	// demonstration settings (DefaultBoleto).
	Default bool `json:"default" dynamodbav:"-"`
}

// BoletoInput is the body of PUT /v1/tenant/boleto.
type BoletoInput struct {
	Bank                string `json:"bank"`
	Convenio            string `json:"convenio"`
	Carteira            string `json:"carteira"`
	BeneficiaryName     string `json:"beneficiaryName,omitempty"`
	BeneficiaryDocument string `json:"beneficiaryDocument,omitempty"`
	Agencia             string `json:"agencia,omitempty"`
	AgenciaDV           string `json:"agenciaDv,omitempty"`
	Conta               string `json:"conta,omitempty"`
	ContaDV             string `json:"contaDv,omitempty"`
}

// Settings are the input as settings.
func (in BoletoInput) Settings() BoletoSettings {
	return BoletoSettings{Bank: in.Bank, Convenio: in.Convenio, Carteira: in.Carteira, BeneficiaryName: in.BeneficiaryName,
		BeneficiaryDocument: in.BeneficiaryDocument, Agencia: in.Agencia, AgenciaDV: in.AgenciaDV, Conta: in.Conta, ContaDV: in.ContaDV}
}

// DefaultBoleto are the settings of a tenant that set none: Banco do
// Brasil, the made-up convênio 1234567 and carteira 17, and a made-up
// beneficiary (a CNPJ with valid check digits that names no company).
// They let a demo issue well-formed boletos and shipping files; no bank
// knows the convênio, so a tenant collecting real money sets its own (PUT
// /v1/tenant/boleto).
var DefaultBoleto = BoletoSettings{Bank: boleto.BankBB, Convenio: "1234567", Carteira: "17", BeneficiaryName: "Lastro Demonstração",
	BeneficiaryDocument: "11222333000181", Agencia: "1234", AgenciaDV: "5", Conta: "12345", ContaDV: "6", Default: true}

// Boleto is the tenant's boleto settings, DefaultBoleto when it set none.
func (t *Tenant) Boleto() BoletoSettings {
	if t.boleto == nil {
		return DefaultBoleto
	}
	return *t.boleto
}

// Layout is the free-field layout of the settings, from the boleto
// package's table of banks (boleto.LayoutFor).
func (b BoletoSettings) Layout() (boleto.Layout, error) {
	l, err := boleto.LayoutFor(boleto.Agreement{Bank: b.Bank, Convenio: b.Convenio, Carteira: b.Carteira})
	switch {
	case errors.Is(err, boleto.ErrUnsupportedBank):
		return nil, errs.E(errs.Invalid, "unsupported_bank", "bank must be one whose free field is laid out: %s", strings.Join(boleto.Banks(), "; "))
	case err != nil:
		// The layout's own message says what it needs; it never echoes
		// the input.
		return nil, errs.E(errs.Invalid, "invalid_boleto_settings", "%s", strings.TrimPrefix(err.Error(), boleto.ErrInvalid.Error()+": "))
	}
	return l, nil
}

// Beneficiary is the beneficiary as a shipping file writes it; an error
// (422 boleto_beneficiary_incomplete) while any part of it is unset.
func (b BoletoSettings) Beneficiary() (boleto.Beneficiary, error) {
	out := boleto.Beneficiary{Document: b.BeneficiaryDocument, Name: b.BeneficiaryName, Convenio: b.Convenio, Carteira: b.Carteira,
		Agencia: b.Agencia, AgenciaDV: b.AgenciaDV, Conta: b.Conta, ContaDV: b.ContaDV}
	if out.Name == "" || out.Document == "" || out.Agencia == "" || out.Conta == "" {
		return boleto.Beneficiary{}, errs.E(errs.Rule, "boleto_beneficiary_incomplete",
			"set beneficiaryName, beneficiaryDocument, agencia and conta with PUT /v1/tenant/boleto first")
	}
	return out, nil
}

// validBeneficiary checks what is set of the beneficiary.
func (b BoletoSettings) validBeneficiary() error {
	switch {
	case len(b.BeneficiaryName) > 60:
		return errs.E(errs.Invalid, "invalid_boleto_settings", "beneficiaryName has at most 60 characters")
	case b.BeneficiaryDocument != "" && (len(b.BeneficiaryDocument) != 14 || !allDigits(b.BeneficiaryDocument)):
		return errs.E(errs.Invalid, "invalid_boleto_settings", "beneficiaryDocument is the lender's CNPJ, 14 digits")
	case b.Agencia != "" && (len(b.Agencia) > 5 || !allDigits(b.Agencia)):
		return errs.E(errs.Invalid, "invalid_boleto_settings", "agencia has 1-5 digits")
	case b.Conta != "" && (len(b.Conta) > 12 || !allDigits(b.Conta)):
		return errs.E(errs.Invalid, "invalid_boleto_settings", "conta has 1-12 digits")
	case len(b.AgenciaDV) > 1 || len(b.ContaDV) > 1:
		return errs.E(errs.Invalid, "invalid_boleto_settings", "agenciaDv and contaDv are one character")
	}
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// setVersioned applies upd to the TENANT item (operation "tenant."+what)
// with its version bumped and updatedAt set, conditioned on the version t
// was read at, and drops the cached copy. A concurrent change is 409
// tenant_changed.
func (s *Service) setVersioned(ctx context.Context, t *Tenant, what string, upd expression.UpdateBuilder) error {
	ctx, _ = kit.Operation(ctx, "tenant."+what)
	upd = upd.Set(expression.Name("version"), expression.Name("version").Plus(expression.Value(1))).
		Set(expression.Name("updatedAt"), expression.Value(keys.Timestamp(s.clock.Now())))
	cond := expression.Name("version").Equal(expression.Value(t.Version))
	_, err := s.kit.Tenant(t.ID, nil).Update(ctx, kit.Key{PK: keys.Tenant(t.ID), SK: keys.TenantSK}, upd, &cond, types.ReturnValueNone)
	s.Invalidate(t.ID)
	if errors.Is(err, kit.ErrConditionFailed) {
		return errs.E(errs.Conflict, "tenant_changed", "the tenant changed concurrently; retry")
	}
	if err != nil {
		return fmt.Errorf("set %s: %w", what, err)
	}
	return nil
}

// SetBoleto replaces the tenant's boleto settings. Boletos issued before
// keep the barcode they were issued with; a return file is matched with
// the settings current when it is imported. Conditioned on the tenant's
// version.
func (s *Service) SetBoleto(ctx context.Context, t *Tenant, in BoletoSettings) (*BoletoSettings, error) {
	in.Default = false
	if _, err := in.Layout(); err != nil {
		return nil, err
	}
	if err := in.validBeneficiary(); err != nil {
		return nil, err
	}
	if err := s.setVersioned(ctx, t, "boleto", expression.Set(expression.Name("boleto"), expression.Value(in))); err != nil {
		return nil, err
	}
	return &in, nil
}
