package ddblocal

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
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
	skey := s.eng.Table("race").Def.Load().BaseKey(sItem("pk", "c"))
	s.eng.DB.Locks.Acquire(string(skey), false)
	released := false
	defer func() {
		if !released {
			s.eng.DB.Locks.Release(string(skey))
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
	s.eng.DB.Locks.Release(string(skey))
	released = true
	ok, inProgress := 0, 0
	for range 2 {
		err := <-errs
		var ae *wire.APIError
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

// TestCanonicalHashIgnoresMemberOrderAndSpace: two bodies that differ only
// in the order of object members or in insignificant space hash alike; a
// change to any name, value or array order does not.
func TestCanonicalHashIgnoresMemberOrderAndSpace(t *testing.T) {
	t.Parallel()
	base := `{"TransactItems":[{"Put":{"TableName":"t","Item":{"PK":{"S":"a"},"n":{"N":"1.50"},"l":{"L":[{"S":"x"},{"BOOL":true},{"NULL":true}]}}}}],"ClientRequestToken":"tok","Esc":"a\"b\\c\u00e9"}`
	same := []string{
		`{"ClientRequestToken":"tok","Esc":"a\"b\\c\u00e9","TransactItems":[{"Put":{"Item":{"l":{"L":[{"S":"x"},{"BOOL":true},{"NULL":true}]},"n":{"N":"1.50"},"PK":{"S":"a"}},"TableName":"t"}}]}`,
		" {\n\t\"TransactItems\" : [ { \"Put\" : { \"TableName\" : \"t\" , \"Item\" : { \"PK\" : { \"S\" : \"a\" } , \"n\" : { \"N\" : \"1.50\" } , \"l\" : { \"L\" : [ { \"S\" : \"x\" } , { \"BOOL\" : true } , { \"NULL\" : true } ] } } } } ] , \"ClientRequestToken\" : \"tok\" , \"Esc\" : \"a\\\"b\\\\c\\u00e9\" }\r\n",
	}
	differ := []string{
		strings.Replace(base, `"1.50"`, `"1.5"`, 1),
		strings.Replace(base, `{"S":"x"},{"BOOL":true}`, `{"BOOL":true},{"S":"x"}`, 1),
		strings.Replace(base, `"PK"`, `"pk"`, 1),
		strings.Replace(base, `true},{"NULL"`, `false},{"NULL"`, 1),
		strings.Replace(base, `"tok"`, `"tok2"`, 1),
		`{}`, `[]`, `{"a":{}}`, `{"a":[]}`,
	}
	want := engine.CanonicalHash([]byte(base))
	for _, b := range same {
		if engine.CanonicalHash([]byte(b)) != want {
			t.Errorf("same request, different hash:\n%s", b)
		}
	}
	seen := map[[32]byte]string{want: base}
	for _, b := range differ {
		h := engine.CanonicalHash([]byte(b))
		if prev, dup := seen[h]; dup {
			t.Errorf("different requests, same hash:\n%s\n%s", b, prev)
		}
		seen[h] = b
	}
	// What does not parse hashes as its bytes.
	for _, bad := range []string{`{"a":`, `{"a" 1}`, `{"a":1,}`, `[1 2]`, `{"a":1} x`, `"open`, ``} {
		if engine.CanonicalHash([]byte(bad)) != sha256.Sum256([]byte(bad)) {
			t.Errorf("unparsable %q was canonicalized", bad)
		}
	}
}

// FuzzCanonical: the canonical form of valid JSON is valid JSON, its own
// canonical form, and holds the same values.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[true,null,{"d":"x","c":-1.5e3}]}`, `[]`, `"s\"q"`, ` { } `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, ok := engine.Canonical(in) // never panics, whatever in is
		if !json.Valid(in) {
			return
		}
		if !ok || !json.Valid(out) {
			t.Fatalf("valid %q: canonical %q (ok %v)", in, out, ok)
		}
		again, _ := engine.Canonical(out)
		if !bytes.Equal(again, out) {
			t.Fatalf("canonical form of %q is not stable: %q then %q", in, out, again)
		}
		var a, b any
		if json.Unmarshal(in, &a) == nil && json.Unmarshal(out, &b) == nil && !reflect.DeepEqual(a, b) {
			t.Fatalf("%q and its canonical form %q differ", in, out)
		}
	})
}

// TestTokenStoredByTheLegacyHashIsReplayed: a transaction whose token a
// build before the one-pass canonical form stored (its hash escapes "<"
// as encoding/json does) is replayed after the upgrade, not refused as a
// different request; a really different body still is.
func TestTokenStoredByTheLegacyHashIsReplayed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	mustCall(t, s, "CreateTable", raceTablePlain)
	body := `{"ClientRequestToken":"tok-upgrade","TransactItems":[{"Put":{"TableName":"race","Item":{"pk":{"S":"a<b>&c"}}}}]}`
	mustCall(t, s, "TransactWriteItems", body)
	// Rewrite the stored hash as the previous build computed it.
	key := storage.TokenKey("tok-upgrade")
	v, err := s.eng.DB.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	if h := engine.CanonicalHash([]byte(body)); !bytes.Equal(v[:32], h[:]) {
		t.Fatal("the stored record does not start with the request's hash")
	}
	legacy := engine.LegacyCanonicalHash([]byte(body))
	if legacy == engine.CanonicalHash([]byte(body)) {
		t.Fatal("the body must hash differently under the two forms")
	}
	if err := s.eng.DB.Set(key, append(legacy[:], v[32:]...)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openInternal(t, dir)
	defer s.Close()
	if _, err := call(t, s, "TransactWriteItems", body); err != nil {
		t.Fatalf("retry across the upgrade: %v, want the stored answer", err)
	}
	other := strings.Replace(body, "a<b>&c", "other", 1)
	var ae *wire.APIError
	if _, err := call(t, s, "TransactWriteItems", other); !errors.As(err, &ae) || ae.Type != "IdempotentParameterMismatchException" {
		t.Fatalf("a different request with the same token: %v, want IdempotentParameterMismatchException", err)
	}
}
