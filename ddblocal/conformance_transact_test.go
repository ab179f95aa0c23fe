package ddblocal_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// reasons returns the cancellation reason codes of a
// TransactionCanceledException, failing the test for any other error.
func reasons(t testing.TB, err error) []types.CancellationReason {
	t.Helper()
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		t.Fatalf("want TransactionCanceledException, got %v", err)
	}
	return tce.CancellationReasons
}

func codes(rs []types.CancellationReason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = aws.ToString(r.Code)
	}
	return out
}

func TestTransactWriteItems(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("txw", "pk:S").create(s)
	other := table("txw2", "pk:S", "sk:N").create(s)
	s.put(tbl, avmap{"pk": vS("exists"), "n": vN("1")})
	s.put(tbl, avmap{"pk": vS("guard"), "n": vN("1")})

	// All or nothing across tables.
	_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS("new1")}}},
		{Put: &types.Put{TableName: &other, Item: avmap{"pk": vS("p"), "sk": vN("1")}, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{ConditionCheck: &types.ConditionCheck{TableName: &tbl, Key: avmap{"pk": vS("guard")}, ConditionExpression: aws.String("n = :one"),
			ExpressionAttributeValues: avmap{":one": vN("1")}}},
		{Update: &types.Update{TableName: &tbl, Key: avmap{"pk": vS("exists")}, UpdateExpression: aws.String("SET m = :v"), ExpressionAttributeValues: avmap{":v": vS("x")}}},
		{Delete: &types.Delete{TableName: &tbl, Key: avmap{"pk": vS("absent")}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if s.get(tbl, avmap{"pk": vS("new1")}) == nil || s.get(other, avmap{"pk": vS("p"), "sk": vN("1")}) == nil {
		t.Fatal("committed transaction not visible")
	}
	sameItem(t, s.get(tbl, avmap{"pk": vS("exists")}), avmap{"pk": vS("exists"), "n": vN("1"), "m": vS("x")})

	// One failed condition cancels every action; reasons follow action order.
	_, err = s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS("new2")}}},
		{ConditionCheck: &types.ConditionCheck{TableName: &tbl, Key: avmap{"pk": vS("exists")}, ConditionExpression: aws.String("attribute_not_exists(pk)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		{Delete: &types.Delete{TableName: &tbl, Key: avmap{"pk": vS("new1")}}},
		{Update: &types.Update{TableName: &tbl, Key: avmap{"pk": vS("nothing")}, UpdateExpression: aws.String("SET a = :a"),
			ConditionExpression: aws.String("attribute_exists(pk)"), ExpressionAttributeValues: avmap{":a": vS("a")}}},
	}})
	apiErr(t, err, "TransactionCanceledException", "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed, None, ConditionalCheckFailed]")
	rs := reasons(t, err)
	sameList(t, "reasons", codes(rs), []string{"None", "ConditionalCheckFailed", "None", "ConditionalCheckFailed"})
	if rs[0].Message != nil || aws.ToString(rs[1].Message) != condFailed || rs[3].Item != nil {
		t.Fatalf("reason details: %+v", rs)
	}
	sameItem(t, rs[1].Item, avmap{"pk": vS("exists"), "n": vN("1"), "m": vS("x")})
	if s.get(tbl, avmap{"pk": vS("new2")}) != nil || s.get(tbl, avmap{"pk": vS("new1")}) == nil {
		t.Fatal("a cancelled transaction applied some of its actions")
	}

	// The raw body: "Message" with a capital M, reasons without messages
	// for None.
	status, body := s.raw("TransactWriteItems", map[string]any{"TransactItems": []any{
		map[string]any{"ConditionCheck": map[string]any{"TableName": tbl, "Key": map[string]any{"pk": map[string]any{"S": "nothing"}},
			"ConditionExpression": "attribute_exists(pk)"}},
	}})
	if status != 400 || body["__type"] != "com.amazonaws.dynamodb.v20120810#TransactionCanceledException" ||
		body["Message"] != "Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed]" {
		t.Fatalf("raw cancellation: %d %v", status, body)
	}

	tests := []struct {
		name  string
		items []types.TransactWriteItem
		code  string
		want  string
	}{
		{"one item twice", []types.TransactWriteItem{
			{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS("dup")}}},
			{ConditionCheck: &types.ConditionCheck{TableName: &tbl, Key: avmap{"pk": vS("dup")}, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		}, "ValidationException", "Transaction request cannot include multiple operations on one item"},
		{"no actions", []types.TransactWriteItem{}, "ValidationException",
			"1 validation error detected: Value '[]' at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{"missing table", []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String("nope"), Item: avmap{"pk": vS("a")}}}},
			"ResourceNotFoundException", "Requested resource not found"},
		{"syntax error on a later action beats a missing table", []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String("nope"), Item: avmap{"pk": vS("a")}}},
			{ConditionCheck: &types.ConditionCheck{TableName: &tbl, Key: avmap{"pk": vS("a")}, ConditionExpression: aws.String("attribute_not_exists(")}},
		}, "ValidationException", `Invalid ConditionExpression: Syntax error; token: "<EOF>", near: "("`},
		{"unused value beats a duplicate target", []types.TransactWriteItem{
			{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS("u")}}},
			{ConditionCheck: &types.ConditionCheck{TableName: &tbl, Key: avmap{"pk": vS("u")}, ConditionExpression: aws.String("attribute_not_exists(pk)"),
				ExpressionAttributeValues: avmap{":v": vS("x")}}},
		}, "ValidationException", "Value provided in ExpressionAttributeValues unused in expressions: keys: {:v}"},
		{"empty key value", []types.TransactWriteItem{{Delete: &types.Delete{TableName: &tbl, Key: avmap{"pk": vS("")}}}}, "ValidationException",
			"One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: pk"},
		{"oversized put", []types.TransactWriteItem{{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS("big"), "b": vS(string(make([]byte, 400*1024)))}}}},
			"ValidationException", "Item size has exceeded the maximum allowed size"},
	}
	for _, tc := range tests {
		_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: tc.items})
		apiErr(t, err, tc.code, tc.want)
	}

	// 100 actions are allowed, 101 are not.
	var hundred []types.TransactWriteItem
	for i := 0; i < 101; i++ {
		hundred = append(hundred, types.TransactWriteItem{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS(fmt.Sprint("h", i))}}})
	}
	_, err = s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: hundred})
	var ae interface{ ErrorMessage() string }
	if !errors.As(err, &ae) || !regexpMatch(`^1 validation error detected: Value '\[.+\]' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100$`, ae.ErrorMessage()) {
		t.Fatalf("101 actions: %v", err)
	}
	if _, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: hundred[:100]}); err != nil {
		t.Fatalf("100 actions: %v", err)
	}
	if s.get(tbl, avmap{"pk": vS("h99")}) == nil {
		t.Fatal("100-action transaction not applied")
	}
}

func TestTransactValidationErrors(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("txv", "pk:S").create(s)
	idx := table("txidx", "pk:S", "sk:S").gsi("gsi1", "g:S", "", types.ProjectionTypeAll).create(s)
	tests := []struct {
		name  string
		items []types.TransactWriteItem
		codes []string
		msg   string
	}{
		{"put with a wrong-typed key", []types.TransactWriteItem{
			{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vN("7")}}},
			{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vN("8")}}},
			{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS("c")}, ConditionExpression: aws.String("attribute_exists(pk)")}},
		}, []string{"ValidationError", "None", "None"}, "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N"},
		{"delete with a wrong-typed key", []types.TransactWriteItem{
			{Delete: &types.Delete{TableName: &tbl, Key: avmap{"pk": vN("5")}}},
		}, []string{"ValidationError"}, "The provided key element does not match the schema"},
		{"put with a wrong-typed index key", []types.TransactWriteItem{
			{Put: &types.Put{TableName: &idx, Item: avmap{"pk": vS("a"), "sk": vS("b"), "g": vN("5")}}},
		}, []string{"ValidationError"}, "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S Actual: N IndexName: gsi1"},
		{"update to a wrong-typed index key", []types.TransactWriteItem{
			{Update: &types.Update{TableName: &idx, Key: avmap{"pk": vS("a"), "sk": vS("b")}, UpdateExpression: aws.String("SET g = :v"),
				ExpressionAttributeValues: avmap{":v": vN("5")}}},
		}, []string{"ValidationError"}, "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S Actual: N IndexName: gsi1"},
		{"update reading a missing attribute", []types.TransactWriteItem{
			{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS("ok")}}},
			{Update: &types.Update{TableName: &tbl, Key: avmap{"pk": vS("x")}, UpdateExpression: aws.String("SET a = b")}},
		}, []string{"None", "ValidationError"}, "The provided expression refers to an attribute that does not exist in the item"},
	}
	for _, tc := range tests {
		_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: tc.items})
		rs := reasons(t, err)
		sameList(t, tc.name, codes(rs), tc.codes)
		for i, r := range rs {
			if tc.codes[i] == "ValidationError" && aws.ToString(r.Message) != tc.msg {
				t.Fatalf("%s: message %q, want %q", tc.name, aws.ToString(r.Message), tc.msg)
			}
		}
	}
	if s.get(tbl, avmap{"pk": vS("ok")}) != nil {
		t.Fatal("a cancelled transaction wrote its Put")
	}
	_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: &tbl, Key: avmap{"pk": vS("a")}, UpdateExpression: aws.String("SET a = :v"),
			ExpressionAttributeValues: avmap{":v": vN("5")}, ReturnValuesOnConditionCheckFailure: "dog"}}}})
	validationErr(t, err, "1 validation error detected: Value 'dog' at 'transactItems.1.member.update.returnValuesOnConditionCheckFailure' failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, NONE]")
	_, err = s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: &idx, Key: avmap{"pk": vS("a"), "sk": vS("c")}, UpdateExpression: aws.String("SET g = :v"),
			ExpressionAttributeValues: avmap{":v": vS("")}}}}})
	validationErr(t, err, "One or more parameter values are not valid. The update expression attempted to update a secondary index key to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty string value.")
}

func TestTransactIdempotency(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("idem", "pk:S").create(s)
	s.put(tbl, avmap{"pk": vS("c"), "n": vN("0")})
	incr := []types.TransactWriteItem{{Update: &types.Update{TableName: &tbl, Key: avmap{"pk": vS("c")},
		UpdateExpression: aws.String("SET n = n + :one"), ExpressionAttributeValues: avmap{":one": vN("1")}}}}
	for i := 0; i < 3; i++ {
		if _, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: incr, ClientRequestToken: aws.String("token-1")}); err != nil {
			t.Fatal(err)
		}
	}
	sameItem(t, s.get(tbl, avmap{"pk": vS("c")}), avmap{"pk": vS("c"), "n": vN("1")})
	if _, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: incr}); err != nil {
		t.Fatal(err)
	}
	sameItem(t, s.get(tbl, avmap{"pk": vS("c")}), avmap{"pk": vS("c"), "n": vN("2")})
	other := []types.TransactWriteItem{{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS("d")}}}}
	_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: other, ClientRequestToken: aws.String("token-1")})
	apiErr(t, err, "IdempotentParameterMismatchException", "")
	_, err = s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: other, ClientRequestToken: aws.String(string(make([]byte, 37)))})
	validationErr(t, err, "1 validation error detected: Value at 'ClientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36")
}

// TestTransactConcurrentTransfers runs many concurrent transfers between a
// few accounts: conflicting transactions are cancelled with
// TransactionConflict, none is ever half applied, and every snapshot read
// sees the total preserved.
func TestTransactConcurrentTransfers(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("bank", "pk:S").create(s)
	const accounts, start, workers, each = 4, 1000, 8, 40
	var keys []types.TransactGetItem
	for i := 0; i < accounts; i++ {
		s.put(tbl, avmap{"pk": vS(fmt.Sprint("acct", i)), "bal": vN(strconv.Itoa(start))})
		keys = append(keys, types.TransactGetItem{Get: &types.Get{TableName: &tbl, Key: avmap{"pk": vS(fmt.Sprint("acct", i))}}})
	}
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; i < each; i++ {
				from, to := r.IntN(accounts), r.IntN(accounts-1)
				if to >= from {
					to++
				}
				amt := vN(strconv.Itoa(1 + r.IntN(50)))
				_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Update: &types.Update{TableName: &tbl, Key: avmap{"pk": vS(fmt.Sprint("acct", from))}, UpdateExpression: aws.String("SET bal = bal - :a"),
						ConditionExpression: aws.String("bal >= :a"), ExpressionAttributeValues: avmap{":a": amt}}},
					{Update: &types.Update{TableName: &tbl, Key: avmap{"pk": vS(fmt.Sprint("acct", to))}, UpdateExpression: aws.String("SET bal = bal + :a"),
						ExpressionAttributeValues: avmap{":a": amt}}},
				}})
				outcome := "ok"
				if err != nil {
					var tce *types.TransactionCanceledException
					if !errors.As(err, &tce) {
						t.Errorf("transfer: %v", err)
						return
					}
					outcome = fmt.Sprint(codes(tce.CancellationReasons))
				}
				mu.Lock()
				counts[outcome]++
				mu.Unlock()
				if i%5 == 0 {
					out, err := s.c.TransactGetItems(bg, &dynamodb.TransactGetItemsInput{TransactItems: keys})
					if err != nil {
						t.Errorf("snapshot read: %v", err)
						return
					}
					if sum := balances(t, out.Responses); sum != accounts*start {
						t.Errorf("snapshot read saw a total of %d", sum)
					}
				}
			}
		}(w)
	}
	wg.Wait()
	for outcome := range counts {
		switch outcome {
		case "ok", "[TransactionConflict None]", "[None TransactionConflict]", "[ConditionalCheckFailed None]":
		default:
			t.Fatalf("unexpected outcome %s", outcome)
		}
	}
	if counts["ok"] == 0 {
		t.Fatalf("no transfer succeeded: %v", counts)
	}
	t.Logf("outcomes: %v", counts)
	out, err := s.c.TransactGetItems(bg, &dynamodb.TransactGetItemsInput{TransactItems: keys})
	if err != nil {
		t.Fatal(err)
	}
	if sum := balances(t, out.Responses); sum != accounts*start {
		t.Fatalf("final total %d, want %d", sum, accounts*start)
	}
}

func balances(t testing.TB, rs []types.ItemResponse) int {
	t.Helper()
	sum := 0
	for _, r := range rs {
		n, err := strconv.Atoi(r.Item["bal"].(*types.AttributeValueMemberN).Value)
		if err != nil || n < 0 {
			t.Errorf("balance %v", r.Item["bal"])
		}
		sum += n
	}
	return sum
}

func TestTransactGetItems(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("tget", "pk:S").create(s)
	s.put(tbl, avmap{"pk": vS("a"), "x": vN("1"), "y": vN("2")})
	out, err := s.c.TransactGetItems(bg, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
		{Get: &types.Get{TableName: &tbl, Key: avmap{"pk": vS("missing")}}},
		{Get: &types.Get{TableName: &tbl, Key: avmap{"pk": vS("a")}, ProjectionExpression: aws.String("#x"), ExpressionAttributeNames: map[string]string{"#x": "x"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Responses) != 2 || out.Responses[0].Item != nil {
		t.Fatalf("responses %v", out.Responses)
	}
	sameItem(t, out.Responses[1].Item, avmap{"x": vN("1")})
	tests := []struct {
		items []types.TransactGetItem
		code  string
		want  string
	}{
		{[]types.TransactGetItem{{Get: &types.Get{TableName: &tbl, Key: avmap{"pk": vS("a")}}}, {Get: &types.Get{TableName: &tbl, Key: avmap{"pk": vS("a")}}}},
			"ValidationException", "Transaction request cannot include multiple operations on one item"},
		{[]types.TransactGetItem{{Get: &types.Get{TableName: &tbl, Key: avmap{"pk": vS("a")}, ProjectionExpression: aws.String("#x, #q"),
			ExpressionAttributeNames: map[string]string{"#x": "x"}}}}, "ValidationException",
			"Invalid ProjectionExpression: An expression attribute name used in the document path is not defined; attribute name: #q"},
		{[]types.TransactGetItem{{Get: &types.Get{TableName: aws.String("nope"), Key: avmap{"pk": vS("a")}}}}, "ResourceNotFoundException", "Requested resource not found"},
		{[]types.TransactGetItem{{Get: &types.Get{TableName: &tbl, Key: avmap{"pk": vS("a")}, ProjectionExpression: aws.String("!!!")}}}, "ValidationException",
			`Invalid ProjectionExpression: Syntax error; token: "!", near: "!!"`},
	}
	for _, tc := range tests {
		_, err := s.c.TransactGetItems(bg, &dynamodb.TransactGetItemsInput{TransactItems: tc.items})
		apiErr(t, err, tc.code, tc.want)
	}
	// A key that does not match the schema cancels the transaction.
	_, err = s.c.TransactGetItems(bg, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
		{Get: &types.Get{TableName: &tbl, Key: avmap{"pk": vS("a")}}},
		{Get: &types.Get{TableName: &tbl, Key: avmap{}}},
	}})
	apiErr(t, err, "TransactionCanceledException", "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ValidationError]")
	rs := reasons(t, err)
	if aws.ToString(rs[1].Message) != "The provided key element does not match the schema" {
		t.Fatalf("reason %q", aws.ToString(rs[1].Message))
	}
}
