package ddblocal

import (
	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/expr"
)

// writeCond is a parsed write condition; the zero value always holds.
type writeCond struct{ c *expr.Condition }

func (w writeCond) eval(old av.Item) bool { return w.c == nil || w.c.Eval(old) }

// writeExprs are the parsed expressions of one write.
type writeExprs struct {
	cond writeCond
	upd  updater
}

// parseWriteExprs validates the names and values maps of a write and parses
// its update (UpdateExpression or legacy AttributeUpdates) and condition
// (ConditionExpression, or legacy Expected with ConditionalOperator), in
// DynamoDB's order: maps, update, condition, unused names and values. The
// caller has already run ea.params.
func parseWriteExprs(ea exprArgs, ce *string, expected map[string]*expectedAttr, condOp *string,
	ue *string, updates map[string]*attributeUpdate) (writeExprs, error) {
	var w writeExprs
	a, err := ea.attrs()
	if err != nil {
		return w, err
	}
	switch {
	case ue != nil:
		u, err := expr.ParseUpdate(*ue, a)
		if err != nil {
			return w, exprError(err)
		}
		w.upd = updater{u: u}
	case updates != nil:
		u, err := legacyUpdates(updates)
		if err != nil {
			return w, err
		}
		w.upd = updater{u: u, legacy: true}
	}
	switch {
	case ce != nil:
		if w.cond.c, err = expr.ParseCondition(expr.KindCondition, *ce, a); err != nil {
			return w, exprError(err)
		}
	case expected != nil || condOp != nil:
		if w.cond.c, err = legacyExpected(expected, condOp); err != nil {
			return w, err
		}
	}
	if err := a.CheckUnused(); err != nil {
		return w, exprError(err)
	}
	return w, nil
}

// updater applies an UpdateExpression or legacy AttributeUpdates.
type updater struct {
	u      *expr.Update
	legacy bool // from AttributeUpdates, whose errors read differently
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
	// Index keys are scalars: no path may look inside one.
	for _, p := range append(up.u.Paths(), up.u.ReadPaths()...) {
		if p.Nested() && d.isIndexKey(p.Top()) {
			return validation("Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: IndexKey: %s", p.Top())
		}
	}
	return nil
}

// isIndexKey reports whether name is a key attribute of a secondary index.
func (d *tableDef) isIndexKey(name string) bool {
	for _, ix := range d.Indexes {
		if name == ix.Hash.Name || (ix.Range.Name != "" && name == ix.Range.Name) {
			return true
		}
	}
	return false
}

// apply computes the new item; an update of a missing item starts from
// its key.
func (up updater) apply(d *tableDef, key, old av.Item) (av.Item, error) {
	if up.u == nil {
		if old == nil {
			return key.Clone(), nil
		}
		return old, nil
	}
	var n av.Item
	var err error
	if old == nil {
		n, err = up.u.ApplyMissing(key)
	} else {
		n, err = up.u.Apply(old)
	}
	if err != nil {
		return nil, up.applyError(err)
	}
	if err := checkIndexKeys(d, n, true); err != nil {
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
