package ddblocal_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// one wraps a message in the validation envelope DynamoDB's current
// validation layer uses for PutItem, UpdateItem and DeleteItem.
func one(m string) string { return "1 validation error detected: " + m }

func TestWriteValidationMessages(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("writes", "pk:S").create(s)
	key := avmap{"pk": vS("k")}
	put := func(in *dynamodb.PutItemInput) error {
		in.TableName = &tbl
		if in.Item == nil {
			in.Item = key
		}
		_, err := s.c.PutItem(bg, in)
		return err
	}
	del := func(in *dynamodb.DeleteItemInput) error {
		in.TableName = &tbl
		in.Key = key
		_, err := s.c.DeleteItem(bg, in)
		return err
	}
	upd := func(in *dynamodb.UpdateItemInput) error {
		in.TableName = &tbl
		if in.Key == nil {
			in.Key = key
		}
		_, err := s.c.UpdateItem(bg, in)
		return err
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"put: values without an expression", put(&dynamodb.PutItemInput{ExpressionAttributeValues: avmap{":v": vS("x")}}),
			one("ExpressionAttributeValues can only be specified when using expressions")},
		{"put: names without an expression", put(&dynamodb.PutItemInput{ExpressionAttributeNames: map[string]string{"#a": "a"}}),
			one("ExpressionAttributeNames can only be specified when using expressions")},
		{"put: empty condition", put(&dynamodb.PutItemInput{ConditionExpression: aws.String("")}),
			one("Invalid ConditionExpression: The expression can not be empty;")},
		{"put: expression and non-expression parameters", put(&dynamodb.PutItemInput{ConditionExpression: aws.String("attribute_not_exists(pk)"),
			Expected: map[string]types.ExpectedAttributeValue{"pk": {Exists: aws.Bool(false)}}}),
			one("Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {Expected} Expression parameters: {ConditionExpression}")},
		{"put: unused value", put(&dynamodb.PutItemInput{ConditionExpression: aws.String("attribute_not_exists(pk)"), ExpressionAttributeValues: avmap{":v": vS("x")}}),
			one("Value provided in ExpressionAttributeValues unused in expressions: keys: {:v}")},
		{"put: unused name", put(&dynamodb.PutItemInput{ConditionExpression: aws.String("attribute_not_exists(pk)"), ExpressionAttributeNames: map[string]string{"#n": "n"}}),
			one("Value provided in ExpressionAttributeNames unused in expressions: keys: {#n}")},
		{"put: undefined value", put(&dynamodb.PutItemInput{ConditionExpression: aws.String("pk = :v")}),
			one("Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :v")},
		{"put: undefined name", put(&dynamodb.PutItemInput{ConditionExpression: aws.String("attribute_exists(#n)")}),
			one("Invalid ConditionExpression: An expression attribute name used in the document path is not defined; attribute name: #n")},
		{"put: empty names map", put(&dynamodb.PutItemInput{ConditionExpression: aws.String("attribute_exists(pk)"), ExpressionAttributeNames: map[string]string{}}),
			one("ExpressionAttributeNames must not be empty")},
		{"put: empty values map", put(&dynamodb.PutItemInput{ConditionExpression: aws.String("attribute_exists(pk)"), ExpressionAttributeValues: avmap{}}),
			one("ExpressionAttributeValues must not be empty")},
		{"put: invalid name key", put(&dynamodb.PutItemInput{ConditionExpression: aws.String("attribute_exists(pk)"), ExpressionAttributeNames: map[string]string{"n": "n"}}),
			one(`ExpressionAttributeNames contains invalid key: Syntax error; key: "n"`)},
		{"put: invalid value key", put(&dynamodb.PutItemInput{ConditionExpression: aws.String("attribute_exists(pk)"), ExpressionAttributeValues: avmap{"v": vS("x")}}),
			one(`ExpressionAttributeValues contains invalid key: Syntax error; key: "v"`)},
		{"put: invalid value", put(&dynamodb.PutItemInput{ConditionExpression: aws.String("pk = :v"), ExpressionAttributeValues: avmap{":v": vN("abc")}}),
			one("The parameter cannot be converted to a numeric value: abc")},
		{"put: invalid item value", put(&dynamodb.PutItemInput{Item: avmap{"pk": vS("k"), "s": &types.AttributeValueMemberSS{Value: []string{}}}}),
			one("One or more parameter values were invalid: An string set  may not be empty")},
		{"put: NULL false", put(&dynamodb.PutItemInput{Item: avmap{"pk": vS("k"), "z": &types.AttributeValueMemberNULL{Value: false}}}),
			one("One or more parameter values were invalid: Null attribute value types must have the value of true")},
		{"delete: values without an expression", del(&dynamodb.DeleteItemInput{ExpressionAttributeValues: avmap{":v": vS("x")}}),
			one("ExpressionAttributeValues can only be specified when using expressions")},
		{"delete: empty condition", del(&dynamodb.DeleteItemInput{ConditionExpression: aws.String("")}),
			one("Invalid ConditionExpression: The expression can not be empty;")},
		{"update: undefined value in the condition", upd(&dynamodb.UpdateItemInput{UpdateExpression: aws.String("SET b = :w"), ConditionExpression: aws.String("a = :v"),
			ExpressionAttributeValues: avmap{":w": vS("x")}}),
			one("Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :v")},
		{"update: expression and AttributeUpdates", upd(&dynamodb.UpdateItemInput{UpdateExpression: aws.String("SET a = :v"), ExpressionAttributeValues: avmap{":v": vS("x")},
			AttributeUpdates: map[string]types.AttributeValueUpdate{"a": {Value: vS("x"), Action: types.AttributeActionPut}}}),
			one("Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributeUpdates} Expression parameters: {UpdateExpression}")},
		{"update: unused name", upd(&dynamodb.UpdateItemInput{UpdateExpression: aws.String("SET a = :v"), ExpressionAttributeValues: avmap{":v": vS("x")},
			ExpressionAttributeNames: map[string]string{"#unused": "x"}}),
			one("Value provided in ExpressionAttributeNames unused in expressions: keys: {#unused}")},
		{"update: nested path into a key", upd(&dynamodb.UpdateItemInput{UpdateExpression: aws.String("SET pk.a = :v"), ExpressionAttributeValues: avmap{":v": vS("x")}}),
			"One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key"},
		{"update: missing table after request validation", func() error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: aws.String("nope"), Key: key, UpdateExpression: aws.String("SET a = :v")})
			return err
		}(), one("Invalid UpdateExpression: An expression attribute value used in expression is not defined; attribute value: :v")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { validationErr(t, tc.err, tc.want) })
	}
	// Nothing above wrote the item.
	if got := s.get(tbl, key); got != nil {
		t.Fatalf("a rejected write stored %s", itemString(got))
	}
}

func TestReadValidationMessages(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("reads", "pk:S", "sk:S").create(s)
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"get: projection and AttributesToGet", func() error {
			_, err := s.c.GetItem(bg, &dynamodb.GetItemInput{TableName: &tbl, Key: avmap{"pk": vS("a"), "sk": vS("b")},
				ProjectionExpression: aws.String("a"), AttributesToGet: []string{"a"}})
			return err
		}, "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}"},
		{"get: names without projection", func() error {
			_, err := s.c.GetItem(bg, &dynamodb.GetItemInput{TableName: &tbl, Key: avmap{"pk": vS("a"), "sk": vS("b")}, ExpressionAttributeNames: map[string]string{"#a": "a"}})
			return err
		}, "ExpressionAttributeNames can only be specified when using expressions"},
		{"get: invalid key value, bare", func() error {
			_, err := s.c.GetItem(bg, &dynamodb.GetItemInput{TableName: &tbl, Key: avmap{"pk": vN("abc")}})
			return err
		}, "The parameter cannot be converted to a numeric value: abc"},
		{"query: unused name", func() error {
			_, err := s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String("pk = :v"),
				ExpressionAttributeValues: avmap{":v": vS("a")}, ExpressionAttributeNames: map[string]string{"#unused": "x"}})
			return err
		}, "Value provided in ExpressionAttributeNames unused in expressions: keys: {#unused}"},
		{"query: empty key condition", func() error {
			_, err := s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String(""), ExpressionAttributeValues: avmap{":v": vS("a")}})
			return err
		}, "Invalid KeyConditionExpression: The expression can not be empty;"},
		{"query: undefined name in the filter", func() error {
			_, err := s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String("pk = :pk"), FilterExpression: aws.String("#missing = :fv"),
				ExpressionAttributeValues: avmap{":pk": vS("a"), ":fv": vS("x")}})
			return err
		}, "Invalid FilterExpression: An expression attribute name used in the document path is not defined; attribute name: #missing"},
		{"query: key condition without the partition key", func() error {
			_, err := s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String("sk = :v"), ExpressionAttributeValues: avmap{":v": vS("a")}})
			return err
		}, "Query condition missed key schema element: pk"},
		{"query: a bad key condition operand before a missing table", func() error {
			_, err := s.c.Query(bg, &dynamodb.QueryInput{TableName: aws.String("missing"), KeyConditionExpression: aws.String("pk = :p AND begins_with(sk, :n)"),
				ExpressionAttributeValues: avmap{":p": vS("q"), ":n": vN("1")}})
			return err
		}, "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"},
		{"query: invalid Select", func() error {
			_, err := s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String("pk = :v"), ExpressionAttributeValues: avmap{":v": vS("a")},
				Select: "INVALID_VALUE"})
			return err
		}, "1 validation error detected: Value 'INVALID_VALUE' at 'select' failed to satisfy constraint: Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]"},
		{"query: overlapping projection", func() error {
			_, err := s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String("pk = :v"), ExpressionAttributeValues: avmap{":v": vS("a")},
				ProjectionExpression: aws.String("a, a.b")})
			return err
		}, "Invalid ProjectionExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a, b]"},
		{"scan: values without a filter", func() error {
			_, err := s.c.Scan(bg, &dynamodb.ScanInput{TableName: &tbl, ExpressionAttributeValues: avmap{":v": vS("a")}})
			return err
		}, "ExpressionAttributeValues can only be specified when using expressions: FilterExpression is null"},
		{"scan: invalid value, wrapped", func() error {
			_, err := s.c.Scan(bg, &dynamodb.ScanInput{TableName: &tbl, FilterExpression: aws.String("a = :v"), ExpressionAttributeValues: avmap{":v": vN("abc")}})
			return err
		}, "ExpressionAttributeValues contains invalid value: The parameter cannot be converted to a numeric value: abc for key :v"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { validationErr(t, tc.run(), tc.want) })
	}
}

// TestConstraintMessages checks member constraints are reported together,
// in DynamoDB's order.
func TestConstraintMessages(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tests := []struct {
		op   string
		body map[string]any
		want string
	}{
		{"PutItem", map[string]any{}, "2 validation errors detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null; " +
			"Value null at 'item' failed to satisfy constraint: Member must not be null"},
		{"PutItem", map[string]any{"TableName": "abc;", "ReturnConsumedCapacity": "hi", "ReturnItemCollectionMetrics": "hi", "ReturnValues": "hi"},
			"5 validation errors detected: Value 'hi' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]; " +
				"Value 'abc;' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; " +
				"Value null at 'item' failed to satisfy constraint: Member must not be null; " +
				"Value 'hi' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]; " +
				"Value 'hi' at 'returnItemCollectionMetrics' failed to satisfy constraint: Member must satisfy enum value set: [SIZE, NONE]"},
		{"GetItem", map[string]any{"TableName": "abc;", "ReturnConsumedCapacity": "hi", "AttributesToGet": []string{}},
			"4 validation errors detected: Value 'hi' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]; " +
				"Value '[]' at 'attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1; " +
				"Value 'abc;' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; " +
				"Value null at 'key' failed to satisfy constraint: Member must not be null"},
		{"DeleteItem", map[string]any{"TableName": "a;"}, "2 validation errors detected: Value 'a;' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; " +
			"Value null at 'key' failed to satisfy constraint: Member must not be null"},
		{"UpdateItem", map[string]any{"TableName": "", "Key": map[string]any{}},
			"1 validation error detected: Value '' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{"UpdateItem", map[string]any{"TableName": "", "UpdateExpression": "SET a = :a", "ExpressionAttributeValues": map[string]any{":a": map[string]any{"S": "x"}},
			"ReturnConsumedCapacity": "INVALID", "ReturnValues": "INVALID"},
			"4 validation errors detected: Value 'INVALID' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]; " +
				"Value '' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 1; " +
				"Value 'INVALID' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]; " +
				"Value null at 'key' failed to satisfy constraint: Member must not be null"},
		{"UpdateItem", map[string]any{"TableName": "missing", "AttributeUpdates": map[string]any{"x": map[string]any{"Action": "PUT", "Value": map[string]any{"S": "1"}}},
			"Expected": map[string]any{"a": map[string]any{"Exists": false}, "b": map[string]any{"Exists": false}}, "ConditionalOperator": "XOR"},
			"2 validation errors detected: Value 'XOR' at 'conditionalOperator' failed to satisfy constraint: Member must satisfy enum value set: [OR, AND]; " +
				"Value null at 'key' failed to satisfy constraint: Member must not be null"},
		{"Query", map[string]any{"TableName": "missing", "KeyConditions": map[string]any{"pk": map[string]any{"ComparisonOperator": "EQ", "AttributeValueList": []any{map[string]any{"S": "a"}}}},
			"QueryFilter":         map[string]any{"b": map[string]any{"ComparisonOperator": "NULL"}, "c": map[string]any{"ComparisonOperator": "NULL"}},
			"ConditionalOperator": "XOR", "Select": "BOGUS"},
			"Failed to satisfy constraint: Member must satisfy enum value set: [ALL, OR]"},
		{"PutItem", map[string]any{"TableName": "missing", "Item": map[string]any{"pk": map[string]any{"S": "a"}},
			"Expected": map[string]any{"a": map[string]any{"Exists": false}, "b": map[string]any{"Exists": false}}, "ConditionalOperator": "XOR", "ReturnValues": "BOGUS"},
			"Failed to satisfy constraint: Member must satisfy enum value set: [ALL, OR]"},
		{"TransactWriteItems", map[string]any{"TransactItems": []any{map[string]any{"Put": map[string]any{"TableName": "tbl", "Item": map[string]any{"pk": map[string]any{"S": "a"}}}}},
			"ReturnConsumedCapacity": "BOGUS", "ReturnItemCollectionMetrics": "BOGUS2"},
			"2 validation errors detected: Value 'BOGUS' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]; " +
				"Value 'BOGUS2' at 'returnItemCollectionMetrics' failed to satisfy constraint: Member must satisfy enum value set: [SIZE, NONE]"},
		{"BatchGetItem", map[string]any{"RequestItems": map[string]any{"bad!name": map[string]any{"Keys": []any{map[string]any{"pk": map[string]any{"S": "a"}}}}},
			"ReturnConsumedCapacity": "BOGUS"},
			`2 validation errors detected: Value '{"bad!name":{"Keys":[{"pk":{"S":"a"}}]}}' at 'requestItems' failed to satisfy constraint: Map keys must satisfy constraint: ` +
				"[Member must have length less than or equal to 255, Member must have length greater than or equal to 3, Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]; " +
				"Value 'BOGUS' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]"},
	}
	for _, tc := range tests {
		status, body := s.raw(tc.op, tc.body)
		if status != 400 || body["__type"] != "com.amazon.coral.validate#ValidationException" || body["message"] != tc.want {
			t.Errorf("%s %v:\n got %d %v %q\nwant %q", tc.op, tc.body, status, body["__type"], body["message"], tc.want)
		}
	}
}

// TestErrorTypes checks the __type namespaces of the error body.
func TestErrorTypes(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("errtypes", "pk:S").create(s)
	s.put(tbl, avmap{"pk": vS("a")})
	tests := []struct {
		op     string
		body   map[string]any
		typ    string
		msgKey string
	}{
		{"GetItem", map[string]any{"TableName": "missing", "Key": map[string]any{"pk": map[string]any{"S": "a"}}},
			"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException", "message"},
		{"GetItem", map[string]any{"TableName": tbl, "Key": map[string]any{}}, "com.amazon.coral.validate#ValidationException", "message"},
		{"PutItem", map[string]any{"TableName": tbl, "Item": map[string]any{"pk": map[string]any{"S": "a"}}, "ConditionExpression": "attribute_not_exists(pk)"},
			"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException", "message"},
		{"NoSuchOperation", map[string]any{}, "com.amazon.coral.service#UnknownOperationException", ""},
	}
	for _, tc := range tests {
		status, body := s.raw(tc.op, tc.body)
		if status != 400 || body["__type"] != tc.typ {
			t.Errorf("%s: %d %v, want %s", tc.op, status, body, tc.typ)
		}
		if tc.msgKey != "" && body[tc.msgKey] == nil {
			t.Errorf("%s: no %q member in %v", tc.op, tc.msgKey, body)
		}
	}
	// The old image of a failed condition travels in the error body.
	_, body := s.raw("PutItem", map[string]any{"TableName": tbl, "Item": map[string]any{"pk": map[string]any{"S": "a"}},
		"ConditionExpression": "attribute_not_exists(pk)", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"})
	if it, ok := body["Item"].(map[string]any); !ok || it["pk"] == nil {
		t.Fatalf("ConditionalCheckFailedException body %v has no Item", body)
	}
}

// TestAttributeValueWording checks the two wordings DynamoDB uses for bad
// attribute values: the current layer (PutItem, UpdateItem and DeleteItem
// inside the envelope; GetItem, BatchGetItem and Query bare) and the older
// one (BatchWriteItem, Scan, transactions).
func TestAttributeValueWording(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("wording", "pk:S").create(s)
	const invalid = "One or more parameter values were invalid: "
	ss := vSS("b", "a", "b")
	bs := &types.AttributeValueMemberBS{Value: [][]byte{{0xff}, {0x00}, {0x00}}}
	ns := &types.AttributeValueMemberNS{Value: []string{"2", "1", "2"}}
	ssCurrent := invalid + `Input collection ["a", "b", "b"] contains duplicates.`
	bsCurrent := invalid + `Input collection ["AA==","/w==","AA=="]of type BS contains duplicates.`
	nsCurrent := invalid + "Input collection contains duplicates."
	put := func(v types.AttributeValue) error {
		_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("k"), "v": v}})
		return err
	}
	batchPut := func(v types.AttributeValue) error {
		_, err := s.c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
			tbl: {{PutRequest: &types.PutRequest{Item: avmap{"pk": vS("k"), "v": v}}}}}})
		return err
	}
	get := func(v types.AttributeValue) error {
		_, err := s.c.GetItem(bg, &dynamodb.GetItemInput{TableName: &tbl, Key: avmap{"pk": v}})
		return err
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"put: empty number", put(vN("")), one("The parameter cannot be converted to a numeric value: ")},
		{"put: not a number", put(vN("abc")), one("The parameter cannot be converted to a numeric value: abc")},
		{"put: huge exponent", put(vN("1e99999999999")), one("Number overflow. Attempting to store a number with magnitude larger than supported range")},
		{"put: tiny exponent", put(vN("1e-99999999999")), one("Number underflow. Attempting to store a number with magnitude smaller than supported range")},
		{"put: 39 digits", put(vN("1234567890123456789012345678901234567890")), one("Attempting to store more than 38 significant digits in a Number")},
		{"put: duplicate strings", put(ss), one(ssCurrent)},
		{"put: duplicate binaries", put(bs), one(bsCurrent)},
		{"put: duplicate numbers", put(ns), one(nsCurrent)},
		{"put: nested duplicate", put(vM(avmap{"x": vL(ss)})), one(ssCurrent)},
		{"delete: condition value", func() error {
			_, err := s.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: &tbl, Key: avmap{"pk": vS("k")}, ConditionExpression: aws.String("n = :v"),
				ExpressionAttributeValues: avmap{":v": vN("abc")}})
			return err
		}(), one("The parameter cannot be converted to a numeric value: abc")},
		{"update: key value", func() error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": ss}, UpdateExpression: aws.String("SET o = :o"),
				ExpressionAttributeValues: avmap{":o": vN("1")}})
			return err
		}(), one(ssCurrent)},
		{"get: key value, bare", get(ns), nsCurrent},
		{"get: empty number, bare", get(vN("")), "The parameter cannot be converted to a numeric value: "},
		{"query: start key, bare", func() error {
			_, err := s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: avmap{":p": vS("k")},
				ExclusiveStartKey: avmap{"pk": bs}})
			return err
		}(), bsCurrent},
		{"query: filter value, bare", func() error {
			_, err := s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String("pk = :p"), FilterExpression: aws.String("s = :t"),
				ExpressionAttributeValues: avmap{":p": vS("k"), ":t": ss}})
			return err
		}(), ssCurrent},
		{"batch write: older wording", batchPut(ss), invalid + "Input collection [b, a, b] contains duplicates."},
		{"batch write: older number set wording", batchPut(ns), "Input collection contains duplicates"},
		{"batch write: older empty number", batchPut(vN("")), "The parameter cannot be converted to a numeric value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { validationErr(t, tc.err, tc.want) })
	}
}

// TestValidationFrontEnd checks the members DynamoDB's newer front end
// checks first and reports alone once a write carries its required members
// (TableName and Item or Key): an empty TableName, and UpdateItem's
// ReturnValues. Without them, or for the other members, the violations
// are listed together.
func TestValidationFrontEnd(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	const (
		emptyName = "Value '' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 1"
		rcc       = "Value 'INVALID' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]"
		rv        = "Value 'INVALID' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]"
		ricm      = "Value 'INVALID' at 'returnItemCollectionMetrics' failed to satisfy constraint: Member must satisfy enum value set: [SIZE, NONE]"
		updateRV  = "1 validation error detected: Failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, UPDATED_OLD, ALL_NEW, UPDATE_NEW, NONE]"
	)
	key := js{"pk": js{"S": "k"}}
	tests := []struct {
		name, op string
		body     js
		want     string
	}{
		{"put: empty name alone", "PutItem", js{"TableName": "", "ReturnValues": "INVALID", "ReturnConsumedCapacity": "INVALID", "Item": js{}}, "1 validation error detected: " + emptyName},
		{"delete: empty name alone", "DeleteItem", js{"TableName": "", "ReturnValues": "INVALID", "ReturnConsumedCapacity": "INVALID", "Key": js{}}, "1 validation error detected: " + emptyName},
		{"update: empty name alone", "UpdateItem", js{"TableName": "", "ReturnValues": "INVALID", "ReturnConsumedCapacity": "INVALID", "Key": js{}}, "1 validation error detected: " + emptyName},
		{"put: empty name without an item", "PutItem", js{"TableName": "", "ReturnValues": "INVALID"},
			"3 validation errors detected: " + emptyName + "; Value null at 'item' failed to satisfy constraint: Member must not be null; " + rv},
		{"update: ReturnValues alone", "UpdateItem", js{"TableName": "valid_name", "Key": key, "ReturnValues": "INVALID", "ReturnConsumedCapacity": "INVALID"}, updateRV},
		{"update: ReturnValues before a bad name", "UpdateItem", js{"TableName": "x!", "Key": key, "ReturnValues": "INVALID"}, updateRV},
		{"update: ReturnValues without a key", "UpdateItem", js{"TableName": "valid_name", "ReturnValues": "INVALID", "ReturnConsumedCapacity": "INVALID"},
			"3 validation errors detected: " + rcc + "; " + rv + "; Value null at 'key' failed to satisfy constraint: Member must not be null"},
		{"delete: enums together", "DeleteItem", js{"TableName": "valid_name", "Key": key, "ReturnValues": "INVALID", "ReturnConsumedCapacity": "INVALID"},
			"2 validation errors detected: " + rcc + "; " + rv},
		{"put: enums together", "PutItem", js{"TableName": "valid_name", "Item": key, "ReturnValues": "INVALID", "ReturnConsumedCapacity": "INVALID", "ReturnItemCollectionMetrics": "INVALID"},
			"3 validation errors detected: " + rcc + "; " + rv + "; " + ricm},
	}
	for _, tc := range tests {
		t.Log(tc.name)
		s.rawErr(tc.op, tc.body, "ValidationException", tc.want)
	}
}
