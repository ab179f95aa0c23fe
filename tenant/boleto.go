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
// by the bank's layout (boleto.LayoutFor).
type BoletoSettings struct {
	Bank     string `json:"bank" dynamodbav:"bank"`         // "001"
	Convenio string `json:"convenio" dynamodbav:"convenio"` // 7 digits, the first not zero
	Carteira string `json:"carteira" dynamodbav:"carteira"` // 2 digits
	// Default is true when the tenant set nothing and these are the
	// demonstration settings (DefaultBoleto).
	Default bool `json:"default" dynamodbav:"-"`
}

// BoletoInput is the body of PUT /v1/tenant/boleto.
type BoletoInput struct {
	Bank     string `json:"bank"`
	Convenio string `json:"convenio"`
	Carteira string `json:"carteira"`
}

// DefaultBoleto are the settings of a tenant that set none: Banco do
// Brasil, the made-up convênio 1234567 and carteira 17. They let a demo
// issue well-formed boletos; no bank knows the convênio, so a tenant
// collecting real money sets its own (PUT /v1/tenant/boleto).
var DefaultBoleto = BoletoSettings{Bank: boleto.BankBB, Convenio: "1234567", Carteira: "17", Default: true}

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
	if err := s.setVersioned(ctx, t, "boleto", expression.Set(expression.Name("boleto"), expression.Value(in))); err != nil {
		return nil, err
	}
	return &in, nil
}
