package statement

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/dataplane"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/expr"
	"lastro/ddblocal/internal/partiql"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

// pqSelect is a planned SELECT: a Query on each partition the WHERE clause
// pins with an equality (or IN) on the partition key, or else a Scan; the
// whole WHERE clause is the filter.
type pqSelect struct {
	t          *engine.Table
	d          *engine.TableDef
	ix         *engine.IndexDef
	hash, rng  engine.KeyDef // key of the table or index read
	filter     *expr.Condition
	parts      []*av.Value // nil: Scan
	rangeOp    string
	rangeVals  []*av.Value
	reverse    bool
	proj       []*partiql.Path // nil: *
	fetchBase  bool
	consistent bool
}

func (s *Store) planSelect(st *partiql.Statement, params []*av.Value, consistent bool) (*pqSelect, error) {
	// The WHERE clause is checked as a condition before the table is
	// resolved: an operand of the wrong type is a property of the statement,
	// and DynamoDB reports it even when the table does not exist.
	b := newPQBuilder(params)
	var filter *expr.Condition
	if st.Where != nil {
		c, err := b.cond(st.Where)
		if err != nil {
			return nil, err
		}
		if filter, err = parseCond(c, b.attrs()); err != nil {
			return nil, err
		}
	}
	t, d, ix, err := s.pqSource(st)
	if err != nil {
		return nil, err
	}
	q := &pqSelect{t: t, d: d, ix: ix, hash: d.Hash, rng: d.Range, consistent: consistent, proj: st.Projection, filter: filter}
	if ix != nil {
		if !ix.Local && consistent {
			return nil, wire.Validation("Strongly consistent read is not supported on Global Secondary Indexes")
		}
		if ix.Backfilling {
			return nil, wire.Validation("Cannot read from backfilling global secondary index: %s", ix.Name)
		}
		q.hash, q.rng = ix.Hash, ix.Range
	}
	if st.Where != nil {
		if err := q.partitions(b, st.Where); err != nil {
			return nil, err
		}
	}
	if err := q.orderBy(st); err != nil {
		return nil, err
	}
	if err := q.checkIndexProjection(st.Where); err != nil {
		return nil, err
	}
	return q, nil
}

// partitions finds the partition key values the WHERE clause pins: a
// top-level equality or IN, or an OR whose every branch pins one; and a
// sort key condition when a single partition is read.
func (q *pqSelect) partitions(b *pqBuilder, where partiql.Expr) error {
	terms := conjuncts(where)
	for _, term := range terms {
		vals, ok, err := q.pinned(b, term)
		if err != nil {
			return err
		}
		if ok {
			q.parts = dedupe(vals)
			break
		}
	}
	if q.parts == nil || q.rng.Name == "" {
		return nil
	}
	for _, term := range terms {
		if q.sortCondition(b, term) {
			break
		}
	}
	return nil
}

// pinned reports the partition key values one WHERE term restricts the
// read to.
func (q *pqSelect) pinned(b *pqBuilder, term partiql.Expr) ([]*av.Value, bool, error) {
	names := []string{q.hash.Name}
	if _, v, ok := equality(term, names); ok {
		val, err := b.literal(v)
		if err != nil {
			return nil, false, err
		}
		return []*av.Value{val}, true, nil
	}
	switch e := term.(type) {
	case *partiql.In:
		if e.Not || simpleName(e.X) != q.hash.Name {
			return nil, false, nil
		}
		var vals []*av.Value
		for _, x := range e.List {
			if !partiql.IsValue(x) {
				return nil, false, nil
			}
			v, err := b.literal(x)
			if err != nil {
				return nil, false, err
			}
			if _, isParam := x.(*partiql.Param); isParam && v.T == av.L && len(e.List) == 1 {
				vals = append(vals, v.List...)
				continue
			}
			vals = append(vals, v)
		}
		return vals, true, nil
	case *partiql.Binary:
		if e.Op != "OR" {
			return nil, false, nil
		}
		var vals []*av.Value
		for _, branch := range disjuncts(e) {
			found := false
			for _, t := range conjuncts(branch) {
				vs, ok, err := q.pinned(b, t)
				if err != nil {
					return nil, false, err
				}
				if ok {
					vals = append(vals, vs...)
					found = true
					break
				}
			}
			if !found {
				return nil, false, nil
			}
		}
		return vals, true, nil
	}
	return nil, false, nil
}

func disjuncts(e partiql.Expr) []partiql.Expr {
	if b, ok := e.(*partiql.Binary); ok && b.Op == "OR" {
		return append(disjuncts(b.L), disjuncts(b.R)...)
	}
	return []partiql.Expr{e}
}

// dedupe drops repeated partition values, keeping the first.
func dedupe(vals []*av.Value) []*av.Value {
	out := vals[:0:0]
	for _, v := range vals {
		if !slices.ContainsFunc(out, func(w *av.Value) bool { return av.Equal(v, w) }) {
			out = append(out, v)
		}
	}
	return out
}

// sortCondition narrows the key range with a condition on the sort key
// when the term is one a key condition can express. The filter still
// holds the term, so skipping it changes only what is read.
func (q *pqSelect) sortCondition(b *pqBuilder, term partiql.Expr) bool {
	typed := func(es ...partiql.Expr) ([]*av.Value, bool) {
		var vals []*av.Value
		for _, e := range es {
			if !partiql.IsValue(e) {
				return nil, false
			}
			v, err := b.literal(e)
			if err != nil || v.T != q.rng.Type {
				return nil, false
			}
			vals = append(vals, v)
		}
		return vals, true
	}
	ops := map[string]string{"=": "EQ", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE"}
	flip := map[string]string{"EQ": "EQ", "LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE"}
	switch e := term.(type) {
	case *partiql.Binary:
		op, ok := ops[e.Op]
		if !ok {
			return false
		}
		x, v := e.L, e.R
		if simpleName(x) != q.rng.Name {
			x, v, op = e.R, e.L, flip[op]
		}
		if simpleName(x) != q.rng.Name {
			return false
		}
		vals, ok := typed(v)
		if !ok {
			return false
		}
		q.rangeOp, q.rangeVals = op, vals
		return true
	case *partiql.Between:
		if e.Not || simpleName(e.X) != q.rng.Name {
			return false
		}
		vals, ok := typed(e.Lo, e.Hi)
		if !ok || compareKeys(vals[0], vals[1]) > 0 {
			return false
		}
		q.rangeOp, q.rangeVals = "BETWEEN", vals
		return true
	case *partiql.Call:
		if e.Name != "begins_with" || len(e.Args) != 2 || simpleName(e.Args[0]) != q.rng.Name || q.rng.Type == av.N {
			return false
		}
		vals, ok := typed(e.Args[1])
		if !ok {
			return false
		}
		q.rangeOp, q.rangeVals = "BEGINS_WITH", vals
		return true
	}
	return false
}

func compareKeys(a, b *av.Value) int {
	return bytes.Compare(av.AppendKey(nil, a), av.AppendKey(nil, b))
}

// orderBy checks ORDER BY and sets the read direction.
func (q *pqSelect) orderBy(st *partiql.Statement) error {
	if len(st.OrderBy) == 0 {
		return nil
	}
	if st.Where == nil {
		return wire.Validation("Must have WHERE clause in the statement when using ORDER BY clause.")
	}
	hashOrdered, hashDesc := false, false
	for _, k := range st.OrderBy {
		switch k.Name {
		case q.hash.Name:
			hashOrdered, hashDesc = true, k.Desc
		case q.rng.Name:
			q.reverse = k.Desc
		default:
			return wire.Validation("Attribute %s in ORDER BY clause must be part of the primary key", k.Name)
		}
	}
	if q.parts == nil {
		return wire.Validation("Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause.")
	}
	if len(q.parts) > 1 {
		if !hashOrdered {
			return wire.Validation("Must have hash key in ORDER BY clause when more than one hash key condition specified in WHERE clause.")
		}
		slices.SortStableFunc(q.parts, func(a, b *av.Value) int {
			if hashDesc {
				return compareKeys(b, a)
			}
			return compareKeys(a, b)
		})
	}
	return nil
}

// checkIndexProjection refuses reads of attributes an index does not hold
// (a local index reads them from the table instead). A filter on such an
// attribute is refused only when the read is keyed on the index's
// partition key at the top level: unkeyed, the read is a scan of the index,
// whose entries simply lack the attribute, so the filter matches nothing
// (or, negated, everything) rather than failing.
func (q *pqSelect) checkIndexProjection(where partiql.Expr) error {
	ix := q.ix
	if ix == nil || ix.ProjectionType == "ALL" {
		return nil
	}
	if q.filter != nil && q.keyedOn(where) {
		var missing []string
		for _, n := range q.filter.TopNames() {
			if !ix.Projects(q.d, n) && !slices.Contains(missing, n) {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			return wire.Validation("One or more parameter values were invalid: Secondary index %s does not project one or more filter attributes: [%s]", ix.Name, strings.Join(missing, ", "))
		}
	}
	var missing []string
	for _, p := range q.proj {
		n := p.Elems[0].Name
		if !ix.Projects(q.d, n) && !slices.Contains(missing, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if !ix.Local {
		return wire.Validation("One or more parameter values were invalid: Global secondary index %s does not project [%s]", ix.Name, strings.Join(missing, ", "))
	}
	q.fetchBase = true
	return nil
}

// keyedOn reports whether a top-level term of the WHERE clause is an
// equality or an IN on the partition key of what the statement reads. An
// OR does not count, even when every branch names the key.
func (q *pqSelect) keyedOn(where partiql.Expr) bool {
	for _, term := range conjuncts(where) {
		if _, _, ok := equality(term, []string{q.hash.Name}); ok {
			return true
		}
		if in, ok := term.(*partiql.In); ok && !in.Not && simpleName(in.X) == q.hash.Name {
			return true
		}
	}
	return false
}

// pqToken is the state a NextToken carries.
type pqToken struct {
	Hash string      `json:"h"`
	Part int         `json:"p"`
	Key  av.WireItem `json:"k,omitempty"`
}

func (t *pqToken) encode() string {
	b, _ := json.Marshal(t)
	return base64.StdEncoding.EncodeToString(b)
}

// statementHash identifies the request a token belongs to.
func statementHash(stmt string, params []*av.Wire, consistent bool) string {
	h := sha256.New()
	h.Write([]byte(stmt))
	pb, _ := json.Marshal(params)
	h.Write(pb)
	if consistent {
		h.Write([]byte{1})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func decodeToken(s, hash string) (*pqToken, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, wire.Validation("Invalid NextToken")
	}
	var t pqToken
	if err := json.Unmarshal(raw, &t); err != nil || t.Part < 0 {
		return nil, wire.Validation("Invalid NextToken")
	}
	if t.Hash != hash {
		return nil, wire.Validation("NextToken does not match request")
	}
	return &t, nil
}

// pqPage is one page of a SELECT.
type pqPage struct {
	items   []av.Item
	next    *pqToken
	lastKey av.Item
	usage   *engine.Usage
}

// runSelect reads one page: up to limit items evaluated, partition after
// partition, resuming where tok left off.
func (s *Store) runSelect(q *pqSelect, limit int, tok *pqToken) (*pqPage, error) {
	page := &pqPage{items: []av.Item{}, usage: engine.NewUsage(q.d.Name, true)}
	var id uint16
	if q.ix != nil {
		id = q.ix.ID
	}
	n := 1
	if q.parts != nil {
		n = len(q.parts)
	}
	start := 0
	var esk av.WireItem
	if tok != nil {
		start, esk = tok.Part, tok.Key
	}
	remaining := limit
	for p := start; p < n; p++ {
		plan := &dataplane.ReadPlan{T: q.t, D: q.d, Ix: q.ix, Filter: q.filter, Consistent: q.consistent,
			Limit: remaining, Reverse: q.reverse, FetchBase: q.fetchBase}
		if q.parts == nil {
			plan.Lo, plan.Hi = storage.SpaceKey(q.d.ID, id), storage.SpaceKey(q.d.ID, id+1)
		} else {
			hv := q.parts[p]
			if hv.T != q.hash.Type || engine.CheckKeyValue(q.hash.Name, hv, false) != nil {
				continue // no item can have this key
			}
			kc := &expr.KeyCondition{HashValue: hv, RangeOp: q.rangeOp, RangeValues: q.rangeVals}
			plan.Lo, plan.Hi = dataplane.SortRange(storage.AppendPartition(storage.SpaceKey(q.d.ID, id), hv), kc)
		}
		if p == start && esk != nil {
			k, err := engine.KeyFromWire(esk)
			if err != nil || plan.StartAfter(k) != nil {
				return nil, wire.Validation("Invalid NextToken")
			}
		}
		out, err := s.Run(plan, "INDEXES")
		if err != nil {
			return nil, err
		}
		page.usage.Merge(out.ConsumedCapacity)
		for _, it := range out.Items {
			page.items = append(page.items, q.project(it))
		}
		remaining -= out.ScannedCount
		if out.LastEvaluatedKey != nil {
			page.next = &pqToken{Part: p, Key: dataplane.KeyWire(out.LastEvaluatedKey)}
			page.lastKey = out.LastEvaluatedKey
			break
		}
		if remaining <= 0 && p+1 < n {
			page.next = &pqToken{Part: p + 1}
			break
		}
	}
	return page, nil
}

// project applies a SELECT list: each path's value, under the name of its
// last step, as PartiQL names projected columns.
func (q *pqSelect) project(it av.Item) av.Item {
	if q.proj == nil {
		return it
	}
	out := av.Item{}
	for _, p := range q.proj {
		if v := resolvePath(it, p); v != nil {
			out[columnName(p)] = v
		}
	}
	return out
}

func columnName(p *partiql.Path) string {
	for i := len(p.Elems) - 1; i >= 0; i-- {
		if !p.Elems[i].IsIndex {
			return p.Elems[i].Name
		}
	}
	return p.Elems[0].Name
}

// resolvePath returns the value a path names in an item, or nil.
func resolvePath(it av.Item, p *partiql.Path) *av.Value {
	v := it[p.Elems[0].Name]
	for _, e := range p.Elems[1:] {
		if v == nil {
			return nil
		}
		switch {
		case e.IsIndex:
			if v.T != av.L || e.Index >= len(v.List) {
				return nil
			}
			v = v.List[e.Index]
		default:
			if v.T != av.M {
				return nil
			}
			v = v.Map[e.Name]
		}
	}
	return v
}
