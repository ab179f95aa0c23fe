package stream

import (
	"context"
	"errors"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/kit"
)

// LambdaConfig wires the Lambda handler: the consumer's translation,
// publishing and archive, with Lambda's event source mapping doing the
// shard reading, leases and checkpoints.
type LambdaConfig struct {
	Translate  Translator
	Publisher  Publisher
	DeadLetter DeadLetter
	Archive    *kit.Kit // nil: TTL deletions are not archived
}

// Lambda is the stream's AWS Lambda handler (ADR 0047). Bucket counters
// are not kept here: they need the checkpoint transaction only the
// consumer has; a deployment on Lambda runs `lastro stream` for them or
// leaves the portfolio's summary absent.
type Lambda struct {
	p processor
}

// NewLambda returns the handler.
func NewLambda(cfg LambdaConfig) (*Lambda, error) {
	if cfg.Translate == nil || cfg.Publisher == nil || cfg.DeadLetter == nil {
		return nil, errors.New("stream: the Lambda handler needs a translator, a publisher and a dead-letter sink")
	}
	return &Lambda{p: processor{translate: cfg.Translate, pub: cfg.Publisher, dead: cfg.DeadLetter, archive: cfg.Archive}}, nil
}

// Handle processes one batch of a DynamoDB event source mapping with
// ReportBatchItemFailures on: on a failure it names the first record not
// done, and Lambda retries the batch from there (the records before it
// are not delivered again; those after it are, with the same event
// ids). Poison records go to the dead letter and do not fail the batch.
// The error return stays nil so a partial failure is reported, not
// retried whole.
func (l *Lambda) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var resp events.DynamoDBEventResponse
	recs := make([]Record, 0, len(ev.Records))
	for _, r := range ev.Records {
		recs = append(recs, FromLambda(r))
	}
	fail := func(i int) (events.DynamoDBEventResponse, error) {
		resp.BatchItemFailures = []events.DynamoDBBatchItemFailure{{ItemIdentifier: recs[i].Sequence}}
		return resp, nil
	}
	// Translate in order; publish once per batch; then archive, in order.
	var evs []Event
	for i, r := range recs {
		if bookkeeping(r) {
			continue
		}
		out, err := l.p.events(ctx, r)
		if errors.Is(err, errDead) {
			continue
		}
		if err != nil {
			// The dead-letter sink failed: nothing after this record may be
			// published before it is dealt with.
			if len(evs) > 0 {
				if perr := l.p.pub.Publish(ctx, evs); perr != nil {
					return fail(0)
				}
			}
			return fail(i)
		}
		evs = append(evs, out...)
	}
	if len(evs) > 0 {
		if err := l.p.pub.Publish(ctx, evs); err != nil {
			return fail(0)
		}
	}
	for i, r := range recs {
		if _, err := l.p.archiveTTL(ctx, r); err != nil {
			return fail(i)
		}
	}
	return resp, nil
}

// FromLambda converts one record of Lambda's DynamoDB event into the
// translator's record, images in the SDK's attribute value types.
func FromLambda(r events.DynamoDBEventRecord) Record {
	rec := Record{EventID: r.EventID, Sequence: r.Change.SequenceNumber, Name: r.EventName,
		Keys: FromLambdaItem(r.Change.Keys), Old: FromLambdaItem(r.Change.OldImage), New: FromLambdaItem(r.Change.NewImage),
		At: r.Change.ApproximateCreationDateTime.UTC()}
	if u := r.UserIdentity; u != nil {
		rec.Service = u.Type == "Service" && u.PrincipalID == "dynamodb.amazonaws.com"
	}
	return rec
}

// FromLambdaItem converts an image of Lambda's event; nil stays nil.
func FromLambdaItem(in map[string]events.DynamoDBAttributeValue) map[string]types.AttributeValue {
	if in == nil {
		return nil
	}
	out := make(map[string]types.AttributeValue, len(in))
	for k, v := range in {
		out[k] = FromLambdaValue(v)
	}
	return out
}

// FromLambdaValue converts one attribute value of Lambda's event.
func FromLambdaValue(v events.DynamoDBAttributeValue) types.AttributeValue {
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}
	case events.DataTypeList:
		l := v.List()
		out := make([]types.AttributeValue, len(l))
		for i, e := range l {
			out[i] = FromLambdaValue(e)
		}
		return &types.AttributeValueMemberL{Value: out}
	case events.DataTypeMap:
		m := v.Map()
		out := make(map[string]types.AttributeValue, len(m))
		for k, e := range m {
			out[k] = FromLambdaValue(e)
		}
		return &types.AttributeValueMemberM{Value: out}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}
