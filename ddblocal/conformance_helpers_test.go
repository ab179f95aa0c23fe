package ddblocal_test

// Shared helpers of the conformance suite: every test talks to the store
// through the AWS SDK for Go v2 (or, to check the wire shape of errors,
// through raw HTTP), never through the package internals.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// item is an item in SDK form.
type avmap = map[string]types.AttributeValue

// Attribute value shorthands.
func vS(s string) types.AttributeValue  { return &types.AttributeValueMemberS{Value: s} }
func vN(n string) types.AttributeValue  { return &types.AttributeValueMemberN{Value: n} }
func vB(b []byte) types.AttributeValue  { return &types.AttributeValueMemberB{Value: b} }
func vBool(b bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: b} }
func vSS(s ...string) types.AttributeValue {
	return &types.AttributeValueMemberSS{Value: s}
}
func vL(v ...types.AttributeValue) types.AttributeValue {
	return &types.AttributeValueMemberL{Value: v}
}
func vM(m avmap) types.AttributeValue { return &types.AttributeValueMemberM{Value: m} }

// cfStore is one in-memory store with its SDK client and endpoint.
type cfStore struct {
	t   testing.TB
	c   *dynamodb.Client
	url string
}

// newCF starts a fresh in-memory store for one test.
func newCF(t testing.TB) *cfStore {
	t.Helper()
	srv := ddbtest.Start(t, ddblocal.Options{})
	return &cfStore{t: t, c: srv.Client(), url: srv.URL}
}

var bg = context.Background()

// keyAttr describes a key attribute as "name:T", e.g. "pk:S".
func keyAttr(spec string) (string, types.ScalarAttributeType) {
	name, typ, ok := strings.Cut(spec, ":")
	if !ok {
		panic("key spec needs name:T: " + spec)
	}
	return name, types.ScalarAttributeType(typ)
}

// tableSpec builds a CreateTable request.
type tableSpec struct {
	in    *dynamodb.CreateTableInput
	attrs map[string]types.ScalarAttributeType
}

// table starts a table spec with a hash key and optional range key
// ("pk:S", "sk:N").
func table(name, hash string, rng ...string) *tableSpec {
	ts := &tableSpec{in: &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest},
		attrs: map[string]types.ScalarAttributeType{}}
	ts.in.KeySchema = ts.keys(hash, rng...)
	return ts
}

func (ts *tableSpec) keys(hash string, rng ...string) []types.KeySchemaElement {
	n, typ := keyAttr(hash)
	ts.attrs[n] = typ
	ks := []types.KeySchemaElement{{AttributeName: aws.String(n), KeyType: types.KeyTypeHash}}
	if len(rng) > 0 && rng[0] != "" {
		n, typ := keyAttr(rng[0])
		ts.attrs[n] = typ
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(n), KeyType: types.KeyTypeRange})
	}
	return ks
}

func projectionOf(p types.ProjectionType, nonKey []string) *types.Projection {
	pr := &types.Projection{ProjectionType: p}
	if len(nonKey) > 0 {
		pr.NonKeyAttributes = nonKey
	}
	return pr
}

// gsi adds a global secondary index; rng may be "".
func (ts *tableSpec) gsi(name, hash, rng string, p types.ProjectionType, nonKey ...string) *tableSpec {
	ts.in.GlobalSecondaryIndexes = append(ts.in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
		IndexName: aws.String(name), KeySchema: ts.keys(hash, rng), Projection: projectionOf(p, nonKey)})
	return ts
}

// lsi adds a local secondary index on the table's hash key.
func (ts *tableSpec) lsi(name, rng string, p types.ProjectionType, nonKey ...string) *tableSpec {
	hash := *ts.in.KeySchema[0].AttributeName + ":" + string(ts.attrs[*ts.in.KeySchema[0].AttributeName])
	ts.in.LocalSecondaryIndexes = append(ts.in.LocalSecondaryIndexes, types.LocalSecondaryIndex{
		IndexName: aws.String(name), KeySchema: ts.keys(hash, rng), Projection: projectionOf(p, nonKey)})
	return ts
}

// create creates the table in the store.
func (ts *tableSpec) create(s *cfStore) string {
	s.t.Helper()
	names := make([]string, 0, len(ts.attrs))
	for n := range ts.attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	ts.in.AttributeDefinitions = nil
	for _, n := range names {
		ts.in.AttributeDefinitions = append(ts.in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: ts.attrs[n]})
	}
	if _, err := s.c.CreateTable(bg, ts.in); err != nil {
		s.t.Fatalf("create table %s: %v", *ts.in.TableName, err)
	}
	return *ts.in.TableName
}

// put writes an item and fails the test on error.
func (s *cfStore) put(tbl string, it avmap) {
	s.t.Helper()
	if _, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: it}); err != nil {
		s.t.Fatalf("put %v: %v", it, err)
	}
}

// get reads an item with a consistent read (nil when absent).
func (s *cfStore) get(tbl string, key avmap) avmap {
	s.t.Helper()
	out, err := s.c.GetItem(bg, &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		s.t.Fatalf("get %v: %v", key, err)
	}
	return out.Item
}

// queryAll follows LastEvaluatedKey to the end and returns every item and
// the number of pages read.
func (s *cfStore) queryAll(in *dynamodb.QueryInput) ([]avmap, int) {
	s.t.Helper()
	var all []avmap
	pages := 0
	for {
		out, err := s.c.Query(bg, in)
		if err != nil {
			s.t.Fatalf("query: %v", err)
		}
		pages++
		all = append(all, out.Items...)
		if out.LastEvaluatedKey == nil {
			return all, pages
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
		if pages > 10000 {
			s.t.Fatal("query never ends")
		}
	}
}

// scanAll follows LastEvaluatedKey to the end.
func (s *cfStore) scanAll(in *dynamodb.ScanInput) []avmap {
	s.t.Helper()
	var all []avmap
	for pages := 0; ; pages++ {
		out, err := s.c.Scan(bg, in)
		if err != nil {
			s.t.Fatalf("scan: %v", err)
		}
		all = append(all, out.Items...)
		if out.LastEvaluatedKey == nil {
			return all
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
		if pages > 10000 {
			s.t.Fatal("scan never ends")
		}
	}
}

// apiErr asserts err is a DynamoDB error with the given code and, when msg
// is not empty, exactly that message.
func apiErr(t testing.TB, err error, code, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s %q, got success", code, msg)
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("want %s, got non-API error %v", code, err)
	}
	if ae.ErrorCode() != code {
		t.Fatalf("want %s %q, got %s %q", code, msg, ae.ErrorCode(), ae.ErrorMessage())
	}
	if msg != "" && ae.ErrorMessage() != msg {
		t.Fatalf("%s message:\n got %q\nwant %q", code, ae.ErrorMessage(), msg)
	}
}

// validationErr asserts a ValidationException with exactly msg.
func validationErr(t testing.TB, err error, msg string) {
	t.Helper()
	apiErr(t, err, "ValidationException", msg)
}

// raw sends one JSON request over HTTP and returns the status and the
// decoded body, to check what the SDK hides (e.g. the __type namespace).
func (s *cfStore) raw(op string, body any) (int, map[string]any) {
	s.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		s.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, s.url+"/", bytes.NewReader(b))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		s.t.Fatalf("%s: response is not JSON: %s", op, data)
	}
	return resp.StatusCode, out
}

// attrString renders an attribute value compactly for comparisons in
// failure messages.
func attrString(v types.AttributeValue) string {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + x.Value
	case *types.AttributeValueMemberN:
		return "N:" + x.Value
	case *types.AttributeValueMemberB:
		return fmt.Sprintf("B:%x", x.Value)
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprintf("BOOL:%v", x.Value)
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberSS:
		s := append([]string(nil), x.Value...)
		sort.Strings(s)
		return "SS:" + strings.Join(s, ",")
	case *types.AttributeValueMemberNS:
		s := append([]string(nil), x.Value...)
		sort.Strings(s)
		return "NS:" + strings.Join(s, ",")
	case *types.AttributeValueMemberL:
		parts := make([]string, len(x.Value))
		for i, e := range x.Value {
			parts[i] = attrString(e)
		}
		return "L:[" + strings.Join(parts, ",") + "]"
	case *types.AttributeValueMemberM:
		return "M:" + itemString(x.Value)
	case nil:
		return "<nil>"
	}
	return fmt.Sprintf("%T", v)
}

// itemString renders an item with sorted attribute names.
func itemString(it avmap) string {
	if it == nil {
		return "<none>"
	}
	names := make([]string, 0, len(it))
	for n := range it {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + attrString(it[n])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// sameItem asserts two items are equal.
func sameItem(t testing.TB, got, want avmap) {
	t.Helper()
	if g, w := itemString(got), itemString(want); g != w {
		t.Fatalf("item:\n got %s\nwant %s", g, w)
	}
}

// attrsOf lists one attribute of each item, rendered.
func attrsOf(items []avmap, name string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = attrString(it[name])
	}
	return out
}

func sameList(t testing.TB, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// regexpMatch reports whether s matches the pattern.
func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
