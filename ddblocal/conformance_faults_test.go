package ddblocal_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"lastro/ddblocal"
)

// adminJSON calls the admin endpoint and decodes its JSON answer into out.
func adminJSON(t *testing.T, method, url string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, raw)
		}
	}
}

// rawError is an error answered to a plain HTTP request.
type rawError struct {
	status    int
	code, msg string
}

func (e *rawError) Error() string        { return fmt.Sprintf("HTTP %d %s: %s", e.status, e.code, e.msg) }
func (e *rawError) ErrorCode() string    { return e.code }
func (e *rawError) ErrorMessage() string { return e.msg }
func (e *rawError) ErrorFault() smithy.ErrorFault {
	return smithy.FaultClient
}

// rawCall sends a JSON 1.0 request without the SDK (which refuses to send
// requests missing required members) and returns its error, if any, as a
// smithy.APIError.
func rawCall(t *testing.T, url, target, body string) error {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Amz-Target", target)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	var e struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("%s: %v in %s", target, err, raw)
	}
	_, code, _ := strings.Cut(e.Type, "#")
	return &rawError{status: resp.StatusCode, code: code, msg: e.Message}
}

func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func TestFaultsOffByDefault(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("flt_off", "pk"))
	for range 50 {
		l.put(tbl, attrs{"pk": str("a")})
	}
	if got := l.store.Faults(); len(got) != 0 {
		t.Errorf("rules on a fresh store: %+v", got)
	}
}

func TestFaultsInjectErrors(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("flt_kinds", "pk").withGSI("by_g", "g", "", types.ProjectionTypeAll))
	quiet := l.create(newTable("flt_quiet", "pk"))
	l.put(tbl, attrs{"pk": str("a"), "g": str("x")})
	get := func(table string) error {
		_, err := l.db.GetItem(l.ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: attrs{"pk": str("a")}})
		return err
	}
	put := func(table string) error {
		_, err := l.db.PutItem(l.ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: attrs{"pk": str("a"), "g": str("x")}})
		return err
	}
	queryIndex := func() error {
		_, err := l.db.Query(l.ctx, &dynamodb.QueryInput{TableName: aws.String(tbl), IndexName: aws.String("by_g"),
			KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: attrs{":g": str("x")}})
		return err
	}
	tx := func() error {
		_, err := l.db.TransactWriteItems(l.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String(quiet), Item: attrs{"pk": str("q")}}},
			{Put: &types.Put{TableName: aws.String(tbl), Item: attrs{"pk": str("t")}}},
		}})
		return err
	}
	cases := []struct {
		name   string
		rule   ddblocal.FaultRule
		call   func() error
		code   string
		msg    string
		status int
	}{
		{"throughput on a table", ddblocal.FaultRule{Table: tbl, Kind: ddblocal.FaultThroughputExceeded, Rate: 1}, func() error { return get(tbl) },
			"ProvisionedThroughputExceededException", "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.", 400},
		{"throughput on an index read", ddblocal.FaultRule{Table: tbl, Index: "by_g", Kind: ddblocal.FaultThroughputExceeded, Rate: 1}, queryIndex,
			"ProvisionedThroughputExceededException", "The level of configured provisioned throughput for one or more global secondary indexes of the table was exceeded. Consider increasing your provisioning level for the under-provisioned global secondary indexes with the UpdateTable API", 400},
		{"throughput on an index, writing its table", ddblocal.FaultRule{Table: tbl, Index: "by_g", Kind: ddblocal.FaultThroughputExceeded, Rate: 1}, func() error { return put(tbl) },
			"ProvisionedThroughputExceededException", "", 400},
		{"throttling", ddblocal.FaultRule{Kind: ddblocal.FaultThrottling, Rate: 1}, func() error { return put(tbl) },
			"ThrottlingException", "Rate of requests exceeds the allowed throughput.", 400},
		{"internal error", ddblocal.FaultRule{Table: tbl, Kind: ddblocal.FaultInternalError, Rate: 1}, func() error { return get(tbl) },
			"InternalServerError", "Internal server error", 500},
		{"conflict on a single-item write", ddblocal.FaultRule{Table: tbl, Kind: ddblocal.FaultTransactionConflict, Rate: 1}, func() error { return put(tbl) },
			"TransactionConflictException", "Transaction is ongoing for the item", 400},
		{"conflict in a transaction", ddblocal.FaultRule{Table: tbl, Kind: ddblocal.FaultTransactionConflict, Rate: 1}, tx,
			"TransactionCanceledException", "Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]", 400},
		{"operation filter", ddblocal.FaultRule{Operations: []string{"GetItem"}, Kind: ddblocal.FaultThrottling, Rate: 1}, func() error { return get(quiet) },
			"ThrottlingException", "", 400},
	}
	for _, c := range cases {
		l.store.ClearFaults()
		if err := l.store.SetFault(c.rule); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err := c.call()
		var ae interface{ ErrorCode() string }
		if !errors.As(err, &ae) || ae.ErrorCode() != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
			continue
		}
		if c.msg != "" {
			expectAPIError(t, err, c.code, c.msg)
		}
		if got := httpStatus(err); got != c.status {
			t.Errorf("%s: HTTP %d, want %d", c.name, got, c.status)
		}
	}
	var canceled *types.TransactionCanceledException
	l.store.ClearFaults()
	l.store.SetFault(ddblocal.FaultRule{Table: tbl, Kind: ddblocal.FaultTransactionConflict, Rate: 1})
	if err := tx(); !errors.As(err, &canceled) || len(canceled.CancellationReasons) != 2 ||
		aws.ToString(canceled.CancellationReasons[1].Code) != "TransactionConflict" {
		t.Errorf("transaction conflict reasons: %v", err)
	}

	// Rules are scoped: other tables, other operations and other indexes
	// are untouched.
	l.store.ClearFaults()
	l.store.SetFault(ddblocal.FaultRule{Table: tbl, Kind: ddblocal.FaultInternalError, Rate: 1})
	l.store.SetFault(ddblocal.FaultRule{Operations: []string{"Scan"}, Kind: ddblocal.FaultThrottling, Rate: 1})
	l.store.SetFault(ddblocal.FaultRule{Table: quiet, Index: "nope", Kind: ddblocal.FaultThrottling, Rate: 1})
	if err := get(quiet); err != nil {
		t.Errorf("a rule on another table, operation or index failed GetItem: %v", err)
	}
	l.store.ClearFaults()
	l.store.SetFault(ddblocal.FaultRule{Table: tbl, Index: "by_g", Kind: ddblocal.FaultThrottling, Rate: 1})
	if err := get(tbl); err != nil {
		t.Errorf("an index rule failed a base-table read: %v", err)
	}
	if err := queryIndex(); apiCode(err) != "ThrottlingException" {
		t.Errorf("an index rule did not fail a read of the index: %v", err)
	}
	if err := l.store.SetFault(ddblocal.FaultRule{Kind: "Meteor", Rate: 1}); err == nil {
		t.Error("an unknown fault kind was accepted")
	}
	if err := l.store.SetFault(ddblocal.FaultRule{Kind: ddblocal.FaultThrottling, Rate: 2}); err == nil {
		t.Error("a rate above 1 was accepted")
	}
}

func TestFaultsCountAndSeed(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("flt_count", "pk"))
	put := func() error {
		_, err := l.db.PutItem(l.ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: attrs{"pk": str("a")}})
		return err
	}
	// Count retires a rule: the first two writes fail, the third passes,
	// as a client retrying a throttled call would see.
	l.store.SetFault(ddblocal.FaultRule{Table: tbl, Kind: ddblocal.FaultThroughputExceeded, Rate: 1, Count: 2})
	var got []string
	for range 3 {
		got = append(got, apiCode(put()))
	}
	if strings.Join(got, ",") != "ProvisionedThroughputExceededException,ProvisionedThroughputExceededException," {
		t.Errorf("Count 2: %q", got)
	}
	if rules := l.store.Faults(); len(rules) != 0 {
		t.Errorf("exhausted rule still listed: %+v", rules)
	}
	// A seed makes a partial rate reproducible.
	run := func() string {
		l.store.ClearFaults()
		l.store.SetFaultSeed(42)
		l.store.SetFault(ddblocal.FaultRule{Table: tbl, Kind: ddblocal.FaultThrottling, Rate: 0.5})
		var b strings.Builder
		for range 40 {
			if put() != nil {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	first, second := run(), run()
	if first != second {
		t.Errorf("same seed, different faults:\n%s\n%s", first, second)
	}
	if n := strings.Count(first, "x"); n < 8 || n > 32 {
		t.Errorf("rate 0.5 injected %d faults in 40 calls: %s", n, first)
	}
}

func TestFaultsUnprocessedBatchItems(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("flt_batch", "pk"))
	other := l.create(newTable("flt_batch_ok", "pk"))
	l.store.SetFault(ddblocal.FaultRule{Table: tbl, Kind: ddblocal.FaultUnprocessed, Rate: 1})
	wr := func(pk string) types.WriteRequest {
		return types.WriteRequest{PutRequest: &types.PutRequest{Item: attrs{"pk": str(pk)}}}
	}
	out, err := l.db.BatchWriteItem(l.ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
		tbl: {wr("a"), wr("b")}, other: {wr("c")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.UnprocessedItems[tbl]) != 2 || len(out.UnprocessedItems[other]) != 0 {
		t.Errorf("UnprocessedItems = %+v, want both items of %s", out.UnprocessedItems, tbl)
	}
	if l.exists(tbl, attrs{"pk": str("a")}) || !l.exists(other, attrs{"pk": str("c")}) {
		t.Error("unprocessed items were written, or processed ones were not")
	}
	get, err := l.db.BatchGetItem(l.ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		tbl: {Keys: []attrs{{"pk": str("a")}}}, other: {Keys: []attrs{{"pk": str("c")}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(get.UnprocessedKeys[tbl].Keys) != 1 || len(get.Responses[other]) != 1 {
		t.Errorf("BatchGetItem: UnprocessedKeys %+v, Responses %+v", get.UnprocessedKeys, get.Responses)
	}
	// Resending the unprocessed items once the pressure is gone works.
	l.store.ClearFaults()
	if _, err := l.db.BatchWriteItem(l.ctx, &dynamodb.BatchWriteItemInput{RequestItems: out.UnprocessedItems}); err != nil {
		t.Fatal(err)
	}
	if !l.exists(tbl, attrs{"pk": str("a")}) || !l.exists(tbl, attrs{"pk": str("b")}) {
		t.Error("resent items missing")
	}
}

// TestFaultsAdminEndpoint drives fault injection over HTTP, as a test in
// another process would.
func TestFaultsAdminEndpoint(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("flt_admin", "pk"))
	put := func() error {
		_, err := l.db.PutItem(l.ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: attrs{"pk": str("a")}})
		return err
	}
	var list struct{ Rules []ddblocal.FaultRule }
	adminJSON(t, "POST", l.url+"/_ddblocal/faults", map[string]any{"Table": tbl, "Kind": "InternalServerError", "Rate": 1}, &list)
	if len(list.Rules) != 1 || list.Rules[0].Kind != ddblocal.FaultInternalError {
		t.Fatalf("rules after POST: %+v", list.Rules)
	}
	if err := put(); apiCode(err) != "InternalServerError" || httpStatus(err) != 500 {
		t.Errorf("PutItem with an admin rule: %v", err)
	}
	adminJSON(t, "GET", l.url+"/_ddblocal/faults", nil, &list)
	if len(list.Rules) != 1 || list.Rules[0].Table != tbl {
		t.Errorf("GET rules: %+v", list.Rules)
	}
	adminJSON(t, "POST", l.url+"/_ddblocal/faults/seed", map[string]any{"Seed": 7}, nil)
	adminJSON(t, "DELETE", l.url+"/_ddblocal/faults", nil, &list)
	if err := put(); err != nil {
		t.Errorf("PutItem after clearing: %v", err)
	}
	resp, err := http.Post(l.url+"/_ddblocal/faults", "application/json", strings.NewReader(`{"Kind":"Meteor","Rate":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad rule: HTTP %d, want 400", resp.StatusCode)
	}
}
