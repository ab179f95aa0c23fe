package ddblocal

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/wire"
)

// postOp sends one operation through the store's HTTP handler, as a
// client would, so that the response is written (and its budget given
// back) before it returns.
func postOp(t *testing.T, s *Store, op, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s answered %q: %v", op, rec.Body.String(), err)
	}
	return rec.Code, out
}

// TestBatchGetResponseBudget: BatchGetItem answers hold the store-wide
// budget of response bytes while they are built and written. Past it a
// batch returns what fits and the rest as UnprocessedKeys, or, when
// nothing fits, is throttled with ProvisionedThroughputExceededException
// (which the SDKs retry), as are Query and Scan pages; every byte is
// given back once the answer is written (issue 25, finding 4). Before, every concurrent batch held its
// 16 MB answer, several times over, with no bound.
func TestBatchGetResponseBudget(t *testing.T) {
	t.Parallel()
	s, err := Open(engine.Options{TTLSweepInterval: -1, ResponseBudgetBytes: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustCall(t, s, "CreateTable", `{"TableName":"big","BillingMode":"PAY_PER_REQUEST",
		"AttributeDefinitions":[{"AttributeName":"PK","AttributeType":"S"}],"KeySchema":[{"AttributeName":"PK","KeyType":"HASH"}]}`)
	blob := strings.Repeat("x", 400_000-20)
	var keys []string
	for i := range 100 {
		k := fmt.Sprintf("k%03d", i)
		mustCall(t, s, "PutItem", `{"TableName":"big","Item":{"PK":{"S":"`+k+`"},"v":{"S":"`+blob+`"}}}`)
		keys = append(keys, `{"PK":{"S":"`+k+`"}}`)
	}
	batch := func(n int) string {
		return `{"RequestItems":{"big":{"Keys":[` + strings.Join(keys[:n], ",") + `]}}}`
	}
	counts := func(out map[string]any) (got, left int) {
		got = len(out["Responses"].(map[string]any)["big"].([]any))
		if u, ok := out["UnprocessedKeys"].(map[string]any)["big"]; ok {
			left = len(u.(map[string]any)["Keys"].([]any))
		}
		return got, left
	}

	// 100 items of 400 KB: the 16 MB response limit leaves the rest.
	code, out := postOp(t, s, "BatchGetItem", batch(100))
	if got, left := counts(out); code != 200 || got+left != 100 || got > 42 || got < 40 {
		t.Errorf("BatchGetItem of 100 large items: %d, %d items and %d unprocessed; want about 41 and the rest", code, got, left)
	}
	if u := s.eng.RespBudget.Used.Load(); u != 0 {
		t.Errorf("after the answer was written the budget holds %d bytes, want 0", u)
	}

	// Others hold all but about 1 MB: two items fit, the rest is left.
	held := &engine.Grant{B: &s.eng.RespBudget}
	if !held.Take(s.eng.RespBudget.Limit - 1<<20) {
		t.Fatal("cannot take the budget")
	}
	code, out = postOp(t, s, "BatchGetItem", batch(10))
	if got, left := counts(out); code != 200 || got != 2 || left != 8 {
		t.Errorf("BatchGetItem past the budget: %d, %d items and %d unprocessed; want 2 and 8", code, got, left)
	}
	// Nothing fits: throttled.
	if !held.Take(1 << 20) {
		t.Fatal("cannot take the rest of the budget")
	}
	code, out = postOp(t, s, "BatchGetItem", batch(10))
	if code != 400 || !strings.HasSuffix(fmt.Sprint(out["__type"]), "#ProvisionedThroughputExceededException") {
		t.Errorf("BatchGetItem with no budget left: %d %v, want 400 ProvisionedThroughputExceededException", code, out)
	}
	_, err = call(t, s, "BatchGetItem", batch(1))
	var ae *wire.APIError
	if !errors.As(err, &ae) || ae.Type != "ProvisionedThroughputExceededException" {
		t.Errorf("BatchGetItem with no budget left: %v", err)
	}
	// Query and Scan pages take their share too.
	for _, op := range []string{"Scan", "Query"} {
		req := `{"TableName":"big"}`
		if op == "Query" {
			req = `{"TableName":"big","KeyConditionExpression":"PK = :k","ExpressionAttributeValues":{":k":{"S":"k001"}}}`
		}
		code, out = postOp(t, s, op, req)
		if code != 400 || !strings.HasSuffix(fmt.Sprint(out["__type"]), "#ProvisionedThroughputExceededException") {
			t.Errorf("%s with no budget left: %d %v, want 400 ProvisionedThroughputExceededException", op, code, out)
		}
	}
	held.Release()
	if code, out = postOp(t, s, "Scan", `{"TableName":"big"}`); code != 200 || out["Count"].(float64) < 2 {
		t.Errorf("Scan once the budget is free: %d %v", code, out["Count"])
	}
	code, out = postOp(t, s, "BatchGetItem", batch(10))
	if got, left := counts(out); code != 200 || got != 10 || left != 0 {
		t.Errorf("BatchGetItem once the budget is free: %d, %d items and %d unprocessed; want 10 and 0", code, got, left)
	}
	if u := s.eng.RespBudget.Used.Load(); u != 0 {
		t.Errorf("at rest the budget holds %d bytes, want 0", u)
	}
}
