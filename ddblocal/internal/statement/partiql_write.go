package statement

import (
	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/dataplane"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/partiql"
	"lastro/ddblocal/internal/txn"
	"lastro/ddblocal/internal/wire"
)

// pqWrite is a planned INSERT, UPDATE, DELETE or EXISTS check: one item,
// a condition, and for UPDATE the update. DynamoDB runs them as PutItem
// with attribute_not_exists on the key (a duplicate is DuplicateItem),
// UpdateItem with attribute_exists on the key (PartiQL's UPDATE is no
// upsert) and the WHERE clause's other terms, and DeleteItem whose other
// terms only apply when the item exists.
type pqWrite struct {
	st   *partiql.Statement
	t    *engine.Table
	d    *engine.TableDef
	key  av.Item
	item av.Item // INSERT
	cond engine.WriteCond
	upd  engine.Updater
}

func (s *Store) planWrite(st *partiql.Statement, params []*av.Value) (*pqWrite, error) {
	t, d, ix, err := s.pqSource(st)
	if err != nil {
		return nil, err
	}
	if ix != nil {
		return nil, wire.Validation("This operation is not supported on an index")
	}
	w := &pqWrite{st: st, t: t, d: d}
	b := newPQBuilder(params)
	hk := b.name(d.Hash.Name)
	if st.Kind == partiql.Insert {
		item, err := partiql.Item(st.Value, params)
		if err != nil {
			return nil, partiqlError(err)
		}
		if err := engine.CheckItem(d, item); err != nil {
			return nil, err
		}
		w.item, w.key = item, engine.KeyOf(d, item)
		c, err := parseCond("attribute_not_exists("+hk+")", b.attrs())
		if err != nil {
			return nil, err
		}
		w.cond = engine.NewWriteCond(c)
		return w, nil
	}
	key, rest, err := fullKey(b, d, st.Where)
	if err != nil {
		return nil, err
	}
	w.key = key
	var cond string
	switch st.Kind {
	case partiql.Update:
		ue, err := b.update(st.Actions)
		if err != nil {
			return nil, err
		}
		u, err := parseUpdateExpr(ue, b.attrs())
		if err != nil {
			return nil, err
		}
		w.upd = engine.Updater{U: u}
		if err := w.upd.CheckKeys(d); err != nil {
			return nil, err
		}
		cond = "attribute_exists(" + hk + ")"
		if rest != "" {
			cond += " AND " + rest
		}
	case partiql.Delete:
		if rest != "" {
			cond = "attribute_not_exists(" + hk + ") OR " + rest
		}
	case partiql.Exists:
		if rest == "" {
			return nil, wire.Validation("EXISTS() must contain a single item read with additional condition")
		}
		cond = rest
	}
	if cond != "" {
		c, err := parseCond(cond, b.attrs())
		if err != nil {
			return nil, err
		}
		w.cond = engine.NewWriteCond(c)
	}
	return w, nil
}

// writeResult is what a single write answers: the RETURNING item, if any.
type writeResult struct {
	item  av.Item
	usage *engine.Usage
}

// runWrite applies a planned write on its own (ExecuteStatement, or one
// statement of BatchExecuteStatement).
func (s *Store) runWrite(w *pqWrite, rvOnFailure string) (*writeResult, error) {
	st := w.st
	d, old, new, err := s.Mutate(w.t, w.key, func(d *engine.TableDef, old av.Item) (av.Item, error) {
		if !w.cond.Eval(old) {
			if st.Kind == partiql.Insert {
				return old, duplicateItem()
			}
			return old, dataplane.ConditionFailure(old, rvOnFailure)
		}
		switch st.Kind {
		case partiql.Insert:
			if err := engine.CheckItem(d, w.item); err != nil {
				return nil, err
			}
			return w.item, nil
		case partiql.Update:
			return w.upd.Apply(d, w.key, old)
		}
		return nil, nil
	})
	if err != nil {
		return nil, s.FailedWrite(err, d, old)
	}
	res := &writeResult{usage: engine.NewUsage(d.Name, false)}
	res.usage.AddWrite(d, old, new, 1)
	var ret av.Item
	switch st.Returning {
	case partiql.ReturnAllOld:
		ret = old
	case partiql.ReturnAllNew:
		ret = new
	case partiql.ReturnModifiedOld:
		ret = w.upd.Updated(old)
	case partiql.ReturnModifiedNew:
		ret = w.upd.Updated(new)
	}
	if len(ret) > 0 {
		res.item = ret
	}
	return res, nil
}

// txOp turns a planned write into a transaction action.
func (w *pqWrite) txOp() *txn.TxOp {
	op := &txn.TxOp{T: w.t, Table: &w.d.Name, Key: w.key, X: engine.WriteExprs{Cond: w.cond, Upd: w.upd}, Skey: w.d.BaseKey(w.key)}
	switch w.st.Kind {
	case partiql.Insert:
		op.Kind, op.Item = "Put", w.item
	case partiql.Update:
		op.Kind = "Update"
	case partiql.Delete:
		op.Kind = "Delete"
	case partiql.Exists:
		op.Kind = "ConditionCheck"
	}
	return op
}

// pqGet is a single-item SELECT (in a batch or a transaction): the key,
// the other terms of its WHERE clause as a filter, and the projection.
type pqGet struct {
	t    *engine.Table
	d    *engine.TableDef
	key  av.Item
	skey []byte
	q    *pqSelect // for the projection
}

// planGet plans a SELECT that must name a whole primary key; notKey is
// the message when it does not.
func (s *Store) planGet(st *partiql.Statement, params []*av.Value, indexMsg, notKey string) (*pqGet, error) {
	t, d, ix, err := s.pqSource(st)
	if err != nil {
		return nil, err
	}
	if ix != nil {
		return nil, wire.Validation("%s", indexMsg)
	}
	if st.Where == nil {
		return nil, wire.Validation("%s", notKey)
	}
	b := newPQBuilder(params)
	names := d.KeyNames()
	key, rest, err := keyTerms(b, st.Where, names)
	if err != nil {
		return nil, err
	}
	if len(key) != len(names) || len(rest) > 0 {
		// A read must be a get of one item: any other term (a filter,
		// an OR, a function) makes it a query, which batches refuse.
		return nil, wire.Validation("%s", notKey)
	}
	it := av.Item(key)
	if err := engine.MatchKey(d, it); err != nil {
		return nil, err
	}
	return &pqGet{t: t, d: d, key: it, skey: d.BaseKey(it), q: &pqSelect{proj: st.Projection}}, nil
}
