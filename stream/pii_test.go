package stream_test

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/keys"
	"lastro/collections/pii/piitest"
	"lastro/stream"
)

// TestNoPersonalDataInEvents is the debtor tests' personal-data scan over
// every event the translator emits: from the fixture's realistic images,
// and from the same images carrying the test subject's document, name,
// phone and e-mail in attributes the translator must never copy (an item
// grown a field, a profile in clear).
func TestNoPersonalDataInEvents(t *testing.T) {
	t.Parallel()
	personal := map[string]types.AttributeValue{
		"document":       &types.AttributeValueMemberS{Value: "529.982.247-25"},
		"cnpj":           &types.AttributeValueMemberS{Value: piitest.CNPJDigits},
		"name":           &types.AttributeValueMemberS{Value: piitest.Name},
		"phone":          &types.AttributeValueMemberS{Value: piitest.Phone},
		"email":          &types.AttributeValueMemberS{Value: piitest.Email},
		"maskedDocument": &types.AttributeValueMemberS{Value: "***.982.247-**"},
		"details":        &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"contactName": &types.AttributeValueMemberS{Value: piitest.Name}}},
	}
	var records []stream.Record
	for _, c := range translateCases() {
		r := c.record(t)
		records = append(records, r)
		if r.New == nil {
			continue
		}
		hostile := r
		hostile.New = maps.Clone(r.New)
		maps.Copy(hostile.New, personal)
		raw, _ := json.Marshal(hostile.New)
		if piitest.Leaks(string(raw)) == nil {
			t.Fatal("the detector does not see the planted personal data: it would miss a leak")
		}
		records = append(records, hostile)
	}
	profile := maps.Clone(personal)
	profile["PK"] = &types.AttributeValueMemberS{Value: keys.Debtor(tenantID, dk)}
	profile["SK"] = &types.AttributeValueMemberS{Value: keys.ProfileSK}
	profile["type"] = &types.AttributeValueMemberS{Value: "PROFILE"}
	records = append(records, stream.Record{Sequence: "5", Name: stream.Insert, New: profile})

	n := 0
	for _, r := range records {
		evs, err := stream.Translate(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			n++
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if hits := piitest.Leaks(string(b)); hits != nil {
				t.Errorf("%s holds %v: %s", e.Type, hits, b)
			}
		}
	}
	if n < 2*len(stream.EventTypes()) {
		t.Fatalf("only %d events scanned", n)
	}
}
