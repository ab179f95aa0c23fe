package ddblocal

import (
	"fmt"
	"strings"

	"lastro/ddblocal/internal/expr"
)

// The legacy request shapes (AttributesToGet, Expected, AttributeUpdates,
// KeyConditions, QueryFilter, ScanFilter) are translated into expressions
// over generated names and values, so one parser and evaluator serve both.

func legacyProjection(names []string) (*expr.Projection, error) {
	if len(names) == 0 {
		return nil, validation("1 validation error detected: Value '[]' at 'attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	seen := map[string]bool{}
	m := map[string]string{}
	parts := make([]string, len(names))
	for i, n := range names {
		if seen[n] {
			return nil, validation("One or more parameter values were invalid: Duplicate value in attribute name: %s", n)
		}
		seen[n] = true
		k := fmt.Sprintf("#l%d", i)
		m[k] = n
		parts[i] = k
	}
	p, err := expr.ParseProjection(strings.Join(parts, ", "), expr.NewAttrs(m, nil))
	if err != nil {
		return nil, exprError(err)
	}
	return p, nil
}

func legacyExpected(expected map[string]*expectedAttr, condOp *string) (*expr.Condition, error) {
	return nil, validation("Expected is not supported yet")
}

func legacyUpdates(u map[string]*attributeUpdate) (*expr.Update, error) {
	return nil, validation("AttributeUpdates is not supported yet")
}

func legacyKeyConditions(kc map[string]*condition, schema expr.KeySchema) (*expr.KeyCondition, error) {
	return nil, validation("KeyConditions is not supported yet")
}

func legacyFilterCond(f map[string]*condition, condOp *string) (*expr.Condition, error) {
	return nil, validation("QueryFilter and ScanFilter are not supported yet")
}
