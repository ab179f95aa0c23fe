package ddblocal_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const condFailed = "The conditional request failed"

func TestItemConditionalWrites(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("items", "pk:S").create(s)
	s.put(tbl, avmap{"pk": vS("a"), "n": vN("1")})

	tests := []struct {
		name string
		run  func() error
		want string // "" means success
	}{
		{"put if absent fails on existing item", func() error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("a")}, ConditionExpression: aws.String("attribute_not_exists(pk)")})
			return err
		}, condFailed},
		{"put if absent succeeds on new item", func() error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("b")}, ConditionExpression: aws.String("attribute_not_exists(pk)")})
			return err
		}, ""},
		{"update with a true comparison", func() error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("a")},
				UpdateExpression: aws.String("SET n = n + :one"), ConditionExpression: aws.String("n = :one"),
				ExpressionAttributeValues: avmap{":one": vN("1")}})
			return err
		}, ""},
		{"update with a false comparison", func() error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("a")},
				UpdateExpression: aws.String("SET n = :v"), ConditionExpression: aws.String("n = :v"),
				ExpressionAttributeValues: avmap{":v": vN("7")}})
			return err
		}, condFailed},
		{"update of a missing item with attribute_exists", func() error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("zz")},
				UpdateExpression: aws.String("SET n = :v"), ConditionExpression: aws.String("attribute_exists(pk)"),
				ExpressionAttributeValues: avmap{":v": vN("7")}})
			return err
		}, condFailed},
		{"delete with a false condition", func() error {
			_, err := s.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: &tbl, Key: avmap{"pk": vS("a")},
				ConditionExpression: aws.String("attribute_not_exists(n)")})
			return err
		}, condFailed},
	}
	for _, tc := range tests {
		err := tc.run()
		if tc.want == "" {
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			continue
		}
		apiErr(t, err, "ConditionalCheckFailedException", tc.want)
	}
	// The failed writes changed nothing; the true update incremented n.
	sameItem(t, s.get(tbl, avmap{"pk": vS("a")}), avmap{"pk": vS("a"), "n": vN("2")})
	if got := s.get(tbl, avmap{"pk": vS("zz")}); got != nil {
		t.Fatalf("a failed conditional update created %v", itemString(got))
	}
}

func TestReturnValuesOnConditionCheckFailure(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("rvoccf", "pk:S").create(s)
	old := avmap{"pk": vS("a"), "x": vS("old"), "n": vN("5")}
	s.put(tbl, old)
	ops := []struct {
		name string
		run  func(rv types.ReturnValuesOnConditionCheckFailure) error
	}{
		{"PutItem", func(rv types.ReturnValuesOnConditionCheckFailure) error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("a")},
				ConditionExpression: aws.String("attribute_not_exists(pk)"), ReturnValuesOnConditionCheckFailure: rv})
			return err
		}},
		{"UpdateItem", func(rv types.ReturnValuesOnConditionCheckFailure) error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("a")},
				UpdateExpression: aws.String("SET x = :v"), ConditionExpression: aws.String("x = :v"),
				ExpressionAttributeValues: avmap{":v": vS("new")}, ReturnValuesOnConditionCheckFailure: rv})
			return err
		}},
		{"DeleteItem", func(rv types.ReturnValuesOnConditionCheckFailure) error {
			_, err := s.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: &tbl, Key: avmap{"pk": vS("a")},
				ConditionExpression: aws.String("n > :v"), ExpressionAttributeValues: avmap{":v": vN("10")}, ReturnValuesOnConditionCheckFailure: rv})
			return err
		}},
	}
	for _, op := range ops {
		for _, rv := range []types.ReturnValuesOnConditionCheckFailure{"", types.ReturnValuesOnConditionCheckFailureNone, types.ReturnValuesOnConditionCheckFailureAllOld} {
			err := op.run(rv)
			apiErr(t, err, "ConditionalCheckFailedException", condFailed)
			var ccf *types.ConditionalCheckFailedException
			if !errors.As(err, &ccf) {
				t.Fatalf("%s: %T is not a ConditionalCheckFailedException", op.name, err)
			}
			if rv == types.ReturnValuesOnConditionCheckFailureAllOld {
				sameItem(t, ccf.Item, old)
			} else if ccf.Item != nil {
				t.Fatalf("%s %q: unexpected Item %s", op.name, rv, itemString(ccf.Item))
			}
		}
	}
	// A missing item has no old image to return.
	_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("none")},
		UpdateExpression: aws.String("SET x = :v"), ConditionExpression: aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: avmap{":v": vS("new")}, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) || ccf.Item != nil {
		t.Fatalf("missing item: got %v", err)
	}
}

func TestReturnValues(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("rvals", "pk:S").create(s)
	base := avmap{"pk": vS("k"), "a": vS("1"), "b": vN("2"), "c": vS("keep")}
	reset := func() { s.put(tbl, base) }
	update := func(rv types.ReturnValue) (avmap, error) {
		out, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("k")},
			UpdateExpression: aws.String("SET a = :a, d = :d REMOVE b"), ExpressionAttributeValues: avmap{":a": vS("9"), ":d": vS("new")},
			ReturnValues: rv})
		if err != nil {
			return nil, err
		}
		return out.Attributes, nil
	}
	after := avmap{"pk": vS("k"), "a": vS("9"), "c": vS("keep"), "d": vS("new")}
	updates := []struct {
		rv   types.ReturnValue
		want avmap
	}{
		{"", nil},
		{types.ReturnValueNone, nil},
		{types.ReturnValueAllOld, base},
		{types.ReturnValueUpdatedOld, avmap{"a": vS("1"), "b": vN("2")}},
		{types.ReturnValueAllNew, after},
		{types.ReturnValueUpdatedNew, avmap{"a": vS("9"), "d": vS("new")}},
	}
	for _, tc := range updates {
		reset()
		got, err := update(tc.rv)
		if err != nil {
			t.Fatalf("UpdateItem %q: %v", tc.rv, err)
		}
		if tc.want == nil && got != nil {
			t.Fatalf("UpdateItem %q: want no Attributes, got %s", tc.rv, itemString(got))
		}
		if tc.want != nil {
			sameItem(t, got, tc.want)
		}
	}

	// ALL_OLD on a new item returns nothing; UpdateItem on a missing item
	// creates it from the key.
	out, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("fresh")},
		UpdateExpression: aws.String("SET a = :a"), ExpressionAttributeValues: avmap{":a": vS("x")}, ReturnValues: types.ReturnValueAllOld})
	if err != nil || out.Attributes != nil {
		t.Fatalf("ALL_OLD on a new item: %v %v", out, err)
	}
	out, err = s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("bare")}, ReturnValues: types.ReturnValueAllNew})
	if err != nil {
		t.Fatal(err)
	}
	sameItem(t, out.Attributes, avmap{"pk": vS("bare")})

	// PutItem and DeleteItem accept only NONE and ALL_OLD.
	reset()
	put, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("k"), "z": vS("1")}, ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		t.Fatal(err)
	}
	sameItem(t, put.Attributes, base)
	put, err = s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("other")}, ReturnValues: types.ReturnValueAllOld})
	if err != nil || put.Attributes != nil {
		t.Fatalf("ALL_OLD on a new put: %v %v", put, err)
	}
	del, err := s.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: &tbl, Key: avmap{"pk": vS("k")}, ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		t.Fatal(err)
	}
	sameItem(t, del.Attributes, avmap{"pk": vS("k"), "z": vS("1")})
	for _, rv := range []types.ReturnValue{types.ReturnValueAllNew, types.ReturnValueUpdatedOld, types.ReturnValueUpdatedNew} {
		_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("k")}, ReturnValues: rv})
		validationErr(t, err, "1 validation error detected: ReturnValues can only be ALL_OLD or NONE")
		_, err = s.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: &tbl, Key: avmap{"pk": vS("k")}, ReturnValues: rv})
		validationErr(t, err, "1 validation error detected: ReturnValues can only be ALL_OLD or NONE")
	}
	_, err = s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("k")}, ReturnValues: "BOGUS"})
	validationErr(t, err, "1 validation error detected: Value 'BOGUS' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]")
}

func TestKeyValidation(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	hash := table("hash", "pk:S").create(s)
	comp := table("comp", "pk:S", "sk:N").create(s)
	bin := table("bin", "pk:B").create(s)
	const mismatch = "The provided key element does not match the schema"
	long := strings.Repeat("x", 2049)
	tests := []struct {
		name string
		tbl  string
		key  avmap
		want string
	}{
		{"missing hash key", hash, avmap{}, mismatch},
		{"other attribute", hash, avmap{"x": vS("a")}, mismatch},
		{"extra attribute", hash, avmap{"pk": vS("a"), "x": vS("b")}, mismatch},
		{"wrong type", hash, avmap{"pk": vN("1")}, mismatch},
		{"set type", hash, avmap{"pk": vSS("a")}, mismatch},
		{"missing range key", comp, avmap{"pk": vS("a")}, mismatch},
		{"range key wrong type", comp, avmap{"pk": vS("a"), "sk": vS("1")}, mismatch},
		{"empty string key", hash, avmap{"pk": vS("")}, "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: pk"},
		{"empty binary key", bin, avmap{"pk": vB([]byte{})}, "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty binary value. Key: pk"},
		{"hash key over 2048 bytes", hash, avmap{"pk": vS(long)}, "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.c.GetItem(bg, &dynamodb.GetItemInput{TableName: &tc.tbl, Key: tc.key})
			validationErr(t, err, tc.want)
			_, err = s.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: &tc.tbl, Key: tc.key})
			validationErr(t, err, tc.want)
			_, err = s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tc.tbl, Key: tc.key,
				UpdateExpression: aws.String("SET a = :a"), ExpressionAttributeValues: avmap{":a": vS("x")}})
			validationErr(t, err, tc.want)
		})
	}

	// PutItem names the missing or mistyped key attribute.
	puts := []struct {
		name string
		tbl  string
		it   avmap
		want string
	}{
		{"missing hash key", hash, avmap{"x": vS("a")}, "One or more parameter values were invalid: Missing the key pk in the item"},
		{"missing range key", comp, avmap{"pk": vS("a")}, "One or more parameter values were invalid: Missing the key sk in the item"},
		{"hash key wrong type", hash, avmap{"pk": vN("1")}, "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N"},
		{"range key wrong type", comp, avmap{"pk": vS("a"), "sk": vS("x")}, "One or more parameter values were invalid: Type mismatch for key sk expected: N actual: S"},
		{"empty string key", hash, avmap{"pk": vS("")}, "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: pk"},
		{"range key over 1024 bytes", table2(s, "range-s"), avmap{"pk": vS("a"), "sk": vS(strings.Repeat("r", 1025))}, "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes"},
	}
	for _, tc := range puts {
		_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tc.tbl, Item: tc.it})
		validationErr(t, err, tc.want)
	}
	// Limits are inclusive: a 2048-byte hash key and a 1024-byte range key fit.
	s.put(hash, avmap{"pk": vS(strings.Repeat("h", 2048))})
	s.put(table2(s, "range-ok"), avmap{"pk": vS("a"), "sk": vS(strings.Repeat("r", 1024))})

	// A missing table comes before the key check.
	_, err := s.c.GetItem(bg, &dynamodb.GetItemInput{TableName: aws.String("nope"), Key: avmap{}})
	apiErr(t, err, "ResourceNotFoundException", "Requested resource not found")
}

// table2 creates a table with a string hash and string range key.
func table2(s *cfStore, name string) string {
	return table(name, "pk:S", "sk:S").create(s)
}

func TestItemSizeLimit(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("size", "pk:S").create(s)
	const max = 400 * 1024
	// Size = name and value lengths: "pk" + "k" (3 bytes) plus "b" + value.
	fill := func(n int) avmap { return avmap{"pk": vS("k"), "b": vS(strings.Repeat("a", n))} }
	atLimit := max - 3 - 1
	s.put(tbl, fill(atLimit))
	_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: fill(atLimit + 1)})
	validationErr(t, err, "Item size has exceeded the maximum allowed size")

	// Numbers count about one byte per two significant digits plus one:
	// 38 significant digits take 20 bytes.
	num := avmap{"pk": vS("k"), "c": vN(strings.Repeat("1", 38)), "b": vS(strings.Repeat("a", max-3-1-1-20))}
	s.put(tbl, num)
	num["b"] = vS(strings.Repeat("a", max-3-1-1-20+1))
	_, err = s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: num})
	validationErr(t, err, "Item size has exceeded the maximum allowed size")

	// UpdateItem measures the item it would store.
	_, err = s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("k")},
		UpdateExpression: aws.String("SET z = :z"), ExpressionAttributeValues: avmap{":z": vS("zz")}})
	validationErr(t, err, "Item size to update has exceeded the maximum allowed size")

	// The size check comes before the table lookup.
	_, err = s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String("missing"), Item: fill(atLimit + 1)})
	validationErr(t, err, "Item size has exceeded the maximum allowed size")
}

func TestNumberCanonicalisation(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("nums", "pk:S").create(s)
	tests := []struct{ in, want string }{
		{"0000012345678901234567890123456789012345678", "12345678901234567890123456789012345678"},
		{"-00001.23456789012345678901234567890123456780000", "-1.2345678901234567890123456789012345678"},
		{"-0015.789e6", "-15789000"},
		{"1e2", "100"},
		{"1.50", "1.5"},
		{"0.000", "0"},
		{"1E-5", "0.00001"},
	}
	for i, tc := range tests {
		pk := fmt.Sprintf("n%d", i)
		s.put(tbl, avmap{"pk": vS(pk), "n": vN(tc.in)})
		got := s.get(tbl, avmap{"pk": vS(pk)})
		if g := attrString(got["n"]); g != "N:"+tc.want {
			t.Errorf("%s: stored as %s, want N:%s", tc.in, g, tc.want)
		}
	}
	// Numbers compare by value: 1.0 and 1 are the same key.
	num := table("numkey", "pk:N").create(s)
	s.put(num, avmap{"pk": vN("1.0"), "v": vS("a")})
	sameItem(t, s.get(num, avmap{"pk": vN("1")}), avmap{"pk": vN("1"), "v": vS("a")})
}

// TestSparseGSI checks that an item is in a global secondary index exactly
// while it has the index key with the declared type, whatever write put
// it there or took it out.
func TestSparseGSI(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("agenda", "pk:S").gsi("byDue", "grp:S", "due:N", types.ProjectionTypeAll).create(s)
	inIndex := func() []string {
		items, _ := s.queryAll(&dynamodb.QueryInput{TableName: &tbl, IndexName: aws.String("byDue"),
			KeyConditionExpression: aws.String("grp = :s"), ExpressionAttributeValues: avmap{":s": vS("x")}})
		return attrsOf(items, "pk")
	}
	key := avmap{"pk": vS("inv1")}
	steps := []struct {
		name string
		run  func() error
		want []string
	}{
		{"put with the index key", func() error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("inv1"), "grp": vS("x"), "due": vN("10")}})
			return err
		}, []string{"S:inv1"}},
		{"UpdateItem REMOVE of the sort key attribute", func() error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: key, UpdateExpression: aws.String("REMOVE due")})
			return err
		}, nil},
		{"UpdateItem SET puts it back", func() error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: key, UpdateExpression: aws.String("SET due = :d"),
				ExpressionAttributeValues: avmap{":d": vN("5")}})
			return err
		}, []string{"S:inv1"}},
		{"UpdateItem REMOVE of the partition key attribute", func() error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: key, UpdateExpression: aws.String("REMOVE grp")})
			return err
		}, nil},
		{"Put overwrite with the key again", func() error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("inv1"), "grp": vS("x"), "due": vN("1")}})
			return err
		}, []string{"S:inv1"}},
		{"Put overwrite without the key", func() error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("inv1"), "grp": vS("x")}})
			return err
		}, nil},
		{"transaction SET", func() error {
			_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Update: &types.Update{
				TableName: &tbl, Key: key, UpdateExpression: aws.String("SET due = :d"), ExpressionAttributeValues: avmap{":d": vN("3")}}}}})
			return err
		}, []string{"S:inv1"}},
		{"transaction REMOVE", func() error {
			_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Update: &types.Update{
				TableName: &tbl, Key: key, UpdateExpression: aws.String("REMOVE due")}}}})
			return err
		}, nil},
		{"transaction Put", func() error {
			_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Put: &types.Put{
				TableName: &tbl, Item: avmap{"pk": vS("inv1"), "grp": vS("x"), "due": vN("4")}}}}})
			return err
		}, []string{"S:inv1"}},
		{"DeleteItem", func() error {
			_, err := s.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: &tbl, Key: key})
			return err
		}, nil},
		{"BatchWriteItem put", func() error {
			_, err := s.c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: {
				{PutRequest: &types.PutRequest{Item: avmap{"pk": vS("inv1"), "grp": vS("x"), "due": vN("4")}}}}}})
			return err
		}, []string{"S:inv1"}},
		{"transaction Delete", func() error {
			_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Delete: &types.Delete{
				TableName: &tbl, Key: key}}}})
			return err
		}, nil},
	}
	for _, st := range steps {
		if err := st.run(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := inIndex(); strings.Join(got, ",") != strings.Join(st.want, ",") {
			t.Fatalf("after %s: index holds %v, want %v", st.name, got, st.want)
		}
	}
	// The index is also exact for Scan.
	items := s.scanAll(&dynamodb.ScanInput{TableName: &tbl, IndexName: aws.String("byDue")})
	if len(items) != 0 {
		t.Fatalf("index scan after delete: %d items", len(items))
	}
}

func TestIndexKeyTypeMismatch(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("typed", "pk:S").gsi("zeta", "g:S", "", types.ProjectionTypeAll).gsi("alpha", "g:S", "due:N", types.ProjectionTypeKeysOnly).create(s)
	// DynamoDB names the first index, alphabetically, that the value breaks.
	_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("a"), "g": vN("1")}})
	validationErr(t, err, "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S Actual: N IndexName: alpha")
	_, err = s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("a"), "due": vS("soon")}})
	validationErr(t, err, "One or more parameter values were invalid: Type mismatch for Index Key due Expected: N Actual: S IndexName: alpha")
	_, err = s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("a")},
		UpdateExpression: aws.String("SET due = :v"), ExpressionAttributeValues: avmap{":v": vS("soon")}})
	validationErr(t, err, "One or more parameter values were invalid: Type mismatch for Index Key due Expected: N Actual: S IndexName: alpha")
	_, err = s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("a"), "g": vS("")}})
	validationErr(t, err, "One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: alpha, IndexKey: g")
	// Nothing was written.
	if got := s.get(tbl, avmap{"pk": vS("a")}); got != nil {
		t.Fatalf("rejected writes stored %s", itemString(got))
	}
	// Updating a table key is refused.
	_, err = s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("a")},
		UpdateExpression: aws.String("SET pk = :v"), ExpressionAttributeValues: avmap{":v": vS("b")}})
	validationErr(t, err, "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key")
}

// TestNullFalseRefused checks {"NULL": false} is refused wherever a value
// is. eu-west-2 and eu-central-1 briefly accepted it as a NULL in 2026;
// by July every region refused it again.
func TestNullFalseRefused(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("nullfalse", "pk:S").create(s)
	nf := func() types.AttributeValue { return &types.AttributeValueMemberNULL{Value: false} }
	writes := []struct {
		name  string
		write func(pk string) error
	}{
		{"PutItem Item", func(pk string) error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS(pk), "n": nf()}})
			return err
		}},
		{"PutItem nested", func(pk string) error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS(pk), "m": vM(avmap{"x": vL(nf())})}})
			return err
		}},
		{"UpdateItem ExpressionAttributeValues", func(pk string) error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS(pk)},
				UpdateExpression: aws.String("SET n = :n"), ExpressionAttributeValues: avmap{":n": nf()}})
			return err
		}},
		{"UpdateItem AttributeUpdates", func(pk string) error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS(pk)}, AttributeUpdates: map[string]types.AttributeValueUpdate{
				"n": {Value: nf()}}})
			return err
		}},
		{"DeleteItem Expected", func(pk string) error {
			_, err := s.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: &tbl, Key: avmap{"pk": vS(pk)},
				Expected: map[string]types.ExpectedAttributeValue{"n": {Value: nf()}}})
			return err
		}},
		{"BatchWriteItem PutRequest", func(pk string) error {
			_, err := s.c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: {
				{PutRequest: &types.PutRequest{Item: avmap{"pk": vS(pk), "n": nf()}}}}}})
			return err
		}},
		{"TransactWriteItems Put", func(pk string) error {
			_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS(pk), "n": nf()}}}}})
			return err
		}},
		{"PartiQL parameters", func(pk string) error {
			_, err := s.exec(`INSERT INTO "`+tbl+`" VALUE {'pk': ?, 'n': ?}`, vS(pk), nf())
			return err
		}},
	}
	for i, w := range writes {
		pk := fmt.Sprint("k", i)
		if got := refusal(w.write(pk)); !strings.Contains(got, "One or more parameter values were invalid: Null attribute value types must have the value of true") {
			t.Errorf("%s: got %q, want the NULL refusal", w.name, got)
		}
		if it := s.get(tbl, avmap{"pk": vS(pk)}); it != nil {
			t.Errorf("%s: stored %s", w.name, itemString(it))
		}
	}
}
