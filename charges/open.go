package charges

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/kit"
)

// ItemType is the type of a charge's item in the debtor's collection,
// under its contract (keys.ContractCharge).
const ItemType = "CHARGE"

// Payable is what a message may tell the debtor about a charge still open
// for an instalment: its Pix copia-e-cola and its PSP location (the
// payment link), either empty when the charge has none.
type Payable struct {
	ChargeID      string
	PixCopiaECola string
	PaymentLink   string
}

// OpenAmong is the newest charge of the contract's instalment seq that
// is neither cancelled nor expired at now (nil when none), among items
// already read: the contract's charge items as contract.LoadAlso(…,
// ItemType) keeps them, from the contract's own strongly consistent
// Query, so the agenda's message needs no Query of its own. Items of
// another type are ignored. The régua's messages use it for
// {{pixCopiaECola}} and {{paymentLink}} (ADR 0067).
func OpenAmong(items []kit.Item, seq int, now time.Time) (*Payable, error) {
	var best *chargeItem
	for _, it := range items {
		if s, ok := it["type"].(*types.AttributeValueMemberS); !ok || s.Value != ItemType {
			continue
		}
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
	if best == nil {
		return nil, nil
	}
	return &Payable{ChargeID: best.ChargeID, PixCopiaECola: best.PixCopiaECola, PaymentLink: best.Location}, nil
}
