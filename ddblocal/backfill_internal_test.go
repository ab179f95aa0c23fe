package ddblocal

import (
	"context"
	"errors"
	"strings"
	"testing"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/control"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/wire"
)

// A crash while UpdateTable backfills a new index leaves it marked as
// backfilling on disk; reopening the store completes the backfill rather
// than leaving the index unreadable for ever.
func TestBackfillResumesAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	mustCall(t, s, "CreateTable", raceTablePlain)
	for _, k := range []string{"a", "b", "c"} {
		mustCall(t, s, "PutItem", `{"TableName":"race","Item":{"pk":{"S":"`+k+`"},"g":{"S":"x"}}}`)
	}
	// The state a crash in the middle of the backfill leaves: the new
	// index persisted as backfilling, with only some of its entries.
	tb := s.eng.Table("race")
	nd := control.CloneDef(tb.Def.Load())
	ix := &engine.IndexDef{Name: "byG", Hash: engine.KeyDef{Name: "g", Type: av.S}, ProjectionType: "ALL", Backfilling: true}
	nd.AddIndex(ix)
	nd.AttrDefs = append(nd.AttrDefs, wire.AttributeDefinition{AttributeName: "g", AttributeType: "S"})
	s.eng.Mu.Lock()
	err := s.eng.PersistDef(nd)
	s.eng.Mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	tb.Def.Store(nd)
	if err := s.ctl.BackfillOne(tb, ix.ID, nd.BaseKey(sItem("pk", "a"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openInternal(t, dir)
	defer s.Close()
	out, err := call(t, s, "Query", `{"TableName":"race","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}}}`)
	if err != nil {
		if strings.Contains(err.Error(), "backfilling") || strings.Contains(errMessage(err), "backfilling") {
			t.Fatalf("index still backfilling after restart: %v", errMessage(err))
		}
		t.Fatal(err)
	}
	if n := out["Count"].(float64); n != 3 {
		t.Fatalf("index query found %v items, want 3", n)
	}
	tb = s.eng.Table("race")
	if n := tb.IdxItems[tb.Def.Load().Index("byG").ID].Load(); n != 3 {
		t.Fatalf("index item counter %d, want 3", n)
	}
}

func errMessage(err error) string {
	var ae *wire.APIError
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}

// A backfill that finishes after its table was deleted (and a table of
// the same name created) must not write the old definition back to the
// catalog, where it would replace the new table's at the next start.
func TestBackfillAfterDeleteTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	mustCall(t, s, "CreateTable", raceTablePlain)
	mustCall(t, s, "PutItem", `{"TableName":"race","Item":{"pk":{"S":"a"},"g":{"S":"x"}}}`)
	old := s.eng.Table("race")
	nd := control.CloneDef(old.Def.Load())
	ix := &engine.IndexDef{Name: "byG", Hash: engine.KeyDef{Name: "g", Type: av.S}, ProjectionType: "ALL", Backfilling: true}
	nd.AddIndex(ix)
	old.Def.Store(nd)
	mustCall(t, s, "DeleteTable", `{"TableName":"race"}`)
	mustCall(t, s, "CreateTable", raceTablePlain)
	mustCall(t, s, "PutItem", `{"TableName":"race","Item":{"pk":{"S":"b"}}}`)
	if err := s.ctl.Backfill(context.Background(), old, ix.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openInternal(t, dir)
	defer s.Close()
	out := mustCall(t, s, "Scan", `{"TableName":"race"}`)
	if n := out["Count"].(float64); n != 1 {
		t.Fatalf("the new table holds %v items after a restart, want 1", n)
	}
}
