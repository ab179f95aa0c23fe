package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka publishes events to a Kafka topic with franz-go. Each record is
// keyed by the event's contract (tenant and contract id), so the default
// key partitioner puts a contract's events on one partition and the
// idempotent producer keeps them in order there; the value is the event's
// JSON, and headers carry its type, schema version and id so consumers
// route and dedupe without decoding it.
type Kafka struct {
	client *kgo.Client
	topic  string
}

// NewKafka returns a publisher producing to topic through client, which
// the caller configures (brokers, TLS, SASL) and closes.
func NewKafka(client *kgo.Client, topic string) *Kafka { return &Kafka{client: client, topic: topic} }

// Key is the event's Kafka record key: tenant#contractId, or the tenant
// alone for an event about no contract (an unmatched settlement), whose
// order relative to others does not matter.
func Key(e Event) string {
	if e.ContractID == "" {
		return e.Tenant
	}
	return e.Tenant + "#" + e.ContractID
}

// Publish produces the events and waits until every one is acknowledged.
func (k *Kafka) Publish(ctx context.Context, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	recs := make([]*kgo.Record, len(events))
	for i := range events {
		e := &events[i]
		v, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("kafka: encode %s: %w", e.ID, err)
		}
		recs[i] = &kgo.Record{Topic: k.topic, Key: []byte(Key(*e)), Value: v, Headers: []kgo.RecordHeader{
			{Key: "type", Value: []byte(e.Type)},
			{Key: "schemaVersion", Value: []byte(strconv.Itoa(e.SchemaVersion))},
			{Key: "id", Value: []byte(e.ID)},
		}}
	}
	if err := k.client.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("kafka: produce: %w", err)
	}
	return nil
}
