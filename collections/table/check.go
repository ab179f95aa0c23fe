package table

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Describer is the part of the client CheckLastro needs.
type Describer interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// ErrNotLastro is returned by CheckLastro for a table of another shape:
// a maintenance job that deletes, rewrites or restores items refuses it.
var ErrNotLastro = errors.New("table: not a Lastro table")

// CheckLastro reports whether table name is Lastro's: PK and SK as its
// string key, and the three indexes with the keys CreateInput gives them.
// A job pointed at the wrong table (a typo in LASTRO_TABLE, another
// application's table) stops here before it reads or writes an item.
func CheckLastro(ctx context.Context, db Describer, name string) error {
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		return fmt.Errorf("describe table %s: %w", name, err)
	}
	want := CreateInput(name)
	d := out.Table
	if !sameKeys(d.KeySchema, want.KeySchema) {
		return fmt.Errorf("%w: %s has another key schema", ErrNotLastro, name)
	}
	for _, g := range want.GlobalSecondaryIndexes {
		i := slices.IndexFunc(d.GlobalSecondaryIndexes, func(h types.GlobalSecondaryIndexDescription) bool {
			return aws.ToString(h.IndexName) == aws.ToString(g.IndexName)
		})
		if i < 0 || !sameKeys(d.GlobalSecondaryIndexes[i].KeySchema, g.KeySchema) {
			return fmt.Errorf("%w: %s lacks the index %s", ErrNotLastro, name, aws.ToString(g.IndexName))
		}
	}
	return nil
}

func sameKeys(a, b []types.KeySchemaElement) bool {
	return slices.EqualFunc(a, b, func(x, y types.KeySchemaElement) bool {
		return aws.ToString(x.AttributeName) == aws.ToString(y.AttributeName) && x.KeyType == y.KeyType
	})
}
