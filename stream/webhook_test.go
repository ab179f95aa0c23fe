package stream_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"lastro/collections/clock"
	"lastro/collections/kit"
	"lastro/settlement"
	"lastro/stream"
)

// endpoint is a tenant's event receiver: it verifies the signature the
// way settlement webhooks are verified and answers statuses in turn.
type endpoint struct {
	t        *testing.T
	secret   string
	now      time.Time
	statuses []int // answered in turn; 200 once used up

	mu       sync.Mutex
	calls    int
	received [][]string // event ids of each accepted batch
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := settlement.Verify(e.secret, r.Header.Get(settlement.TimestampHeader), r.Header.Get(settlement.SignatureHeader), body, e.now); err != nil {
		e.t.Errorf("signature: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	status := http.StatusOK
	if e.calls < len(e.statuses) {
		status = e.statuses[e.calls]
	}
	e.calls++
	if status == http.StatusOK {
		var b stream.WebhookBody
		if err := json.Unmarshal(body, &b); err != nil {
			e.t.Error(err)
		}
		var ids []string
		for _, ev := range b.Events {
			ids = append(ids, ev.Tenant+"/"+ev.ID)
		}
		e.received = append(e.received, ids)
	}
	w.WriteHeader(status)
}

func TestWebhookPostsEachTenantsEventsSigned(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 21, 13, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		statuses   []int
		wantErr    error
		wantCalls  int
		wantBatch  bool
		retryLimit int
	}{
		{"accepted", nil, nil, 1, true, 4},
		{"transient failures retried", []int{503, 429, 408}, nil, 4, true, 4},
		{"rejected", []int{400}, stream.ErrWebhookRejected, 1, false, 4},
		{"still failing", []int{500, 500, 500}, kit.ErrAttemptsExhausted, 3, false, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := &endpoint{t: t, secret: "sec-a", now: now, statuses: tt.statuses}
			b := &endpoint{t: t, secret: "sec-b", now: now}
			sa, sb := httptest.NewServer(a), httptest.NewServer(b)
			defer sa.Close()
			defer sb.Close()
			targets := map[string]stream.WebhookTarget{"ta": {URL: sa.URL, Secret: "sec-a"}, "tb": {URL: sb.URL, Secret: "sec-b"}}
			w := &stream.Webhook{Clock: clock.NewManual(now), Backoff: kit.Backoff{Attempts: tt.retryLimit, Base: time.Millisecond},
				Targets: func(_ context.Context, tn string) (stream.WebhookTarget, bool, error) {
					tg, ok := targets[tn]
					return tg, ok, nil
				}}
			evs := []stream.Event{
				{ID: "1-0", Tenant: "ta", Type: stream.BucketChanged}, {ID: "1-1", Tenant: "tb", Type: stream.BucketChanged},
				{ID: "2-0", Tenant: "ta", Type: stream.ContractCured}, {ID: "3-0", Tenant: "tc", Type: stream.WrittenOff},
			}
			err := w.Publish(context.Background(), evs)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if a.calls != tt.wantCalls {
				t.Errorf("tenant ta's endpoint called %d times, want %d", a.calls, tt.wantCalls)
			}
			if tt.wantBatch {
				if !slices.Equal(a.received[0], []string{"ta/1-0", "ta/2-0"}) || len(a.received) != 1 {
					t.Errorf("ta received %v", a.received)
				}
				if len(b.received) != 1 || !slices.Equal(b.received[0], []string{"tb/1-1"}) {
					t.Errorf("tb received %v", b.received)
				}
			} else if b.calls != 0 {
				t.Errorf("went on to the next tenant after a failure")
			}
		})
	}
}

func TestWebhookTargetErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("directory down")
	w := &stream.Webhook{Targets: func(context.Context, string) (stream.WebhookTarget, bool, error) {
		return stream.WebhookTarget{}, false, boom
	}}
	if err := w.Publish(context.Background(), []stream.Event{{ID: "1-0", Tenant: "ta"}}); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	w = &stream.Webhook{Backoff: kit.Backoff{Attempts: 1}, Targets: func(context.Context, string) (stream.WebhookTarget, bool, error) {
		return stream.WebhookTarget{URL: "http://127.0.0.1:1/events", Secret: "s"}, true, nil
	}}
	err := w.Publish(context.Background(), []stream.Event{{ID: "1-0", Tenant: "ta"}})
	if err == nil || errors.Is(err, stream.ErrWebhookRejected) {
		t.Fatalf("unreachable endpoint: %v", err)
	}
}
