package ddblocal

import (
	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/expr"
)

// writeCond is a parsed write condition; the zero value always holds.
type writeCond struct{ c *expr.Condition }

func (w writeCond) eval(old av.Item) bool { return w.c == nil || w.c.Eval(old) }

// parseWriteCondition validates the expression members of a write and
// parses its condition (ConditionExpression, or the legacy Expected with
// ConditionalOperator). more adds the operation's other expression members
// to the presence check; parse parses them with the same attributes.
func parseWriteCondition(p exprParams, ce *string, expected map[string]*expectedAttr, condOp *string, ifNone string,
	more func(*exprArgs), parse ...func(*expr.Attrs) error) (writeCond, error) {
	ea := exprArgs{names: p.ExpressionAttributeNames, values: p.ExpressionAttributeValues, ifNone: ifNone}
	present(&ea.legacy, "Expected", expected != nil)
	present(&ea.legacy, "ConditionalOperator", condOp != nil)
	if more != nil {
		more(&ea)
	}
	present(&ea.present, "ConditionExpression", ce != nil)
	a, err := ea.attrs()
	if err != nil {
		return writeCond{}, err
	}
	for _, f := range parse {
		if err := f(a); err != nil {
			return writeCond{}, err
		}
	}
	var w writeCond
	switch {
	case ce != nil:
		if w.c, err = expr.ParseCondition("ConditionExpression", *ce, a); err != nil {
			return writeCond{}, exprError(err)
		}
	case expected != nil || condOp != nil:
		if w.c, err = legacyExpected(expected, condOp); err != nil {
			return writeCond{}, err
		}
	}
	if err := a.CheckUnused(); err != nil {
		return writeCond{}, exprError(err)
	}
	return w, nil
}

// updater applies an UpdateExpression or legacy AttributeUpdates.
type updater struct{ u *expr.Update }

func parseUpdate(a *expr.Attrs, ue *string, legacy map[string]*attributeUpdate) (updater, error) {
	switch {
	case ue != nil:
		u, err := expr.ParseUpdate(*ue, a)
		if err != nil {
			return updater{}, exprError(err)
		}
		return updater{u}, nil
	case legacy != nil:
		u, err := legacyUpdates(legacy)
		return updater{u}, err
	}
	return updater{}, nil
}

// checkKeys refuses updates of key attributes.
func (up updater) checkKeys(d *tableDef) error {
	if up.u == nil {
		return nil
	}
	for _, p := range up.u.Paths() {
		if d.isTableKey(p.Top()) {
			return validation("One or more parameter values were invalid: Cannot update attribute %s. This attribute is part of the key", p.Top())
		}
	}
	return nil
}

// apply computes the new item; an update of a missing item starts from
// its key.
func (up updater) apply(d *tableDef, key, old av.Item) (av.Item, error) {
	base := old
	if base == nil {
		base = key.Clone()
	}
	if up.u == nil {
		return base, nil
	}
	n, err := up.u.Apply(base)
	if err != nil {
		return nil, exprError(err)
	}
	if err := checkIndexKeys(d, n); err != nil {
		return nil, err
	}
	if av.ItemSize(n) > maxItemBytes {
		return nil, validation("Item size to update has exceeded the maximum allowed size")
	}
	return n, nil
}

// updated projects an image onto the updated paths (UPDATED_OLD/NEW).
func (up updater) updated(it av.Item) av.Item {
	if up.u == nil || it == nil {
		return nil
	}
	return expr.ProjectPaths(it, up.u.Paths())
}
