package ddblocal_test

// The two validation layers DynamoDB answers PutItem, UpdateItem and
// DeleteItem with (ADR 0060). The older layer's messages are those the
// April 2026 revision of the public conformance suite pins from AWS runs;
// the current layer's, those captured in four regions in October 2026.

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// layerCase is one refused request and its message in each layer.
type layerCase struct {
	name           string
	send           func(s *cfStore, tbl string) error
	older, current string
}

func layerCases() []layerCase {
	key := avmap{"pk": vS("k")}
	put := func(in dynamodb.PutItemInput) func(*cfStore, string) error {
		return func(s *cfStore, tbl string) error {
			in.TableName = &tbl
			if in.Item == nil {
				in.Item = key
			}
			_, err := s.c.PutItem(bg, &in)
			return err
		}
	}
	upd := func(in dynamodb.UpdateItemInput) func(*cfStore, string) error {
		return func(s *cfStore, tbl string) error {
			in.TableName = &tbl
			in.Key = key
			_, err := s.c.UpdateItem(bg, &in)
			return err
		}
	}
	del := func(in dynamodb.DeleteItemInput) func(*cfStore, string) error {
		return func(s *cfStore, tbl string) error {
			in.TableName = &tbl
			in.Key = key
			_, err := s.c.DeleteItem(bg, &in)
			return err
		}
	}
	v := avmap{":v": vS("val")}
	both := func(m string) (string, string) { return m, one(m) }
	cases := []layerCase{
		{name: "put: empty string set", send: put(dynamodb.PutItemInput{Item: avmap{"pk": vS("k"), "bad": &types.AttributeValueMemberSS{Value: []string{}}}})},
		{name: "put: empty number set", send: put(dynamodb.PutItemInput{Item: avmap{"pk": vS("k"), "bad": &types.AttributeValueMemberNS{Value: []string{}}}})},
		{name: "put: duplicate string set members", send: put(dynamodb.PutItemInput{Item: avmap{"pk": vS("k"), "bad": vSS("b", "a", "b")}}),
			older:   "One or more parameter values were invalid: Input collection [b, a, b] contains duplicates.",
			current: one(`One or more parameter values were invalid: Input collection ["a", "b", "b"] contains duplicates.`)},
		{name: "put: NULL false", send: put(dynamodb.PutItemInput{Item: avmap{"pk": vS("k"), "n": &types.AttributeValueMemberNULL{Value: false}}})},
		{name: "put: expression and non-expression parameters", send: put(dynamodb.PutItemInput{ConditionExpression: aws.String("attribute_not_exists(pk)"),
			Expected: map[string]types.ExpectedAttributeValue{"pk": {Exists: aws.Bool(false)}}})},
		{name: "put: values without an expression", send: put(dynamodb.PutItemInput{ExpressionAttributeValues: v}),
			older:   "ExpressionAttributeValues can only be specified when using expressions: ConditionExpression is null",
			current: one("ExpressionAttributeValues can only be specified when using expressions")},
		{name: "delete: values without an expression", send: del(dynamodb.DeleteItemInput{ExpressionAttributeValues: v}),
			older:   "ExpressionAttributeValues can only be specified when using expressions: ConditionExpression is null",
			current: one("ExpressionAttributeValues can only be specified when using expressions")},
		{name: "update: syntax error", send: upd(dynamodb.UpdateItemInput{UpdateExpression: aws.String("INVALID SYNTAX HERE"), ExpressionAttributeValues: v})},
		{name: "update: unused name", send: upd(dynamodb.UpdateItemInput{UpdateExpression: aws.String("SET attr1 = :v"), ExpressionAttributeValues: v,
			ExpressionAttributeNames: map[string]string{"#unused": "someattr"}})},
		{name: "update: unused value", send: upd(dynamodb.UpdateItemInput{UpdateExpression: aws.String("SET attr1 = :v"),
			ExpressionAttributeValues: avmap{":v": vS("val"), ":unused": vS("extra")}})},
		{name: "update: undefined value", send: upd(dynamodb.UpdateItemInput{UpdateExpression: aws.String("SET attr1 = :v")})},
		{name: "update: expression and AttributeUpdates", send: upd(dynamodb.UpdateItemInput{UpdateExpression: aws.String("SET attr1 = :v"), ExpressionAttributeValues: v,
			AttributeUpdates: map[string]types.AttributeValueUpdate{"attr1": {Value: vS("val"), Action: types.AttributeActionPut}}})},
		{name: "update: empty expression", send: upd(dynamodb.UpdateItemInput{UpdateExpression: aws.String("")})},
		{name: "update: values without an expression", send: upd(dynamodb.UpdateItemInput{ExpressionAttributeValues: v}),
			older:   "ExpressionAttributeValues can only be specified when using expressions: UpdateExpression and ConditionExpression are null",
			current: one("ExpressionAttributeValues can only be specified when using expressions")},
		// Data-plane errors are bare in both.
		{name: "update: a key attribute", send: upd(dynamodb.UpdateItemInput{UpdateExpression: aws.String("SET pk = :v"), ExpressionAttributeValues: v}),
			older:   "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key",
			current: "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key"},
		// Member constraints carry their envelope in both.
		{name: "put: a table name too long", send: func(s *cfStore, _ string) error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String(strings.Repeat("a", 256)), Item: key})
			return err
		}, older: one("Value '" + strings.Repeat("a", 256) + "' at 'tableName' failed to satisfy constraint: Member must have length less than or equal to 255"),
			current: one("Value '" + strings.Repeat("a", 256) + "' at 'tableName' failed to satisfy constraint: Member must have length less than or equal to 255")},
	}
	bare := map[string]string{
		"put: empty string set":    "One or more parameter values were invalid: An string set  may not be empty",
		"put: empty number set":    "One or more parameter values were invalid: An number set  may not be empty",
		"put: NULL false":          "One or more parameter values were invalid: Null attribute value types must have the value of true",
		"update: syntax error":     `Invalid UpdateExpression: Syntax error; token: "INVALID", near: "INVALID SYNTAX"`,
		"update: unused name":      "Value provided in ExpressionAttributeNames unused in expressions: keys: {#unused}",
		"update: unused value":     "Value provided in ExpressionAttributeValues unused in expressions: keys: {:unused}",
		"update: undefined value":  "Invalid UpdateExpression: An expression attribute value used in expression is not defined; attribute value: :v",
		"update: empty expression": "Invalid UpdateExpression: The expression can not be empty;",
		"put: expression and non-expression parameters": "Can not use both expression and non-expression parameters in the same request: " +
			"Non-expression parameters: {Expected} Expression parameters: {ConditionExpression}",
		"update: expression and AttributeUpdates": "Can not use both expression and non-expression parameters in the same request: " +
			"Non-expression parameters: {AttributeUpdates} Expression parameters: {UpdateExpression}",
	}
	for i, c := range cases {
		if m, ok := bare[c.name]; ok {
			cases[i].older, cases[i].current = both(m)
		}
	}
	return cases
}

func TestValidationLayers(t *testing.T) {
	t.Parallel()
	for _, layer := range []struct {
		name  string
		layer ddblocal.ValidationLayer
	}{{"older", ddblocal.ValidationOlder}, {"current", ddblocal.ValidationCurrent}} {
		t.Run(layer.name, func(t *testing.T) {
			t.Parallel()
			srv := ddbtest.Start(t, ddblocal.Options{ValidationLayer: layer.layer})
			s := &cfStore{t: t, c: srv.Client(), url: srv.URL}
			tbl := table("layers", "pk:S").create(s)
			for _, c := range layerCases() {
				want := c.current
				if layer.layer == ddblocal.ValidationOlder {
					want = c.older
				}
				err := c.send(s, tbl)
				var ae smithy.APIError
				if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationException" || ae.ErrorMessage() != want {
					t.Errorf("%s:\n got %v\nwant %q", c.name, err, want)
				}
			}
			if got := s.get(tbl, avmap{"pk": vS("k")}); got != nil {
				t.Fatalf("a refused write stored %s", itemString(got))
			}
		})
	}
}

// TestOlderLayerListsUpdateReturnValues: the older layer reports an unknown
// UpdateItem ReturnValues beside the other member constraints; the current
// one reports it alone (TestValidationFrontEnd).
func TestOlderLayerListsUpdateReturnValues(t *testing.T) {
	t.Parallel()
	srv := ddbtest.Start(t, ddblocal.Options{ValidationLayer: ddblocal.ValidationOlder})
	s := &cfStore{t: t, c: srv.Client(), url: srv.URL}
	s.rawErr("UpdateItem", js{"TableName": "valid_name", "Key": js{"pk": js{"S": "k"}}, "ReturnValues": "INVALID", "ReturnConsumedCapacity": "INVALID"},
		"ValidationException", "2 validation errors detected: "+
			"Value 'INVALID' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]; "+
			"Value 'INVALID' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]")
}

func TestParseValidationLayer(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]ddblocal.ValidationLayer{"current": ddblocal.ValidationCurrent, "older": ddblocal.ValidationOlder} {
		if got, err := ddblocal.ParseValidationLayer(in); err != nil || got != want {
			t.Errorf("%q: %v, %v", in, got, err)
		}
	}
	if _, err := ddblocal.ParseValidationLayer("newest"); err == nil {
		t.Error("an unknown layer was accepted")
	}
}
