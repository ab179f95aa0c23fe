package wire

import (
	"fmt"
)

// ValidationLayer names one of the two request-validation layers DynamoDB
// answers PutItem, UpdateItem and DeleteItem with while it rolls the newer
// one out region by region (ADR 0060). They refuse the same requests; they
// word the refusals differently.
type ValidationLayer uint8

const (
	// ValidationCurrent is the newer layer, the one every region captured
	// since October 2026 answers with: request-validation errors inside
	// the "1 validation error detected: " envelope, duplicate set members
	// quoted in byte order, an unknown UpdateItem ReturnValues reported
	// alone. The default.
	ValidationCurrent ValidationLayer = iota
	// ValidationOlder is the layer regions answered with until mid-2026,
	// and that the April 2026 revision of the public conformance suite
	// pins: request-validation errors bare, values worded as the older
	// operations (BatchWriteItem, Scan) still word them, an unknown
	// UpdateItem ReturnValues listed beside the other member constraints.
	ValidationOlder
)

// ParseValidationLayer reads "current" or "older".
func ParseValidationLayer(s string) (ValidationLayer, error) {
	switch s {
	case "current":
		return ValidationCurrent, nil
	case "older":
		return ValidationOlder, nil
	}
	return 0, fmt.Errorf("validation layer %q: want current or older", s)
}
