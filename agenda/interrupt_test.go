package agenda_test

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"testing"
	"time"

	"lastro/agenda"
	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/engine/enginetest"
)

// TestAStoppedRunCountsWhatItsGroupCommitted: entries of a shard run a
// few at once; when the run is stopped while one of them is still before
// its write, the others of its group that committed (and sent their
// messages) are in the report, so the report and the outbox agree. It
// used to return at the first stopped entry, dropping the group's later
// ones from the count (found by the worker's interruption test). The
// stopped entry was past its decision: its write is finished, not
// abandoned in flight (it could commit unknown to the report), so it is
// counted too.
func TestAStoppedRunCountsWhatItsGroupCommitted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-09-11", 7, 0), enginetest.Shards(1))
	f.sign(t, "C-1", "2026-09-10", 3)
	f.sign(t, "C-2", "2026-09-10", 3)
	run := at("2026-09-11", 9, 0)
	f.Clock.Set(run)
	date := calendar.Of(run, f.t.Location)
	// The group's order is the agenda index's: stop the first entry, so
	// the second is the one whose count used to be dropped.
	page, err := f.Kit.Tenant(f.t.ID, f.t.CursorKey()).QueryPage(bg, kit.Query{Index: table.Agenda, Partition: keys.Agenda(f.t.ID, date.String(), 0)}, "")
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("agenda entries: %d %v", len(page.Items), err)
	}
	var head struct {
		ContractID string `dynamodbav:"contractId"`
	}
	if err := attributevalue.UnmarshalMap(page.Items[0], &head); err != nil {
		t.Fatal(err)
	}
	first := head.ContractID
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	f.Agenda.SetBeforeSave(func(id string) {
		if id != first {
			return
		}
		// Stopped once the other entry's message is out.
		for deadline := time.Now().Add(10 * time.Second); len(f.outbox(t)) == 0; {
			if time.Now().After(deadline) {
				t.Error("the other entry never sent its message")
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	})
	rep, err := f.Agenda.Run(ctx, f.t, date, agenda.Options{})
	if err == nil {
		t.Fatal("the stopped run reported no error")
	}
	sent := len(f.outbox(t))
	if sent == 0 || rep.Executed["SMS_D1"] != sent {
		t.Fatalf("%d messages sent, report %v", sent, rep.Executed)
	}
}
