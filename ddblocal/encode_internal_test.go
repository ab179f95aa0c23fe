package ddblocal

import (
	"encoding/json"
	"reflect"
	"testing"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/dataplane"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/wire"
)

// TestAppendedJSONMatchesEncodingJSON: the answers and stream records
// whose JSON is appended by hand (ADR 0053) decode to what encoding/json
// writes for the same values, every optional member present or not.
func TestAppendedJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	item := av.Item{
		"PK":   av.Str("T#t-1#DEBTOR#d-1"),
		"odd":  av.Str("<a & b> \"quoted\" \u00e9 \x01 \xff"),
		"n":    &av.Value{T: av.N, Str: "-12.50"},
		"list": &av.Value{T: av.L, List: []*av.Value{av.Str("x"), {T: av.BOOL, Bool: true}}},
		"map":  &av.Value{T: av.M, Map: map[string]*av.Value{"k": av.Str("v")}},
	}
	key := av.Item{"PK": av.Str("T#t-1#DEBTOR#d-1")}
	units := 2.5
	cc := &wire.ConsumedCapacity{TableName: "lastro", CapacityUnits: 2.5, ReadCapacityUnits: &units}
	same := func(t *testing.T, got []byte, want any) {
		t.Helper()
		ref, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("appended JSON does not parse: %v\n%s", err, got)
		}
		if err := json.Unmarshal(ref, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("appended:\n%s\nencoding/json:\n%s", got, ref)
		}
	}
	type plainPage struct {
		Items            []av.Item              `json:"Items"`
		Count            int                    `json:"Count"`
		ScannedCount     int                    `json:"ScannedCount"`
		LastEvaluatedKey av.Item                `json:"LastEvaluatedKey,omitempty"`
		ConsumedCapacity *wire.ConsumedCapacity `json:"ConsumedCapacity,omitempty"`
	}
	type countPage struct {
		Count            int                    `json:"Count"`
		ScannedCount     int                    `json:"ScannedCount"`
		LastEvaluatedKey av.Item                `json:"LastEvaluatedKey,omitempty"`
		ConsumedCapacity *wire.ConsumedCapacity `json:"ConsumedCapacity,omitempty"`
	}
	t.Run("pages", func(t *testing.T) {
		for _, p := range []dataplane.PageOutput{
			{Items: []av.Item{item, key}, Count: 2, ScannedCount: 3, LastEvaluatedKey: key, ConsumedCapacity: cc},
			{Items: []av.Item{}, Count: 0, ScannedCount: 5},
			{Items: []av.Item{item}, Count: 1, ScannedCount: 1, ConsumedCapacity: cc},
		} {
			got, err := encodeResponse(&p)
			if err != nil {
				t.Fatal(err)
			}
			same(t, got, plainPage(p))
		}
		count := dataplane.PageOutput{Count: 7, ScannedCount: 9, LastEvaluatedKey: key}
		got, err := encodeResponse(&count)
		if err != nil {
			t.Fatal(err)
		}
		same(t, got, countPage{Count: 7, ScannedCount: 9, LastEvaluatedKey: key})
	})
	t.Run("items", func(t *testing.T) {
		type plainGet struct {
			Item             *av.Item               `json:"Item,omitempty"`
			ConsumedCapacity *wire.ConsumedCapacity `json:"ConsumedCapacity,omitempty"`
		}
		empty := av.Item{}
		for _, g := range []dataplane.GetItemOutput{{Item: &item, ConsumedCapacity: cc}, {Item: &empty}, {ConsumedCapacity: cc}, {}} {
			got, err := encodeResponse(&g)
			if err != nil {
				t.Fatal(err)
			}
			same(t, got, plainGet(g))
		}
	})
	t.Run("stream records", func(t *testing.T) {
		for _, r := range []engine.StreamRecord{
			{EventID: "e1", EventName: "MODIFY", EventVersion: "1.1", EventSource: "aws:dynamodb", AwsRegion: "us-east-1",
				Dynamodb: engine.StreamData{ApproximateCreationDateTime: 1790000000, Keys: key, NewImage: item, OldImage: key,
					SequenceNumber: "000000000000000000042", SizeBytes: 321, StreamViewType: "NEW_AND_OLD_IMAGES"}},
			{EventID: "e2", EventName: "REMOVE", EventVersion: "1.1", EventSource: "aws:dynamodb", AwsRegion: "sa-east-1",
				Dynamodb:     engine.StreamData{ApproximateCreationDateTime: 1, Keys: key, SequenceNumber: "1", SizeBytes: 10, StreamViewType: "KEYS_ONLY"},
				UserIdentity: &engine.StreamIdentity{PrincipalID: "dynamodb.amazonaws.com", Type: "Service"}},
		} {
			same(t, r.AppendJSON(nil), &r)
		}
	})
}
