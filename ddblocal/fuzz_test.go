package ddblocal_test

// Fuzz tests of the request path: whatever a client sends, the store must
// answer 200 or a 400 in DynamoDB's error shape, never a 5xx or a crash.
// They run on the HTTP handler directly (no network). In CI:
//
//	go test -run='^$' -fuzz='^FuzzRequest$' -fuzztime=20s ./ddblocal/
//	go test -run='^$' -fuzz='^FuzzExpressions$' -fuzztime=20s ./ddblocal/
//
// A plain `go test` runs the seed corpus only.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"lastro/ddblocal"
)

// fuzzTargets are the X-Amz-Target values the fuzzer picks from: every
// DynamoDB and DynamoDB Streams operation (those the store does not
// implement must still answer UnknownOperationException), plus nonsense.
var fuzzTargets = func() []string {
	var ts []string
	for _, op := range []string{
		"CreateTable", "DescribeTable", "ListTables", "DeleteTable", "UpdateTable",
		"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan",
		"BatchGetItem", "BatchWriteItem", "TransactWriteItems", "TransactGetItems",
		"DescribeEndpoints", "DescribeLimits", "UpdateTimeToLive", "DescribeTimeToLive",
		"ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction",
		"TagResource", "UntagResource", "ListTagsOfResource",
		"DescribeContinuousBackups", "UpdateContinuousBackups",
	} {
		ts = append(ts, "DynamoDB_20120810."+op)
	}
	for _, op := range []string{"ListStreams", "DescribeStream", "GetShardIterator", "GetRecords"} {
		ts = append(ts, "DynamoDBStreams_20120810."+op)
	}
	return append(ts, "DynamoDB_20120810.Bogus", "", "DynamoDB_20120810.")
}()

// fuzzSchema creates table "fuzz" (pk S, sk N, GSI gsi on gpk S / gsk N, LSI lsi
// on lsk S) and table "fuzzh" (hash key only, B), and puts a few items, so
// fuzzed requests reach the data path rather than ResourceNotFound.
var fuzzSchema = []struct{ target, body string }{
	{"CreateTable", `{"TableName":"fuzz","BillingMode":"PAY_PER_REQUEST",
	  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"},
	    {"AttributeName":"gpk","AttributeType":"S"},{"AttributeName":"gsk","AttributeType":"N"},{"AttributeName":"lsk","AttributeType":"S"}],
	  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
	  "GlobalSecondaryIndexes":[{"IndexName":"gsi","KeySchema":[{"AttributeName":"gpk","KeyType":"HASH"},{"AttributeName":"gsk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}],
	  "LocalSecondaryIndexes":[{"IndexName":"lsi","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"lsk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["a"]}}]}`},
	{"CreateTable", `{"TableName":"fuzzh","ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5},
	  "AttributeDefinitions":[{"AttributeName":"id","AttributeType":"B"}],
	  "KeySchema":[{"AttributeName":"id","KeyType":"HASH"}]}`},
	{"PutItem", `{"TableName":"fuzz","Item":` + fuzzItem + `}`},
	{"PutItem", `{"TableName":"fuzz","Item":{"pk":{"S":"k"},"sk":{"N":"2"},"a":{"N":"-3.5e10"},"gpk":{"S":"g2"},"gsk":{"N":"7"}}}`},
	{"PutItem", `{"TableName":"fuzzh","Item":{"id":{"B":"AAEC"},"x":{"BS":["AA==","AQ=="]}}}`},
}

// fuzzItem has one attribute of every type, nested documents and the keys
// of both indexes.
const fuzzItem = `{"pk":{"S":"k"},"sk":{"N":"1"},"gpk":{"S":"g"},"gsk":{"N":"1"},"lsk":{"S":"l"},
  "a":{"N":"5"},"n":{"N":"10"},"s":{"S":"abc"},"b":{"B":"AAEC"},"t":{"BOOL":true},"z":{"NULL":true},
  "ss":{"SS":["x","y"]},"ns":{"NS":["1","2.5"]},"bs":{"BS":["AA=="]},
  "l":{"L":[{"N":"1"},{"S":"x"},{"M":{"y":{"L":[{"N":"2"}]}}}]},
  "m":{"M":{"x":{"M":{"y":{"L":[{"N":"1"},{"N":"2"}]}}},"s":{"S":"v"}}}}`

// fuzzSeeds are valid requests of each operation (and a few invalid ones),
// from which the fuzzer mutates.
var fuzzSeeds = []struct{ target, body string }{
	{"ListTables", `{"Limit":1,"ExclusiveStartTableName":"a"}`},
	{"DescribeTable", `{"TableName":"fuzz"}`},
	{"CreateTable", `{"TableName":"new","AttributeDefinitions":[{"AttributeName":"h","AttributeType":"N"}],"KeySchema":[{"AttributeName":"h","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST"}`},
	{"UpdateTable", `{"TableName":"fuzz","AttributeDefinitions":[{"AttributeName":"x","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"x","KeySchema":[{"AttributeName":"x","KeyType":"HASH"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}}]}`},
	{"UpdateTable", `{"TableName":"fuzz","GlobalSecondaryIndexUpdates":[{"Delete":{"IndexName":"x"}}]}`},
	{"DeleteTable", `{"TableName":"new"}`},
	{"GetItem", `{"TableName":"fuzz","Key":{"pk":{"S":"k"},"sk":{"N":"1"}},"ProjectionExpression":"#m.x.y[1], l[2].y, s","ExpressionAttributeNames":{"#m":"m"},"ConsistentRead":true}`},
	{"GetItem", `{"TableName":"fuzz","Key":{"pk":{"S":"k"},"sk":{"N":"1"}},"AttributesToGet":["a","s"]}`},
	{"PutItem", `{"TableName":"fuzz","Item":{"pk":{"S":"k"},"sk":{"N":"3"},"a":{"N":"1"}},"ConditionExpression":"attribute_not_exists(pk) OR a < :v","ExpressionAttributeValues":{":v":{"N":"4"}},"ReturnValues":"ALL_OLD","ReturnValuesOnConditionCheckFailure":"ALL_OLD","ReturnConsumedCapacity":"TOTAL"}`},
	{"PutItem", `{"TableName":"fuzz","Item":{"pk":{"S":"k"},"sk":{"N":"4"}},"Expected":{"a":{"Exists":false}}}`},
	{"UpdateItem", `{"TableName":"fuzz","Key":{"pk":{"S":"k"},"sk":{"N":"1"}},"UpdateExpression":"SET a = a + :v, l = list_append(l, :l), #n = if_not_exists(#n, :v) REMOVE z ADD ss :ss DELETE ns :ns","ConditionExpression":"size(s) = :three AND contains(ss, :x) AND attribute_type(m, :mt)","ExpressionAttributeNames":{"#n":"nn"},"ExpressionAttributeValues":{":v":{"N":"1"},":l":{"L":[{"N":"9"}]},":ss":{"SS":["q"]},":ns":{"NS":["1"]},":three":{"N":"3"},":x":{"S":"x"},":mt":{"S":"M"}},"ReturnValues":"UPDATED_NEW"}`},
	{"UpdateItem", `{"TableName":"fuzz","Key":{"pk":{"S":"k"},"sk":{"N":"2"}},"AttributeUpdates":{"a":{"Action":"ADD","Value":{"N":"1"}},"gpk":{"Action":"DELETE"}},"ReturnValues":"ALL_NEW"}`},
	{"DeleteItem", `{"TableName":"fuzz","Key":{"pk":{"S":"k"},"sk":{"N":"3"}},"ConditionExpression":"a BETWEEN :lo AND :hi","ExpressionAttributeValues":{":lo":{"N":"0"},":hi":{"N":"9"}},"ReturnValues":"ALL_OLD"}`},
	{"Query", `{"TableName":"fuzz","KeyConditionExpression":"pk = :p AND sk BETWEEN :a AND :b","FilterExpression":"a IN (:a, :b) OR NOT begins_with(s, :s)","ProjectionExpression":"pk, sk, a","ExpressionAttributeValues":{":p":{"S":"k"},":a":{"N":"1"},":b":{"N":"5"},":s":{"S":"ab"}},"Limit":1,"ScanIndexForward":false,"ExclusiveStartKey":{"pk":{"S":"k"},"sk":{"N":"9"}}}`},
	{"Query", `{"TableName":"fuzz","IndexName":"gsi","KeyConditionExpression":"gpk = :g AND gsk >= :n","ExpressionAttributeValues":{":g":{"S":"g"},":n":{"N":"0"}},"Select":"COUNT"}`},
	{"Query", `{"TableName":"fuzz","IndexName":"lsi","KeyConditionExpression":"pk = :p AND begins_with(lsk, :l)","ExpressionAttributeValues":{":p":{"S":"k"},":l":{"S":"l"}},"Select":"ALL_ATTRIBUTES"}`},
	{"Query", `{"TableName":"fuzz","KeyConditions":{"pk":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"k"}]}},"QueryFilter":{"a":{"ComparisonOperator":"GT","AttributeValueList":[{"N":"0"}]}}}`},
	{"Scan", `{"TableName":"fuzz","Segment":1,"TotalSegments":3,"FilterExpression":"attribute_exists(m.x) AND size(l) > :z","ExpressionAttributeValues":{":z":{"N":"0"}},"Limit":10}`},
	{"Scan", `{"TableName":"fuzz","IndexName":"gsi","ScanFilter":{"s":{"ComparisonOperator":"BEGINS_WITH","AttributeValueList":[{"S":"a"}]}},"ConditionalOperator":"OR"}`},
	{"BatchGetItem", `{"RequestItems":{"fuzz":{"Keys":[{"pk":{"S":"k"},"sk":{"N":"1"}},{"pk":{"S":"k"},"sk":{"N":"2"}}],"ProjectionExpression":"a"},"fuzzh":{"Keys":[{"id":{"B":"AAEC"}}]}}}`},
	{"BatchWriteItem", `{"RequestItems":{"fuzz":[{"PutRequest":{"Item":{"pk":{"S":"b"},"sk":{"N":"1"}}}},{"DeleteRequest":{"Key":{"pk":{"S":"b"},"sk":{"N":"2"}}}}]},"ReturnItemCollectionMetrics":"SIZE"}`},
	{"TransactWriteItems", `{"TransactItems":[{"ConditionCheck":{"TableName":"fuzz","Key":{"pk":{"S":"k"},"sk":{"N":"1"}},"ConditionExpression":"attribute_exists(pk)"}},{"Put":{"TableName":"fuzz","Item":{"pk":{"S":"t"},"sk":{"N":"1"}}}},{"Update":{"TableName":"fuzz","Key":{"pk":{"S":"t"},"sk":{"N":"2"}},"UpdateExpression":"ADD c :one","ExpressionAttributeValues":{":one":{"N":"1"}}}},{"Delete":{"TableName":"fuzzh","Key":{"id":{"B":"AAEC"}}}}],"ClientRequestToken":"tok"}`},
	{"TransactGetItems", `{"TransactItems":[{"Get":{"TableName":"fuzz","Key":{"pk":{"S":"k"},"sk":{"N":"1"}},"ProjectionExpression":"a, m.x"}}]}`},
	{"DescribeEndpoints", `{}`},
	{"UpdateTimeToLive", `{"TableName":"fuzz","TimeToLiveSpecification":{"Enabled":true,"AttributeName":"exp"}}`},
	{"DescribeTimeToLive", `{"TableName":"fuzz"}`},
	{"ExecuteStatement", `{"Statement":"SELECT * FROM fuzz WHERE pk = ?","Parameters":[{"S":"k"}]}`},
	{"ExecuteTransaction", `{"TransactStatements":[{"Statement":"UPDATE fuzz SET a = 1 WHERE pk = 'k' AND sk = 1"}]}`},
	{"BatchExecuteStatement", `{"Statements":[{"Statement":"INSERT INTO fuzz VALUE {'pk':'i','sk':1}"}]}`},
	{"ListTagsOfResource", `{"ResourceArn":"arn:aws:dynamodb:us-east-1:123456789012:table/fuzz"}`},
	{"GetItem", `{"TableName":"fuzz","Key":{"pk":{"N":"1"},"sk":{"N":"1"}}}`},
	{"PutItem", `{"TableName":"nope","Item":{"pk":{"S":"k"}}}`},
	{"Query", `{"TableName":"fuzz","KeyConditionExpression":"pk = :p AND (sk > :a","ExpressionAttributeValues":{":p":{"S":"k"},":a":{"N":"x"}}}`},
	{"PutItem", `{"TableName":"fuzz","Item":{"pk":{"S":"k"},"sk":{"N":"1e126"},"m":{"M":{"":{"SS":[]}}}}}`},
	{"Bogus", `{`},
}

// fuzzStore is a store with the fuzz schema, and a log that captures what
// the store says about internal errors.
type fuzzStore struct {
	h   http.Handler
	log *fuzzLogBuffer
}

func newFuzzStore(tb testing.TB) *fuzzStore {
	tb.Helper()
	log := &fuzzLogBuffer{}
	st, err := ddblocal.Open(ddblocal.Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	fs := &fuzzStore{h: st.Handler(), log: log}
	fs.setup(tb)
	return fs
}

// setup (re)creates the fuzz schema; it tolerates what already exists, so
// it also repairs the schema after a fuzzed DeleteTable.
func (fs *fuzzStore) setup(tb testing.TB) {
	for _, r := range fuzzSchema {
		status, body := fs.do("DynamoDB_20120810."+r.target, []byte(r.body))
		if status != 200 && !bytes.Contains(body, []byte("ResourceInUseException")) {
			tb.Fatalf("fuzz schema %s: %d %s", r.target, status, body)
		}
	}
}

func (fs *fuzzStore) do(target string, body []byte) (int, []byte) {
	rec := fs.record(target, body)
	return rec.Code, rec.Body.Bytes()
}

func (fs *fuzzStore) record(target string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	if target != "" {
		req.Header.Set("X-Amz-Target", target)
	}
	rec := httptest.NewRecorder()
	fs.h.ServeHTTP(rec, req)
	return rec
}

// check sends one request and asserts the response is well formed: 200,
// or 400 with DynamoDB's error body; JSON either way; a CRC32 header the
// SDK can verify.
func (fs *fuzzStore) check(t *testing.T, target string, body []byte) (int, map[string]any) {
	t.Helper()
	fs.log.Reset()
	rec := fs.record(target, body)
	out := rec.Body.Bytes()
	show := func() string {
		return fmt.Sprintf("request %s %q\nresponse %d %s\nstore log: %s", target, fuzzTruncate(body), rec.Code, fuzzTruncate(out), fs.log.String())
	}
	if rec.Code != 200 && rec.Code != 400 {
		t.Fatalf("status %d, want 200 or 400\n%s", rec.Code, show())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/x-amz-json-1.0" {
		t.Fatalf("Content-Type %q\n%s", ct, show())
	}
	if crc := rec.Header().Get("X-Amz-Crc32"); crc != strconv.FormatUint(uint64(crc32.ChecksumIEEE(out)), 10) {
		t.Fatalf("X-Amz-Crc32 %q does not match the body\n%s", crc, show())
	}
	var resp map[string]any
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, show())
	}
	if rec.Code == 400 {
		typ, _ := resp["__type"].(string)
		if !fuzzErrorType.MatchString(typ) {
			t.Fatalf("__type %q is not a DynamoDB error type\n%s", resp["__type"], show())
		}
		for _, k := range []string{"message", "Message"} {
			if m, ok := resp[k]; ok {
				if s, isString := m.(string); !isString || s == "" {
					t.Fatalf("%s %v is not a non-empty string\n%s", k, m, show())
				}
			}
		}
	}
	return rec.Code, resp
}

// fuzzErrorType matches the __type of DynamoDB's errors.
var fuzzErrorType = regexp.MustCompile(`^com\.amazon(aws\.dynamodb\.v20120810|\.coral\.validate|\.coral\.service)#[A-Z][A-Za-z]+$`)

func FuzzRequest(f *testing.F) {
	index := map[string]int{}
	for i, t := range fuzzTargets {
		index[t] = i
	}
	for _, s := range append(fuzzSchema, fuzzSeeds...) {
		i, ok := index["DynamoDB_20120810."+s.target]
		if !ok {
			i = index["DynamoDB_20120810.Bogus"]
		}
		f.Add(uint8(i), []byte(s.body))
	}
	fs := newFuzzStore(f)
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		target := fuzzTargets[int(op)%len(fuzzTargets)]
		status, _ := fs.check(t, target, body)
		if status == 200 && strings.HasSuffix(target, ".DeleteTable") {
			fs.setup(t)
		}
	})
}

// FuzzExpressions feeds arbitrary condition, update, projection and key
// condition expressions to UpdateItem, Query and Scan on an item holding
// every attribute type. Every #name and :value an expression mentions is
// defined (and nothing else), so the expressions reach the parser and,
// when they parse, the evaluator.
func FuzzExpressions(f *testing.F) {
	for _, s := range [][4]string{
		{"a < :v AND (s = :s OR NOT attribute_exists(z))", "SET a = a + :v, l[1] = :s REMOVE m.x.y[0]", "a, m.x.y[1], #n", "pk = :p AND sk > :v"},
		{"attribute_type(l, :t) AND size(m) >= :v", "ADD ss :ss, a :v DELETE ns :ns", "l[2].y", "pk = :p AND begins_with(sk, :s)"},
		{"a IN (:v, :w) OR contains(ss, :s) OR a BETWEEN :v AND :w", "SET #n = if_not_exists(#n, :v), l = list_append(:l, l)", "pk", "pk = :p AND sk BETWEEN :v AND :w"},
		{"m.x.y[1] = :v AND begins_with(#n, :s)", "SET m.x = :m, b = :b, t = :t, z = :z", "m.x, ss, ns, bs", "pk = :p"},
		{"(((a > :v)))", "REMOVE a, a", "a.b.c[99999999999]", "sk = :v AND pk = :p"},
		{"a = :undeclared", "SET = :v", "", "pk = :p AND sk = :v AND sk = :w"},
		{"size(size(a)) > :v", "SET a = a - :s", "#x, #x", "begins_with(pk, :s)"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	fs := newFuzzStore(f)
	f.Fuzz(func(t *testing.T, cond, update, proj, keyCond string) {
		// Restore the item so updates do not accumulate into a giant item.
		fs.check(t, "DynamoDB_20120810.PutItem", []byte(`{"TableName":"fuzz","Item":`+fuzzItem+`}`))
		key := map[string]any{"pk": map[string]string{"S": "k"}, "sk": map[string]string{"N": "1"}}
		reqs := []struct {
			op   string
			body map[string]any
		}{
			{"UpdateItem", map[string]any{"Key": key, "UpdateExpression": update, "ConditionExpression": cond, "ReturnValues": "ALL_NEW"}},
			{"Query", map[string]any{"KeyConditionExpression": keyCond, "FilterExpression": cond, "ProjectionExpression": proj}},
			{"Query", map[string]any{"IndexName": "gsi", "KeyConditionExpression": keyCond, "ProjectionExpression": proj}},
			{"Scan", map[string]any{"FilterExpression": cond, "ProjectionExpression": proj}},
			{"DeleteItem", map[string]any{"Key": key, "ConditionExpression": cond, "ReturnValues": "ALL_OLD"}},
		}
		for _, r := range reqs {
			r.body["TableName"] = "fuzz"
			var text strings.Builder
			for k, v := range r.body {
				if s, ok := v.(string); ok {
					if s == "" && k != "UpdateExpression" && k != "KeyConditionExpression" {
						delete(r.body, k) // absent rather than empty
						continue
					}
					text.WriteString(s + " ")
				}
			}
			if names := fuzzExprNames(text.String()); len(names) > 0 {
				r.body["ExpressionAttributeNames"] = names
			}
			if vals := fuzzExprValues(text.String()); len(vals) > 0 {
				r.body["ExpressionAttributeValues"] = vals
			}
			body, err := json.Marshal(r.body)
			if err != nil {
				t.Fatal(err)
			}
			fs.check(t, "DynamoDB_20120810."+r.op, body)
		}
	})
}

var (
	fuzzNameToken  = regexp.MustCompile(`#[A-Za-z0-9_]+`)
	fuzzValueToken = regexp.MustCompile(`:[A-Za-z0-9_]+`)
)

// fuzzExprNames defines every #name an expression mentions as the name
// without its '#'.
func fuzzExprNames(s string) map[string]string {
	names := map[string]string{}
	for _, n := range fuzzNameToken.FindAllString(s, -1) {
		names[n] = n[1:]
	}
	return names
}

// fuzzValues are the values :placeholders resolve to, one of each type; an
// unknown placeholder gets a number.
var fuzzValues = map[string]any{
	":s":  map[string]any{"S": "ab"},
	":b":  map[string]any{"B": "AAE="},
	":t":  map[string]any{"BOOL": false},
	":z":  map[string]any{"NULL": true},
	":ss": map[string]any{"SS": []string{"x", "q"}},
	":ns": map[string]any{"NS": []string{"1", "7"}},
	":bs": map[string]any{"BS": []string{"AA=="}},
	":l":  map[string]any{"L": []any{map[string]any{"N": "1"}, map[string]any{"S": "x"}}},
	":m":  map[string]any{"M": map[string]any{"y": map[string]any{"L": []any{map[string]any{"N": "3"}}}}},
	":p":  map[string]any{"S": "k"},
	":t2": map[string]any{"S": "L"},
}

func fuzzExprValues(s string) map[string]any {
	vals := map[string]any{}
	for i, v := range fuzzValueToken.FindAllString(s, -1) {
		if fv, ok := fuzzValues[v]; ok {
			vals[v] = fv
		} else {
			vals[v] = map[string]any{"N": strconv.Itoa(i + 1)}
		}
	}
	return vals
}

func fuzzTruncate(b []byte) []byte {
	if len(b) > 2000 {
		return append(b[:2000:2000], "..."...)
	}
	return b
}

// fuzzLogBuffer is a bytes.Buffer safe for the store's concurrent logging.
type fuzzLogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *fuzzLogBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *fuzzLogBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}

func (s *fuzzLogBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var _ io.Writer = (*fuzzLogBuffer)(nil)

// TestMalformedRequests checks that requests DynamoDB rejects get its 400
// error type (and message, where the wording is DynamoDB's well-known
// one), never a 5xx.
func TestMalformedRequests(t *testing.T) {
	t.Parallel()
	fs := newFuzzStore(t)
	big := strings.Repeat("x", 400*1024)
	const (
		coral      = "com.amazon.coral.service#"
		validate   = "com.amazon.coral.validate#ValidationException"
		notFound   = "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"
		serialized = coral + "SerializationException"
		unknownOp  = coral + "UnknownOperationException"
	)
	for _, tc := range []struct {
		name, target, body string
		typ, msg           string // msg: a substring of the message, if checked
	}{
		{"not JSON", "PutItem", `hi`, serialized, ""},
		{"truncated JSON", "PutItem", `{"TableName":"fuzz","Item":{"pk":{"S":"k"}`, serialized, ""},
		{"number for a string member", "DescribeTable", `{"TableName":5}`, serialized, ""},
		{"object for a string member", "GetItem", `{"TableName":{},"Key":{}}`, serialized, ""},
		{"string for a map member", "PutItem", `{"TableName":"fuzz","Item":"pk"}`, serialized, ""},
		{"unknown operation", "ListTable", `{}`, unknownOp, ""},
		{"no target", "", `{}`, unknownOp, ""},
		{"target of another service", "Kinesis_20131202.ListStreams", `{}`, unknownOp, ""},
		{"unknown table, item read", "GetItem", `{"TableName":"nope","Key":{"pk":{"S":"k"}}}`, notFound, "Requested resource not found"},
		{"unknown table, item write", "PutItem", `{"TableName":"nope","Item":{"pk":{"S":"k"}}}`, notFound, "Requested resource not found"},
		{"unknown table, query", "Query", `{"TableName":"nope","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"k"}}}`, notFound, "Requested resource not found"},
		{"unknown table, describe", "DescribeTable", `{"TableName":"nope"}`, notFound, "Requested resource not found: Table: nope not found"},
		{"unknown table, transaction", "TransactWriteItems", `{"TransactItems":[{"Put":{"TableName":"nope","Item":{"pk":{"S":"k"}}}}]}`, notFound, "Requested resource not found"},
		{"update expression syntax", "UpdateItem", `{"TableName":"fuzz","Key":{"pk":{"S":"k"},"sk":{"N":"1"}},"UpdateExpression":"SET a ="}`, validate,
			`Invalid UpdateExpression: Syntax error; token: "<EOF>"`},
		{"condition expression syntax", "PutItem", `{"TableName":"fuzz","Item":{"pk":{"S":"k"},"sk":{"N":"1"}},"ConditionExpression":"a = = b"}`, validate,
			"Invalid ConditionExpression: Syntax error"},
		{"key condition on a non-key attribute", "Query", `{"TableName":"fuzz","KeyConditionExpression":"a = :v","ExpressionAttributeValues":{":v":{"N":"1"}}}`, validate,
			"Query condition missed key schema element"},
		{"undefined value", "UpdateItem", `{"TableName":"fuzz","Key":{"pk":{"S":"k"},"sk":{"N":"1"}},"UpdateExpression":"SET a = :v"}`, validate,
			"An expression attribute value used in expression is not defined; attribute value: :v"},
		{"unused value", "DeleteItem", `{"TableName":"fuzz","Key":{"pk":{"S":"k"},"sk":{"N":"1"}},"ConditionExpression":"attribute_exists(a)","ExpressionAttributeValues":{":v":{"N":"1"}}}`, validate,
			"Value provided in ExpressionAttributeValues unused in expressions: keys: {:v}"},
		{"reserved word", "GetItem", `{"TableName":"fuzz","Key":{"pk":{"S":"k"},"sk":{"N":"1"}},"ProjectionExpression":"size"}`, validate,
			"Attribute name is a reserved keyword; reserved keyword: size"},
		{"item over 400 KB", "PutItem", `{"TableName":"fuzz","Item":{"pk":{"S":"big"},"sk":{"N":"1"},"x":{"S":"` + big + `"}}}`, validate,
			"Item size has exceeded the maximum allowed size"},
		{"update past 400 KB", "UpdateItem", `{"TableName":"fuzz","Key":{"pk":{"S":"big"},"sk":{"N":"2"}},"UpdateExpression":"SET x = :x","ExpressionAttributeValues":{":x":{"S":"` + big + `"}}}`, validate,
			"Item size to update has exceeded the maximum allowed size"},
		{"key of the wrong type", "PutItem", `{"TableName":"fuzz","Item":{"pk":{"N":"1"},"sk":{"N":"1"}}}`, validate,
			"One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N"},
		{"key lookup of the wrong type", "GetItem", `{"TableName":"fuzz","Key":{"pk":{"S":"k"},"sk":{"S":"1"}}}`, validate,
			"The provided key element does not match the schema"},
		{"missing key attribute", "PutItem", `{"TableName":"fuzz","Item":{"pk":{"S":"k"}}}`, validate,
			"One or more parameter values were invalid: Missing the key sk in the item"},
		{"GSI key of the wrong type", "PutItem", `{"TableName":"fuzz","Item":{"pk":{"S":"k"},"sk":{"N":"1"},"gpk":{"N":"1"}}}`, validate,
			"One or more parameter values were invalid: Type mismatch for Index Key gpk Expected: S Actual: N IndexName: gsi"},
		{"number that is not a number", "PutItem", `{"TableName":"fuzz","Item":{"pk":{"S":"k"},"sk":{"N":"one"}}}`, validate,
			"The parameter cannot be converted to a numeric value: one"},
		{"empty string key", "PutItem", `{"TableName":"fuzz","Item":{"pk":{"S":""},"sk":{"N":"1"}}}`, validate,
			"The AttributeValue for a key attribute cannot contain an empty string value. Key: pk"},
		{"unknown index", "Query", `{"TableName":"fuzz","IndexName":"nope","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"k"}}}`, validate,
			"The table does not have the specified index: nope"},
		{"consistent read on a GSI", "Query", `{"TableName":"fuzz","IndexName":"gsi","ConsistentRead":true,"KeyConditionExpression":"gpk = :p","ExpressionAttributeValues":{":p":{"S":"g"}}}`, validate,
			"Consistent reads are not supported on global secondary indexes"},
		{"one item twice in a transaction", "TransactWriteItems", `{"TransactItems":[{"Put":{"TableName":"fuzz","Item":{"pk":{"S":"k"},"sk":{"N":"1"}}}},{"Delete":{"TableName":"fuzz","Key":{"pk":{"S":"k"},"sk":{"N":"1"}}}}]}`, validate,
			"Transaction request cannot include multiple operations on one item"},
		{"missing table name", "GetItem", `{"Key":{"pk":{"S":"k"}}}`, validate,
			"Value null at 'tableName' failed to satisfy constraint: Member must not be null"},
		{"attribute value with two types", "PutItem", `{"TableName":"fuzz","Item":{"pk":{"S":"k","N":"1"},"sk":{"N":"1"}}}`, validate,
			"Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target
			if target != "" && !strings.Contains(target, "_") {
				target = "DynamoDB_20120810." + target
			}
			status, resp := fs.check(t, target, []byte(tc.body))
			if status != 400 {
				t.Fatalf("status %d (%v), want 400 %s", status, resp, tc.typ)
			}
			if resp["__type"] != tc.typ {
				t.Errorf("__type %v, want %s (message %v)", resp["__type"], tc.typ, resp["message"])
			}
			if msg, _ := resp["message"].(string); !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q, want it to contain %q", msg, tc.msg)
			}
		})
	}
}
