package ddblocal_test

// Conformance of parentheses in expressions, through the SDK: a
// KeyConditionExpression tolerates doubled parentheses around each side of
// its top-level AND, which every other use refuses as redundant.

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestKeyConditionParenthesesConformance(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("kc_parens", "pk:S", "sk:S").create(s)
	for _, sk := range []string{"1", "2", "3"} {
		s.put(tbl, avmap{"pk": vS("p"), "sk": vS(sk), "data": vS("d" + sk)})
	}
	const redundant = "Invalid KeyConditionExpression: The expression has redundant parentheses;"
	tests := []struct {
		expr string
		want string // data of the single match, or "" when refused
		err  string
	}{
		{"(#pk = :pk) AND (#sk = :sk)", "d2", ""},
		{"(#pk = :pk AND #sk = :sk)", "d2", ""},
		{"((#pk = :pk)) AND ((#sk = :sk))", "d2", ""},
		{"((#pk = :pk) AND (#sk = :sk))", "d2", ""},
		// Doubled around the whole expression, or below the top level,
		// they are still redundant.
		{"((#pk = :pk))", "", redundant},
		{"((#pk = :pk) AND ((#sk = :sk)))", "", redundant},
		{"((#pk)) = :pk AND #sk = :sk", "", redundant},
	}
	for _, tt := range tests {
		out, err := s.c.Query(bg, &dynamodb.QueryInput{
			TableName:                 aws.String(tbl),
			KeyConditionExpression:    aws.String(tt.expr),
			ExpressionAttributeNames:  map[string]string{"#pk": "pk", "#sk": "sk"},
			ExpressionAttributeValues: keyCondValues(tt.expr),
		})
		if tt.err != "" {
			validationErr(t, err, tt.err)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		if len(out.Items) != 1 {
			t.Fatalf("%s: %d items, want 1", tt.expr, len(out.Items))
		}
		if got, _ := out.Items[0]["data"].(*types.AttributeValueMemberS); got == nil || got.Value != tt.want {
			t.Errorf("%s: data %v, want %s", tt.expr, out.Items[0]["data"], tt.want)
		}
	}

	// A FilterExpression or ConditionExpression doubled the same way is
	// refused.
	_, err := s.c.Query(bg, &dynamodb.QueryInput{
		TableName:                 aws.String(tbl),
		KeyConditionExpression:    aws.String("pk = :pk"),
		FilterExpression:          aws.String("((#d = :d))"),
		ExpressionAttributeNames:  map[string]string{"#d": "data"},
		ExpressionAttributeValues: avmap{":pk": vS("p"), ":d": vS("d1")},
	})
	validationErr(t, err, "Invalid FilterExpression: The expression has redundant parentheses;")
	_, err = s.c.PutItem(bg, &dynamodb.PutItemInput{
		TableName:           aws.String(tbl),
		Item:                avmap{"pk": vS("q"), "sk": vS("1")},
		ConditionExpression: aws.String("((attribute_not_exists(pk))) AND ((attribute_not_exists(sk)))"),
	})
	errContains(t, err, "ValidationException", "Invalid ConditionExpression: The expression has redundant parentheses;")
}

// keyCondValues supplies :sk only when the expression uses it.
func keyCondValues(expr string) avmap {
	v := avmap{":pk": vS("p")}
	if strings.Contains(expr, ":sk") {
		v[":sk"] = vS("2")
	}
	return v
}
