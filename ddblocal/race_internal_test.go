package ddblocal

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

func openInternal(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(engine.Options{Dir: dir, TTLSweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// call runs one operation's handler with a JSON body.
func call(t *testing.T, s *Store, op, body string) (map[string]any, error) {
	t.Helper()
	h := s.operations()[op]
	if h == nil {
		t.Fatalf("no operation %s", op)
	}
	resp, err := h(context.Background(), []byte(body))
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

func mustCall(t *testing.T, s *Store, op, body string) map[string]any {
	t.Helper()
	out, err := call(t, s, op, body)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return out
}

const raceTableGSI = `{"TableName":"race","BillingMode":"PAY_PER_REQUEST",
	"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"}],
	"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
	"GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}`

const raceTablePlain = `{"TableName":"race","BillingMode":"PAY_PER_REQUEST",
	"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],
	"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}`

// pausedPut starts a PutItem of item through Store.mutate that stops after
// the item is locked and the table definition read, until release is
// called; wait returns the write's error.
func pausedPut(t *testing.T, s *Store, item av.Item) (release func(), wait func() error) {
	t.Helper()
	tb := s.eng.Table("race")
	entered, proceed, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		_, _, _, err := s.data.Mutate(tb, engine.KeyOf(tb.Def.Load(), item), func(d *engine.TableDef, old av.Item) (av.Item, error) {
			close(entered)
			<-proceed
			return item, nil
		})
		done <- err
	}()
	<-entered
	var once sync.Once
	return func() { once.Do(func() { close(proceed) }) }, func() error { return <-done }
}

func sItem(kv ...string) av.Item {
	it := av.Item{}
	for i := 0; i < len(kv); i += 2 {
		it[kv[i]] = &av.Value{T: av.S, Str: kv[i+1]}
	}
	return it
}

// spaceEntries counts the stored keys of one table index.
func spaceEntries(t *testing.T, s *Store, tableID uint32, indexID uint16) int {
	t.Helper()
	iter, err := s.eng.DB.NewIter(storage.SpaceKey(tableID, indexID), storage.SpaceKey(tableID, indexID+1))
	if err != nil {
		t.Fatal(err)
	}
	defer iter.Close()
	n := 0
	for iter.First(); iter.Valid(); iter.Next() {
		n++
	}
	return n
}

// A put that read the definition before UpdateTable added a GSI and
// commits after the backfill listed the table's items must still get its
// index entry.
func TestWriteRacingIndexCreation(t *testing.T) {
	t.Parallel()
	s := openInternal(t, "")
	defer s.Close()
	mustCall(t, s, "CreateTable", raceTablePlain)
	release, wait := pausedPut(t, s, sItem("pk", "a", "g", "x"))
	defer release()
	mustCall(t, s, "UpdateTable", `{"TableName":"race","AttributeDefinitions":[{"AttributeName":"g","AttributeType":"S"}],
		"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}`)
	release()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	out := mustCall(t, s, "Query", `{"TableName":"race","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}}}`)
	if n := out["Count"].(float64); n != 1 {
		t.Fatalf("index query found %v items, want 1", n)
	}
	tb := s.eng.Table("race")
	ix := tb.Def.Load().Index("byG")
	if n := tb.IdxItems[ix.ID].Load(); n != 1 {
		t.Fatalf("index item counter %d, want 1", n)
	}
}

// A put that read the definition before UpdateTable deleted a GSI must not
// leave an entry in the deleted index's key space.
func TestWriteRacingIndexDeletion(t *testing.T) {
	t.Parallel()
	s := openInternal(t, "")
	defer s.Close()
	mustCall(t, s, "CreateTable", raceTableGSI)
	d := s.eng.Table("race").Def.Load()
	id := d.Index("byG").ID
	release, wait := pausedPut(t, s, sItem("pk", "a", "g", "x"))
	defer release()
	mustCall(t, s, "UpdateTable", `{"TableName":"race","GlobalSecondaryIndexUpdates":[{"Delete":{"IndexName":"byG"}}]}`)
	release()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if n := spaceEntries(t, s, d.ID, id); n != 0 {
		t.Fatalf("%d entries left in the deleted index", n)
	}
}

// A put racing DeleteTable either lands before the table's data is
// deleted or fails with ResourceNotFoundException: it never leaves data
// under the deleted table's id.
func TestWriteRacingDeleteTable(t *testing.T) {
	t.Parallel()
	s := openInternal(t, "")
	defer s.Close()
	mustCall(t, s, "CreateTable", raceTableGSI)
	d := s.eng.Table("race").Def.Load()
	release, wait := pausedPut(t, s, sItem("pk", "a", "g", "x"))
	defer release()
	mustCall(t, s, "DeleteTable", `{"TableName":"race"}`)
	release()
	err := wait()
	var ae *wire.APIError
	if !errors.As(err, &ae) || ae.Type != "ResourceNotFoundException" {
		t.Fatalf("write to a deleted table: %v, want ResourceNotFoundException", err)
	}
	lo, hi := storage.TableSpan(d.ID)
	iter, err := s.eng.DB.NewIter(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	defer iter.Close()
	if iter.First() {
		t.Fatalf("data left under the deleted table: %x", iter.Key())
	}
}

// A panic while committing (here: a write after Close, on which Pebble
// panics) must not leave the commit lock held, or every later write of a
// server that recovers panics would hang.
func TestCommitLockReleasedOnPanic(t *testing.T) {
	t.Parallel()
	s := openInternal(t, "")
	mustCall(t, s, "CreateTable", raceTablePlain)
	tb := s.eng.Table("race")
	d := tb.Def.Load()
	it := sItem("pk", "a")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if p := recover(); p == nil {
				t.Fatal("write on a closed store did not panic")
			}
		}()
		s.eng.Write([]*engine.Change{{T: tb, Def: d, Key: d.BaseKey(it), New: it}})
	}()
	if !s.eng.DB.TryLock() {
		t.Fatal("commit lock still held after a panic")
	}
	s.eng.DB.Unlock()
}
