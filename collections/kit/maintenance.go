package kit

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ScanSpec narrows a MaintenanceScanPages: one segment of a parallel
// scan, resumed after a key, optionally filtered on the item's type.
type ScanSpec struct {
	Segment, Total int32
	// After resumes the segment after this key (a checkpoint's cursor);
	// nil starts at its beginning.
	After *Key
	// Type keeps only items whose `type` attribute equals it. A filter:
	// the items it drops are read (and paid for) all the same.
	Type string
	// Limit caps the items a page evaluates (0: DynamoDB's 1 MB), so a
	// job checkpoints at least that often.
	Limit int32
}

// MaintenanceScanPages reads one segment of the whole table page by page
// for a named maintenance job, as MaintenanceScan does, and tells fn
// where each page stopped: next is the key to resume after, nil on the
// segment's last page. A job that saves next once it has handled the
// page's items resumes there after an interruption.
func (k *Kit) MaintenanceScanPages(ctx context.Context, job string, s ScanSpec, fn func(items []Item, next *Key) error) error {
	ctx, _ = Operation(ctx, "maintenance."+job)
	in := &dynamodb.ScanInput{
		TableName: &k.table, Segment: aws.Int32(s.Segment), TotalSegments: aws.Int32(s.Total),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	}
	if s.Limit > 0 {
		in.Limit = aws.Int32(s.Limit)
	}
	if s.Type != "" {
		e, err := expression.NewBuilder().WithFilter(expression.Name("type").Equal(expression.Value(s.Type))).Build()
		if err != nil {
			return err
		}
		in.FilterExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.Filter(), e.Names(), e.Values()
	}
	if s.After != nil {
		in.ExclusiveStartKey = s.After.av()
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		out, err := k.api.Scan(ctx, in)
		if err != nil {
			return classify("Scan", err)
		}
		k.record(ctx, "Scan", out.ConsumedCapacity)
		var next *Key
		if len(out.LastEvaluatedKey) > 0 {
			pk, _ := out.LastEvaluatedKey["PK"].(*types.AttributeValueMemberS)
			sk, _ := out.LastEvaluatedKey["SK"].(*types.AttributeValueMemberS)
			if pk == nil || sk == nil {
				return errors.New("kit: Scan: last evaluated key is not the table's string PK and SK")
			}
			next = &Key{PK: pk.Value, SK: sk.Value}
		}
		if err := fn(out.Items, next); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		in.ExclusiveStartKey = next.av()
	}
}
