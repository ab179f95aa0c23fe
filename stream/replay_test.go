package stream_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/clock"
	"lastro/collections/kit"
	"lastro/stream"
)

// pickyPub refuses the events of one contract, as a sink still down for
// them would, and keeps the others.
type pickyPub struct {
	memPub
	refuse string
}

func (p *pickyPub) Publish(ctx context.Context, evs []stream.Event) error {
	for _, e := range evs {
		if e.ContractID == p.refuse {
			return errors.New("sink unavailable")
		}
	}
	return p.memPub.Publish(ctx, evs)
}

func noteRecord(seq, typ, ct string) stream.Record {
	k := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "T#t1#CT#" + ct}, "SK": &types.AttributeValueMemberS{Value: "N#" + seq},
	}
	img := map[string]types.AttributeValue{"PK": k["PK"], "SK": k["SK"],
		"type": &types.AttributeValueMemberS{Value: typ}, "contractId": &types.AttributeValueMemberS{Value: ct},
		"n": &types.AttributeValueMemberS{Value: seq}}
	return stream.Record{EventID: "e" + seq, Sequence: seq, Name: stream.Insert, Keys: k, New: img,
		At: time.Date(2026, 9, 21, 13, 0, 0, 0, time.UTC)}
}

// TestReplayRecordsPublishesTheGoodAndKeepsTheRest: records read back
// from a dead-letter file are translated and published again; one that
// still does not translate and one whose sink still refuses it are kept,
// with the new cause, in the survivors' file; a second replay of the
// same file yields the same event ids.
func TestReplayRecordsPublishesTheGoodAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "dead.jsonl")
	dl := stream.NewDeadLetterFile(in)
	ctx := context.Background()
	for _, r := range []stream.Record{noteRecord("101", "NOTE", "C-1"), noteRecord("102", "POISON", "C-2"),
		noteRecord("103", "NOTE", "C-3"), noteRecord("104", "NOTE", "C-4")} {
		if err := dl.Dead(ctx, r, errors.New("was down")); err != nil {
			t.Fatal(err)
		}
	}
	dl.Close()
	recs, _, err := stream.ReadDeadLetters(in)
	if err != nil {
		t.Fatal(err)
	}
	replay := func(out string) (stream.ReplayReport, []stream.Event) {
		t.Helper()
		pub := &pickyPub{refuse: "C-3"}
		keep := stream.NewDeadLetterFile(out)
		defer keep.Close()
		rep, err := stream.ReplayRecords(ctx, recs, note, pub, keep)
		if err != nil {
			t.Fatal(err)
		}
		return rep, pub.all()
	}
	out := filepath.Join(dir, "dead.jsonl.remaining")
	rep, got := replay(out)
	if want := (stream.ReplayReport{Read: 4, Replayed: 2, Dead: 2, Events: 2}); rep != want {
		t.Errorf("report %+v, want %+v", rep, want)
	}
	if ids := ids(got); !slices.Equal(ids, []string{"101-0", "104-0"}) {
		t.Errorf("published %v, want the two good records' events once", ids)
	}
	left, deads, err := stream.ReadDeadLetters(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 2 || left[0].Sequence != "102" || left[1].Sequence != "103" {
		t.Fatalf("survivors %+v, want records 102 and 103", left)
	}
	if deads[0].Cause != "cannot decode" || deads[1].Cause != "stream: publish: sink unavailable" {
		t.Errorf("survivors' causes %q, %q: want the new ones", deads[0].Cause, deads[1].Cause)
	}
	if _, again := replay(filepath.Join(dir, "again.jsonl")); !slices.Equal(ids(again), ids(got)) {
		t.Errorf("second replay published %v, want the same ids %v", ids(again), ids(got))
	}
	if _, err := stream.ReplayRecords(ctx, recs, note, nil, stream.NewDeadLetterFile(out)); err == nil {
		t.Error("a replay without a publisher ran")
	}
}

func ids(evs []stream.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// TestWebhookReplayPostsDeadEventsAgain: dead events go to each tenant's
// endpoint, signed, in batches; a tenant whose endpoint fails again keeps
// that batch and the rest without another try, a tenant without a
// webhook and one whose target cannot be resolved keep theirs too.
func TestWebhookReplayPostsDeadEventsAgain(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 21, 13, 0, 0, 0, time.UTC)
	good := &endpoint{t: t, secret: "sec-a", now: now}
	bad := &endpoint{t: t, secret: "sec-d", now: now, statuses: []int{500, 500, 500, 500}}
	sg, sb := httptest.NewServer(good), httptest.NewServer(bad)
	defer sg.Close()
	defer sb.Close()
	targets := map[string]stream.WebhookTarget{"ta": {URL: sg.URL, Secret: "sec-a"}, "td": {URL: sb.URL, Secret: "sec-d"}}
	boom := errors.New("directory down")
	w := &stream.Webhook{Clock: clock.NewManual(now), Backoff: kit.Backoff{Attempts: 2, Base: time.Millisecond}, Egress: loopback,
		Targets: func(_ context.Context, tn string) (stream.WebhookTarget, bool, error) {
			if tn == "tc" {
				return stream.WebhookTarget{}, false, boom
			}
			tg, ok := targets[tn]
			return tg, ok, nil
		}}
	var deads []stream.DeadEvent
	add := func(tn string, n int) {
		for range n {
			deads = append(deads, stream.DeadEvent{Tenant: tn, Cause: "status 500",
				Event: stream.Event{ID: fmt.Sprintf("%d-0", len(deads)), Tenant: tn, Type: stream.BucketChanged}})
		}
	}
	add("ta", 150)
	add("tb", 2)
	add("td", 120)
	add("tc", 1)
	add("ta", 60)
	keep := &memDeadEvents{}
	rep, err := w.Replay(context.Background(), deads, keep)
	if err != nil {
		t.Fatal(err)
	}
	if want := (stream.ReplayReport{Read: 333, Replayed: 210, Dead: 123, Events: 210}); rep != want {
		t.Errorf("report %+v, want %+v", rep, want)
	}
	var sizes []int
	var gotA []string
	for _, b := range good.received {
		sizes = append(sizes, len(b))
		gotA = append(gotA, b...)
	}
	if !slices.Equal(sizes, []int{100, 100, 10}) {
		t.Errorf("ta's batches %v, want 100, 100, 10", sizes)
	}
	var wantA []string
	for _, d := range deads {
		if d.Tenant == "ta" {
			wantA = append(wantA, "ta/"+d.Event.ID)
		}
	}
	if !slices.Equal(gotA, wantA) {
		t.Errorf("ta received its events out of order or not once")
	}
	if bad.calls != 2 {
		t.Errorf("td's endpoint called %d times, want one batch's 2 attempts", bad.calls)
	}
	if len(keep.kept) != 123 || len(keep.causes) != 4 {
		t.Fatalf("kept %d events in %d batches, want 123 in 4", len(keep.kept), len(keep.causes))
	}
	for i, want := range []error{stream.ErrNoWebhook, kit.ErrAttemptsExhausted, stream.ErrWebhookPaused, boom} {
		if !errors.Is(keep.causes[i], want) {
			t.Errorf("kept batch %d: cause %v, want %v", i, keep.causes[i], want)
		}
	}
	failing := &memDeadEvents{fail: errors.New("disk full")}
	if _, err := w.Replay(context.Background(), deads[150:152], failing); err == nil {
		t.Error("a dead letter that cannot be written did not fail the replay")
	}
}
