package stream_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/stream"
)

func readEvents(t *testing.T, path string) []stream.Event {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []stream.Event
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var e stream.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// roundTrip is an event as a consumer decodes its JSON.
func roundTrip(t *testing.T, evs []stream.Event) []stream.Event {
	t.Helper()
	b, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	var out []stream.Event
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFileSinkAppendsEveryEvent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	sink := stream.NewFileSink(path)
	defer sink.Close()
	evs := fixtureEvents(t)
	half := len(evs) / 2
	for _, batch := range [][]stream.Event{evs[:half], nil, evs[half:]} {
		if err := sink.Publish(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	if got := readEvents(t, path); !reflect.DeepEqual(got, roundTrip(t, evs)) {
		t.Fatalf("file holds %d events, want the %d published, in order", len(got), len(evs))
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", st.Mode(), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sink.Publish(ctx, evs); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled publish: %v", err)
	}
}

func TestDeadLetterKeepsWholeRecords(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	dl := stream.NewDeadLetterFile(path)
	defer dl.Close()
	every := map[string]types.AttributeValue{
		"PK":   &types.AttributeValueMemberS{Value: "T#t1#D#0123456789abcdef"},
		"SK":   &types.AttributeValueMemberS{Value: "CT#C-1"},
		"type": &types.AttributeValueMemberS{Value: "CONTRACT"},
		// outstandingCents as a string: the poison.
		"outstandingCents": &types.AttributeValueMemberS{Value: "lots"},
		"n":                &types.AttributeValueMemberN{Value: "12.50"},
		"b":                &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 255}},
		"ok":               &types.AttributeValueMemberBOOL{Value: true},
		"null":             &types.AttributeValueMemberNULL{Value: true},
		"ss":               &types.AttributeValueMemberSS{Value: []string{"SMS", "EMAIL"}},
		"ns":               &types.AttributeValueMemberNS{Value: []string{"1", "2"}},
		"bs":               &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}},
		"l":                &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}, &types.AttributeValueMemberN{Value: "3"}}},
		"m":                &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"seq": &types.AttributeValueMemberN{Value: "9"}}},
	}
	keysOnly := map[string]types.AttributeValue{"PK": every["PK"], "SK": every["SK"]}
	var want []stream.Record
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range 8 {
		r := stream.Record{EventID: fmt.Sprint("e", i), Sequence: fmt.Sprint(100 + i), Name: stream.Modify, Keys: keysOnly, New: every, At: at}
		if i%2 == 1 {
			r.Old = keysOnly
		}
		mu.Lock()
		want = append(want, r)
		mu.Unlock()
		wg.Go(func() {
			_, cause := stream.Translate(r)
			if !errors.Is(cause, stream.ErrUndecodable) {
				t.Errorf("record %d: %v", i, cause)
			}
			if err := dl.Dead(context.Background(), r, cause); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, deads, err := stream.ReadDeadLetters(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d dead records, want %d", len(got), len(want))
	}
	bySeq := map[string]stream.Record{}
	for _, r := range got {
		bySeq[r.Sequence] = r
	}
	for i, w := range want {
		g := bySeq[w.Sequence]
		if !reflect.DeepEqual(g, w) {
			t.Errorf("record %d read back as %+v, want %+v", i, g, w)
		}
		if _, err := stream.Translate(g); !errors.Is(err, stream.ErrUndecodable) {
			t.Errorf("replayed record %d: %v", i, err)
		}
	}
	for _, d := range deads {
		if d.Cause == "" || d.DeadAt.IsZero() {
			t.Errorf("dead record without cause or time: %+v", d)
		}
	}
	if r, d, err := stream.ReadDeadLetters(filepath.Join(t.TempDir(), "none.jsonl")); r != nil || d != nil || err != nil {
		t.Fatalf("missing file: %v %v %v", r, d, err)
	}
}
