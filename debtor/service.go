package debtor

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/google/uuid"

	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/idem"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/policy"
	"lastro/tenant"
)

// Service registers debtors, signs contracts and answers the debtor reads.
type Service struct {
	kit      *kit.Kit
	tenants  *tenant.Service
	policies *policy.Service
	sealer   pii.Sealer
	clock    clock.Clock
	idem     *idem.Store

	// keyOf computes the debtor key; tests replace it to force a collision.
	keyOf func(secret []byte, digits string) string
	// calendarOf is the business calendar of a tenant.
	calendarOf func(*tenant.Tenant) *calendar.Calendar
}

// Deps are what the service needs.
type Deps struct {
	Kit      *kit.Kit
	Tenants  *tenant.Service
	Policies *policy.Service
	Sealer   pii.Sealer
	Clock    clock.Clock
	Idem     *idem.Store // Idempotency-Key on POST contracts; nil disables it
}

// NewService returns the debtor service.
func NewService(d Deps) *Service {
	return &Service{kit: d.Kit, tenants: d.Tenants, policies: d.Policies, sealer: d.Sealer, clock: d.Clock, idem: d.Idem,
		keyOf: Key, calendarOf: (*tenant.Tenant).Calendar}
}

// Actor is who asked for a change, as audit events record it: a role and a
// request id, never a person's data.
type Actor struct {
	Role      string
	RequestID string
}

// db is the tenant-scoped store handle.
func (s *Service) db(t *tenant.Tenant) *kit.Tenant { return s.kit.Tenant(t.ID, t.CursorKey()) }

// Event types written by this package.
const (
	EvDebtorRegistered = "DebtorRegistered"
	EvDocumentRevealed = "DocumentRevealed"
	EvContractCreated  = "ContractCreated"
)

// eventItem is an audit event: append-only, written in the same
// transaction as the change it records, without personal data.
type eventItem struct {
	PK         string         `dynamodbav:"PK"`
	SK         string         `dynamodbav:"SK"`
	Type       string         `dynamodbav:"type"`
	EventID    string         `dynamodbav:"eventId"`
	EventType  string         `dynamodbav:"eventType"`
	ContractID string         `dynamodbav:"contractId,omitempty"`
	Seq        *int           `dynamodbav:"seq,omitempty"`
	At         string         `dynamodbav:"at"`
	ActorRole  string         `dynamodbav:"actorRole"`
	RequestID  string         `dynamodbav:"requestId,omitempty"`
	Details    map[string]any `dynamodbav:"details,omitempty"`
	Version    int            `dynamodbav:"version"` // always 1: events are never updated
}

func newEventID() string { return uuid.NewString() }

func marshal(v any) (kit.Item, error) {
	it, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, fmt.Errorf("marshal item: %w", err)
	}
	return it, nil
}
