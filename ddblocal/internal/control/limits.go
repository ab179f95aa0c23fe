package control

import (
	"context"

	"lastro/ddblocal/internal/wire"
)

// Account limits reported by DescribeLimits: DynamoDB's defaults for a
// region, which this store enforces per table (maxCapacityUnits in
// schema.go) and does not need to enforce per account.
const (
	accountMaxCapacityUnits = 80000
	tableMaxCapacityUnits   = wire.MaxCapacityUnits
)

// DescribeLimits answers the DescribeLimits operation.
func (s *Store) DescribeLimits(ctx context.Context, body []byte) (any, error) {
	var in struct{}
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	return map[string]any{
		"AccountMaxReadCapacityUnits":  accountMaxCapacityUnits,
		"AccountMaxWriteCapacityUnits": accountMaxCapacityUnits,
		"TableMaxReadCapacityUnits":    tableMaxCapacityUnits,
		"TableMaxWriteCapacityUnits":   tableMaxCapacityUnits,
	}, nil
}
