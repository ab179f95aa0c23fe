package ddblocal_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/smithy-go"

	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// Helpers shared by the capacity, streams, TTL and fault-injection
// conformance tests (this file and conformance_{streams,ttl,faults}_test.go).

// lab is a store on its own in-memory database with both SDK clients.
type lab struct {
	t       *testing.T
	ctx     context.Context
	store   *ddblocal.Store
	url     string
	db      *dynamodb.Client
	streams *dynamodbstreams.Client
	clock   *labClock
}

// labClock is a settable clock for the store.
type labClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *labClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *labClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newLab starts a store with a frozen clock and no background sweeper
// (tests sweep explicitly), unless opts says otherwise.
func newLab(t *testing.T, opts ...func(*ddblocal.Options)) *lab {
	t.Helper()
	clock := &labClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	o := ddblocal.Options{Now: clock.Now, TTLSweepInterval: -1}
	for _, f := range opts {
		f(&o)
	}
	srv := ddbtest.Start(t, o)
	return &lab{t: t, ctx: context.Background(), store: srv.Store, url: srv.URL, db: srv.Client(),
		streams: streamsClient(srv.URL), clock: clock}
}

// streamsClient returns an unmodified SDK DynamoDB Streams client for the
// endpoint, without retries.
func streamsClient(endpoint string) *dynamodbstreams.Client {
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	}
	return dynamodbstreams.NewFromConfig(cfg, func(o *dynamodbstreams.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.Retryer = aws.NopRetryer{}
	})
}

// labTable describes a table to create: keys as "name:S", indexes as
// CreateTable takes them.
type labTable struct {
	name     string
	hash     string
	rng      string
	gsis     []types.GlobalSecondaryIndex
	lsis     []types.LocalSecondaryIndex
	stream   types.StreamViewType
	attrDefs map[string]types.ScalarAttributeType
}

func keyParts(spec string) (string, types.ScalarAttributeType) {
	name, typ, _ := strings.Cut(spec, ":")
	if typ == "" {
		typ = "S"
	}
	return name, types.ScalarAttributeType(typ)
}

func (tb *labTable) def(spec string) string {
	name, typ := keyParts(spec)
	if tb.attrDefs == nil {
		tb.attrDefs = map[string]types.ScalarAttributeType{}
	}
	tb.attrDefs[name] = typ
	return name
}

func schema(hash, rng string) []types.KeySchemaElement {
	ks := []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}}
	if rng != "" {
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(rng), KeyType: types.KeyTypeRange})
	}
	return ks
}

func projection(pt types.ProjectionType, nonKey ...string) *types.Projection {
	p := &types.Projection{ProjectionType: pt}
	if len(nonKey) > 0 {
		p.NonKeyAttributes = nonKey
	}
	return p
}

// withGSI adds a global secondary index; rng may be empty.
func (tb *labTable) withGSI(name, hash, rng string, pt types.ProjectionType, nonKey ...string) *labTable {
	h := tb.def(hash)
	r := ""
	if rng != "" {
		r = tb.def(rng)
	}
	tb.gsis = append(tb.gsis, types.GlobalSecondaryIndex{IndexName: aws.String(name), KeySchema: schema(h, r), Projection: projection(pt, nonKey...)})
	return tb
}

// withLSI adds a local secondary index on the table's hash key.
func (tb *labTable) withLSI(name, rng string, pt types.ProjectionType, nonKey ...string) *labTable {
	r := tb.def(rng)
	h, _ := keyParts(tb.hash)
	tb.lsis = append(tb.lsis, types.LocalSecondaryIndex{IndexName: aws.String(name), KeySchema: schema(h, r), Projection: projection(pt, nonKey...)})
	return tb
}

func (tb *labTable) withStream(v types.StreamViewType) *labTable {
	tb.stream = v
	return tb
}

func newTable(name, hash string, rng ...string) *labTable {
	tb := &labTable{name: name, hash: hash}
	if len(rng) > 0 {
		tb.rng = rng[0]
	}
	return tb
}

// create creates the table (PAY_PER_REQUEST) and returns its name.
func (l *lab) create(tb *labTable) string {
	l.t.Helper()
	h := tb.def(tb.hash)
	r := ""
	if tb.rng != "" {
		r = tb.def(tb.rng)
	}
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(tb.name),
		KeySchema:   schema(h, r),
		BillingMode: types.BillingModePayPerRequest,
	}
	for _, n := range sortedKeys(tb.attrDefs) {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: tb.attrDefs[n]})
	}
	in.GlobalSecondaryIndexes = tb.gsis
	in.LocalSecondaryIndexes = tb.lsis
	if tb.stream != "" {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: tb.stream}
	}
	if _, err := l.db.CreateTable(l.ctx, in); err != nil {
		l.t.Fatalf("CreateTable %s: %v", tb.name, err)
	}
	return tb.name
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range maps.Keys(m) {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

type attrs = map[string]types.AttributeValue

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
func num(n string) types.AttributeValue { return &types.AttributeValueMemberN{Value: n} }

// padded returns an item of exactly size bytes by DynamoDB's rules: base
// (whose size the caller gives) plus a string attribute "pad".
func padded(base attrs, baseSize, size int) attrs {
	it := maps.Clone(base)
	it["pad"] = str(strings.Repeat("x", size-baseSize-len("pad")))
	return it
}

// keyed returns {pk: S(pk)} with its size.
func keyed(pk string) (attrs, int) { return attrs{"pk": str(pk)}, len("pk") + len(pk) }

func (l *lab) put(table string, it attrs) {
	l.t.Helper()
	if _, err := l.db.PutItem(l.ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: it}); err != nil {
		l.t.Fatalf("PutItem %s: %v", table, err)
	}
}

// apiCode returns the error code of an API error ("" for nil).
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	if err != nil {
		return "not an API error: " + err.Error()
	}
	return ""
}

func expectAPIError(t *testing.T, err error, code, msg string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error = %v, want %s", err, code)
	}
	if ae.ErrorCode() != code || (msg != "" && ae.ErrorMessage() != msg) {
		t.Fatalf("error = %s: %q, want %s: %q", ae.ErrorCode(), ae.ErrorMessage(), code, msg)
	}
}

// capShape is a ConsumedCapacity reduced to what the tests compare.
type capShape struct {
	Table, Total float64
	TxUnits      float64 // Read/WriteCapacityUnits at the top level; 0 when absent
	HasTable     bool
	GSI, LSI     map[string]float64
	TableTxUnits float64
}

func shapeOf(cc *types.ConsumedCapacity) capShape {
	var s capShape
	if cc == nil {
		return s
	}
	s.Total = aws.ToFloat64(cc.CapacityUnits)
	s.TxUnits = aws.ToFloat64(cc.ReadCapacityUnits) + aws.ToFloat64(cc.WriteCapacityUnits)
	if cc.Table != nil {
		s.HasTable = true
		s.Table = aws.ToFloat64(cc.Table.CapacityUnits)
		s.TableTxUnits = aws.ToFloat64(cc.Table.ReadCapacityUnits) + aws.ToFloat64(cc.Table.WriteCapacityUnits)
	}
	arms := func(m map[string]types.Capacity) map[string]float64 {
		if m == nil {
			return nil
		}
		out := map[string]float64{}
		for k, v := range m {
			out[k] = aws.ToFloat64(v.CapacityUnits)
		}
		return out
	}
	s.GSI, s.LSI = arms(cc.GlobalSecondaryIndexes), arms(cc.LocalSecondaryIndexes)
	return s
}

// indexes is the expected INDEXES shape of a non-transactional request.
func indexes(total, table float64, gsi, lsi map[string]float64) capShape {
	return capShape{Total: total, Table: table, HasTable: true, GSI: gsi, LSI: lsi}
}

func sameShape(t *testing.T, what string, got *types.ConsumedCapacity, want capShape) {
	t.Helper()
	g := shapeOf(got)
	if fmt.Sprint(g) != fmt.Sprint(want) {
		t.Errorf("%s: ConsumedCapacity = %+v, want %+v", what, g, want)
	}
}

// ---------------------------------------------------------------------------
// Item sizes and single-item operations.
// ---------------------------------------------------------------------------

func TestCapacityWritesAreSizedInKilobytes(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("cap_writes", "pk"))
	key, ks := keyed("k1")
	cases := []struct {
		name   string
		before attrs // item stored first (nil: none)
		size   int   // size of the item put
		want   float64
	}{
		{"1.5 KB item costs 2 WCU", nil, 1536, 2},
		{"exactly 1 KB costs 1 WCU", nil, 1024, 1},
		{"1 KB plus a byte costs 2 WCU", nil, 1025, 2},
		{"tiny item costs 1 WCU", nil, 10, 1},
		{"overwrite is sized on the larger old item", padded(key, ks, 2100), 100, 3},
		{"overwrite is sized on the larger new item", padded(key, ks, 100), 3000, 3},
	}
	for _, c := range cases {
		if c.before != nil {
			l.put(tbl, c.before)
		} else {
			l.db.DeleteItem(l.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: key})
		}
		out, err := l.db.PutItem(l.ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: padded(key, ks, c.size),
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		cc := out.ConsumedCapacity
		if aws.ToString(cc.TableName) != tbl || aws.ToFloat64(cc.CapacityUnits) != c.want {
			t.Errorf("%s: %s %v, want %s %v", c.name, aws.ToString(cc.TableName), aws.ToFloat64(cc.CapacityUnits), tbl, c.want)
		}
		// Single-item writes report CapacityUnits alone, as DynamoDB does.
		if cc.WriteCapacityUnits != nil || cc.ReadCapacityUnits != nil || cc.Table != nil {
			t.Errorf("%s: TOTAL reported more than CapacityUnits: %+v", c.name, cc)
		}
	}
}

func TestCapacityDeleteAndUpdate(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("cap_del_upd", "pk"))
	key, ks := keyed("k1")
	total := types.ReturnConsumedCapacityTotal

	l.put(tbl, padded(key, ks, 2049))
	del, err := l.db.DeleteItem(l.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: key, ReturnConsumedCapacity: total})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToFloat64(del.ConsumedCapacity.CapacityUnits); got != 3 {
		t.Errorf("delete of a 2049-byte item: %v WCU, want 3", got)
	}
	del, err = l.db.DeleteItem(l.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: key, ReturnConsumedCapacity: total})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToFloat64(del.ConsumedCapacity.CapacityUnits); got != 1 {
		t.Errorf("delete of a missing item: %v WCU, want 1", got)
	}
	upd, err := l.db.UpdateItem(l.ctx, &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: key,
		UpdateExpression: aws.String("SET a = :a"), ExpressionAttributeValues: attrs{":a": str(strings.Repeat("y", 2100))},
		ReturnConsumedCapacity: total})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToFloat64(upd.ConsumedCapacity.CapacityUnits); got != 3 {
		t.Errorf("update creating a ~2.1 KB item: %v WCU, want 3", got)
	}
	upd, err = l.db.UpdateItem(l.ctx, &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: key,
		UpdateExpression: aws.String("SET a = :a"), ExpressionAttributeValues: attrs{":a": str("short")},
		ReturnConsumedCapacity: total})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToFloat64(upd.ConsumedCapacity.CapacityUnits); got != 3 {
		t.Errorf("update shrinking a ~2.1 KB item: %v WCU, want 3 (the larger image)", got)
	}
}

func TestCapacityReadsAreSizedInFourKilobytes(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("cap_reads", "pk"))
	key, ks := keyed("big")
	l.put(tbl, padded(key, ks, 5*1024))
	cases := []struct {
		name       string
		key        attrs
		consistent bool
		projection string
		want       float64
	}{
		{"5 KB eventually consistent", key, false, "", 1},
		{"5 KB strongly consistent", key, true, "", 2},
		{"projection does not reduce the cost", key, true, "pk", 2},
		{"missing item eventually consistent", attrs{"pk": str("none")}, false, "", 0.5},
		{"missing item strongly consistent", attrs{"pk": str("none")}, true, "", 1},
	}
	for _, c := range cases {
		in := &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: c.key, ConsistentRead: aws.Bool(c.consistent),
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal}
		if c.projection != "" {
			in.ProjectionExpression = aws.String(c.projection)
		}
		out, err := l.db.GetItem(l.ctx, in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := aws.ToFloat64(out.ConsumedCapacity.CapacityUnits); got != c.want {
			t.Errorf("%s: %v RCU, want %v", c.name, got, c.want)
		}
	}
	// Exactly 4 KB is one unit, a byte more is two.
	edge, es := keyed("edge")
	for size, want := range map[int]float64{4096: 1, 4097: 2} {
		l.put(tbl, padded(edge, es, size))
		out, err := l.db.GetItem(l.ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: edge, ConsistentRead: aws.Bool(true),
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToFloat64(out.ConsumedCapacity.CapacityUnits); got != want {
			t.Errorf("GetItem of %d bytes: %v RCU, want %v", size, got, want)
		}
	}
}

// TestCapacityItemSizeRules pins the size of every attribute type: an item
// of exactly 1024 bytes by DynamoDB's published rules costs one write
// unit, one byte more costs two, so a miscount of a single byte fails.
func TestCapacityItemSizeRules(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("cap_sizes", "pk"))
	base := attrs{
		"pk":  str("size"),   // 2 + 4
		"n":   num("123.45"), // 1 + 4: five significant digits, pairs aligned on the point, + 1
		"neg": num("-12"),    // 3 + 3: one pair + 1, + 1 for the sign
		"big": num("100"),    // 3 + 2: trailing zeros do not count
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{ // 1 + 3 + (1+2) + (1+2) + (1+1)
			str("ab"), num("1"), &types.AttributeValueMemberBOOL{Value: true}}},
		"m":  &types.AttributeValueMemberM{Value: attrs{"k": str("v")}}, // 1 + 3 + 1 + 1 + 1
		"z":  &types.AttributeValueMemberNULL{Value: true},              // 1 + 1
		"ss": &types.AttributeValueMemberSS{Value: []string{"a", "bc"}}, // 2 + 3
		"bs": &types.AttributeValueMemberBS{Value: [][]byte{{1, 2}}},    // 2 + 2
		"nested": &types.AttributeValueMemberM{Value: attrs{ // 6 + 3 + (1 + 5 + 3)
			"inner": &types.AttributeValueMemberL{Value: []types.AttributeValue{}}}},
	}
	const baseSize = 6 + 5 + 6 + 5 + 12 + 7 + 2 + 5 + 4 + 18
	for size, want := range map[int]float64{1024: 1, 1025: 2, 2048: 2, 2049: 3} {
		out, err := l.db.PutItem(l.ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: padded(base, baseSize, size),
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToFloat64(out.ConsumedCapacity.CapacityUnits); got != want {
			t.Errorf("item of %d bytes: %v WCU, want %v", size, got, want)
		}
		// Delete it so the next put is not sized on this one.
		l.db.DeleteItem(l.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: attrs{"pk": str("size")}})
	}
}

// ---------------------------------------------------------------------------
// Query and Scan: summed, rounded once, before the filter.
// ---------------------------------------------------------------------------

func TestCapacityQueryAndScanRoundOnce(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("cap_query", "pk", "sk"))
	for i := range 10 {
		tag := []string{"a", "b"}[i%2]
		base := attrs{"pk": str("p"), "sk": str(fmt.Sprint("s", i)), "tag": str(tag)}
		l.put(tbl, padded(base, 3+4+4, 1000))
	}
	query := func(mut func(*dynamodb.QueryInput)) float64 {
		in := &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p"),
			ExpressionAttributeValues: attrs{":p": str("p")}, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal}
		if mut != nil {
			mut(in)
		}
		out, err := l.db.Query(l.ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToFloat64(out.ConsumedCapacity.CapacityUnits)
	}
	cases := []struct {
		name string
		mut  func(*dynamodb.QueryInput)
		want float64
	}{
		// Ten 1000-byte items: 10000 bytes, rounded once to three 4 KB units.
		{"ten ~1 KB items eventually consistent", nil, 1.5},
		{"ten ~1 KB items strongly consistent", func(in *dynamodb.QueryInput) { in.ConsistentRead = aws.Bool(true) }, 3},
		{"filter does not reduce the cost", func(in *dynamodb.QueryInput) {
			in.FilterExpression = aws.String("tag = :t")
			in.ExpressionAttributeValues[":t"] = str("none")
		}, 1.5},
		{"projection does not reduce the cost", func(in *dynamodb.QueryInput) { in.ProjectionExpression = aws.String("sk") }, 1.5},
		{"Select COUNT costs the same", func(in *dynamodb.QueryInput) { in.Select = types.SelectCount }, 1.5},
		{"Limit bounds the items read", func(in *dynamodb.QueryInput) { in.Limit = aws.Int32(4) }, 0.5},
		{"Limit 5 reads 5000 bytes", func(in *dynamodb.QueryInput) { in.Limit = aws.Int32(5) }, 1},
		{"empty result costs the minimum", func(in *dynamodb.QueryInput) { in.ExpressionAttributeValues[":p"] = str("none") }, 0.5},
	}
	for _, c := range cases {
		if got := query(c.mut); got != c.want {
			t.Errorf("Query, %s: %v RCU, want %v", c.name, got, c.want)
		}
	}
	out, err := l.db.Scan(l.ctx, &dynamodb.ScanInput{TableName: aws.String(tbl), FilterExpression: aws.String("tag = :t"),
		ExpressionAttributeValues: attrs{":t": str("b")}, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToFloat64(out.ConsumedCapacity.CapacityUnits); got != 1.5 || out.Count != 5 || out.ScannedCount != 10 {
		t.Errorf("filtered Scan: %v RCU, Count %d, ScannedCount %d; want 1.5, 5, 10", got, out.Count, out.ScannedCount)
	}
}

// ---------------------------------------------------------------------------
// Secondary indexes.
// ---------------------------------------------------------------------------

func TestCapacityGlobalSecondaryIndexWrites(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("cap_gsi", "pk").
		withGSI("by_g", "g", "", types.ProjectionTypeInclude, "proj").
		withGSI("keys", "g", "", types.ProjectionTypeKeysOnly))
	k := attrs{"pk": str("a")}
	type step struct {
		name   string
		before attrs  // stored first (nil: no item)
		update string // UpdateExpression applied to it (empty: put after)
		values attrs
		after  attrs // put instead of an update
		want   capShape
	}
	base := attrs{"pk": str("a"), "g": str("g1"), "proj": str("p"), "xo": str("o")}
	with := func(it attrs, kv ...any) attrs {
		out := maps.Clone(it)
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(out, kv[i].(string))
				continue
			}
			out[kv[i].(string)] = kv[i+1].(types.AttributeValue)
		}
		return out
	}
	steps := []step{
		{name: "new item enters both indexes", after: base,
			want: indexes(3, 1, map[string]float64{"by_g": 1, "keys": 1}, nil)},
		{name: "changing the index key is a delete and a put", before: base, update: "SET g = :g", values: attrs{":g": str("g2")},
			want: indexes(5, 1, map[string]float64{"by_g": 2, "keys": 2}, nil)},
		{name: "changing a projected attribute is one write", before: base, update: "SET proj = :v", values: attrs{":v": str("p2")},
			want: indexes(2, 1, map[string]float64{"by_g": 1}, nil)},
		{name: "changing an attribute no index projects costs no index", before: base, update: "SET xo = :v", values: attrs{":v": str("o2")},
			want: indexes(1, 1, nil, nil)},
		{name: "removing the index key leaves the index for one write", before: base, update: "REMOVE g",
			want: indexes(3, 1, map[string]float64{"by_g": 1, "keys": 1}, nil)},
		{name: "an item in no index before or after costs no index", before: with(base, "g", nil), update: "SET xo = :v", values: attrs{":v": str("o3")},
			want: indexes(1, 1, nil, nil)},
		{name: "an identical overwrite costs no index", before: base, after: base,
			want: indexes(1, 1, nil, nil)},
	}
	for _, s := range steps {
		l.db.DeleteItem(l.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: k})
		if s.before != nil {
			l.put(tbl, s.before)
		}
		var got *types.ConsumedCapacity
		if s.update != "" {
			in := &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: k, UpdateExpression: aws.String(s.update),
				ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes}
			if s.values != nil {
				in.ExpressionAttributeValues = s.values
			}
			out, err := l.db.UpdateItem(l.ctx, in)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			got = out.ConsumedCapacity
		} else {
			out, err := l.db.PutItem(l.ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: s.after,
				ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			got = out.ConsumedCapacity
		}
		sameShape(t, s.name, got, s.want)
	}

	// Index entries are sized on the projected item, each half of a key
	// move rounded on its own: ~1.5 KB entries moving cost 2 + 2.
	big := with(base, "proj", str(strings.Repeat("x", 1500)))
	l.put(tbl, big)
	out, err := l.db.UpdateItem(l.ctx, &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: k,
		UpdateExpression: aws.String("SET g = :g"), ExpressionAttributeValues: attrs{":g": str("g9")},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	if err != nil {
		t.Fatal(err)
	}
	sameShape(t, "key move of ~1.5 KB entries", out.ConsumedCapacity, indexes(8, 2, map[string]float64{"by_g": 4, "keys": 2}, nil))

	// TOTAL folds the index arms into CapacityUnits and reports no arms.
	put, err := l.db.PutItem(l.ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: with(base, "pk", str("b")),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		t.Fatal(err)
	}
	sameShape(t, "TOTAL with indexes", put.ConsumedCapacity, capShape{Total: 3})
}

func TestCapacityLocalSecondaryIndexes(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("cap_lsi", "pk", "sk").
		withLSI("by_l", "l", types.ProjectionTypeKeysOnly).
		withGSI("by_g", "g", "", types.ProjectionTypeAll))
	k := attrs{"pk": str("a"), "sk": str("1")}
	out, err := l.db.PutItem(l.ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl),
		Item:                   attrs{"pk": str("a"), "sk": str("1"), "l": str("x"), "g": str("y"), "big": str(strings.Repeat("b", 3000))},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	if err != nil {
		t.Fatal(err)
	}
	// Table 3 KB; the KEYS_ONLY LSI entry is tiny; the ALL GSI holds 3 KB.
	sameShape(t, "put into an LSI and a GSI", out.ConsumedCapacity,
		indexes(7, 3, map[string]float64{"by_g": 3}, map[string]float64{"by_l": 1}))

	upd, err := l.db.UpdateItem(l.ctx, &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: k,
		UpdateExpression: aws.String("SET l = :l"), ExpressionAttributeValues: attrs{":l": str("z")},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	if err != nil {
		t.Fatal(err)
	}
	sameShape(t, "moving the LSI sort key", upd.ConsumedCapacity,
		indexes(8, 3, map[string]float64{"by_g": 3}, map[string]float64{"by_l": 2}))

	// Reading the LSI: index entries charge the index; asking for
	// attributes it does not project also reads the table.
	q := func(sel types.Select) *types.ConsumedCapacity {
		out, err := l.db.Query(l.ctx, &dynamodb.QueryInput{TableName: aws.String(tbl), IndexName: aws.String("by_l"),
			KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: attrs{":p": str("a")},
			Select: sel, ConsistentRead: aws.Bool(true), ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
		if err != nil {
			t.Fatal(err)
		}
		return out.ConsumedCapacity
	}
	sameShape(t, "LSI query of projected attributes", q(types.SelectAllProjectedAttributes),
		indexes(1, 0, nil, map[string]float64{"by_l": 1}))
	sameShape(t, "LSI query fetching from the table", q(types.SelectAllAttributes),
		indexes(2, 1, nil, map[string]float64{"by_l": 1}))

	// A GSI query charges the index only.
	g, err := l.db.Query(l.ctx, &dynamodb.QueryInput{TableName: aws.String(tbl), IndexName: aws.String("by_g"),
		KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: attrs{":g": str("y")},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	if err != nil {
		t.Fatal(err)
	}
	sameShape(t, "GSI query", g.ConsumedCapacity, indexes(0.5, 0, map[string]float64{"by_g": 0.5}, nil))
}

// ---------------------------------------------------------------------------
// Transactions and batches.
// ---------------------------------------------------------------------------

func TestCapacityTransactions(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("cap_tx", "pk").withGSI("by_g", "g", "", types.ProjectionTypeAll))
	other := l.create(newTable("cap_tx_other", "pk"))
	put := func(table string, it attrs) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: it}}
	}
	out, err := l.db.TransactWriteItems(l.ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems:          []types.TransactWriteItem{put(tbl, attrs{"pk": str("a")}), put(tbl, attrs{"pk": str("b")})},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.ConsumedCapacity) != 1 {
		t.Fatalf("ConsumedCapacity = %+v, want one table", out.ConsumedCapacity)
	}
	cc := out.ConsumedCapacity[0]
	if aws.ToString(cc.TableName) != tbl || aws.ToFloat64(cc.CapacityUnits) != 4 || aws.ToFloat64(cc.WriteCapacityUnits) != 4 || cc.ReadCapacityUnits != nil {
		t.Errorf("two-put transaction: %+v, want CapacityUnits 4 and WriteCapacityUnits 4", cc)
	}

	// The table arm doubles, index arms do not; a ConditionCheck is a
	// doubled write of the item it read; each table reports its own.
	l.put(other, padded(attrs{"pk": str("c")}, 3, 3000))
	out, err = l.db.TransactWriteItems(l.ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems: []types.TransactWriteItem{
			put(tbl, attrs{"pk": str("d"), "g": str("x")}),
			{ConditionCheck: &types.ConditionCheck{TableName: aws.String(other), Key: attrs{"pk": str("c")},
				ConditionExpression: aws.String("attribute_exists(pk)")}},
		},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	if err != nil {
		t.Fatal(err)
	}
	byTable := map[string]types.ConsumedCapacity{}
	for _, c := range out.ConsumedCapacity {
		byTable[aws.ToString(c.TableName)] = c
	}
	main, chk := byTable[tbl], byTable[other]
	if got := shapeOf(&main); got.Total != 3 || got.Table != 2 || got.TableTxUnits != 2 || got.TxUnits != 3 || fmt.Sprint(got.GSI) != "map[by_g:1]" {
		t.Errorf("put into a GSI in a transaction: %+v, want total 3, table 2, by_g 1, WriteCapacityUnits at each level", got)
	}
	if g := main.GlobalSecondaryIndexes["by_g"]; aws.ToFloat64(g.WriteCapacityUnits) != 1 {
		t.Errorf("transactional index arm: %+v, want WriteCapacityUnits 1", g)
	}
	if got := shapeOf(&chk); got.Total != 6 || got.Table != 6 {
		t.Errorf("ConditionCheck of a ~3 KB item: %+v, want 6 (a doubled 3 WCU write)", got)
	}

	get, err := l.db.TransactGetItems(l.ctx, &dynamodb.TransactGetItemsInput{
		TransactItems: []types.TransactGetItem{
			{Get: &types.Get{TableName: aws.String(tbl), Key: attrs{"pk": str("a")}}},
			{Get: &types.Get{TableName: aws.String(other), Key: attrs{"pk": str("c")}}},
			{Get: &types.Get{TableName: aws.String(tbl), Key: attrs{"pk": str("missing")}}},
		},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		t.Fatal(err)
	}
	reads := map[string]float64{}
	for _, c := range get.ConsumedCapacity {
		if aws.ToFloat64(c.ReadCapacityUnits) != aws.ToFloat64(c.CapacityUnits) || c.WriteCapacityUnits != nil {
			t.Errorf("TransactGetItems capacity %+v, want ReadCapacityUnits = CapacityUnits", c)
		}
		reads[aws.ToString(c.TableName)] = aws.ToFloat64(c.CapacityUnits)
	}
	if reads[tbl] != 4 || reads[other] != 2 {
		t.Errorf("TransactGetItems: %v, want %s 4 (two items, doubled) and %s 2", reads, tbl, other)
	}
}

func TestCapacityBatches(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	a := l.create(newTable("cap_batch_a", "pk"))
	b := l.create(newTable("cap_batch_b", "pk"))
	l.put(b, attrs{"pk": str("gone")})
	wr := func(it attrs) types.WriteRequest { return types.WriteRequest{PutRequest: &types.PutRequest{Item: it}} }
	out, err := l.db.BatchWriteItem(l.ctx, &dynamodb.BatchWriteItemInput{
		RequestItems: map[string][]types.WriteRequest{
			a: {wr(attrs{"pk": str("1")}), wr(attrs{"pk": str("2")}), wr(padded(attrs{"pk": str("3")}, 3, 1500))},
			b: {{DeleteRequest: &types.DeleteRequest{Key: attrs{"pk": str("gone")}}}, {DeleteRequest: &types.DeleteRequest{Key: attrs{"pk": str("never")}}}},
		},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, c := range out.ConsumedCapacity {
		got[aws.ToString(c.TableName)] = aws.ToFloat64(c.CapacityUnits)
	}
	if got[a] != 4 || got[b] != 2 || len(got) != 2 {
		t.Errorf("BatchWriteItem capacity %v, want %s 4 and %s 2", got, a, b)
	}

	big := padded(attrs{"pk": str("big")}, 5, 6*1024+512)
	l.put(a, big)
	gets, err := l.db.BatchGetItem(l.ctx, &dynamodb.BatchGetItemInput{
		RequestItems: map[string]types.KeysAndAttributes{
			// Each item is rounded on its own: 4 KB + 8 KB, strongly.
			a: {Keys: []attrs{{"pk": str("1")}, {"pk": str("big")}}, ConsistentRead: aws.Bool(true)},
			// Eventually consistent: half a unit per item, missing ones too.
			b: {Keys: []attrs{{"pk": str("x")}, {"pk": str("y")}, {"pk": str("z")}}},
		},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]float64{}
	for _, c := range gets.ConsumedCapacity {
		got[aws.ToString(c.TableName)] = aws.ToFloat64(c.CapacityUnits)
	}
	if got[a] != 3 || got[b] != 1.5 {
		t.Errorf("BatchGetItem capacity %v, want %s 3 and %s 1.5", got, a, b)
	}
}

// TestCapacityFailedConditionalWritesStillCost checks the meter that
// stands in for CloudWatch: DynamoDB returns no ConsumedCapacity with a
// ConditionalCheckFailedException, but the units are consumed.
func TestCapacityFailedConditionalWritesStillCost(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("cap_failed", "pk"))
	key, ks := keyed("k")
	l.put(tbl, padded(key, ks, 2500)) // 3 WCU
	l.store.ResetConsumedCapacity()
	cond := aws.String("attribute_not_exists(pk)")
	_, err := l.db.PutItem(l.ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: key, ConditionExpression: cond,
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	expectAPIError(t, err, "ConditionalCheckFailedException", "The conditional request failed")
	_, err = l.db.UpdateItem(l.ctx, &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: key, ConditionExpression: cond,
		UpdateExpression: aws.String("SET a = :a"), ExpressionAttributeValues: attrs{":a": num("1")}})
	expectAPIError(t, err, "ConditionalCheckFailedException", "")
	_, err = l.db.DeleteItem(l.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: attrs{"pk": str("absent")},
		ConditionExpression: aws.String("attribute_exists(pk)")})
	expectAPIError(t, err, "ConditionalCheckFailedException", "")
	// 3 + 3 for the two writes that found the 2.5 KB item, 1 for the one
	// that found nothing.
	if got := l.store.ConsumedCapacity(tbl); got.WriteCapacityUnits != 7 || got.ReadCapacityUnits != 0 {
		t.Errorf("consumed after three failed conditional writes: %+v, want 7 WCU", got)
	}
	l.db.GetItem(l.ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: key})
	if got := l.store.ConsumedCapacity(tbl); got.ReadCapacityUnits != 0.5 {
		t.Errorf("consumed read units %v, want 0.5", got.ReadCapacityUnits)
	}
}

// TestCapacityMeterOverHTTP reads the meter through the admin endpoint.
func TestCapacityMeterOverHTTP(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("cap_meter", "pk").withGSI("by_g", "g", "", types.ProjectionTypeAll))
	l.put(tbl, attrs{"pk": str("a"), "g": str("x")})
	var got ddblocal.Consumed
	adminJSON(t, "GET", l.url+"/_ddblocal/consumed?table="+tbl, nil, &got)
	if got.WriteCapacityUnits != 1 || got.GlobalSecondaryIndexes["by_g"].WriteCapacityUnits != 1 {
		t.Errorf("meter over HTTP: %+v, want 1 WCU on the table and 1 on by_g", got)
	}
	adminJSON(t, "DELETE", l.url+"/_ddblocal/consumed", nil, nil)
	if got := l.store.ConsumedCapacity(tbl); got.WriteCapacityUnits != 0 {
		t.Errorf("meter after reset: %+v", got)
	}
}
