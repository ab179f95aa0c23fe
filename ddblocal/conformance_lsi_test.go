package ddblocal_test

// Conformance of local secondary indexes: Query and Scan on an LSI (order
// by the index sort key, sparseness, projections, fetching non-projected
// attributes from the table, consistent reads, pagination across tied
// index keys) and ItemCollectionMetrics on tables with LSIs.

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// lsiFixture is a table with three LSIs of each projection type and a
// GSI, filled with one partition of items.
func lsiFixture(t *testing.T) *cfStore {
	s := newCF(t)
	table("lsis", "pk:S", "sk:S").
		lsi("byRank", "rank:N", types.ProjectionTypeAll).
		lsi("byTagKeys", "tag:S", types.ProjectionTypeKeysOnly).
		lsi("byTagInc", "tag2:S", types.ProjectionTypeInclude, "color").
		gsi("byColor", "color:S", "", types.ProjectionTypeKeysOnly).
		create(s)
	for i, rank := range []string{"10", "9", "100", "-1", "2.5"} {
		s.put("lsis", avmap{"pk": vS("p"), "sk": vS(fmt.Sprintf("s%d", i)), "rank": vN(rank),
			"tag": vS(fmt.Sprintf("t%d", 4-i)), "tag2": vS(fmt.Sprintf("u%d", i)), "color": vS("red"), "size": vN(fmt.Sprint(i))})
	}
	// Sparse: no index sort keys at all.
	s.put("lsis", avmap{"pk": vS("p"), "sk": vS("bare"), "color": vS("blue")})
	// Another partition.
	s.put("lsis", avmap{"pk": vS("q"), "sk": vS("s0"), "rank": vN("1"), "tag": vS("t0"), "tag2": vS("u0")})
	return s
}

func lsiQuery(index string, extra func(*dynamodb.QueryInput)) *dynamodb.QueryInput {
	in := &dynamodb.QueryInput{TableName: aws.String("lsis"), IndexName: aws.String(index),
		KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: avmap{":p": vS("p")}}
	if extra != nil {
		extra(in)
	}
	return in
}

func TestLSIQueryOrderAndSparseness(t *testing.T) {
	t.Parallel()
	s := lsiFixture(t)
	items, _ := s.queryAll(lsiQuery("byRank", nil))
	// Ordered by the numeric index sort key; the item without rank is absent.
	sameList(t, "ranks", attrsOf(items, "rank"), []string{"N:-1", "N:2.5", "N:9", "N:10", "N:100"})
	items, _ = s.queryAll(lsiQuery("byRank", func(in *dynamodb.QueryInput) { in.ScanIndexForward = aws.Bool(false) }))
	sameList(t, "ranks descending", attrsOf(items, "rank"), []string{"N:100", "N:10", "N:9", "N:2.5", "N:-1"})
	items, _ = s.queryAll(lsiQuery("byRank", func(in *dynamodb.QueryInput) {
		in.KeyConditionExpression = aws.String("pk = :p AND #r BETWEEN :lo AND :hi")
		in.ExpressionAttributeNames = map[string]string{"#r": "rank"}
		in.ExpressionAttributeValues[":lo"] = vN("2")
		in.ExpressionAttributeValues[":hi"] = vN("10")
	}))
	sameList(t, "rank range", attrsOf(items, "sk"), []string{"S:s4", "S:s1", "S:s0"})
	// ALL projection returns whole items.
	sameItem(t, items[2], avmap{"pk": vS("p"), "sk": vS("s0"), "rank": vN("10"), "tag": vS("t4"), "tag2": vS("u0"), "color": vS("red"), "size": vN("0")})
	// Consistent reads are allowed on an LSI.
	out, err := s.c.Query(bg, lsiQuery("byRank", func(in *dynamodb.QueryInput) { in.ConsistentRead = aws.Bool(true) }))
	if err != nil || out.Count != 5 || out.ScannedCount != 5 {
		t.Fatalf("consistent LSI query: %v %+v", err, out)
	}
	// ... but not on a GSI.
	_, err = s.c.Query(bg, &dynamodb.QueryInput{TableName: aws.String("lsis"), IndexName: aws.String("byColor"), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("color = :c"), ExpressionAttributeValues: avmap{":c": vS("red")}})
	validationErr(t, err, "Consistent reads are not supported on global secondary indexes")
	// Scan of an LSI visits only items with its sort key.
	if got := len(s.scanAll(&dynamodb.ScanInput{TableName: aws.String("lsis"), IndexName: aws.String("byRank")})); got != 6 {
		t.Errorf("LSI scan: %d items, want 6", got)
	}
}

func TestLSIProjections(t *testing.T) {
	t.Parallel()
	s := lsiFixture(t)
	// KEYS_ONLY: table keys and the index key.
	items, _ := s.queryAll(lsiQuery("byTagKeys", nil))
	sameList(t, "tag order", attrsOf(items, "tag"), []string{"S:t0", "S:t1", "S:t2", "S:t3", "S:t4"})
	sameItem(t, items[0], avmap{"pk": vS("p"), "sk": vS("s4"), "tag": vS("t0")})
	// INCLUDE: keys plus the included attributes.
	items, _ = s.queryAll(lsiQuery("byTagInc", nil))
	sameItem(t, items[0], avmap{"pk": vS("p"), "sk": vS("s0"), "tag2": vS("u0"), "color": vS("red")})
	// Select ALL_PROJECTED_ATTRIBUTES is the default.
	items2, _ := s.queryAll(lsiQuery("byTagInc", func(in *dynamodb.QueryInput) { in.Select = types.SelectAllProjectedAttributes }))
	sameItem(t, items2[0], items[0])
	// Select ALL_ATTRIBUTES on a non-ALL LSI fetches the items from the table.
	items, _ = s.queryAll(lsiQuery("byTagKeys", func(in *dynamodb.QueryInput) { in.Select = types.SelectAllAttributes }))
	sameItem(t, items[0], avmap{"pk": vS("p"), "sk": vS("s4"), "rank": vN("2.5"), "tag": vS("t0"), "tag2": vS("u4"), "color": vS("red"), "size": vN("4")})
	// So does a projection naming an attribute the index does not hold.
	items, _ = s.queryAll(lsiQuery("byTagKeys", func(in *dynamodb.QueryInput) {
		in.ProjectionExpression = aws.String("#s, tag")
		in.ExpressionAttributeNames = map[string]string{"#s": "size"}
	}))
	sameItem(t, items[1], avmap{"size": vN("3"), "tag": vS("t1")})
	// A filter on a non-projected attribute sees the table's item.
	out, err := s.c.Query(bg, lsiQuery("byTagKeys", func(in *dynamodb.QueryInput) {
		in.FilterExpression = aws.String("#s >= :z")
		in.ExpressionAttributeNames = map[string]string{"#s": "size"}
		in.ExpressionAttributeValues[":z"] = vN("3")
		in.ProjectionExpression = aws.String("sk")
	}))
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 2 || out.ScannedCount != 5 {
		t.Errorf("filtered LSI query: Count %d ScannedCount %d", out.Count, out.ScannedCount)
	}
	sameList(t, "filtered", attrsOf(out.Items, "sk"), []string{"S:s4", "S:s3"})
	// Fetched for the filter only, the items still come back as projected.
	items, _ = s.queryAll(lsiQuery("byTagKeys", func(in *dynamodb.QueryInput) {
		in.FilterExpression = aws.String("#s = :z")
		in.ExpressionAttributeNames = map[string]string{"#s": "size"}
		in.ExpressionAttributeValues[":z"] = vN("4")
	}))
	if len(items) != 1 {
		t.Fatalf("filter on a fetched attribute: %d items", len(items))
	}
	sameItem(t, items[0], avmap{"pk": vS("p"), "sk": vS("s4"), "tag": vS("t0")})
	// Select COUNT.
	out, err = s.c.Query(bg, lsiQuery("byTagInc", func(in *dynamodb.QueryInput) { in.Select = types.SelectCount }))
	if err != nil || out.Count != 5 || out.Items != nil {
		t.Errorf("count query: %v %d %v", err, out.Count, out.Items)
	}
	// A GSI with a partial projection refuses ALL_ATTRIBUTES.
	_, err = s.c.Query(bg, &dynamodb.QueryInput{TableName: aws.String("lsis"), IndexName: aws.String("byColor"), Select: types.SelectAllAttributes,
		KeyConditionExpression: aws.String("color = :c"), ExpressionAttributeValues: avmap{":c": vS("red")}})
	validationErr(t, err, "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index byColor because its projection type is not ALL")
}

func TestLSIPaginationAcrossTiedSortKeys(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	table("ties", "pk:S", "sk:S").lsi("byL", "l:S", types.ProjectionTypeAll).create(s)
	for i := range 7 {
		s.put("ties", avmap{"pk": vS("p"), "sk": vS(fmt.Sprintf("s%d", i)), "l": vS(fmt.Sprintf("v%d", i%2))})
	}
	var seen []string
	var start avmap
	for pages := 0; ; pages++ {
		out, err := s.c.Query(bg, &dynamodb.QueryInput{TableName: aws.String("ties"), IndexName: aws.String("byL"), Limit: aws.Int32(2),
			KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: avmap{":p": vS("p")}, ExclusiveStartKey: start})
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, attrsOf(out.Items, "sk")...)
		if out.LastEvaluatedKey == nil {
			break
		}
		if got := itemString(out.LastEvaluatedKey); got != itemString(avmap{"pk": out.Items[len(out.Items)-1]["pk"], "sk": out.Items[len(out.Items)-1]["sk"], "l": out.Items[len(out.Items)-1]["l"]}) {
			t.Fatalf("LastEvaluatedKey %s", got)
		}
		start = out.LastEvaluatedKey
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
	}
	// By index key, then by table sort key within ties.
	sameList(t, "walk", seen, []string{"S:s0", "S:s2", "S:s4", "S:s6", "S:s1", "S:s3", "S:s5"})
}

func TestLSIFollowsWrites(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	table("moves", "pk:S", "sk:S").lsi("byL", "l:N", types.ProjectionTypeKeysOnly).create(s)
	s.put("moves", avmap{"pk": vS("p"), "sk": vS("a"), "l": vN("5")})
	s.put("moves", avmap{"pk": vS("p"), "sk": vS("b"), "l": vN("7")})
	q := func() []string {
		items, _ := s.queryAll(&dynamodb.QueryInput{TableName: aws.String("moves"), IndexName: aws.String("byL"), ConsistentRead: aws.Bool(true),
			KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: avmap{":p": vS("p")}})
		return attrsOf(items, "sk")
	}
	sameList(t, "initial", q(), []string{"S:a", "S:b"})
	if _, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: aws.String("moves"), Key: avmap{"pk": vS("p"), "sk": vS("a")},
		UpdateExpression: aws.String("SET l = :v"), ExpressionAttributeValues: avmap{":v": vN("9")}}); err != nil {
		t.Fatal(err)
	}
	sameList(t, "after moving a", q(), []string{"S:b", "S:a"})
	if _, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: aws.String("moves"), Key: avmap{"pk": vS("p"), "sk": vS("b")},
		UpdateExpression: aws.String("REMOVE l")}); err != nil {
		t.Fatal(err)
	}
	sameList(t, "after removing b's key", q(), []string{"S:a"})
	if _, err := s.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: aws.String("moves"), Key: avmap{"pk": vS("p"), "sk": vS("a")}}); err != nil {
		t.Fatal(err)
	}
	sameList(t, "after delete", q(), nil)
	// An LSI key of the wrong type is refused.
	_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String("moves"), Item: avmap{"pk": vS("p"), "sk": vS("c"), "l": vS("x")}})
	apiErr(t, err, "ValidationException", "")
	// An LSI description has no status and no throughput of its own.
	_, raw := s.raw("DescribeTable", map[string]any{"TableName": "moves"})
	l := raw["Table"].(map[string]any)["LocalSecondaryIndexes"].([]any)[0].(map[string]any)
	keys := fmt.Sprint(slices.Sorted(maps.Keys(l)))
	if keys != "[IndexArn IndexName IndexSizeBytes ItemCount KeySchema Projection]" || l["ItemCount"] != float64(0) {
		t.Errorf("LSI description %v", l)
	}
}

func TestItemCollectionMetrics(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	table("coll", "pk:S", "sk:S").lsi("byL", "l:S", types.ProjectionTypeAll).create(s)
	table("nocoll", "pk:S", "sk:S").create(s)
	check := func(what string, m *types.ItemCollectionMetrics, pk string) {
		t.Helper()
		if pk == "" {
			if m != nil {
				t.Errorf("%s: unexpected ItemCollectionMetrics %+v", what, m)
			}
			return
		}
		if m == nil {
			t.Fatalf("%s: no ItemCollectionMetrics", what)
		}
		if got := itemString(m.ItemCollectionKey); got != itemString(avmap{"pk": vS(pk)}) {
			t.Errorf("%s: ItemCollectionKey %s", what, got)
		}
		if len(m.SizeEstimateRangeGB) != 2 || m.SizeEstimateRangeGB[0] > m.SizeEstimateRangeGB[1] {
			t.Errorf("%s: SizeEstimateRangeGB %v", what, m.SizeEstimateRangeGB)
		}
	}
	put, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String("coll"), ReturnItemCollectionMetrics: types.ReturnItemCollectionMetricsSize,
		Item: avmap{"pk": vS("a"), "sk": vS("1"), "l": vS("x")}})
	if err != nil {
		t.Fatal(err)
	}
	check("put", put.ItemCollectionMetrics, "a")
	upd, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: aws.String("coll"), ReturnItemCollectionMetrics: types.ReturnItemCollectionMetricsSize,
		Key: avmap{"pk": vS("a"), "sk": vS("1")}, UpdateExpression: aws.String("SET d = :d"), ExpressionAttributeValues: avmap{":d": vS("v")}})
	if err != nil {
		t.Fatal(err)
	}
	check("update", upd.ItemCollectionMetrics, "a")
	del, err := s.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: aws.String("coll"), ReturnItemCollectionMetrics: types.ReturnItemCollectionMetricsSize,
		Key: avmap{"pk": vS("a"), "sk": vS("1")}})
	if err != nil {
		t.Fatal(err)
	}
	check("delete", del.ItemCollectionMetrics, "a")
	none, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String("coll"), ReturnItemCollectionMetrics: types.ReturnItemCollectionMetricsNone,
		Item: avmap{"pk": vS("b"), "sk": vS("1")}})
	if err != nil {
		t.Fatal(err)
	}
	check("NONE", none.ItemCollectionMetrics, "")
	plain, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String("nocoll"), ReturnItemCollectionMetrics: types.ReturnItemCollectionMetricsSize,
		Item: avmap{"pk": vS("b"), "sk": vS("1")}})
	if err != nil {
		t.Fatal(err)
	}
	check("table without LSI", plain.ItemCollectionMetrics, "")
}
