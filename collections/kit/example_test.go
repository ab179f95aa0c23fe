package kit_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/ddblocal"
)

// Example: a kit scoped to one tenant writes only under that tenant's
// keys (the local twin of IAM's dynamodb:LeadingKeys), and a conditioned
// write that loses is ErrConditionFailed.
func Example() {
	ctx := context.Background()
	st, err := ddblocal.Open(ddblocal.Options{}) // in memory
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	db := kit.NewEmbeddedClient(kit.InProcessEndpoint, kit.InProcess(st.Handler()))
	if _, err := table.Ensure(ctx, db, "lastro"); err != nil {
		fmt.Println(err)
		return
	}
	t := kit.New(db, "lastro").Tenant("t-demo", nil)

	item := kit.Item{"PK": s(keys.Tenant("t-demo")), "SK": s("NOTE#1"), "type": s("NOTE")}
	isNew := expression.AttributeNotExists(expression.Name("PK"))
	fmt.Println("first put:", t.Put(ctx, item, &isNew))
	fmt.Println("second put lost its condition:", errors.Is(t.Put(ctx, item, &isNew), kit.ErrConditionFailed))

	other := kit.Item{"PK": s(keys.Tenant("t-other")), "SK": s("NOTE#1"), "type": s("NOTE")}
	fmt.Println("another tenant's key refused:", errors.Is(t.Put(ctx, other, nil), kit.ErrOutsideTenant))
	// Output:
	// first put: <nil>
	// second put lost its condition: true
	// another tenant's key refused: true
}
