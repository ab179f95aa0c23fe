package engine

import (
	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/expr"
	"lastro/ddblocal/internal/wire"
)

// WriteCond is a parsed write condition; the zero value always holds.
// WriteCond is a write's parsed condition; the zero value always holds.
type WriteCond struct{ c *expr.Condition }

// NewWriteCond returns the condition c (nil: none).
func NewWriteCond(c *expr.Condition) WriteCond { return WriteCond{c} }

func (w WriteCond) Eval(old av.Item) bool { return w.c == nil || w.c.Eval(old) }

// WriteExprs are the parsed expressions of one write.
type WriteExprs struct {
	Cond WriteCond
	Upd  Updater
}

// ParseWriteExprs validates the names and values maps of a write and parses
// its update (UpdateExpression or legacy AttributeUpdates) and condition
// (ConditionExpression, or legacy Expected with ConditionalOperator), in
// DynamoDB's order: maps, update, condition, unused names and values. The
// caller has already run ea.params.
func ParseWriteExprs(ea ExprArgs, ce *string, expected map[string]*wire.ExpectedAttr, condOp *string,
	ue *string, updates map[string]*wire.AttributeUpdate) (WriteExprs, error) {
	var w WriteExprs
	a, err := ea.Attrs()
	if err != nil {
		return w, err
	}
	switch {
	case ue != nil:
		u, err := expr.ParseUpdate(*ue, a)
		if err != nil {
			return w, ExprError(err)
		}
		w.Upd = Updater{U: u}
	case updates != nil:
		u, err := legacyUpdates(updates)
		if err != nil {
			return w, err
		}
		w.Upd = Updater{U: u, legacy: true}
	}
	switch {
	case ce != nil:
		if w.Cond.c, err = expr.ParseCondition(expr.KindCondition, *ce, a); err != nil {
			return w, ExprError(err)
		}
	case expected != nil || condOp != nil:
		if w.Cond.c, err = legacyExpected(expected, condOp); err != nil {
			return w, err
		}
	}
	if err := a.CheckUnused(); err != nil {
		return w, ExprError(err)
	}
	return w, nil
}

// Updater applies an UpdateExpression or legacy AttributeUpdates.
type Updater struct {
	U      *expr.Update
	legacy bool // from AttributeUpdates, whose errors read differently
}

// CheckKeys refuses updates of key attributes.
func (up Updater) CheckKeys(d *TableDef) error {
	if up.U == nil {
		return nil
	}
	for _, p := range up.U.Paths() {
		if d.isTableKey(p.Top()) {
			return wire.Validation("One or more parameter values were invalid: Cannot update attribute %s. This attribute is part of the key", p.Top())
		}
	}
	// Index keys are scalars: no path may look inside one.
	for _, p := range append(up.U.Paths(), up.U.ReadPaths()...) {
		if p.Nested() && d.isIndexKey(p.Top()) {
			return wire.Validation("Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: IndexKey: %s", p.Top())
		}
	}
	return nil
}

// isIndexKey reports whether name is a key attribute of a secondary index.
func (d *TableDef) isIndexKey(name string) bool {
	for _, ix := range d.Indexes {
		if name == ix.Hash.Name || (ix.Range.Name != "" && name == ix.Range.Name) {
			return true
		}
	}
	return false
}

// Apply computes the new item; an update of a missing item starts from
// its key.
func (up Updater) Apply(d *TableDef, key, old av.Item) (av.Item, error) {
	if up.U == nil {
		if old == nil {
			return key.Clone(), nil
		}
		return old, nil
	}
	var n av.Item
	var err error
	if old == nil {
		n, err = up.U.ApplyMissing(key)
	} else {
		n, err = up.U.Apply(old)
	}
	if err != nil {
		return nil, up.applyError(err)
	}
	if err := checkIndexKeys(d, n, true); err != nil {
		return nil, err
	}
	if av.ItemSize(n) > maxItemBytes {
		return nil, wire.Validation("Item size to update has exceeded the maximum allowed size")
	}
	return n, nil
}

// Updated projects an image onto the updated paths (UPDATED_OLD/NEW).
func (up Updater) Updated(it av.Item) av.Item {
	if up.U == nil || it == nil {
		return nil
	}
	return expr.ProjectPaths(it, up.U.Paths())
}
