package debtor

import (
	"context"
	"fmt"
	"log/slog"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// BoletoPayer is what a boleto names of its payer: the document and name
// decrypted from the sealed profile, and the masked document and UF kept
// in clear. It is for the process that writes a bank's shipping file or a
// slip, never for a log, an error or an item.
type BoletoPayer struct {
	Document       string
	Name           string
	MaskedDocument string
	UF             string
}

// BoletoPayer opens dk's profile for a boleto (docs/adr/0072): one strongly
// consistent read, decrypted in process.
func (s *Service) BoletoPayer(ctx context.Context, t *tenant.Tenant, dk string) (BoletoPayer, error) {
	if err := ValidKey(dk); err != nil {
		return BoletoPayer{}, err
	}
	it, err := s.db(t).Get(ctx, kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.ProfileSK}, true)
	if err != nil {
		return BoletoPayer{}, fmt.Errorf("read profile: %w", err)
	}
	if it == nil {
		return BoletoPayer{}, errDebtorNotFound
	}
	p, rec, err := s.open(ctx, t, it)
	if err != nil {
		return BoletoPayer{}, err
	}
	return BoletoPayer{Document: p.Document, Name: p.Name, MaskedDocument: rec.MaskedDocument, UF: rec.UF}, nil
}

// Payer is who a charge is addressed to, as a Pix charge with a due date
// must name them (the Pix API's devedor): the document and the name,
// opened from the sealed profile for the one request that sends them to
// the tenant's PSP. It is personal data: String and LogValue print only
// the masked document, so it cannot leak through a log or an error.
type Payer struct {
	Document Document
	Name     string
}

// String is the masked document only.
func (p Payer) String() string { return "payer{" + p.Document.Masked() + "}" }

// GoString hides the payer from %#v too.
func (p Payer) GoString() string { return p.String() }

// LogValue hides the payer from slog.
func (p Payer) LogValue() slog.Value { return slog.StringValue(p.String()) }

// Payer opens the debtor's profile (one strongly consistent read and one
// decryption, in process) for the document and name a charge is
// addressed to. A debtor without a profile is debtor_not_found; a stored
// document that no longer parses (it was validated when registered) is
// an error without its value.
func (s *Service) Payer(ctx context.Context, t *tenant.Tenant, dk string) (*Payer, error) {
	if err := ValidKey(dk); err != nil {
		return nil, err
	}
	it, err := s.db(t).Get(ctx, kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.ProfileSK}, true)
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	if it == nil {
		return nil, errDebtorNotFound
	}
	p, rec, err := s.open(ctx, t, it)
	if err != nil {
		return nil, err
	}
	if rec.PK != keys.Debtor(t.ID, dk) || rec.SK != keys.ProfileSK {
		return nil, errNotProfile
	}
	doc, err := ParseDocument(p.Document)
	if err != nil {
		return nil, fmt.Errorf("debtor: the stored document does not parse: %w", err)
	}
	return &Payer{Document: doc, Name: p.Name}, nil
}
