package ddblocal_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestQueryKeyConditions(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	strT := table("str", "pk:S", "sk:S").create(s)
	numT := table("num", "pk:S", "sk:N").gsi("byN", "g:S", "n:N", types.ProjectionTypeAll).create(s)
	binT := table("bin", "pk:S", "sk:B").create(s)
	for _, sk := range []string{"a", "ab", "abc", "b", "ba", "c"} {
		s.put(strT, avmap{"pk": vS("p"), "sk": vS(sk)})
	}
	// Numbers sort numerically, not as strings.
	nums := []string{"-100", "-2.5", "0", "1", "2", "10", "100", "1000.5"}
	for i, n := range nums {
		s.put(numT, avmap{"pk": vS("p"), "sk": vN(n), "g": vS("x"), "n": vN(nums[len(nums)-1-i])})
	}
	for _, b := range [][]byte{{0x01}, {0x01, 0x02}, {0x01, 0xff}, {0x02}, {0xff}} {
		s.put(binT, avmap{"pk": vS("p"), "sk": vB(b)})
	}
	tests := []struct {
		name string
		tbl  string
		idx  string
		kc   string
		vals avmap
		attr string
		want []string
	}{
		{"S all", strT, "", "pk = :p", avmap{":p": vS("p")}, "sk", []string{"S:a", "S:ab", "S:abc", "S:b", "S:ba", "S:c"}},
		{"S =", strT, "", "pk = :p AND sk = :v", avmap{":p": vS("p"), ":v": vS("ab")}, "sk", []string{"S:ab"}},
		{"S <", strT, "", "pk = :p AND sk < :v", avmap{":p": vS("p"), ":v": vS("b")}, "sk", []string{"S:a", "S:ab", "S:abc"}},
		{"S <=", strT, "", "pk = :p AND sk <= :v", avmap{":p": vS("p"), ":v": vS("b")}, "sk", []string{"S:a", "S:ab", "S:abc", "S:b"}},
		{"S >", strT, "", "pk = :p AND sk > :v", avmap{":p": vS("p"), ":v": vS("b")}, "sk", []string{"S:ba", "S:c"}},
		{"S >=", strT, "", "pk = :p AND sk >= :v", avmap{":p": vS("p"), ":v": vS("b")}, "sk", []string{"S:b", "S:ba", "S:c"}},
		{"S BETWEEN", strT, "", "pk = :p AND sk BETWEEN :a AND :b", avmap{":p": vS("p"), ":a": vS("ab"), ":b": vS("b")}, "sk", []string{"S:ab", "S:abc", "S:b"}},
		{"S begins_with", strT, "", "pk = :p AND begins_with(sk, :v)", avmap{":p": vS("p"), ":v": vS("ab")}, "sk", []string{"S:ab", "S:abc"}},
		{"S reversed operands", strT, "", ":p = pk AND :v < sk", avmap{":p": vS("p"), ":v": vS("b")}, "sk", []string{"S:ba", "S:c"}},
		{"other partition", strT, "", "pk = :p", avmap{":p": vS("q")}, "sk", []string{}},
		{"N all", numT, "", "pk = :p", avmap{":p": vS("p")}, "sk", prefixAll("N:", nums)},
		{"N >", numT, "", "pk = :p AND sk > :v", avmap{":p": vS("p"), ":v": vN("1")}, "sk", []string{"N:2", "N:10", "N:100", "N:1000.5"}},
		{"N BETWEEN", numT, "", "pk = :p AND sk BETWEEN :a AND :b", avmap{":p": vS("p"), ":a": vN("-3"), ":b": vN("10")}, "sk", []string{"N:-2.5", "N:0", "N:1", "N:2", "N:10"}},
		{"N on a GSI", numT, "byN", "g = :g", avmap{":g": vS("x")}, "n", prefixAll("N:", nums)},
		{"N < on a GSI", numT, "byN", "g = :g AND n < :v", avmap{":g": vS("x"), ":v": vN("0")}, "n", []string{"N:-100", "N:-2.5"}},
		{"B all", binT, "", "pk = :p", avmap{":p": vS("p")}, "sk", []string{"B:01", "B:0102", "B:01ff", "B:02", "B:ff"}},
		{"B begins_with", binT, "", "pk = :p AND begins_with(sk, :v)", avmap{":p": vS("p"), ":v": vB([]byte{0x01})}, "sk", []string{"B:01", "B:0102", "B:01ff"}},
		{"B >", binT, "", "pk = :p AND sk > :v", avmap{":p": vS("p"), ":v": vB([]byte{0x01, 0x02})}, "sk", []string{"B:01ff", "B:02", "B:ff"}},
	}
	for _, tc := range tests {
		for _, forward := range []bool{true, false} {
			in := &dynamodb.QueryInput{TableName: aws.String(tc.tbl), KeyConditionExpression: aws.String(tc.kc),
				ExpressionAttributeValues: tc.vals, ScanIndexForward: aws.Bool(forward)}
			if tc.idx != "" {
				in.IndexName = aws.String(tc.idx)
			}
			out, err := s.c.Query(bg, in)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			want := tc.want
			if !forward {
				want = reversed(want)
			}
			sameList(t, fmt.Sprintf("%s forward=%v", tc.name, forward), attrsOf(out.Items, tc.attr), want)
			if int(out.Count) != len(want) || int(out.ScannedCount) != len(want) {
				t.Fatalf("%s: Count %d ScannedCount %d, want %d", tc.name, out.Count, out.ScannedCount, len(want))
			}
		}
	}
}

func prefixAll(p string, vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = p + v
	}
	return out
}

func reversed(vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[len(vs)-1-i] = v
	}
	return out
}

func TestQueryPagination(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("pages", "pk:S", "sk:N").gsi("byG", "g:S", "sk:N", types.ProjectionTypeKeysOnly).
		lsi("byL", "l:S", types.ProjectionTypeAll).create(s)
	const n = 23
	for i := 0; i < n; i++ {
		s.put(tbl, avmap{"pk": vS("p"), "sk": vN(fmt.Sprint(i)), "g": vS("x"), "l": vS(fmt.Sprintf("%03d", n-i))})
	}
	for _, idx := range []string{"", "byG", "byL"} {
		for _, limit := range []int32{1, 5, 23, 50} {
			in := &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String("pk = :p"),
				ExpressionAttributeValues: avmap{":p": vS("p")}, Limit: aws.Int32(limit)}
			if idx == "byG" {
				in.KeyConditionExpression = aws.String("g = :p")
				in.ExpressionAttributeValues = avmap{":p": vS("x")}
			}
			if idx != "" {
				in.IndexName = aws.String(idx)
			}
			items, pages := s.queryAll(in)
			if len(items) != n {
				t.Fatalf("index %q limit %d: %d items, want %d", idx, limit, len(items), n)
			}
			seen := map[string]bool{}
			for _, it := range items {
				k := attrString(it["sk"])
				if seen[k] {
					t.Fatalf("index %q limit %d: %s returned twice", idx, limit, k)
				}
				seen[k] = true
			}
			// A page that ends on Limit carries a LastEvaluatedKey even when
			// nothing follows, so an exact multiple needs one more page.
			wantPages := n/int(limit) + 1
			if int(limit) > n {
				wantPages = 1
			}
			if pages != wantPages {
				t.Fatalf("index %q limit %d: %d pages, want %d", idx, limit, pages, wantPages)
			}
		}
	}
	// The LastEvaluatedKey of an index read holds the table and index keys.
	out, err := s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, IndexName: aws.String("byG"),
		KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: avmap{":g": vS("x")}, Limit: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	sameItem(t, out.LastEvaluatedKey, avmap{"pk": vS("p"), "sk": vN("1"), "g": vS("x")})
	// KEYS_ONLY projects the table and index keys.
	sameItem(t, out.Items[0], avmap{"pk": vS("p"), "sk": vN("0"), "g": vS("x")})

	// Descending pages walk backwards.
	out, err = s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String("pk = :p"),
		ExpressionAttributeValues: avmap{":p": vS("p")}, Limit: aws.Int32(2), ScanIndexForward: aws.Bool(false)})
	if err != nil {
		t.Fatal(err)
	}
	sameList(t, "descending page", attrsOf(out.Items, "sk"), []string{"N:22", "N:21"})
	out, err = s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String("pk = :p"),
		ExpressionAttributeValues: avmap{":p": vS("p")}, Limit: aws.Int32(2), ScanIndexForward: aws.Bool(false), ExclusiveStartKey: out.LastEvaluatedKey})
	if err != nil {
		t.Fatal(err)
	}
	sameList(t, "second descending page", attrsOf(out.Items, "sk"), []string{"N:20", "N:19"})

	// A malformed ExclusiveStartKey.
	_, err = s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String("pk = :p"),
		ExpressionAttributeValues: avmap{":p": vS("p")}, ExclusiveStartKey: avmap{"bad": vS("x")}})
	validationErr(t, err, "The provided starting key is invalid")
	// A starting key outside the partition or the sort key condition.
	for _, tc := range []struct {
		kc   string
		vals avmap
		esk  avmap
	}{
		{"pk = :p", avmap{":p": vS("p")}, avmap{"pk": vS("other"), "sk": vN("1")}},
		{"pk = :p AND sk > :v", avmap{":p": vS("p"), ":v": vN("5")}, avmap{"pk": vS("p"), "sk": vN("1")}},
	} {
		_, err = s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String(tc.kc),
			ExpressionAttributeValues: tc.vals, ExclusiveStartKey: tc.esk})
		validationErr(t, err, "The provided starting key is outside query boundaries based on provided conditions")
	}
}

// TestPageSizeBeforeFilter checks the 1 MB page limit is applied to the
// data read, before FilterExpression: a filter that matches nothing still
// returns pages with a LastEvaluatedKey.
func TestPageSizeBeforeFilter(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("big", "pk:S", "sk:N").create(s)
	blob := strings.Repeat("x", 100*1024)
	const n = 20
	for i := 0; i < n; i++ {
		s.put(tbl, avmap{"pk": vS("p"), "sk": vN(fmt.Sprint(i)), "blob": vS(blob), "tag": vS("no")})
	}
	in := &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String("pk = :p"),
		FilterExpression: aws.String("tag = :yes"), ExpressionAttributeValues: avmap{":p": vS("p"), ":yes": vS("yes")}}
	out, err := s.c.Query(bg, in)
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 0 || len(out.Items) != 0 || out.LastEvaluatedKey == nil {
		t.Fatalf("first page: Count %d Items %d LastEvaluatedKey %v; want an empty page with a key", out.Count, len(out.Items), out.LastEvaluatedKey)
	}
	if out.ScannedCount < 9 || out.ScannedCount > 11 {
		t.Fatalf("first page scanned %d items of 100 KB, want about 1 MB of them", out.ScannedCount)
	}
	scanned := out.ScannedCount
	pages := 1
	for out.LastEvaluatedKey != nil {
		in.ExclusiveStartKey = out.LastEvaluatedKey
		if out, err = s.c.Query(bg, in); err != nil {
			t.Fatal(err)
		}
		scanned += out.ScannedCount
		pages++
	}
	if scanned != n || pages < 2 {
		t.Fatalf("scanned %d items in %d pages, want %d in at least 2", scanned, pages, n)
	}
	// Scan applies the same rule.
	sout, err := s.c.Scan(bg, &dynamodb.ScanInput{TableName: &tbl, FilterExpression: aws.String("tag = :yes"),
		ExpressionAttributeValues: avmap{":yes": vS("yes")}})
	if err != nil {
		t.Fatal(err)
	}
	if sout.Count != 0 || sout.LastEvaluatedKey == nil || sout.ScannedCount >= n {
		t.Fatalf("scan page: Count %d ScannedCount %d key %v", sout.Count, sout.ScannedCount, sout.LastEvaluatedKey)
	}
}

func TestQuerySelectAndFilters(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("sel", "pk:S", "sk:N").gsi("byG", "g:S", "", types.ProjectionTypeKeysOnly).create(s)
	for i := 0; i < 10; i++ {
		s.put(tbl, avmap{"pk": vS("p"), "sk": vN(fmt.Sprint(i)), "g": vS("x"), "even": vBool(i%2 == 0), "v": vS("val")})
	}
	base := func() *dynamodb.QueryInput {
		return &dynamodb.QueryInput{TableName: &tbl, KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: avmap{":p": vS("p")}}
	}
	in := base()
	in.Select = types.SelectCount
	in.FilterExpression = aws.String("even = :t")
	in.ExpressionAttributeValues[":t"] = vBool(true)
	out, err := s.c.Query(bg, in)
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 5 || out.ScannedCount != 10 || out.Items != nil {
		t.Fatalf("COUNT: Count %d ScannedCount %d Items %v", out.Count, out.ScannedCount, out.Items)
	}
	// Limit counts items read, not items matched.
	in = base()
	in.Limit = aws.Int32(3)
	in.FilterExpression = aws.String("even = :t")
	in.ExpressionAttributeValues[":t"] = vBool(true)
	if out, err = s.c.Query(bg, in); err != nil {
		t.Fatal(err)
	}
	if out.Count != 2 || out.ScannedCount != 3 || out.LastEvaluatedKey == nil {
		t.Fatalf("Limit 3 with filter: Count %d ScannedCount %d key %v", out.Count, out.ScannedCount, out.LastEvaluatedKey)
	}
	// Projection.
	in = base()
	in.ProjectionExpression = aws.String("sk, #v")
	in.ExpressionAttributeNames = map[string]string{"#v": "v"}
	in.Limit = aws.Int32(1)
	if out, err = s.c.Query(bg, in); err != nil {
		t.Fatal(err)
	}
	sameItem(t, out.Items[0], avmap{"sk": vN("0"), "v": vS("val")})

	// Consistent reads and non-projected attributes on a GSI.
	in = &dynamodb.QueryInput{TableName: &tbl, IndexName: aws.String("byG"), KeyConditionExpression: aws.String("g = :g"),
		ExpressionAttributeValues: avmap{":g": vS("x")}, ConsistentRead: aws.Bool(true)}
	_, err = s.c.Query(bg, in)
	validationErr(t, err, "Consistent reads are not supported on global secondary indexes")
	_, err = s.c.Scan(bg, &dynamodb.ScanInput{TableName: &tbl, IndexName: aws.String("byG"), ConsistentRead: aws.Bool(true)})
	validationErr(t, err, "Consistent reads are not supported on global secondary indexes")
	_, err = s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl, IndexName: aws.String("nope"), KeyConditionExpression: aws.String("g = :g"),
		ExpressionAttributeValues: avmap{":g": vS("x")}})
	validationErr(t, err, "The table does not have the specified index: nope")
	in = base()
	in.Select = types.SelectSpecificAttributes
	_, err = s.c.Query(bg, in)
	validationErr(t, err, "1 validation error detected: Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES")
	in = base()
	in.Limit = aws.Int32(0)
	_, err = s.c.Query(bg, in)
	validationErr(t, err, "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value greater than or equal to 1")
	_, err = s.c.Query(bg, &dynamodb.QueryInput{TableName: &tbl})
	validationErr(t, err, "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.")
}

func TestScanSegments(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("seg", "pk:S", "sk:N").create(s)
	const n = 200
	for i := 0; i < n; i++ {
		s.put(tbl, avmap{"pk": vS(fmt.Sprintf("p%d", i%37)), "sk": vN(fmt.Sprint(i)), "odd": vBool(i%2 == 1)})
	}
	for _, total := range []int32{1, 2, 3, 7, 16} {
		seen := map[string]int{}
		for seg := int32(0); seg < total; seg++ {
			for _, limit := range []*int32{nil, aws.Int32(9)} {
				if limit != nil && seg > 0 {
					continue
				}
				items := s.scanAll(&dynamodb.ScanInput{TableName: &tbl, Segment: aws.Int32(seg), TotalSegments: aws.Int32(total), Limit: limit})
				if limit != nil {
					// Paged reads of segment 0 see the same items as one read.
					for _, it := range items {
						seen["limit:"+attrString(it["sk"])]++
					}
					continue
				}
				for _, it := range items {
					seen[attrString(it["sk"])]++
				}
			}
		}
		count := 0
		for k, c := range seen {
			if strings.HasPrefix(k, "limit:") {
				if seen[strings.TrimPrefix(k, "limit:")] != 1 {
					t.Fatalf("total %d: paged segment 0 returned %s, which one read did not", total, k)
				}
				continue
			}
			if c != 1 {
				t.Fatalf("total %d: %s seen %d times", total, k, c)
			}
			count++
		}
		if count != n {
			t.Fatalf("total %d: segments covered %d items, want %d", total, count, n)
		}
	}
	out, err := s.c.Scan(bg, &dynamodb.ScanInput{TableName: &tbl, FilterExpression: aws.String("odd = :t"),
		ExpressionAttributeValues: avmap{":t": vBool(true)}, Select: types.SelectCount})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != n/2 || out.ScannedCount != n {
		t.Fatalf("filtered count: Count %d ScannedCount %d", out.Count, out.ScannedCount)
	}
	out, err = s.c.Scan(bg, &dynamodb.ScanInput{TableName: &tbl, Limit: aws.Int32(7)})
	if err != nil || len(out.Items) != 7 || out.LastEvaluatedKey == nil {
		t.Fatalf("scan Limit 7: %d items, key %v, %v", len(out.Items), out.LastEvaluatedKey, err)
	}

	errs := []struct {
		in   *dynamodb.ScanInput
		want string
	}{
		{&dynamodb.ScanInput{TableName: &tbl, Segment: aws.Int32(0)}, "The TotalSegments parameter is required but was not present in the request when Segment parameter is present"},
		{&dynamodb.ScanInput{TableName: &tbl, TotalSegments: aws.Int32(4)}, "The Segment parameter is required but was not present in the request when parameter TotalSegments is present"},
		{&dynamodb.ScanInput{TableName: &tbl, Segment: aws.Int32(5), TotalSegments: aws.Int32(5)}, "The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: 5 is not less than TotalSegments: 5"},
		{&dynamodb.ScanInput{TableName: &tbl, Segment: aws.Int32(-1), TotalSegments: aws.Int32(4)}, "1 validation error detected: Value '-1' at 'segment' failed to satisfy constraint: Member must have value greater than or equal to 0"},
		{&dynamodb.ScanInput{TableName: &tbl, Limit: aws.Int32(0)}, "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1"},
		{&dynamodb.ScanInput{TableName: &tbl, ExclusiveStartKey: avmap{"bad": vS("p")}}, "The provided starting key is invalid"},
	}
	for _, tc := range errs {
		_, err := s.c.Scan(bg, tc.in)
		validationErr(t, err, tc.want)
	}
	_, err = s.c.Scan(bg, &dynamodb.ScanInput{TableName: aws.String("missing")})
	apiErr(t, err, "ResourceNotFoundException", "Requested resource not found")
}
