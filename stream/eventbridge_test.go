package stream_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"lastro/collections/kit"
	"lastro/stream"
)

// fakeBus speaks EventBridge's JSON 1.1 protocol for PutEvents. It fails
// the entries fail says to (by event id and the number of times that
// event was already sent) and records what it accepted.
type fakeBus struct {
	t    *testing.T
	fail func(id string, sent int) string // an error code, or "" to accept

	mu       sync.Mutex
	calls    [][]string // event ids of every call
	sent     map[string]int
	accepted []string
	bytes    []int
}

func (b *fakeBus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Amz-Target") != "AWSEvents.PutEvents" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-amz-json-1.1") {
		b.t.Errorf("request target %q content type %q", r.Header.Get("X-Amz-Target"), r.Header.Get("Content-Type"))
		http.Error(w, "unexpected", http.StatusBadRequest)
		return
	}
	if !strings.Contains(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256") {
		b.t.Error("request not signed")
	}
	raw, _ := io.ReadAll(r.Body)
	var in struct {
		Entries []struct {
			Source, DetailType, Detail, EventBusName string
			Time                                     float64
		}
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		b.t.Errorf("body %s: %v", raw, err)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	type result struct {
		EventId      string `json:",omitempty"`
		ErrorCode    string `json:",omitempty"`
		ErrorMessage string `json:",omitempty"`
	}
	out := struct {
		FailedEntryCount int
		Entries          []result
	}{}
	var ids []string
	size := 0
	for _, e := range in.Entries {
		var ev stream.Event
		if err := json.Unmarshal([]byte(e.Detail), &ev); err != nil {
			b.t.Errorf("detail %q: %v", e.Detail, err)
		}
		if e.Source != "lastro" || e.DetailType != ev.Type || e.EventBusName != "collections" || int64(e.Time) != ev.At.Unix() {
			b.t.Errorf("entry %+v", e)
		}
		size += 14 + len(e.Source) + len(e.DetailType) + len(e.Detail)
		ids = append(ids, ev.ID)
		code := b.fail(ev.ID, b.sent[ev.ID])
		b.sent[ev.ID]++
		if code != "" {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, result{ErrorCode: code, ErrorMessage: "try again"})
			continue
		}
		b.accepted = append(b.accepted, ev.ID)
		out.Entries = append(out.Entries, result{EventId: "eb-" + ev.ID})
	}
	b.calls, b.bytes = append(b.calls, ids), append(b.bytes, size)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

func newBus(t *testing.T, fail func(id string, sent int) string) (*fakeBus, *stream.EventBridge) {
	t.Helper()
	b := &fakeBus{t: t, fail: fail, sent: map[string]int{}}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		Retryer: func() aws.Retryer { return aws.NopRetryer{} }, HTTPClient: srv.Client(), BaseEndpoint: aws.String(srv.URL)}
	p := stream.NewEventBridge(cfg, "collections")
	p.Backoff = kit.Backoff{Attempts: 4, Base: time.Millisecond}
	return b, p
}

func events(n, detailBytes int) []stream.Event {
	out := make([]stream.Event, n)
	for i := range out {
		out[i] = stream.Event{ID: fmt.Sprintf("7-%d", i), Type: stream.BucketChanged, SchemaVersion: 1, Tenant: "t1", DebtorKey: dk,
			ContractID: fmt.Sprint("C-", i), At: at, Sequence: "7", Data: map[string]any{"pad": strings.Repeat("x", detailBytes)}}
	}
	return out
}

func TestEventBridgeRetriesOnlyTheFailedEntries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		n, pad    int
		fail      func(id string, sent int) string
		wantCalls int
	}{
		{"one batch, all accepted", 7, 10, func(string, int) string { return "" }, 1},
		{"batches of ten", 23, 10, func(string, int) string { return "" }, 3},
		{"batches within 256 KB", 6, 100 * 1024, func(string, int) string { return "" }, 3},
		{"some entries throttled once", 23, 10, func(id string, sent int) string {
			if sent == 0 && (strings.HasSuffix(id, "3") || strings.HasSuffix(id, "7")) {
				return "ThrottlingException"
			}
			return ""
		}, 5}, // 7-3 and 7-7, 7-13 and 7-17 again; 7-20..22 pass first time
		{"an entry failing twice", 5, 10, func(id string, sent int) string {
			if id == "7-2" && sent < 2 {
				return "InternalFailure"
			}
			return ""
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bus, p := newBus(t, tt.fail)
			evs := events(tt.n, tt.pad)
			if err := p.Publish(context.Background(), evs); err != nil {
				t.Fatal(err)
			}
			bus.mu.Lock()
			defer bus.mu.Unlock()
			if len(bus.calls) != tt.wantCalls {
				t.Errorf("%d calls %v, want %d", len(bus.calls), bus.calls, tt.wantCalls)
			}
			for i, c := range bus.calls {
				if len(c) > stream.MaxEventBridgeEntries || bus.bytes[i] > stream.MaxEventBridgeBytes {
					t.Errorf("call %d: %d entries, %d bytes", i, len(c), bus.bytes[i])
				}
			}
			seen := map[string]int{}
			for _, id := range bus.accepted {
				seen[id]++
			}
			for _, e := range evs {
				if seen[e.ID] != 1 {
					t.Errorf("%s accepted %d times", e.ID, seen[e.ID])
				}
				// An entry is sent again only after it failed.
				if want := 1 + failures(tt.fail, e.ID); bus.sent[e.ID] != want {
					t.Errorf("%s sent %d times, want %d", e.ID, bus.sent[e.ID], want)
				}
			}
		})
	}
}

func failures(fail func(string, int) string, id string) int {
	n := 0
	for fail(id, n) != "" {
		n++
	}
	return n
}

func TestEventBridgeGivesUp(t *testing.T) {
	t.Parallel()
	_, p := newBus(t, func(id string, _ int) string {
		if id == "7-1" {
			return "InternalFailure"
		}
		return ""
	})
	err := p.Publish(context.Background(), events(3, 10))
	if !errors.Is(err, kit.ErrAttemptsExhausted) || !strings.Contains(err.Error(), "InternalFailure") {
		t.Fatalf("err = %v", err)
	}
	bus, p := newBus(t, func(string, int) string { return "" })
	if err := p.Publish(context.Background(), events(1, stream.MaxEventBridgeBytes)); !errors.Is(err, stream.ErrEventTooLarge) {
		t.Fatalf("oversized event: %v", err)
	}
	if len(bus.calls) != 0 {
		t.Fatalf("an oversized event was sent")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Publish(ctx, events(2, 10)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
