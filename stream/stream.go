// Package stream turns the table's change stream into domain events: a
// consumer of DynamoDB Streams (against AWS or the embedded store), the
// same translation as an AWS Lambda handler, and the publishers that
// deliver the events. The table is the state; the stream is its history
// (docs/design.md).
package stream

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Change kinds, as DynamoDB Streams names them.
const (
	Insert = "INSERT"
	Modify = "MODIFY"
	Remove = "REMOVE"
)

// Record is one item change, whichever way it arrived (a Streams shard
// or a Lambda batch): the translator's input.
type Record struct {
	EventID  string // the stream record's id
	Sequence string // its sequence number, unique within the stream
	Name     string // Insert, Modify or Remove
	Keys     map[string]types.AttributeValue
	Old, New map[string]types.AttributeValue // either may be nil
	// Service is true when the DynamoDB service itself made the change
	// (a TTL deletion), false for a client's write or delete.
	Service bool
	At      time.Time // ApproximateCreationDateTime
}

// Event is one domain event. It never carries personal data: a debtor is
// named by its debtorKey only.
type Event struct {
	// ID is deterministic, the record's sequence number and the event's
	// position among the record's events, so a redelivered record yields
	// the same ids and consumers can drop duplicates.
	ID            string         `json:"id"`
	Type          string         `json:"type"`
	SchemaVersion int            `json:"schemaVersion"`
	Tenant        string         `json:"tenant"`
	DebtorKey     string         `json:"debtorKey,omitempty"`
	ContractID    string         `json:"contractId,omitempty"`
	StatusReason  string         `json:"statusReason,omitempty"`
	At            time.Time      `json:"at"`
	Sequence      string         `json:"sequence"`
	Data          map[string]any `json:"data,omitempty"`
}

// Publisher delivers events. Publish returns only when every event was
// accepted, or an error; callers retry the whole batch, so publishers
// must tolerate duplicates (consumers dedupe by Event.ID).
type Publisher interface {
	Publish(ctx context.Context, events []Event) error
}
