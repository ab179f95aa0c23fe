package debtor

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/contract"
	"lastro/tenant"
)

// Service registers debtors and answers the debtor reads (the 360 view).
type Service struct {
	kit     *kit.Kit
	tenants *tenant.Service
	sealer  pii.Sealer
	clock   clock.Clock

	// keyOf computes the debtor key; tests replace it to force a collision.
	keyOf func(secret []byte, digits string) string
	// calendarOf is the business calendar of a tenant.
	calendarOf func(*tenant.Tenant) *calendar.Calendar
}

// Deps are what the service needs.
type Deps struct {
	Kit     *kit.Kit
	Tenants *tenant.Service
	Sealer  pii.Sealer
	Clock   clock.Clock
}

// NewService returns the debtor service.
func NewService(d Deps) *Service {
	return &Service{kit: d.Kit, tenants: d.Tenants, sealer: d.Sealer, clock: d.Clock,
		keyOf: Key, calendarOf: (*tenant.Tenant).Calendar}
}

// Actor is who asked for a change, as audit events record it.
type Actor = contract.Actor

// db is the tenant-scoped store handle.
func (s *Service) db(t *tenant.Tenant) *kit.Tenant { return s.kit.Tenant(t.ID, t.CursorKey()) }

// Event types written by this package.
const (
	EvDebtorRegistered = "DebtorRegistered"
	EvDocumentRevealed = "DocumentRevealed"
)

func marshal(v any) (kit.Item, error) {
	it, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, fmt.Errorf("marshal item: %w", err)
	}
	return it, nil
}
