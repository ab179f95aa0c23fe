package ddblocal_test

// Conformance of DynamoDB's service limits, each at the limit (accepted)
// and just past it (refused with DynamoDB's error).

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

const (
	maxItem       = 400 * 1024
	nestedTooDeep = "Nesting Levels have exceeded supported limits"
	nameTooLarge  = "Attribute name is too large, must be less than 65536 bytes"
	exprTooLarge  = "Expression size has exceeded the maximum allowed size"
)

// sized returns an item of exactly n bytes by DynamoDB's size rules: the
// key attribute plus a padding string attribute "p".
func sized(key avmap, n int) avmap {
	it := avmap{}
	size := 0
	for k, v := range key {
		it[k] = v
		size += len(k) + len(v.(*types.AttributeValueMemberS).Value)
	}
	it["p"] = vS(strings.Repeat("x", n-size-1))
	return it
}

// deep wraps a string leaf in n single-key maps: deep(1) is {M:{n:{S:leaf}}}.
// DynamoDB counts the attribute as level 1, so deep(31) (the leaf at level
// 32) is the deepest value it stores.
func deep(n int) types.AttributeValue {
	v := vS("leaf")
	for i := 0; i < n; i++ {
		v = vM(avmap{"n": v})
	}
	return v
}

// errContains asserts a DynamoDB error of the given code whose message
// contains every part.
func errContains(t *testing.T, err error, code string, parts ...string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("want %s containing %q, got %v", code, parts, err)
	}
	if ae.ErrorCode() != code {
		t.Fatalf("want %s, got %s %q", code, ae.ErrorCode(), ae.ErrorMessage())
	}
	for _, p := range parts {
		if !strings.Contains(ae.ErrorMessage(), p) {
			t.Fatalf("%s message %q does not contain %q", code, ae.ErrorMessage(), p)
		}
	}
}

// cancelled asserts a TransactionCanceledException with one ValidationError
// reason whose message contains msg.
func cancelled(t *testing.T, err error, msg string) {
	t.Helper()
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) {
		t.Fatalf("want TransactionCanceledException, got %v", err)
	}
	if len(tc.CancellationReasons) != 1 || aws.ToString(tc.CancellationReasons[0].Code) != "ValidationError" ||
		!strings.Contains(aws.ToString(tc.CancellationReasons[0].Message), msg) {
		t.Fatalf("cancellation reasons %+v, want one ValidationError with %q", tc.CancellationReasons, msg)
	}
}

func TestItemSizeLimitBySurface(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("sizes", "pk:S").create(s)
	const putMsg = "Item size has exceeded the maximum allowed size"
	const updMsg = "Item size to update has exceeded the maximum allowed size"
	key := func(id string) avmap { return avmap{"pk": vS("size-limit-" + id)} }

	t.Run("BatchWriteItem", func(t *testing.T) {
		write := func(it avmap) error {
			_, err := s.c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
				tbl: {{PutRequest: &types.PutRequest{Item: it}}}}})
			return err
		}
		if err := write(sized(key("bw-at"), maxItem)); err != nil {
			t.Fatal(err)
		}
		if got := s.get(tbl, key("bw-at")); len(got["p"].(*types.AttributeValueMemberS).Value) != maxItem-len("pksize-limit-bw-at")-1 {
			t.Fatal("item at the limit not stored whole")
		}
		validationErr(t, write(sized(key("bw-over"), maxItem+1)), putMsg)
	})
	t.Run("TransactWriteItems Put", func(t *testing.T) {
		put := func(it avmap) error {
			_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: &tbl, Item: it}}}})
			return err
		}
		if err := put(sized(key("tx-put-at"), maxItem)); err != nil {
			t.Fatal(err)
		}
		// A put's size is known from the request: a plain ValidationException.
		validationErr(t, put(sized(key("tx-put-over"), maxItem+1)), putMsg)
	})
	t.Run("TransactWriteItems Update", func(t *testing.T) {
		update := func(id string, n int) error {
			it := sized(key(id), n)
			_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Update: &types.Update{TableName: &tbl, Key: key(id), UpdateExpression: aws.String("SET p = :p"),
					ExpressionAttributeValues: avmap{":p": it["p"]}}}}})
			return err
		}
		if err := update("tx-upd-at", maxItem); err != nil {
			t.Fatal(err)
		}
		// An update's size depends on the stored item: a cancellation.
		cancelled(t, update("tx-upd-over", maxItem+1), updMsg)
	})
	t.Run("PutItem and UpdateItem", func(t *testing.T) {
		long := avmap{"pk": vS(strings.Repeat("k", 100))}
		s.put(tbl, sized(long, maxItem))
		_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: sized(long, maxItem+1)})
		validationErr(t, err, putMsg)
		upd := func(n int) error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: long, UpdateExpression: aws.String("SET p = :p"),
				ExpressionAttributeValues: avmap{":p": sized(long, n)["p"]}})
			return err
		}
		if err := upd(maxItem); err != nil {
			t.Fatal(err)
		}
		validationErr(t, upd(maxItem+1), updMsg)
	})
}

func TestKeyValueSizeLimits(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	hashS := table("hash-s", "pk:S").create(s)
	hashB := table("hash-b", "pk:B").create(s)
	rangeB := table("range-b", "pk:S", "sk:B").create(s)
	const hashMsg = "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes"
	const rangeMsg = "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes"
	bin := func(n int) types.AttributeValue { return vB(make([]byte, n)) }

	// Binary keys count their raw bytes, not their base64 text.
	s.put(hashB, avmap{"pk": bin(2048)})
	if s.get(hashB, avmap{"pk": bin(2048)}) == nil {
		t.Fatal("2048-byte binary hash key not stored")
	}
	s.put(rangeB, avmap{"pk": vS("a"), "sk": bin(1024)})
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"put binary hash key of 2049 bytes", func() error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &hashB, Item: avmap{"pk": bin(2049)}})
			return err
		}(), hashMsg},
		{"get with a hash key of 2049 bytes", func() error {
			_, err := s.c.GetItem(bg, &dynamodb.GetItemInput{TableName: &hashS, Key: avmap{"pk": vS(strings.Repeat("h", 2049))}})
			return err
		}(), hashMsg},
		{"delete with a hash key of 2049 bytes", func() error {
			_, err := s.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: &hashS, Key: avmap{"pk": vS(strings.Repeat("h", 2049))}})
			return err
		}(), hashMsg},
		{"put binary range key of 1025 bytes", func() error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &rangeB, Item: avmap{"pk": vS("a"), "sk": bin(1025)}})
			return err
		}(), rangeMsg},
		{"update with a range key of 1025 bytes", func() error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &rangeB, Key: avmap{"pk": vS("a"), "sk": bin(1025)},
				UpdateExpression: aws.String("SET a = :a"), ExpressionAttributeValues: avmap{":a": vS("x")}})
			return err
		}(), rangeMsg},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { validationErr(t, tc.err, tc.want) })
	}
}

func TestAttributeNameLengthLimit(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("names", "pk:S").create(s)
	longest := strings.Repeat("n", 65535)
	tooLong := longest + "n"

	// 65535 bytes is the longest name, at the top level and inside a map,
	// and usable in expressions.
	s.put(tbl, avmap{"pk": vS("a"), longest: vN("1"), "m": vM(avmap{longest: vS("x")})})
	out, err := s.c.GetItem(bg, &dynamodb.GetItemInput{TableName: &tbl, Key: avmap{"pk": vS("a")},
		ProjectionExpression: aws.String("#n"), ExpressionAttributeNames: map[string]string{"#n": longest}})
	if err != nil {
		t.Fatal(err)
	}
	sameItem(t, out.Item, avmap{longest: vN("1")})
	if _, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("a")},
		UpdateExpression: aws.String("SET #n = #n + :one"), ConditionExpression: aws.String("#n = :one"),
		ExpressionAttributeNames: map[string]string{"#n": longest}, ExpressionAttributeValues: avmap{":one": vN("1")}}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		err  error
	}{
		{"put, top level", func() error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("b"), tooLong: vN("1")}})
			return err
		}()},
		{"put, inside a map", func() error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("b"), "m": vM(avmap{tooLong: vN("1")})}})
			return err
		}()},
		{"update, value holding a long map key", func() error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("b")},
				UpdateExpression: aws.String("SET m = :v"), ExpressionAttributeValues: avmap{":v": vM(avmap{tooLong: vN("1")})}})
			return err
		}()},
		{"update, long name through an alias", func() error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("b")},
				UpdateExpression: aws.String("SET #n = :v"), ExpressionAttributeNames: map[string]string{"#n": tooLong},
				ExpressionAttributeValues: avmap{":v": vN("1")}})
			return err
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { validationErr(t, tc.err, one(nameTooLarge)) })
	}
	if got := s.get(tbl, avmap{"pk": vS("b")}); got != nil {
		t.Fatalf("a refused write stored an item of %d attributes", len(got))
	}
}

func TestKeyAttributeNameLengthLimit(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	// Key attribute names of 255 bytes are the longest.
	long := strings.Repeat("h", 255)
	tbl := table("long-key-names", long+":S", strings.Repeat("r", 255)+":S").create(s)
	it := avmap{long: vS("a"), strings.Repeat("r", 255): vS("b")}
	s.put(tbl, it)
	sameItem(t, s.get(tbl, it), it)

	ts := table("too-long-key-name", strings.Repeat("h", 256)+":S")
	names := []string{strings.Repeat("h", 256)}
	ts.in.AttributeDefinitions = []types.AttributeDefinition{{AttributeName: &names[0], AttributeType: types.ScalarAttributeTypeS}}
	_, err := s.c.CreateTable(bg, ts.in)
	errContains(t, err, "ValidationException", "Member must have length less than or equal to 255")
}

func TestNestingDepthLimit(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("nesting", "pk:S").create(s)
	key := func(id string) avmap { return avmap{"pk": vS(id)} }

	// 31 wraps (the leaf at level 32) are stored, by every write surface.
	s.put(tbl, avmap{"pk": vS("put"), "d": deep(31)})
	sameItem(t, s.get(tbl, key("put")), avmap{"pk": vS("put"), "d": deep(31)})
	if _, err := s.c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
		tbl: {{PutRequest: &types.PutRequest{Item: avmap{"pk": vS("batch"), "d": deep(31)}}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS("tx"), "d": deep(31)}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: key("upd"), UpdateExpression: aws.String("SET d = :d"),
		ExpressionAttributeValues: avmap{":d": deep(31)}}); err != nil {
		t.Fatal(err)
	}
	// A 31-level value in a condition is accepted, so the condition runs.
	_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: key("put"), UpdateExpression: aws.String("SET t = :t"),
		ConditionExpression: aws.String("d <> :d"), ExpressionAttributeValues: avmap{":t": vS("y"), ":d": deep(31)}})
	apiErr(t, err, "ConditionalCheckFailedException", "The conditional request failed")

	// 32 wraps are refused.
	tests := []struct {
		name string
		err  error
	}{
		{"PutItem", func() error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("x"), "d": deep(32)}})
			return err
		}()},
		{"PutItem, through a list", func() error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("x"), "d": vL(deep(31))}})
			return err
		}()},
		{"BatchWriteItem", func() error {
			_, err := s.c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
				tbl: {{PutRequest: &types.PutRequest{Item: avmap{"pk": vS("x"), "d": deep(32)}}}}}})
			return err
		}()},
		{"TransactWriteItems Put", func() error {
			_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS("x"), "d": deep(32)}}}}})
			return err
		}()},
		{"UpdateItem value", func() error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: key("x"), UpdateExpression: aws.String("SET d = :d"),
				ExpressionAttributeValues: avmap{":d": deep(32)}})
			return err
		}()},
		{"UpdateItem condition value", func() error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: key("put"), UpdateExpression: aws.String("SET t = :t"),
				ConditionExpression: aws.String("d = :d"), ExpressionAttributeValues: avmap{":t": vS("y"), ":d": deep(32)}})
			return err
		}()},
		{"UpdateItem path that deepens the item", func() error {
			// d holds 31 levels of maps below it; one more map at the bottom
			// puts a leaf at level 33.
			path := "d" + strings.Repeat(".n", 31)
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: key("upd"), UpdateExpression: aws.String("SET " + path + " = :m"),
				ExpressionAttributeValues: avmap{":m": vM(avmap{"x": vS("y")})}})
			return err
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { errContains(t, tc.err, "ValidationException", nestedTooDeep) })
	}
	if got := s.get(tbl, key("x")); got != nil {
		t.Fatalf("a refused write stored an item of %d attributes", len(got))
	}
}

// exprOfBytes builds a comma-joined list of attribute names of exactly n
// bytes, usable as a ProjectionExpression.
func exprOfBytes(n int) string {
	var parts []string
	size := 0
	for i := 0; size < n; i++ {
		p := fmt.Sprintf("a%03d", i)
		if size > 0 {
			p = ", " + p
		}
		parts = append(parts, p)
		size += len(p)
	}
	e := strings.Join(parts, "")
	// Lengthen or trim the last name to land on n exactly.
	if len(e) > n {
		e = e[:n]
	}
	return e
}

func TestExpressionSizeLimit(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("exprsize", "pk:S", "sk:S").create(s)
	key := avmap{"pk": vS("a"), "sk": vS("b")}
	s.put(tbl, avmap{"pk": vS("a"), "sk": vS("b"), "x": vS("1")})
	// Spaces pad an expression to an exact length without changing it.
	pad := func(prefix string, n int, suffix string) string {
		return prefix + strings.Repeat(" ", n-len(prefix)-len(suffix)) + suffix
	}
	const n = 4096
	run := map[string]func(size int) error{
		"ProjectionExpression": func(size int) error {
			_, err := s.c.GetItem(bg, &dynamodb.GetItemInput{TableName: &tbl, Key: key, ProjectionExpression: aws.String(exprOfBytes(size))})
			return err
		},
		"UpdateExpression": func(size int) error {
			_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: key, UpdateExpression: aws.String(pad("SET", size, "y = :v")),
				ExpressionAttributeValues: avmap{":v": vS("1")}})
			return err
		},
		"ConditionExpression": func(size int) error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("a"), "sk": vS("b"), "x": vS("1")},
				ConditionExpression: aws.String(pad("x", size, "= :v")), ExpressionAttributeValues: avmap{":v": vS("1")}})
			return err
		},
		"KeyConditionExpression": func(size int) error {
			_, err := s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String(pad("pk", size, "= :v")),
				ExpressionAttributeValues: avmap{":v": vS("a")}})
			return err
		},
		"FilterExpression": func(size int) error {
			_, err := s.c.Scan(bg, &dynamodb.ScanInput{TableName: &tbl, FilterExpression: aws.String(pad("x", size, "= :v")),
				ExpressionAttributeValues: avmap{":v": vS("1")}})
			return err
		},
		"TransactWriteItems ConditionExpression": func(size int) error {
			_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{ConditionCheck: &types.ConditionCheck{TableName: &tbl, Key: key, ConditionExpression: aws.String(pad("x", size, "= :v")),
					ExpressionAttributeValues: avmap{":v": vS("1")}}}}})
			return err
		},
	}
	for name, f := range run {
		t.Run(name, func(t *testing.T) {
			if err := f(n); err != nil {
				t.Fatalf("%d bytes: %v", n, err)
			}
			prefix := "Invalid " + name + ": "
			if strings.HasPrefix(name, "Transact") {
				prefix = "Invalid ConditionExpression: "
			}
			errContains(t, f(n+1), "ValidationException", prefix+exprTooLarge)
		})
	}
	// The limit is on the expression as sent, before names are substituted.
	names := map[string]string{}
	var refs []string
	for i := 0; i < 30; i++ {
		ref := fmt.Sprintf("#a%d", i)
		names[ref] = strings.Repeat("n", 250) + fmt.Sprint(i)
		refs = append(refs, ref)
	}
	if _, err := s.c.GetItem(bg, &dynamodb.GetItemInput{TableName: &tbl, Key: key, ProjectionExpression: aws.String(strings.Join(refs, ", ")),
		ExpressionAttributeNames: names}); err != nil {
		t.Fatal(err)
	}
}

func TestNumberLimits(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("numlimits", "pk:S").create(s)
	put := func(n string) error {
		_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS(n), "n": vN(n)}})
		return err
	}
	for _, n := range []string{
		strings.Repeat("9", 38),
		"9.9999999999999999999999999999999999999E+125",
		"-9.9999999999999999999999999999999999999E+125",
		"1E-130",
		"-1E-130",
		"0.00000000000000000000000000000000000001",
	} {
		if err := put(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	tests := []struct{ n, want string }{
		{strings.Repeat("9", 39), "Attempting to store more than 38 significant digits in a Number"},
		{"1E126", "Number overflow. Attempting to store a number with magnitude larger than supported range"},
		{"-1E126", "Number overflow. Attempting to store a number with magnitude larger than supported range"},
		{"1E-131", "Number underflow. Attempting to store a number with magnitude smaller than supported range"},
	}
	for _, tc := range tests {
		t.Run(tc.n, func(t *testing.T) { validationErr(t, put(tc.n), one(tc.want)) })
	}
}

func TestEmptyValuesInNonKeyAttributes(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("empties", "pk:S").create(s)
	it := avmap{"pk": vS("a"), "s": vS(""), "b": vB([]byte{}), "ss": vSS("", "x"),
		"bs": &types.AttributeValueMemberBS{Value: [][]byte{{}, {1}}}, "l": vL(vS("")), "m": vM(avmap{"e": vS("")})}
	s.put(tbl, it)
	sameItem(t, s.get(tbl, avmap{"pk": vS("a")}), it)
}

func TestRequestCountLimits(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("counts", "pk:S").create(s)
	other := table("counts2", "pk:S").create(s)
	keys := func(n int, prefix string) []map[string]types.AttributeValue {
		var ks []map[string]types.AttributeValue
		for i := 0; i < n; i++ {
			ks = append(ks, avmap{"pk": vS(fmt.Sprint(prefix, i))})
		}
		return ks
	}
	puts := func(n int, prefix string) []types.WriteRequest {
		var ws []types.WriteRequest
		for _, k := range keys(n, prefix) {
			ws = append(ws, types.WriteRequest{PutRequest: &types.PutRequest{Item: k}})
		}
		return ws
	}

	// BatchWriteItem: 25 requests across the request, not per table.
	if _, err := s.c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: puts(13, "a"), other: puts(12, "a")}}); err != nil {
		t.Fatal(err)
	}
	_, err := s.c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: puts(13, "b"), other: puts(13, "b")}})
	validationErr(t, err, "Too many items requested for the BatchWriteItem call")

	// BatchGetItem: 100 keys across the request.
	out, err := s.c.BatchGetItem(bg, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		tbl: {Keys: keys(50, "a")}, other: {Keys: keys(50, "a")}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.Responses[tbl]) + len(out.Responses[other]); n != 25 {
		t.Fatalf("%d items found, want 25", n)
	}
	_, err = s.c.BatchGetItem(bg, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		tbl: {Keys: keys(51, "a")}, other: {Keys: keys(50, "a")}}})
	validationErr(t, err, "Too many items requested for the BatchGetItem call")

	// TransactWriteItems and TransactGetItems: 100 actions.
	var writes []types.TransactWriteItem
	var gets []types.TransactGetItem
	for _, k := range keys(101, "t") {
		writes = append(writes, types.TransactWriteItem{Put: &types.Put{TableName: &tbl, Item: k}})
		gets = append(gets, types.TransactGetItem{Get: &types.Get{TableName: &tbl, Key: k}})
	}
	if _, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: writes[:100]}); err != nil {
		t.Fatal(err)
	}
	_, err = s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: writes})
	errContains(t, err, "ValidationException", "1 validation error detected: Value '", "' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100")
	got, err := s.c.TransactGetItems(bg, &dynamodb.TransactGetItemsInput{TransactItems: gets[:100]})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Responses) != 100 || got.Responses[99].Item == nil {
		t.Fatalf("TransactGetItems returned %d responses", len(got.Responses))
	}
	_, err = s.c.TransactGetItems(bg, &dynamodb.TransactGetItemsInput{TransactItems: gets})
	errContains(t, err, "ValidationException", "1 validation error detected: Value '", "' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100")
}

// TestBatchGetResponseLimit checks BatchGetItem stops at 16 MB of items and
// returns the rest as UnprocessedKeys.
func TestBatchGetResponseLimit(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("bigbatch", "pk:S").create(s)
	const n = 45 // 45 items of 400 KB: about 17.6 MB
	var ks []map[string]types.AttributeValue
	for i := 0; i < n; i++ {
		k := avmap{"pk": vS(fmt.Sprintf("k%02d", i))}
		s.put(tbl, sized(k, maxItem))
		ks = append(ks, k)
	}
	out, err := s.c.BatchGetItem(bg, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{tbl: {Keys: ks}}})
	if err != nil {
		t.Fatal(err)
	}
	got, rest := len(out.Responses[tbl]), len(out.UnprocessedKeys[tbl].Keys)
	if got+rest != n || rest == 0 || got*maxItem > 16<<20+maxItem {
		t.Fatalf("%d items returned and %d unprocessed, want about 16 MB returned and the rest unprocessed", got, rest)
	}
	// The unprocessed keys are a request that fetches the rest.
	out, err = s.c.BatchGetItem(bg, &dynamodb.BatchGetItemInput{RequestItems: out.UnprocessedKeys})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Responses[tbl]) != rest || len(out.UnprocessedKeys) != 0 {
		t.Fatalf("second call: %d items, unprocessed %v", len(out.Responses[tbl]), out.UnprocessedKeys)
	}
}

func TestLimitAndNameBounds(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	table("bounds", "pk:S").create(s)
	// Query and Scan Limit bounds are covered with the other data-plane
	// constraint messages.
	_, err := s.c.ListTables(bg, &dynamodb.ListTablesInput{Limit: aws.Int32(101)})
	validationErr(t, err, "1 validation error detected: Value '101' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 100")
	if _, err := s.c.ListTables(bg, &dynamodb.ListTablesInput{Limit: aws.Int32(100)}); err != nil {
		t.Fatal(err)
	}

	// Table names: 3 to 255 characters.
	table("abc", "pk:S").create(s)
	table(strings.Repeat("t", 255), "pk:S").create(s)
	create := func(name string) error {
		ts := table(name, "pk:S")
		ts.in.AttributeDefinitions = []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}}
		_, err := s.c.CreateTable(bg, ts.in)
		return err
	}
	validationErr(t, create("ab"), "1 validation error detected: Value 'ab' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3")
	long := strings.Repeat("t", 256)
	validationErr(t, create(long), "1 validation error detected: Value '"+long+"' at 'tableName' failed to satisfy constraint: Member must have length less than or equal to 255")
}

// TestUpdateItemStatementSize checks UpdateItem's second size gate: what
// the statement writes plus a cost per clause must fit in 400 KB as well
// as the finished item, so with a short key the ceiling falls below
// 409,600 bytes. Transactions measure the finished item only.
func TestUpdateItemStatementSize(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("updsize", "pk:S").create(s)
	const updMsg = "Item size to update has exceeded the maximum allowed size"
	itemBytes := func(it avmap) int {
		n := 0
		for k, v := range it {
			n += len(k) + len(v.(*types.AttributeValueMemberS).Value)
		}
		return n
	}
	// update grows the item at key to exactly size bytes with expr, which
	// sets b from :pad; extra holds the other attributes it writes and
	// untouched those the item already has.
	type shape struct {
		expr      string
		names     map[string]string
		values    avmap
		extra     avmap
		untouched avmap
		cost      int // 3 + 19 per SET or ADD (+1 through a list index) + 2 per REMOVE or DELETE
	}
	update := func(key avmap, size int, sh shape) error {
		seed := avmap{}
		for k, v := range key {
			seed[k] = v
		}
		for k, v := range sh.untouched {
			seed[k] = v
		}
		if strings.Contains(sh.expr, "REMOVE r") {
			seed["r"] = vS("z")
		}
		s.put(tbl, seed)
		pad := size - itemBytes(key) - itemBytes(sh.extra) - itemBytes(sh.untouched) - len("b")
		vals := avmap{":pad": vS(strings.Repeat("x", pad))}
		for k, v := range sh.values {
			vals[k] = v
		}
		_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: key, UpdateExpression: aws.String(sh.expr),
			ExpressionAttributeNames: sh.names, ExpressionAttributeValues: vals})
		return err
	}
	// ceiling is the largest finished item the statement may produce.
	ceiling := func(key avmap, sh shape) int {
		return min(maxItem, maxItem+itemBytes(key)+itemBytes(sh.untouched)-sh.cost)
	}
	oneSet := shape{expr: "SET b = :pad", cost: 3 + 19}
	tests := []struct {
		name  string
		key   string
		shape shape
		want  int
	}{
		{"one-byte key: the statement binds", "K", oneSet, maxItem - 19},
		{"100-byte key: the item binds", strings.Repeat("k", 100), oneSet, maxItem},
		{"a second SET costs 19 bytes", "L", shape{expr: "SET b = :pad, c = :c", values: avmap{":c": vS("y")}, extra: avmap{"c": vS("y")},
			cost: 3 + 19*2}, maxItem - 19 - 19},
		{"a REMOVE costs 2 bytes", "M", shape{expr: "SET b = :pad REMOVE r", cost: 3 + 19 + 2}, maxItem - 19 - 2},
		{"an alias changes nothing", "N", shape{expr: "SET #twelvechars = :pad", names: map[string]string{"#twelvechars": "b"}, cost: 3 + 19}, maxItem - 19},
		{"untouched attributes are not charged", "O", shape{expr: "SET b = :pad", untouched: avmap{"u": vS(strings.Repeat("y", 10))}, cost: 3 + 19},
			maxItem - 19 + 11},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := avmap{"pk": vS(tc.key)}
			c := ceiling(key, tc.shape)
			if tc.want != 0 && c != tc.want {
				t.Fatalf("test arithmetic: ceiling %d, want %d", c, tc.want)
			}
			if err := update(key, c, tc.shape); err != nil {
				t.Fatalf("finished item of %d bytes: %v", c, err)
			}
			validationErr(t, update(key, c+1, tc.shape), updMsg)
		})
	}

	// A transacted Update of a one-byte key stores the full 409,600 bytes
	// that UpdateItem refuses.
	key := avmap{"pk": vS("Y")}
	s.put(tbl, key)
	padded := sized(key, maxItem)
	_, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: key, UpdateExpression: aws.String("SET p = :p"),
		ExpressionAttributeValues: avmap{":p": padded["p"]}})
	validationErr(t, err, updMsg)
	if _, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: &tbl, Key: key, UpdateExpression: aws.String("SET p = :p"), ExpressionAttributeValues: avmap{":p": padded["p"]}}}}}); err != nil {
		t.Fatalf("transacted update to 409,600 bytes: %v", err)
	}
	if got := s.get(tbl, key); itemBytes(got) != maxItem {
		t.Fatalf("stored %d bytes, want %d", itemBytes(got), maxItem)
	}
}

// TestExpressionPlaceholderLimits checks the limits on the expression
// maps and on an expression's operators.
func TestExpressionPlaceholderLimits(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("placeholders", "pk:S").create(s)
	s.put(tbl, avmap{"pk": vS("a"), "x": vN("1")})
	key := js{"pk": js{"S": "a"}}
	name255, value255 := "#"+strings.Repeat("a", 254), ":"+strings.Repeat("v", 254)

	// Placeholders of 255 bytes, prefix included, are the longest.
	out, err := s.c.GetItem(bg, &dynamodb.GetItemInput{TableName: &tbl, Key: avmap{"pk": vS("a")}, ProjectionExpression: aws.String(name255),
		ExpressionAttributeNames: map[string]string{name255: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	sameItem(t, out.Item, avmap{"x": vN("1")})
	if _, err := s.c.Scan(bg, &dynamodb.ScanInput{TableName: &tbl, FilterExpression: aws.String("x = " + value255),
		ExpressionAttributeValues: avmap{value255: vN("1")}}); err != nil {
		t.Fatal(err)
	}

	s.rawErr("GetItem", js{"TableName": tbl, "Key": key, "ProjectionExpression": "#a", "ExpressionAttributeNames": js{name255 + "a": "x"}},
		"ValidationException", "ExpressionAttributeNames contains invalid key: The expression attribute map contains a key that is too long; size of key: 256")
	// Length is checked before syntax.
	s.rawErr("GetItem", js{"TableName": tbl, "Key": key, "ProjectionExpression": "#a", "ExpressionAttributeNames": js{name255 + "a-x": "x"}},
		"ValidationException", "ExpressionAttributeNames contains invalid key: The expression attribute map contains a key that is too long; size of key: 258")
	s.rawErr("GetItem", js{"TableName": tbl, "Key": key, "ProjectionExpression": "#a", "ExpressionAttributeNames": js{"#a": ""}},
		"ValidationException", "ExpressionAttributeNames contains invalid value: Empty attribute name for key #a")
	s.rawErr("Scan", js{"TableName": tbl, "FilterExpression": "x = :v", "ExpressionAttributeValues": js{value255 + "v": js{"S": "x"}}},
		"ValidationException", "ExpressionAttributeValues contains invalid key: The expression attribute map contains a key that is too long;")
	s.rawErr("PutItem", js{"TableName": tbl, "Item": key, "ConditionExpression": "#a = :v", "ExpressionAttributeNames": js{"#a": ""}},
		"ValidationException", "1 validation error detected: ExpressionAttributeNames contains invalid value: Empty attribute name for key #a")

	// At most 300 operators, and 100 operands for IN.
	cond := func(c string, vals avmap) error {
		_, err := s.c.Scan(bg, &dynamodb.ScanInput{TableName: &tbl, FilterExpression: aws.String(c), ExpressionAttributeValues: vals})
		return err
	}
	one := avmap{":v": vN("1")}
	if err := cond("x = :v"+strings.Repeat(" OR x = :v", 149), one); err != nil {
		t.Fatalf("300 operators: %v", err)
	}
	validationErr(t, cond("x = :v"+strings.Repeat(" OR x = :v", 150), one),
		"Invalid FilterExpression: The expression contains too many operators; operator count: 301")
	in := func(n int) (string, avmap) {
		var refs []string
		vals := avmap{}
		for i := 0; i < n; i++ {
			refs = append(refs, fmt.Sprint(":v", i))
			vals[fmt.Sprint(":v", i)] = vN(fmt.Sprint(i))
		}
		return "x IN (" + strings.Join(refs, ", ") + ")", vals
	}
	if err := cond(in(100)); err != nil {
		t.Fatalf("IN with 100 operands: %v", err)
	}
	validationErr(t, cond(in(101)), "Invalid FilterExpression: The IN operator is provided with too many operands; number of operands: 101")
}

// TestNumberSizeAtTheItemLimit measures numbers the way DynamoDB does, one
// byte either side of the 400 KB gate: significant digits in base-100
// pairs aligned on the decimal point, one byte more, one for a negative.
func TestNumberSizeAtTheItemLimit(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("numsize", "pk:S").create(s)
	// Sizes recorded against DynamoDB.
	sizes := []struct {
		n    string
		size int
	}{
		{"0", 1}, {"1", 2}, {"12", 2}, {"123", 3}, {"1234", 3}, {"12345678901234567890123456789012345678", 20},
		{"0042", 2}, {"100", 2}, {"1010", 3}, {"0.0000001", 2}, {"1E125", 2}, {"1E-100", 2}, {"1.5", 3}, {"1.2", 3},
		{"1.200", 3}, {"1.234", 4}, {"3.14159", 5}, {"123456", 4}, {"100.5", 4}, {"0.15", 2}, {"-42", 3}, {"-0", 1},
	}
	for i, tc := range sizes {
		pk := fmt.Sprintf("n%02d", i)
		item := func(total int) avmap {
			pad := total - len("pk") - len(pk) - len("n") - tc.size - len("p")
			return avmap{"pk": vS(pk), "n": vN(tc.n), "p": vS(strings.Repeat("x", pad))}
		}
		if _, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: item(maxItem)}); err != nil {
			t.Errorf("%s sized %d bytes: item at the limit refused: %v", tc.n, tc.size, err)
			continue
		}
		_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: item(maxItem + 1)})
		if err == nil {
			t.Errorf("%s sized %d bytes: item one byte over accepted", tc.n, tc.size)
		}
	}
}
