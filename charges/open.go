package charges

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/keys"
	"lastro/collections/kit"
)

// Payable is what a message may tell the debtor about a charge still open
// for an instalment: its Pix copia-e-cola and its PSP location (the
// payment link), either empty when the charge has none.
type Payable struct {
	ChargeID      string
	PixCopiaECola string
	PaymentLink   string
}

// OpenFor is the newest charge of the contract's instalment seq that is
// neither cancelled nor expired at now (nil when none), read through db,
// the caller's kit for tenantID: one strongly consistent Query on the
// contract's charges. The régua's messages use it for {{pixCopiaECola}}
// and {{paymentLink}} (ADR 0067).
func OpenFor(ctx context.Context, db *kit.Tenant, tenantID, dk, contractID string, seq int, now time.Time) (*Payable, error) {
	q := kit.Query{Partition: keys.Debtor(tenantID, dk), Sort: kit.BeginsWith(keys.ContractCharge(contractID, "")), Consistent: true}
	var best *chargeItem
	for cursor := ""; ; {
		page, err := db.QueryPage(ctx, q, cursor)
		if err != nil {
			return nil, fmt.Errorf("charges: list the contract's charges: %w", err)
		}
		for _, it := range page.Items {
			var item chargeItem
			if err := attributevalue.UnmarshalMap(it, &item); err != nil {
				return nil, fmt.Errorf("charges: decode charge: %w", err)
			}
			exp, err := time.Parse(time.RFC3339Nano, item.ExpiresAt)
			if item.Seq != seq || item.Status != "" || err != nil || !exp.After(now) {
				continue
			}
			if best == nil || item.CreatedAt > best.CreatedAt {
				best = &item
			}
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if best == nil {
		return nil, nil
	}
	return &Payable{ChargeID: best.ChargeID, PixCopiaECola: best.PixCopiaECola, PaymentLink: best.Location}, nil
}
