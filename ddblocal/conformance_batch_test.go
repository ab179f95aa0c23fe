package ddblocal_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestBatchGetItem(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	a := table("tbl-a", "pk:S").create(s)
	b := table("tbl-b", "pk:S", "sk:N").create(s)
	for i := 0; i < 5; i++ {
		s.put(a, avmap{"pk": vS(fmt.Sprint(i)), "x": vS("x"), "y": vS("y")})
		s.put(b, avmap{"pk": vS("p"), "sk": vN(fmt.Sprint(i)), "x": vS("x")})
	}
	out, err := s.c.BatchGetItem(bg, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		a: {Keys: []avmap{{"pk": vS("1")}, {"pk": vS("3")}, {"pk": vS("missing")}}, ProjectionExpression: aws.String("pk, #y"),
			ExpressionAttributeNames: map[string]string{"#y": "y"}},
		b: {Keys: []avmap{{"pk": vS("p"), "sk": vN("4")}}, ConsistentRead: aws.Bool(true)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := attrsOf(out.Responses[a], "pk")
	sort.Strings(got)
	sameList(t, "table a", got, []string{"S:1", "S:3"})
	for _, it := range out.Responses[a] {
		if len(it) != 2 || it["y"] == nil {
			t.Fatalf("projection not applied: %s", itemString(it))
		}
	}
	sameItem(t, out.Responses[b][0], avmap{"pk": vS("p"), "sk": vN("4"), "x": vS("x")})
	if out.UnprocessedKeys == nil || len(out.UnprocessedKeys) != 0 {
		t.Fatalf("UnprocessedKeys = %v, want an empty map", out.UnprocessedKeys)
	}
	_, body := s.raw("BatchGetItem", map[string]any{"RequestItems": map[string]any{a: map[string]any{"Keys": []any{map[string]any{"pk": map[string]any{"S": "1"}}}}}})
	if uk, ok := body["UnprocessedKeys"].(map[string]any); !ok || len(uk) != 0 {
		t.Fatalf("raw UnprocessedKeys = %#v, want {}", body["UnprocessedKeys"])
	}

	// 100 keys is the limit.
	var keys []avmap
	for i := 0; i < 100; i++ {
		keys = append(keys, avmap{"pk": vS(fmt.Sprint(i))})
	}
	if _, err := s.c.BatchGetItem(bg, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{a: {Keys: keys}}}); err != nil {
		t.Fatalf("100 keys: %v", err)
	}
	tests := []struct {
		name string
		req  map[string]types.KeysAndAttributes
		code string
		want string
	}{
		{"101 keys", map[string]types.KeysAndAttributes{a: {Keys: append(keys, avmap{"pk": vS("x")})}}, "ValidationException",
			"1 validation error detected: Value at 'RequestItems." + a + ".member.Keys' failed to satisfy constraint: Member must have length less than or equal to 100"},
		{"101 keys over two tables", map[string]types.KeysAndAttributes{a: {Keys: keys[:60]}, b: {Keys: func() []avmap {
			var ks []avmap
			for i := 0; i < 41; i++ {
				ks = append(ks, avmap{"pk": vS("p"), "sk": vN(fmt.Sprint(i))})
			}
			return ks
		}()}}, "ValidationException", "Too many items requested for the BatchGetItem call"},
		{"duplicate keys", map[string]types.KeysAndAttributes{a: {Keys: []avmap{{"pk": vS("1")}, {"pk": vS("1")}}}}, "ValidationException",
			"Provided list of item keys contains duplicates"},
		{"empty", map[string]types.KeysAndAttributes{}, "ValidationException", "The requestItems parameter is required for BatchGetItem"},
		{"missing table", map[string]types.KeysAndAttributes{"nope": {Keys: []avmap{{"pk": vS("1")}}}}, "ResourceNotFoundException", "Requested resource not found"},
		{"key mismatch", map[string]types.KeysAndAttributes{b: {Keys: []avmap{{"pk": vS("p")}}}}, "ValidationException", "The provided key element does not match the schema"},
		{"mixed projections", map[string]types.KeysAndAttributes{a: {Keys: []avmap{{"pk": vS("1")}}, ProjectionExpression: aws.String("pk"), AttributesToGet: []string{"pk"}}}, "ValidationException",
			"Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}"},
	}
	for _, tc := range tests {
		_, err := s.c.BatchGetItem(bg, &dynamodb.BatchGetItemInput{RequestItems: tc.req})
		apiErr(t, err, tc.code, tc.want)
	}
}

func TestBatchWriteItem(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("bwrite", "pk:S").create(s)
	other := table("bw2", "pk:S", "sk:S").create(s)
	s.put(tbl, avmap{"pk": vS("old")})
	puts := func(n int, prefix string) []types.WriteRequest {
		var w []types.WriteRequest
		for i := 0; i < n; i++ {
			w = append(w, types.WriteRequest{PutRequest: &types.PutRequest{Item: avmap{"pk": vS(fmt.Sprintf("%s%d", prefix, i))}}})
		}
		return w
	}
	reqs := append(puts(24, "n"), types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: avmap{"pk": vS("old")}}})
	out, err := s.c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: reqs}})
	if err != nil {
		t.Fatal(err)
	}
	if out.UnprocessedItems == nil || len(out.UnprocessedItems) != 0 {
		t.Fatalf("UnprocessedItems = %v, want an empty map", out.UnprocessedItems)
	}
	if s.get(tbl, avmap{"pk": vS("old")}) != nil || s.get(tbl, avmap{"pk": vS("n23")}) == nil {
		t.Fatal("batch did not put and delete")
	}

	tests := []struct {
		name string
		req  map[string][]types.WriteRequest
		code string
		want string
	}{
		{"26 writes", map[string][]types.WriteRequest{tbl: puts(26, "x")}, "ValidationException",
			"1 validation error detected: Value '{" + tbl + "=[" + javaPuts(26, "x") + "]}' at 'requestItems' failed to satisfy constraint: " +
				"Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]"},
		{"26 writes over two tables", map[string][]types.WriteRequest{tbl: puts(13, "x"), other: func() []types.WriteRequest {
			var w []types.WriteRequest
			for i := 0; i < 13; i++ {
				w = append(w, types.WriteRequest{PutRequest: &types.PutRequest{Item: avmap{"pk": vS("p"), "sk": vS(fmt.Sprint(i))}}})
			}
			return w
		}()}, "ValidationException", "Too many items requested for the BatchWriteItem call"},
		{"put and delete of one key", map[string][]types.WriteRequest{tbl: {
			{PutRequest: &types.PutRequest{Item: avmap{"pk": vS("dup")}}},
			{DeleteRequest: &types.DeleteRequest{Key: avmap{"pk": vS("dup")}}}}}, "ValidationException", "Provided list of item keys contains duplicates"},
		{"two puts of one key", map[string][]types.WriteRequest{tbl: {
			{PutRequest: &types.PutRequest{Item: avmap{"pk": vS("dup"), "a": vS("1")}}},
			{PutRequest: &types.PutRequest{Item: avmap{"pk": vS("dup"), "a": vS("2")}}}}}, "ValidationException", "Provided list of item keys contains duplicates"},
		{"one bad put among good ones", map[string][]types.WriteRequest{tbl: append(puts(3, "valid"),
			types.WriteRequest{PutRequest: &types.PutRequest{Item: avmap{"pk": vN("1")}}})}, "ValidationException", "The provided key element does not match the schema"},
		{"empty-string key", map[string][]types.WriteRequest{tbl: append(puts(3, "valid"),
			types.WriteRequest{PutRequest: &types.PutRequest{Item: avmap{"pk": vS("")}}})}, "ValidationException",
			"One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: pk"},
		{"missing table among good ones", map[string][]types.WriteRequest{tbl: puts(3, "valid"), "nope": puts(1, "z")}, "ResourceNotFoundException", "Requested resource not found"},
		{"empty", map[string][]types.WriteRequest{}, "ValidationException", "The requestItems parameter is required for BatchWriteItem"},
	}
	for _, tc := range tests {
		_, err := s.c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: tc.req})
		apiErr(t, err, tc.code, tc.want)
	}
	// Every request is validated before any is written.
	for _, k := range []string{"valid0", "x0", "dup"} {
		if got := s.get(tbl, avmap{"pk": vS(k)}); got != nil {
			t.Fatalf("a rejected batch wrote %s", itemString(got))
		}
	}
	_, err = s.c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: puts(1, "e")},
		ReturnConsumedCapacity: "BOGUS"})
	validationErr(t, err, "1 validation error detected: Value 'BOGUS' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]")
}

// javaS is the Java rendering of an S attribute value in DynamoDB's
// constraint messages.
func javaS(v string) string {
	return "AttributeValue(s=" + v + ", n=null, b=null, iNT=null, dECIMAL=null, dOUBLE=null, sS=null, nS=null, bS=null, " +
		"iNTSET=null, dECIMALSET=null, dOUBLESET=null, m=null, l=null, nULL=null, bOOL=null)"
}

// javaPuts renders n PutRequests of items {pk: S prefix<i>} the way
// DynamoDB echoes a BatchWriteItem's request list.
func javaPuts(n int, prefix string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = "WriteRequest(putRequest=PutRequest(item={pk=" + javaS(fmt.Sprintf("%s%d", prefix, i)) + "}, workloadProfileName=null), deleteRequest=null)"
	}
	return strings.Join(parts, ", ")
}

// TestBatchWriteItemListLength checks a table's request list of more than
// 25 or of no requests is refused with the whole RequestItems map echoed
// in its Java form, every attribute value type included.
func TestBatchWriteItemListLength(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	const constraint = "' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: " +
		"[Member must have length less than or equal to 25, Member must have length greater than or equal to 1]"
	reqs := []js{{"DeleteRequest": js{"Key": js{"pk": js{"N": "1.50"}}}},
		{"PutRequest": js{"Item": js{"pk": js{"S": "a"}, "z": js{"B": "AAE="}, "y": js{"SS": []string{"a", "b"}}, "x": js{"NS": []string{"1"}},
			"w": js{"BS": []string{"AA=="}}, "v": js{"M": js{"k": js{"BOOL": true}}}, "u": js{"L": []js{{"NULL": true}}}}}}}
	for i := 0; i < 24; i++ {
		reqs = append(reqs, js{"PutRequest": js{"Item": js{"pk": js{"S": fmt.Sprint("p", i)}}}})
	}
	with := func(member, v string) string {
		return strings.Replace(javaS("null"), ", "+member+"=null", ", "+member+"="+v, 1)
	}
	want := "1 validation error detected: Value '{aaa=[], bbb=[" +
		"WriteRequest(putRequest=null, deleteRequest=DeleteRequest(key={pk=" + with("n", "1.50") + "}, workloadProfileName=null)), " +
		"WriteRequest(putRequest=PutRequest(item={pk=" + javaS("a") +
		", u=" + with("l", "["+with("nULL", "true")+"]") +
		", v=" + with("m", "{k="+with("bOOL", "true")+"}") +
		", w=" + with("bS", "[java.nio.HeapByteBuffer[pos=0 lim=1 cap=1]]") +
		", x=" + with("nS", "[1]") +
		", y=" + with("sS", "[a, b]") +
		", z=" + with("b", "java.nio.HeapByteBuffer[pos=0 lim=2 cap=2]") +
		"}, workloadProfileName=null), deleteRequest=null), " +
		javaPuts(24, "p") + "]}" + constraint
	// The table holding no request is reported the same way; the other
	// table's 26 requests are echoed with it.
	s.rawErr("BatchWriteItem", js{"RequestItems": js{"bbb": reqs, "aaa": []js{}}}, "ValidationException", want)
	s.rawErr("BatchWriteItem", js{"RequestItems": js{"aaa": []js{}}}, "ValidationException", "1 validation error detected: Value '{aaa=[]}"+constraint)
}
