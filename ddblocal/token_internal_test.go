package ddblocal

import (
	"errors"
	"testing"
	"time"
)

// Two TransactWriteItems with the same ClientRequestToken in flight at
// once apply once: the second is told the transaction is in progress (or,
// if the first has finished, replays its answer).
func TestTransactTokenInFlight(t *testing.T) {
	t.Parallel()
	s := openInternal(t, "")
	defer s.Close()
	mustCall(t, s, "CreateTable", raceTablePlain)
	mustCall(t, s, "PutItem", `{"TableName":"race","Item":{"pk":{"S":"c"},"n":{"N":"0"}}}`)
	// Hold the item as a single-item write would: transactions wait for it.
	skey := s.table("race").def.Load().baseKey(sItem("pk", "c"))
	s.db.Locks.Acquire(string(skey), false)
	released := false
	defer func() {
		if !released {
			s.db.Locks.Release(string(skey))
		}
	}()
	body := `{"ClientRequestToken":"tok","TransactItems":[{"Update":{"TableName":"race","Key":{"pk":{"S":"c"}},
		"UpdateExpression":"SET n = n + :one","ExpressionAttributeValues":{":one":{"N":"1"}}}}]}`
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := call(t, s, "TransactWriteItems", body)
			errs <- err
		}()
		time.Sleep(50 * time.Millisecond)
	}
	s.db.Locks.Release(string(skey))
	released = true
	ok, inProgress := 0, 0
	for range 2 {
		err := <-errs
		var ae *apiError
		switch {
		case err == nil:
			ok++
		case errors.As(err, &ae) && ae.Type == "TransactionInProgressException":
			inProgress++
		default:
			t.Fatalf("unexpected error %v", err)
		}
	}
	if ok == 0 || ok+inProgress != 2 {
		t.Fatalf("%d succeeded, %d in progress", ok, inProgress)
	}
	out := mustCall(t, s, "GetItem", `{"TableName":"race","Key":{"pk":{"S":"c"}},"ConsistentRead":true}`)
	if n := out["Item"].(map[string]any)["n"].(map[string]any)["N"]; n != "1" {
		t.Fatalf("n = %v after one idempotent transaction sent twice, want 1", n)
	}
	// Once the first has finished, the token replays.
	if _, err := call(t, s, "TransactWriteItems", body); err != nil {
		t.Fatalf("replay: %v", err)
	}
}
