package ddblocal

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

	"lastro/ddblocal/internal/storage"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/expr"
)

// maxPageBytes is DynamoDB's 1 MB limit on the data a Query or Scan reads
// per call, evaluated before any filter.
const maxPageBytes = 1 << 20

type pageOutput struct {
	Items            []av.Item         `json:"Items,omitempty"`
	Count            int               `json:"Count"`
	ScannedCount     int               `json:"ScannedCount"`
	LastEvaluatedKey av.Item           `json:"LastEvaluatedKey,omitempty"`
	ConsumedCapacity *consumedCapacity `json:"ConsumedCapacity,omitempty"`
}

// budgetedPage is a Query or Scan page holding its share of the response
// budget until it is written (its JSON is the page's).
type budgetedPage struct {
	*pageOutput
	grant *grant
}

func (b budgetedPage) release() { b.grant.release() }

// budgeted makes a Query or Scan page hold its items' bytes of the
// store's response budget until it is written (ADR 0059); past the
// budget the request is throttled, as DynamoDB throttles a read it
// cannot serve, and the SDKs retry it.
func (s *Store) budgeted(out *pageOutput, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	n := 0
	for _, it := range out.Items {
		n += av.ItemSize(it)
	}
	g := &grant{b: &s.respBudget}
	if !g.take(int64(n)) {
		return nil, &apiError{Type: "ProvisionedThroughputExceededException", Status: 400,
			Message: "The level of configured provisioned throughput for the table was exceeded. " +
				"Consider increasing your provisioning level with the UpdateTable API"}
	}
	return budgetedPage{out, g}, nil
}

// MarshalJSON keeps an empty page's "Items": [] (omitempty would drop it);
// only a Select COUNT page, whose Items is nil, answers without the member.
// The items are appended as they are: encoding/json would validate and
// copy every item's JSON again (ADR 0053).
func (o pageOutput) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 512), '{')
	if o.Items != nil {
		b = append(b, `"Items":[`...)
		for i, it := range o.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = av.AppendItemJSON(b, it)
		}
		b = append(b, "],"...)
	}
	b = append(b, `"Count":`...)
	b = strconv.AppendInt(b, int64(o.Count), 10)
	b = append(b, `,"ScannedCount":`...)
	b = strconv.AppendInt(b, int64(o.ScannedCount), 10)
	if len(o.LastEvaluatedKey) > 0 {
		b = append(b, `,"LastEvaluatedKey":`...)
		b = av.AppendItemJSON(b, o.LastEvaluatedKey)
	}
	b, err := appendMember(b, "ConsumedCapacity", o.ConsumedCapacity)
	return append(b, '}'), err
}

// appendMember appends ,"name":v unless v is nil, for the small members
// beside the items, which encoding/json writes well enough.
func appendMember[T any](b []byte, name string, v *T) ([]byte, error) {
	if v == nil {
		return b, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = av.AppendString(b, name)
	b = append(b, ':')
	return append(b, raw...), nil
}

// readPlan is everything a Query or Scan needs to walk one key range.
type readPlan struct {
	t              *table
	d              *tableDef
	ix             *indexDef // nil for the base table
	lo, hi         []byte
	reverse        bool
	limit          int
	filter         *expr.Condition
	proj           projector
	count          bool // Select COUNT
	fetchBase      bool // LSI read that needs attributes outside the projection
	fetchForFilter bool // fetchBase only to evaluate the filter: return the index entry
	consistent     bool
	// segment and segments describe a parallel Scan (segments > 1): its
	// ExclusiveStartKey must fall in its own segment's range.
	segment, segments int64
}

// run executes a plan and builds the page.
func (s *Store) run(p *readPlan, returnCapacity string) (*pageOutput, error) {
	// One view for the walk and for the items an LSI read fetches from
	// the table: both come from the same moment.
	v := s.db.Acquire()
	defer v.Release()
	iter, err := v.NewIter(p.lo, p.hi)
	if err != nil {
		return nil, err
	}
	defer iter.Close()
	out := &pageOutput{}
	if !p.count {
		out.Items = []av.Item{}
	}
	size := 0
	fetched := 0      // bytes read from the base table for an LSI read
	fetchUnits := 0.0 // their cost: each fetch is a read of its own
	var last av.Item
	valid := iter.First()
	if p.reverse {
		valid = iter.Last()
	}
	stopped := false
	// DynamoDB does not look ahead: a page that ends because of Limit or of
	// the 1 MB read size carries a LastEvaluatedKey even when nothing
	// follows it.
	for ; valid && !stopped; valid = step(iter, p.reverse) {
		it, err := av.DecodeItem(iter.Value())
		if err != nil {
			return nil, fmt.Errorf("ddblocal: decode %x: %w", iter.Key(), err)
		}
		size += av.ItemSize(it)
		out.ScannedCount++
		last = it
		entry := it
		if p.fetchBase {
			full, err := getFrom(v, p.d.baseKey(it))
			if err != nil {
				return nil, err
			}
			if full == nil {
				// The view holds an entry and its item together (one
				// batch wrote both), so this is damage: skip the entry
				// rather than return it as if it were the item.
				s.log.Error("index entry without its item", "table", p.d.Name, "index", p.ix.Name)
				continue
			}
			size += av.ItemSize(full)
			fetched += av.ItemSize(full)
			fetchUnits += readUnits(av.ItemSize(full), p.consistent)
			it = full
		}
		stopped = out.ScannedCount >= p.limit || size >= maxPageBytes
		if p.filter != nil && !p.filter.Eval(it) {
			continue
		}
		out.Count++
		if !p.count {
			if p.fetchForFilter {
				it = entry // fetched for the filter only
			}
			out.Items = append(out.Items, p.proj.apply(it))
		}
	}
	if stopped && last != nil {
		out.LastEvaluatedKey = p.lastKey(last)
	}
	name := ""
	if p.ix != nil {
		name = p.ix.Name
	}
	// An LSI read that fetches attributes from the table is charged on
	// both: the index entries to the index, and each fetched item to the
	// table as a read of its own (rounded up item by item, so a page that
	// walks fewer rows costs less even when the items are small).
	u := newUsage(p.d.Name, true)
	units := readUnits(size-fetched, p.consistent)
	if name == "" {
		u.addTable(units)
	} else {
		u.addIndex(name, p.ix.Local, units)
	}
	if fetched > 0 {
		u.addTable(fetchUnits)
	}
	out.ConsumedCapacity = s.report(u, returnCapacity)
	return out, nil
}

func step(iter *storage.Iter, reverse bool) bool {
	if reverse {
		return iter.Prev()
	}
	return iter.Next()
}

// lastKey is the LastEvaluatedKey for an item: the table key, plus the
// index key when reading an index.
func (p *readPlan) lastKey(it av.Item) av.Item {
	k := keyOf(p.d, it)
	if p.ix != nil {
		k[p.ix.Hash.Name] = it[p.ix.Hash.Name]
		if p.ix.Range.Name != "" {
			k[p.ix.Range.Name] = it[p.ix.Range.Name]
		}
	}
	return k
}

// startAfter narrows the plan's range to what follows ExclusiveStartKey,
// whose attribute values were validated already.
func (p *readPlan) startAfter(key av.Item) error {
	if key == nil {
		return nil
	}
	invalid := validation("The provided starting key is invalid")
	want := keyOf(p.d, key)
	if p.ix != nil {
		want[p.ix.Hash.Name] = key[p.ix.Hash.Name]
		if p.ix.Range.Name != "" {
			want[p.ix.Range.Name] = key[p.ix.Range.Name]
		}
	}
	for _, v := range want {
		if v == nil {
			return invalid
		}
	}
	if len(key) != len(want) {
		return invalid
	}
	if err := matchKey(p.d, keyOf(p.d, key)); err != nil {
		return invalid
	}
	var k []byte
	if p.ix == nil {
		k = p.d.baseKey(key)
	} else {
		if !p.ix.inIndex(key) {
			return invalid
		}
		k = p.d.entryKey(p.ix, key)
	}
	if p.segments > 1 && (bytes.Compare(k, p.lo) < 0 || (p.hi != nil && bytes.Compare(k, p.hi) >= 0)) {
		// A LastEvaluatedKey of another segment: DynamoDB refuses it
		// rather than scan outside the segment.
		return validation("The provided starting key is invalid: Invalid ExclusiveStartKey. Please use ExclusiveStartKey with correct Segment. TotalSegments: %d Segment: %d", p.segments, p.segment)
	}
	if p.reverse {
		if bytes.Compare(k, p.hi) < 0 {
			p.hi = k
		}
	} else {
		succ := append(bytes.Clone(k), 0)
		if bytes.Compare(succ, p.lo) > 0 {
			p.lo = succ
		}
	}
	if bytes.Compare(p.lo, p.hi) > 0 {
		p.lo = p.hi
	}
	return nil
}

// resolveIndex finds the index a read names and checks the read may use it.
func resolveIndex(d *tableDef, name *string, consistent bool) (*indexDef, error) {
	if name == nil {
		return nil, nil
	}
	ix := d.index(*name)
	if ix == nil {
		return nil, validation("The table does not have the specified index: %s", *name)
	}
	if !ix.Local && consistent {
		return nil, validation("Consistent reads are not supported on global secondary indexes")
	}
	if ix.Backfilling {
		return nil, validation("Cannot read from backfilling global secondary index: %s", ix.Name)
	}
	return ix, nil
}

// selectPlan applies Select and the projection to a plan.
func selectPlan(p *readPlan, sel string, proj projector, hasProjection bool) error {
	switch sel {
	case "COUNT":
		p.count = true
	case "ALL_ATTRIBUTES":
		if p.ix != nil && p.ix.ProjectionType != "ALL" {
			if !p.ix.Local {
				return validation("One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index %s because its projection type is not ALL", p.ix.Name)
			}
			p.fetchBase = true
		}
	}
	p.proj = proj
	if hasProjection && p.ix != nil && p.ix.Local && p.ix.ProjectionType != "ALL" && proj.p != nil {
		for _, n := range proj.p.TopNames() {
			if !p.ix.projects(p.d, n) {
				p.fetchBase = true
			}
		}
	}
	// A filter on an LSI may name attributes the index does not hold: the
	// item is then read from the table to evaluate it.
	if p.filter != nil && !p.fetchBase && p.ix != nil && p.ix.Local && p.ix.ProjectionType != "ALL" {
		for _, n := range p.filter.TopNames() {
			if !p.ix.projects(p.d, n) {
				p.fetchBase, p.fetchForFilter = true, true
			}
		}
	}
	return nil
}

// projects reports whether an index stores attribute n.
func (ix *indexDef) projects(d *tableDef, n string) bool {
	if ix.ProjectionType == "ALL" || n == d.Hash.Name || n == d.Range.Name || n == ix.Hash.Name || n == ix.Range.Name {
		return true
	}
	for _, k := range ix.NonKey {
		if k == n {
			return true
		}
	}
	return false
}

func (s *Store) query(ctx context.Context, body []byte) (any, error) {
	var in queryInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := unknownConditionalOperator(in.ConditionalOperator, in.TableName != nil); err != nil {
		return nil, err
	}
	var c constraints
	c.memberMin("Limit", in.Limit, 1)
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	attributesToGet(&c, "attributesToGet", in.AttributesToGet)
	c.enum("select", in.Select, "SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES")
	c.conditions("queryFilter", in.QueryFilter)
	c.conditions("keyConditions", in.KeyConditions)
	c.itemTableName("tableName", in.TableName)
	if in.IndexName != nil {
		c.name("indexName", *in.IndexName, 3)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	ea := exprArgs{names: in.ExpressionAttributeNames, values: in.ExpressionAttributeValues}
	present(&ea.present, "ProjectionExpression", in.ProjectionExpression != nil)
	present(&ea.present, "FilterExpression", in.FilterExpression != nil)
	present(&ea.present, "KeyConditionExpression", in.KeyConditionExpression != nil)
	present(&ea.legacy, "AttributesToGet", in.AttributesToGet != nil)
	present(&ea.legacy, "QueryFilter", in.QueryFilter != nil)
	present(&ea.legacy, "ConditionalOperator", in.ConditionalOperator != nil)
	// KeyConditions may go with the other expressions when there is no
	// KeyConditionExpression.
	present(&ea.legacy, "KeyConditions", in.KeyConditions != nil && in.KeyConditionExpression != nil)
	if err := ea.params(); err != nil {
		return nil, err
	}
	// A legacy QueryFilter, or a ConditionalOperator without one, is
	// refused before the key conditions are looked for.
	var legacyFilter *expr.Condition
	if in.FilterExpression == nil {
		var err error
		if legacyFilter, err = legacyFilterCond(in.QueryFilter, in.ConditionalOperator); err != nil {
			return nil, err
		}
	}
	esk, err := startKeyFromWire(in.ExclusiveStartKey)
	if err != nil {
		return nil, currentWording(err, in.ExclusiveStartKey)
	}
	if in.KeyConditionExpression == nil && in.KeyConditions == nil {
		return nil, validation("Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.")
	}
	a, err := ea.attrs()
	if err != nil {
		return nil, currentWording(err, in.ExpressionAttributeValues)
	}
	// The key condition is checked on its own before the table is looked
	// up, and matched against the key schema after.
	var kx *expr.KeyExpr
	if in.KeyConditionExpression != nil {
		if kx, err = expr.ParseKeyConditionExpr(*in.KeyConditionExpression, a); err != nil {
			return nil, exprError(err)
		}
	}
	filter, proj, err := parseReadExprs(a, in.FilterExpression, nil, nil, in.ProjectionExpression, in.AttributesToGet)
	if err != nil {
		return nil, err
	}
	if in.FilterExpression == nil {
		filter = legacyFilter
	}
	if kx == nil {
		if err := checkKeyConditions(in.KeyConditions); err != nil {
			return nil, err
		}
	}
	if err := a.CheckUnused(); err != nil {
		return nil, exprError(err)
	}
	if err := checkSelect(in.Select, projectionMember(in.ProjectionExpression, in.AttributesToGet), in.IndexName != nil, true); err != nil {
		return nil, err
	}
	t, err := s.lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	d := t.def.Load()
	consistent := in.ConsistentRead != nil && *in.ConsistentRead
	ix, err := resolveIndex(d, in.IndexName, consistent)
	if err != nil {
		return nil, err
	}
	schema := expr.KeySchema{Hash: d.Hash.Name, HashType: d.Hash.Type, Range: d.Range.Name, RangeType: d.Range.Type}
	if ix != nil {
		schema = expr.KeySchema{Hash: ix.Hash.Name, HashType: ix.Hash.Type, Range: ix.Range.Name, RangeType: ix.Range.Type}
	}
	var kc *expr.KeyCondition
	if kx != nil {
		kc, err = kx.Bind(schema)
	} else {
		kc, err = legacyKeyConditions(in.KeyConditions, schema)
	}
	if err != nil {
		return nil, exprError(err)
	}
	if err := checkFilterKeys(filter, in.QueryFilter != nil, schema); err != nil {
		return nil, err
	}
	if err := checkKeyValue(schema.Hash, kc.HashValue, false); err != nil {
		return nil, err
	}
	p := &readPlan{t: t, d: d, ix: ix, filter: filter, consistent: consistent, limit: 1 << 62,
		reverse: in.ScanIndexForward != nil && !*in.ScanIndexForward}
	if in.Limit != nil {
		p.limit = int(*in.Limit)
	}
	sel := in.Select
	if err := selectPlan(p, sel, proj, in.ProjectionExpression != nil || in.AttributesToGet != nil); err != nil {
		return nil, err
	}
	var id uint16
	if ix != nil {
		id = ix.ID
	}
	part := storage.AppendPartition(storage.SpaceKey(d.ID, id), kc.HashValue)
	p.lo, p.hi = sortRange(part, kc)
	if err := p.startAfter(esk); err != nil {
		return nil, err
	}
	if esk != nil && (!av.Equal(esk[schema.Hash], kc.HashValue) || (schema.Range != "" && !kc.Match(esk[schema.Range]))) {
		return nil, validation("The provided starting key is outside query boundaries based on provided conditions")
	}
	return s.budgeted(s.run(p, in.ReturnConsumedCapacity))
}

// startKeyFromWire validates the attribute values of an ExclusiveStartKey.
func startKeyFromWire(w av.WireItem) (av.Item, error) {
	if w == nil {
		return nil, nil
	}
	return keyFromWire(w)
}

// sortRange turns a sort key condition into a key range within a partition.
func sortRange(part []byte, kc *expr.KeyCondition) (lo, hi []byte) {
	lo, hi = part, storage.PrefixEnd(part)
	at := func(v *av.Value) []byte { return av.AppendKey(bytes.Clone(part), v) }
	switch kc.RangeOp {
	case "EQ":
		k := at(kc.RangeValues[0])
		return k, storage.PrefixEnd(k)
	case "LT":
		return lo, at(kc.RangeValues[0])
	case "LE":
		return lo, storage.PrefixEnd(at(kc.RangeValues[0]))
	case "GT":
		return storage.PrefixEnd(at(kc.RangeValues[0])), hi
	case "GE":
		return at(kc.RangeValues[0]), hi
	case "BETWEEN":
		return at(kc.RangeValues[0]), storage.PrefixEnd(at(kc.RangeValues[1]))
	case "BEGINS_WITH":
		k := av.AppendKeyPrefix(bytes.Clone(part), kc.RangeValues[0])
		return k, storage.PrefixEnd(k)
	}
	return lo, hi
}

// parseReadExprs parses the filter and projection of a Query or Scan.
func parseReadExprs(a *expr.Attrs, fe *string, legacyFilter map[string]*condition, condOp *string, pe *string, attrsToGet []string) (*expr.Condition, projector, error) {
	var filter *expr.Condition
	var err error
	switch {
	case fe != nil:
		if filter, err = expr.ParseCondition(expr.KindFilter, *fe, a); err != nil {
			return nil, projector{}, exprError(err)
		}
	case legacyFilter != nil || condOp != nil:
		if filter, err = legacyFilterCond(legacyFilter, condOp); err != nil {
			return nil, projector{}, err
		}
	}
	var proj projector
	switch {
	case pe != nil:
		p, err := expr.ParseProjection(*pe, a)
		if err != nil {
			return nil, projector{}, exprError(err)
		}
		proj = projector{p}
	case attrsToGet != nil:
		p, err := legacyProjection(attrsToGet)
		if err != nil {
			return nil, projector{}, err
		}
		proj = projector{p}
	}
	return filter, proj, nil
}

func (s *Store) scan(ctx context.Context, body []byte) (any, error) {
	var in scanInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	// Scan still words its numeric limits the older way, echoing the value
	// ("Value '0' at 'limit'"), where Query names the member only.
	c.min("limit", in.Limit, 1)
	c.returnConsumedCapacity(in.ReturnConsumedCapacity)
	attributesToGet(&c, "attributesToGet", in.AttributesToGet)
	c.min("segment", in.Segment, 0)
	c.max("segment", in.Segment, 999999)
	c.enum("select", in.Select, "SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES")
	c.conditionalOperator(in.ConditionalOperator)
	c.conditions("scanFilter", in.ScanFilter)
	c.min("totalSegments", in.TotalSegments, 1)
	c.max("totalSegments", in.TotalSegments, 1000000)
	c.itemTableName("tableName", in.TableName)
	if in.IndexName != nil {
		c.name("indexName", *in.IndexName, 3)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	ea := exprArgs{names: in.ExpressionAttributeNames, values: in.ExpressionAttributeValues,
		older: true, ifNone: "FilterExpression is null"}
	present(&ea.present, "ProjectionExpression", in.ProjectionExpression != nil)
	present(&ea.present, "FilterExpression", in.FilterExpression != nil)
	present(&ea.legacy, "AttributesToGet", in.AttributesToGet != nil)
	present(&ea.legacy, "ScanFilter", in.ScanFilter != nil)
	present(&ea.legacy, "ConditionalOperator", in.ConditionalOperator != nil)
	if err := ea.params(); err != nil {
		return nil, err
	}
	esk, err := startKeyFromWire(in.ExclusiveStartKey)
	if err != nil {
		return nil, err
	}
	switch {
	case in.Segment != nil && in.TotalSegments == nil:
		return nil, validation("The TotalSegments parameter is required but was not present in the request when Segment parameter is present")
	case in.Segment == nil && in.TotalSegments != nil:
		return nil, validation("The Segment parameter is required but was not present in the request when parameter TotalSegments is present")
	case in.Segment != nil && *in.Segment >= *in.TotalSegments:
		return nil, validation("The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: %d is not less than TotalSegments: %d", *in.Segment, *in.TotalSegments)
	}
	a, err := ea.attrs()
	if err != nil {
		return nil, err
	}
	filter, proj, err := parseReadExprs(a, in.FilterExpression, in.ScanFilter, in.ConditionalOperator, in.ProjectionExpression, in.AttributesToGet)
	if err != nil {
		return nil, err
	}
	if err := a.CheckUnused(); err != nil {
		return nil, exprError(err)
	}
	if err := checkSelect(in.Select, projectionMember(in.ProjectionExpression, in.AttributesToGet), in.IndexName != nil, false); err != nil {
		return nil, err
	}
	t, err := s.lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	d := t.def.Load()
	consistent := in.ConsistentRead != nil && *in.ConsistentRead
	ix, err := resolveIndex(d, in.IndexName, consistent)
	if err != nil {
		return nil, err
	}
	p := &readPlan{t: t, d: d, ix: ix, filter: filter, consistent: consistent, limit: 1 << 62}
	if in.Limit != nil {
		p.limit = int(*in.Limit)
	}
	if err := selectPlan(p, in.Select, proj, in.ProjectionExpression != nil || in.AttributesToGet != nil); err != nil {
		return nil, err
	}
	var id uint16
	if ix != nil {
		id = ix.ID
	}
	space := storage.SpaceKey(d.ID, id)
	p.lo, p.hi = space, storage.SpaceKey(d.ID, id+1)
	if in.Segment != nil {
		seg, total := uint64(*in.Segment), uint64(*in.TotalSegments)
		p.segment, p.segments = int64(seg), int64(total)
		p.lo = binary.BigEndian.AppendUint32(bytes.Clone(space), uint32(seg<<32/total))
		if seg+1 < total {
			p.hi = binary.BigEndian.AppendUint32(bytes.Clone(space), uint32((seg+1)<<32/total))
		}
	}
	if err := p.startAfter(esk); err != nil {
		return nil, err
	}
	return s.budgeted(s.run(p, in.ReturnConsumedCapacity))
}
