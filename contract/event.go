package contract

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/keys"
	"lastro/collections/kit"
)

// NewEvent builds the audit event item of a change to the contract:
// under instalment seq's trail (0: the contract's own), append-only,
// without personal data. It is written in the same transaction as the
// change (PutEvent).
func (c *Contract) NewEvent(seq int, eventType string, now time.Time, actor Actor, details map[string]any) Event {
	id := NewEventID()
	return Event{PK: c.Header.PK, SK: keys.Event(c.Header.ContractID, seq, now, id), Type: TypeEvent, EventID: id, EventType: eventType,
		ContractID: c.Header.ContractID, Seq: &seq, At: keys.Timestamp(now), ActorRole: actor.Role, RequestID: actor.RequestID,
		Details: details, Version: 1}
}

// PutEvent is the transaction action that appends ev.
func PutEvent(ev Event) (kit.Action, error) {
	it, err := marshal(ev)
	if err != nil {
		return kit.Action{}, err
	}
	absent := expression.AttributeNotExists(expression.Name("PK"))
	return kit.PutAction(it, &absent), nil
}
