package ops

import (
	"context"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
)

// debtorPages walks tenantID's debtors through GSI3 (keyed, eventually
// consistent: the jobs that call it are idempotent) from cursor, limit
// profiles a page (0: DynamoDB's 1 MB). It calls fn for each debtor key
// and then, when not nil, next with the page's cursor ("" after the
// last page), where a resumable job saves its checkpoint. A cursor past
// its validity starts the walk again from the beginning.
func debtorPages(ctx context.Context, db *kit.Tenant, tenantID string, limit int32, cursor string, fn func(dk string) error, next func(cursor string) error) error {
	q := kit.Query{Index: table.TenantDebtors, Partition: keys.Profiles(tenantID), Limit: limit}
	for {
		page, err := db.QueryPage(ctx, q, cursor)
		if errs.Is(err, errs.Invalid) && cursor != "" {
			cursor = ""
			continue
		}
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			if err := ctx.Err(); err != nil {
				return err
			}
			if dk, ok := debtorKeyOf(it); ok {
				if err := fn(dk); err != nil {
					return err
				}
			}
		}
		if next != nil {
			if err := next(page.Next); err != nil {
				return err
			}
		}
		if page.Next == "" {
			return nil
		}
		cursor = page.Next
	}
}
