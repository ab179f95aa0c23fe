package debtor

import (
	"context"
	"fmt"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// Payer is what a boleto names of its payer: the document and name
// decrypted from the sealed profile, and the masked document and UF kept
// in clear. It is for the process that writes a bank's shipping file or a
// slip, never for a log, an error or an item.
type Payer struct {
	Document       string
	Name           string
	MaskedDocument string
	UF             string
}

// Payer opens dk's profile for a boleto (docs/adr/0072): one strongly
// consistent read, decrypted in process.
func (s *Service) Payer(ctx context.Context, t *tenant.Tenant, dk string) (Payer, error) {
	if err := ValidKey(dk); err != nil {
		return Payer{}, err
	}
	it, err := s.db(t).Get(ctx, kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.ProfileSK}, true)
	if err != nil {
		return Payer{}, fmt.Errorf("read profile: %w", err)
	}
	if it == nil {
		return Payer{}, errDebtorNotFound
	}
	p, rec, err := s.open(ctx, t, it)
	if err != nil {
		return Payer{}, err
	}
	return Payer{Document: p.Document, Name: p.Name, MaskedDocument: rec.MaskedDocument, UF: rec.UF}, nil
}
