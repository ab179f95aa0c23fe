package dataplane

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/expr"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

type PageOutput struct {
	Items            []av.Item              `json:"Items,omitempty"`
	Count            int                    `json:"Count"`
	ScannedCount     int                    `json:"ScannedCount"`
	LastEvaluatedKey av.Item                `json:"LastEvaluatedKey,omitempty"`
	ConsumedCapacity *wire.ConsumedCapacity `json:"ConsumedCapacity,omitempty"`
}

// budgetedPage is a Query or Scan page holding its share of the response
// budget until it is written (its JSON is the page's).
type budgetedPage struct {
	*PageOutput
	grant *engine.Grant
}

func (b budgetedPage) Release() { b.grant.Release() }

// budgeted makes a Query or Scan page hold its items' bytes of the
// store's response budget until it is written (ADR 0059); past the
// budget the request is throttled, as DynamoDB throttles a read it
// cannot serve, and the SDKs retry it.
func (s *Store) budgeted(out *PageOutput, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	n := 0
	for _, it := range out.Items {
		n += av.ItemSize(it)
	}
	g := &engine.Grant{B: &s.RespBudget}
	if !g.Take(int64(n)) {
		return nil, &wire.APIError{Type: "ProvisionedThroughputExceededException", Status: 400,
			Message: "The level of configured provisioned throughput for the table was exceeded. " +
				"Consider increasing your provisioning level with the UpdateTable API"}
	}
	return budgetedPage{out, g}, nil
}

// MarshalJSON keeps an empty page's "Items": [] (omitempty would drop it);
// only a Select COUNT page, whose Items is nil, answers without the member.
// The items are appended as they are: encoding/json would validate and
// copy every item's JSON again (ADR 0053).
func (o PageOutput) MarshalJSON() ([]byte, error) {
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

// ReadPlan is everything a Query or Scan needs to walk one key range.
type ReadPlan struct {
	T              *engine.Table
	D              *engine.TableDef
	Ix             *engine.IndexDef // nil for the base table
	Lo, Hi         []byte
	Reverse        bool
	Limit          int
	Filter         *expr.Condition
	proj           Projector
	count          bool // Select COUNT
	FetchBase      bool // LSI read that needs attributes outside the projection
	fetchForFilter bool // fetchBase only to evaluate the filter: return the index entry
	Consistent     bool
	// segment and segments describe a parallel Scan (segments > 1): its
	// ExclusiveStartKey must fall in its own segment's range.
	segment, segments int64
}

// Run executes a plan and builds the page.
//
// It is one loop because the page's limits (Limit, the 1 MB read, the
// response budget) are checked between items and end the page together.
func (s *Store) Run(p *ReadPlan, returnCapacity string) (*PageOutput, error) {
	// One view for the walk and for the items an LSI read fetches from
	// the table: both come from the same moment.
	v := s.DB.Acquire()
	defer v.Release()
	iter, err := v.NewIter(p.Lo, p.Hi)
	if err != nil {
		return nil, err
	}
	defer iter.Close()
	out := &PageOutput{}
	if !p.count {
		out.Items = []av.Item{}
	}
	size := 0
	fetched := 0      // bytes read from the base table for an LSI read
	fetchUnits := 0.0 // their cost: each fetch is a read of its own
	var last av.Item
	valid := iter.First()
	if p.Reverse {
		valid = iter.Last()
	}
	stopped := false
	// DynamoDB does not look ahead: a page that ends because of Limit or of
	// the 1 MB read size carries a LastEvaluatedKey even when nothing
	// follows it.
	for ; valid && !stopped; valid = step(iter, p.Reverse) {
		it, err := av.DecodeItem(iter.Value())
		if err != nil {
			return nil, fmt.Errorf("ddblocal: decode %x: %w", iter.Key(), err)
		}
		size += av.ItemSize(it)
		out.ScannedCount++
		last = it
		entry := it
		if p.FetchBase {
			full, err := engine.GetFrom(v, p.D.BaseKey(it))
			if err != nil {
				return nil, err
			}
			if full == nil {
				// The view holds an entry and its item together (one
				// batch wrote both), so this is damage: skip the entry
				// rather than return it as if it were the item.
				s.Log.Error("index entry without its item", "table", p.D.Name, "index", p.Ix.Name)
				continue
			}
			size += av.ItemSize(full)
			fetched += av.ItemSize(full)
			fetchUnits += engine.ReadUnits(av.ItemSize(full), p.Consistent)
			it = full
		}
		stopped = out.ScannedCount >= p.Limit || size >= engine.MaxPageBytes
		if p.Filter != nil && !p.Filter.Eval(it) {
			continue
		}
		out.Count++
		if !p.count {
			if p.fetchForFilter {
				it = entry // fetched for the filter only
			}
			out.Items = append(out.Items, p.proj.Apply(it))
		}
	}
	if stopped && last != nil {
		out.LastEvaluatedKey = p.lastKey(last)
	}
	name := ""
	if p.Ix != nil {
		name = p.Ix.Name
	}
	// An LSI read that fetches attributes from the table is charged on
	// both: the index entries to the index, and each fetched item to the
	// table as a read of its own (rounded up item by item, so a page that
	// walks fewer rows costs less even when the items are small).
	u := engine.NewUsage(p.D.Name, true)
	units := engine.ReadUnits(size-fetched, p.Consistent)
	if name == "" {
		u.AddTable(units)
	} else {
		u.AddIndex(name, p.Ix.Local, units)
	}
	if fetched > 0 {
		u.AddTable(fetchUnits)
	}
	out.ConsumedCapacity = s.Report(u, returnCapacity)
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
func (p *ReadPlan) lastKey(it av.Item) av.Item {
	k := engine.KeyOf(p.D, it)
	if p.Ix != nil {
		k[p.Ix.Hash.Name] = it[p.Ix.Hash.Name]
		if p.Ix.Range.Name != "" {
			k[p.Ix.Range.Name] = it[p.Ix.Range.Name]
		}
	}
	return k
}

// StartAfter narrows the plan's range to what follows ExclusiveStartKey,
// whose attribute values were validated already.
func (p *ReadPlan) StartAfter(key av.Item) error {
	if key == nil {
		return nil
	}
	invalid := wire.Validation("The provided starting key is invalid")
	want := engine.KeyOf(p.D, key)
	if p.Ix != nil {
		want[p.Ix.Hash.Name] = key[p.Ix.Hash.Name]
		if p.Ix.Range.Name != "" {
			want[p.Ix.Range.Name] = key[p.Ix.Range.Name]
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
	if err := engine.MatchKey(p.D, engine.KeyOf(p.D, key)); err != nil {
		return invalid
	}
	var k []byte
	if p.Ix == nil {
		k = p.D.BaseKey(key)
	} else {
		if !p.Ix.InIndex(key) {
			return invalid
		}
		k = p.D.EntryKey(p.Ix, key)
	}
	if p.segments > 1 && (bytes.Compare(k, p.Lo) < 0 || (p.Hi != nil && bytes.Compare(k, p.Hi) >= 0)) {
		// A LastEvaluatedKey of another segment: DynamoDB refuses it
		// rather than scan outside the segment.
		return wire.Validation("The provided starting key is invalid: Invalid ExclusiveStartKey. Please use ExclusiveStartKey with correct Segment. TotalSegments: %d Segment: %d", p.segments, p.segment)
	}
	if p.Reverse {
		if bytes.Compare(k, p.Hi) < 0 {
			p.Hi = k
		}
	} else {
		succ := append(bytes.Clone(k), 0)
		if bytes.Compare(succ, p.Lo) > 0 {
			p.Lo = succ
		}
	}
	if bytes.Compare(p.Lo, p.Hi) > 0 {
		p.Lo = p.Hi
	}
	return nil
}

// resolveIndex finds the index a read names and checks the read may use it.
func resolveIndex(d *engine.TableDef, name *string, consistent bool) (*engine.IndexDef, error) {
	if name == nil {
		return nil, nil
	}
	ix := d.Index(*name)
	if ix == nil {
		return nil, wire.Validation("The table does not have the specified index: %s", *name)
	}
	if !ix.Local && consistent {
		return nil, wire.Validation("Consistent reads are not supported on global secondary indexes")
	}
	if ix.Backfilling {
		return nil, wire.Validation("Cannot read from backfilling global secondary index: %s", ix.Name)
	}
	return ix, nil
}

// selectPlan applies Select and the projection to a plan.
func selectPlan(p *ReadPlan, sel string, proj Projector, hasProjection bool) error {
	switch sel {
	case "COUNT":
		p.count = true
	case "ALL_ATTRIBUTES":
		if p.Ix != nil && p.Ix.ProjectionType != "ALL" {
			if !p.Ix.Local {
				return wire.Validation("One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index %s because its projection type is not ALL", p.Ix.Name)
			}
			p.FetchBase = true
		}
	}
	p.proj = proj
	if hasProjection && p.Ix != nil && p.Ix.Local && p.Ix.ProjectionType != "ALL" && proj.p != nil {
		for _, n := range proj.p.TopNames() {
			if !p.Ix.Projects(p.D, n) {
				p.FetchBase = true
			}
		}
	}
	// A filter on an LSI may name attributes the index does not hold: the
	// item is then read from the table to evaluate it.
	if p.Filter != nil && !p.FetchBase && p.Ix != nil && p.Ix.Local && p.Ix.ProjectionType != "ALL" {
		for _, n := range p.Filter.TopNames() {
			if !p.Ix.Projects(p.D, n) {
				p.FetchBase, p.fetchForFilter = true, true
			}
		}
	}
	return nil
}

// Query answers a Query request. It is one long function on purpose: its
// checks run in the order DynamoDB reports violations, the first refusal
// is the wire contract, and the sequence reads top to bottom in one place.
func (s *Store) Query(ctx context.Context, body []byte) (any, error) {
	var in wire.QueryInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	if err := wire.UnknownConditionalOperator(in.ConditionalOperator, in.TableName != nil); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.MemberMin("Limit", in.Limit, 1)
	c.ReturnConsumedCapacity(in.ReturnConsumedCapacity)
	attributesToGet(&c, "attributesToGet", in.AttributesToGet)
	c.Enum("select", in.Select, "SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES")
	engine.CheckConditions(&c, "queryFilter", in.QueryFilter)
	engine.CheckConditions(&c, "keyConditions", in.KeyConditions)
	c.ItemTableName("tableName", in.TableName)
	if in.IndexName != nil {
		c.Name("indexName", *in.IndexName, 3)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	ea := engine.ExprArgs{Names: in.ExpressionAttributeNames, Values: in.ExpressionAttributeValues}
	engine.Present(&ea.Present, "ProjectionExpression", in.ProjectionExpression != nil)
	engine.Present(&ea.Present, "FilterExpression", in.FilterExpression != nil)
	engine.Present(&ea.Present, "KeyConditionExpression", in.KeyConditionExpression != nil)
	engine.Present(&ea.Legacy, "AttributesToGet", in.AttributesToGet != nil)
	engine.Present(&ea.Legacy, "QueryFilter", in.QueryFilter != nil)
	engine.Present(&ea.Legacy, "ConditionalOperator", in.ConditionalOperator != nil)
	// KeyConditions may go with the other expressions when there is no
	// KeyConditionExpression.
	engine.Present(&ea.Legacy, "KeyConditions", in.KeyConditions != nil && in.KeyConditionExpression != nil)
	if err := ea.Params(); err != nil {
		return nil, err
	}
	// A legacy QueryFilter, or a ConditionalOperator without one, is
	// refused before the key conditions are looked for.
	var legacyFilter *expr.Condition
	if in.FilterExpression == nil {
		var err error
		if legacyFilter, err = engine.LegacyFilterCond(in.QueryFilter, in.ConditionalOperator); err != nil {
			return nil, err
		}
	}
	esk, err := startKeyFromWire(in.ExclusiveStartKey)
	if err != nil {
		return nil, wire.CurrentWording(err, in.ExclusiveStartKey)
	}
	if in.KeyConditionExpression == nil && in.KeyConditions == nil {
		return nil, wire.Validation("Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.")
	}
	a, err := ea.Attrs()
	if err != nil {
		return nil, wire.CurrentWording(err, in.ExpressionAttributeValues)
	}
	// The key condition is checked on its own before the table is looked
	// up, and matched against the key schema after.
	var kx *expr.KeyExpr
	if in.KeyConditionExpression != nil {
		if kx, err = expr.ParseKeyConditionExpr(*in.KeyConditionExpression, a); err != nil {
			return nil, engine.ExprError(err)
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
		if err := engine.CheckKeyConditions(in.KeyConditions); err != nil {
			return nil, err
		}
	}
	if err := a.CheckUnused(); err != nil {
		return nil, engine.ExprError(err)
	}
	if err := engine.CheckSelect(in.Select, engine.ProjectionMember(in.ProjectionExpression, in.AttributesToGet), in.IndexName != nil, true); err != nil {
		return nil, err
	}
	t, err := s.Lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	d := t.Def.Load()
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
		kc, err = engine.LegacyKeyConditions(in.KeyConditions, schema)
	}
	if err != nil {
		return nil, engine.ExprError(err)
	}
	if err := engine.CheckFilterKeys(filter, in.QueryFilter != nil, schema); err != nil {
		return nil, err
	}
	if err := engine.CheckKeyValue(schema.Hash, kc.HashValue, false); err != nil {
		return nil, err
	}
	p := &ReadPlan{T: t, D: d, Ix: ix, Filter: filter, Consistent: consistent, Limit: 1 << 62,
		Reverse: in.ScanIndexForward != nil && !*in.ScanIndexForward}
	if in.Limit != nil {
		p.Limit = int(*in.Limit)
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
	p.Lo, p.Hi = SortRange(part, kc)
	if err := p.StartAfter(esk); err != nil {
		return nil, err
	}
	if esk != nil && (!av.Equal(esk[schema.Hash], kc.HashValue) || (schema.Range != "" && !kc.Match(esk[schema.Range]))) {
		return nil, wire.Validation("The provided starting key is outside query boundaries based on provided conditions")
	}
	return s.budgeted(s.Run(p, in.ReturnConsumedCapacity))
}

// startKeyFromWire validates the attribute values of an ExclusiveStartKey.
func startKeyFromWire(w av.WireItem) (av.Item, error) {
	if w == nil {
		return nil, nil
	}
	return engine.KeyFromWire(w)
}

// SortRange turns a sort key condition into a key range within a partition.
func SortRange(part []byte, kc *expr.KeyCondition) (lo, hi []byte) {
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
func parseReadExprs(a *expr.Attrs, fe *string, legacyFilter map[string]*wire.Condition, condOp *string, pe *string, attrsToGet []string) (*expr.Condition, Projector, error) {
	var filter *expr.Condition
	var err error
	switch {
	case fe != nil:
		if filter, err = expr.ParseCondition(expr.KindFilter, *fe, a); err != nil {
			return nil, Projector{}, engine.ExprError(err)
		}
	case legacyFilter != nil || condOp != nil:
		if filter, err = engine.LegacyFilterCond(legacyFilter, condOp); err != nil {
			return nil, Projector{}, err
		}
	}
	var proj Projector
	switch {
	case pe != nil:
		p, err := expr.ParseProjection(*pe, a)
		if err != nil {
			return nil, Projector{}, engine.ExprError(err)
		}
		proj = Projector{p}
	case attrsToGet != nil:
		p, err := engine.LegacyProjection(attrsToGet)
		if err != nil {
			return nil, Projector{}, err
		}
		proj = Projector{p}
	}
	return filter, proj, nil
}

// Scan answers a Scan request. It is one long function on purpose: its
// checks run in the order DynamoDB reports violations, the first refusal
// is the wire contract, and the sequence reads top to bottom in one place.
func (s *Store) Scan(ctx context.Context, body []byte) (any, error) {
	var in wire.ScanInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	// Scan still words its numeric limits the older way, echoing the value
	// ("Value '0' at 'limit'"), where Query names the member only.
	c.Min("limit", in.Limit, 1)
	c.ReturnConsumedCapacity(in.ReturnConsumedCapacity)
	attributesToGet(&c, "attributesToGet", in.AttributesToGet)
	c.Min("segment", in.Segment, 0)
	c.Max("segment", in.Segment, 999999)
	c.Enum("select", in.Select, "SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES")
	c.ConditionalOperator(in.ConditionalOperator)
	engine.CheckConditions(&c, "scanFilter", in.ScanFilter)
	c.Min("totalSegments", in.TotalSegments, 1)
	c.Max("totalSegments", in.TotalSegments, 1000000)
	c.ItemTableName("tableName", in.TableName)
	if in.IndexName != nil {
		c.Name("indexName", *in.IndexName, 3)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	ea := engine.ExprArgs{Names: in.ExpressionAttributeNames, Values: in.ExpressionAttributeValues,
		Older: true, IfNone: "FilterExpression is null"}
	engine.Present(&ea.Present, "ProjectionExpression", in.ProjectionExpression != nil)
	engine.Present(&ea.Present, "FilterExpression", in.FilterExpression != nil)
	engine.Present(&ea.Legacy, "AttributesToGet", in.AttributesToGet != nil)
	engine.Present(&ea.Legacy, "ScanFilter", in.ScanFilter != nil)
	engine.Present(&ea.Legacy, "ConditionalOperator", in.ConditionalOperator != nil)
	if err := ea.Params(); err != nil {
		return nil, err
	}
	esk, err := startKeyFromWire(in.ExclusiveStartKey)
	if err != nil {
		return nil, err
	}
	switch {
	case in.Segment != nil && in.TotalSegments == nil:
		return nil, wire.Validation("The TotalSegments parameter is required but was not present in the request when Segment parameter is present")
	case in.Segment == nil && in.TotalSegments != nil:
		return nil, wire.Validation("The Segment parameter is required but was not present in the request when parameter TotalSegments is present")
	case in.Segment != nil && *in.Segment >= *in.TotalSegments:
		return nil, wire.Validation("The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: %d is not less than TotalSegments: %d", *in.Segment, *in.TotalSegments)
	}
	a, err := ea.Attrs()
	if err != nil {
		return nil, err
	}
	filter, proj, err := parseReadExprs(a, in.FilterExpression, in.ScanFilter, in.ConditionalOperator, in.ProjectionExpression, in.AttributesToGet)
	if err != nil {
		return nil, err
	}
	if err := a.CheckUnused(); err != nil {
		return nil, engine.ExprError(err)
	}
	if err := engine.CheckSelect(in.Select, engine.ProjectionMember(in.ProjectionExpression, in.AttributesToGet), in.IndexName != nil, false); err != nil {
		return nil, err
	}
	t, err := s.Lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	d := t.Def.Load()
	consistent := in.ConsistentRead != nil && *in.ConsistentRead
	ix, err := resolveIndex(d, in.IndexName, consistent)
	if err != nil {
		return nil, err
	}
	p := &ReadPlan{T: t, D: d, Ix: ix, Filter: filter, Consistent: consistent, Limit: 1 << 62}
	if in.Limit != nil {
		p.Limit = int(*in.Limit)
	}
	if err := selectPlan(p, in.Select, proj, in.ProjectionExpression != nil || in.AttributesToGet != nil); err != nil {
		return nil, err
	}
	var id uint16
	if ix != nil {
		id = ix.ID
	}
	space := storage.SpaceKey(d.ID, id)
	p.Lo, p.Hi = space, storage.SpaceKey(d.ID, id+1)
	if in.Segment != nil {
		seg, total := uint64(*in.Segment), uint64(*in.TotalSegments)
		p.segment, p.segments = int64(seg), int64(total)
		p.Lo = binary.BigEndian.AppendUint32(bytes.Clone(space), uint32(seg<<32/total))
		if seg+1 < total {
			p.Hi = binary.BigEndian.AppendUint32(bytes.Clone(space), uint32((seg+1)<<32/total))
		}
	}
	if err := p.StartAfter(esk); err != nil {
		return nil, err
	}
	return s.budgeted(s.Run(p, in.ReturnConsumedCapacity))
}
