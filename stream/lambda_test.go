package stream_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/stream"
)

// lambdaEvent is a batch as Lambda delivers it (JSON): a NOTE insert, a
// poison record, a TTL deletion of a contact limit counter and a user's
// delete of another.
const lambdaEvent = `{"Records": [
 {"eventID": "e1", "eventName": "INSERT", "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
  "dynamodb": {"ApproximateCreationDateTime": 1790000000, "SequenceNumber": "100", "StreamViewType": "NEW_AND_OLD_IMAGES",
   "Keys": {"PK": {"S": "T#t1#D#0123456789abcdef"}, "SK": {"S": "CT#C-1#N#0"}},
   "NewImage": {"PK": {"S": "T#t1#D#0123456789abcdef"}, "SK": {"S": "CT#C-1#N#0"}, "type": {"S": "NOTE"}, "contractId": {"S": "C-1"}, "n": {"S": "0"}}}},
 {"eventID": "e2", "eventName": "INSERT", "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
  "dynamodb": {"ApproximateCreationDateTime": 1790000001, "SequenceNumber": "200", "StreamViewType": "NEW_AND_OLD_IMAGES",
   "Keys": {"PK": {"S": "T#t1#D#0123456789abcdef"}, "SK": {"S": "CT#C-1#X"}},
   "NewImage": {"PK": {"S": "T#t1#D#0123456789abcdef"}, "SK": {"S": "CT#C-1#X"}, "type": {"S": "POISON"}}}},
 {"eventID": "e3", "eventName": "REMOVE", "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
  "userIdentity": {"type": "Service", "principalId": "dynamodb.amazonaws.com"},
  "dynamodb": {"ApproximateCreationDateTime": 1790000002, "SequenceNumber": "300", "StreamViewType": "NEW_AND_OLD_IMAGES",
   "Keys": {"PK": {"S": "T#t1#D#0123456789abcdef"}, "SK": {"S": "LIMIT#2026-09-24"}},
   "OldImage": {"PK": {"S": "T#t1#D#0123456789abcdef"}, "SK": {"S": "LIMIT#2026-09-24"}, "type": {"S": "LIMIT"}, "count": {"N": "2"}, "expiresAt": {"N": "1790899200"}}}},
 {"eventID": "e4", "eventName": "REMOVE", "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
  "dynamodb": {"ApproximateCreationDateTime": 1790000003, "SequenceNumber": "400", "StreamViewType": "NEW_AND_OLD_IMAGES",
   "Keys": {"PK": {"S": "T#t1#D#0123456789abcdef"}, "SK": {"S": "LIMIT#2026-09-25"}},
   "OldImage": {"PK": {"S": "T#t1#D#0123456789abcdef"}, "SK": {"S": "LIMIT#2026-09-25"}, "type": {"S": "LIMIT"}, "count": {"N": "1"}}}}
]}`

func TestLambdaHandlerPublishesDeadLettersAndArchives(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var ev lambdaevents.DynamoDBEvent
	if err := json.Unmarshal([]byte(lambdaEvent), &ev); err != nil {
		t.Fatal(err)
	}
	pub, dead := &memPub{}, &memDead{}
	h, err := stream.NewLambda(stream.LambdaConfig{Translate: note, Publisher: pub, DeadLetter: dead, Archive: f.archive})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	resp, err := h.Handle(ctx, ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("handle: %+v %v, want no failures", resp, err)
	}
	if got := pub.all(); len(got) != 1 || got[0].ID != "100-0" || got[0].ContractID != "C-1" {
		t.Fatalf("published %+v, want the NOTE's event", got)
	}
	if len(dead.recs) != 1 || dead.recs[0].Sequence != "200" {
		t.Fatalf("dead letters %+v, want the poison record", dead.recs)
	}
	arch := f.archive.Tenant("t1", nil)
	pk := keys.Debtor("t1", "0123456789abcdef")
	if it, err := arch.Get(ctx, kit.Key{PK: pk, SK: "LIMIT#2026-09-24"}, true); err != nil || it == nil {
		t.Fatalf("TTL deletion not archived: %v %v", it, err)
	}
	if it, err := arch.Get(ctx, kit.Key{PK: pk, SK: "LIMIT#2026-09-25"}, true); err != nil || it != nil {
		t.Fatalf("user delete archived: %v %v", it, err)
	}
	// Redelivered (Lambda retries), the batch changes nothing new.
	if resp, err := h.Handle(ctx, ev); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("second handle: %+v %v", resp, err)
	}
	if got := unique(t, pub.all()); len(got) != 1 {
		t.Fatalf("after a redelivery: %d distinct events, want 1", len(got))
	}
}

func TestLambdaHandlerReportsTheFirstRecordOfAFailedPublish(t *testing.T) {
	t.Parallel()
	var ev lambdaevents.DynamoDBEvent
	if err := json.Unmarshal([]byte(lambdaEvent), &ev); err != nil {
		t.Fatal(err)
	}
	h, err := stream.NewLambda(stream.LambdaConfig{Translate: note, Publisher: &memPub{fail: errors.New("bus down")}, DeadLetter: &memDead{}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.Handle(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "100" {
		t.Fatalf("handle: %+v %v, want record 100 reported", resp, err)
	}
}

func TestFromLambdaValueConvertsEveryType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   lambdaevents.DynamoDBAttributeValue
		want types.AttributeValue
	}{
		{"S", lambdaevents.NewStringAttribute("x"), &types.AttributeValueMemberS{Value: "x"}},
		{"N", lambdaevents.NewNumberAttribute("12.5"), &types.AttributeValueMemberN{Value: "12.5"}},
		{"B", lambdaevents.NewBinaryAttribute([]byte{1, 2}), &types.AttributeValueMemberB{Value: []byte{1, 2}}},
		{"BOOL", lambdaevents.NewBooleanAttribute(true), &types.AttributeValueMemberBOOL{Value: true}},
		{"NULL", lambdaevents.NewNullAttribute(), &types.AttributeValueMemberNULL{Value: true}},
		{"SS", lambdaevents.NewStringSetAttribute([]string{"a", "b"}), &types.AttributeValueMemberSS{Value: []string{"a", "b"}}},
		{"NS", lambdaevents.NewNumberSetAttribute([]string{"1"}), &types.AttributeValueMemberNS{Value: []string{"1"}}},
		{"BS", lambdaevents.NewBinarySetAttribute([][]byte{{3}}), &types.AttributeValueMemberBS{Value: [][]byte{{3}}}},
		{"L", lambdaevents.NewListAttribute([]lambdaevents.DynamoDBAttributeValue{lambdaevents.NewStringAttribute("a"), lambdaevents.NewNumberAttribute("1")}),
			&types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "a"}, &types.AttributeValueMemberN{Value: "1"}}}},
		{"M", lambdaevents.NewMapAttribute(map[string]lambdaevents.DynamoDBAttributeValue{"k": lambdaevents.NewBooleanAttribute(false)}),
			&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberBOOL{Value: false}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := stream.FromLambdaValue(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("FromLambdaValue(%s) = %#v, want %#v", tt.name, got, tt.want)
			}
		})
	}
}
