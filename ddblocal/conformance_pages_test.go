package ddblocal_test

// Conformance details the public DynamoDB suites check on reads and
// transactions, through the SDK and raw JSON: an empty page still carries
// "Items", and a transaction's items may add up to 4 MB at most.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// An empty Query or Scan page has "Items": [] (SDKs read a missing member
// as no list at all); with Select COUNT there is no Items member.
func TestEmptyPageHasItems(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("empty_pages", "pk:S", "sk:S").lsi("lsi", "l:S", types.ProjectionTypeAll).create(s)
	s.put(tbl, avmap{"pk": vS("p"), "sk": vS("1"), "l": vS("x")})
	query := map[string]any{"TableName": tbl, "KeyConditionExpression": "pk = :p",
		"ExpressionAttributeValues": map[string]any{":p": map[string]any{"S": "nobody"}}}
	queryLSI := map[string]any{"TableName": tbl, "IndexName": "lsi", "KeyConditionExpression": "pk = :p",
		"ExpressionAttributeValues": map[string]any{":p": map[string]any{"S": "nobody"}}}
	filtered := map[string]any{"TableName": tbl, "FilterExpression": "sk = :s",
		"ExpressionAttributeValues": map[string]any{":s": map[string]any{"S": "none"}}}
	count := map[string]any{"TableName": tbl, "Select": "COUNT", "FilterExpression": "sk = :s",
		"ExpressionAttributeValues": map[string]any{":s": map[string]any{"S": "none"}}}
	tests := []struct {
		name, op  string
		body      map[string]any
		wantItems bool
	}{
		{"query", "Query", query, true},
		{"query on an LSI", "Query", queryLSI, true},
		{"scan filtering everything out", "Scan", filtered, true},
		{"scan COUNT", "Scan", count, false},
	}
	for _, tt := range tests {
		status, out := s.raw(tt.op, tt.body)
		if status != 200 {
			t.Fatalf("%s: status %d %v", tt.name, status, out)
		}
		items, ok := out["Items"]
		if ok != tt.wantItems {
			t.Errorf("%s: Items present %v, want %v (%v)", tt.name, ok, tt.wantItems, out)
			continue
		}
		if l, isList := items.([]any); ok && (!isList || len(l) != 0) {
			t.Errorf("%s: Items %v, want []", tt.name, items)
		}
		if out["Count"] != float64(0) {
			t.Errorf("%s: Count %v, want 0", tt.name, out["Count"])
		}
	}
	out, err := s.c.Query(bg, &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p"),
		ExpressionAttributeValues: avmap{":p": vS("nobody")}})
	if err != nil || out.Items == nil || len(out.Items) != 0 {
		t.Fatalf("SDK Query: items %v (nil %v), %v", out.Items, out == nil || out.Items == nil, err)
	}
}

// The items a TransactWriteItems puts may add up to 4 MB: ten of 350 KB
// are written, twelve are refused as a whole before anything is applied.
func TestTransactWriteAggregateSizeLimit(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("tx_4mb", "pk:S").create(s)
	pad := strings.Repeat("x", 350_000)
	puts := func(n int, prefix string) []types.TransactWriteItem {
		items := make([]types.TransactWriteItem, n)
		for i := range items {
			items[i] = types.TransactWriteItem{Put: &types.Put{TableName: aws.String(tbl),
				Item: avmap{"pk": vS(fmt.Sprintf("%s-%d", prefix, i)), "pad": vS(pad)}}}
		}
		return items
	}
	if _, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: puts(10, "ok")}); err != nil {
		t.Fatalf("10 × 350 KB: %v", err)
	}
	_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: puts(12, "big")})
	validationErr(t, err, "Transaction request cannot be larger than 4 MB")
	if it := s.get(tbl, avmap{"pk": vS("big-0")}); it != nil {
		t.Fatal("a refused transaction wrote an item")
	}
	if it := s.get(tbl, avmap{"pk": vS("ok-9")}); it == nil {
		t.Fatal("the accepted transaction's last item is missing")
	}
}
