package debtor

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// EvContactRevealed is the audit event of a collector shown a debtor's
// name and phone (the details say which fields, never their values).
const EvContactRevealed = "ContactRevealed"

// ContactCard is what a collector needs to call: the debtor's name and
// phone (and e-mail), decrypted in process. It is the only answer outside
// compliance's reveal that carries them, and each one is audited.
type ContactCard struct {
	DebtorKey string `json:"debtorKey"`
	Name      string `json:"name"`
	Phone     string `json:"phone,omitempty"`
	Email     string `json:"email,omitempty"`
	EventID   string `json:"eventId"`
}

// RevealContact decrypts dk's name, phone and e-mail for a collector and
// records, before answering, that actor saw them (a debtor-level event in
// the same partition: one GetItem, one conditioned PutItem).
func (s *Service) RevealContact(ctx context.Context, t *tenant.Tenant, dk string, actor Actor) (*ContactCard, error) {
	if err := ValidKey(dk); err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "debtor.reveal_contact")
	pk := keys.Debtor(t.ID, dk)
	it, err := s.db(t).Get(ctx, kit.Key{PK: pk, SK: keys.ProfileSK}, true)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, errDebtorNotFound
	}
	p, _, err := s.open(ctx, t, it)
	if err != nil {
		return nil, err
	}
	fields := []string{"name"}
	if p.Phone != "" {
		fields = append(fields, "phone")
	}
	if p.Email != "" {
		fields = append(fields, "email")
	}
	now := s.clock.Now()
	id, ev, err := s.audit(ctx, t, dk, EvContactRevealed, now, actor, map[string]any{"fields": fields})
	if err != nil {
		return nil, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	if err := s.db(t).Put(ctx, ev, &notExists); err != nil {
		return nil, fmt.Errorf("record contact reveal: %w", err)
	}
	return &ContactCard{DebtorKey: dk, Name: p.Name, Phone: p.Phone, Email: p.Email, EventID: id}, nil
}
