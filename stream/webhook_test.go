package stream_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"lastro/collections/clock"
	"lastro/collections/kit"
	"lastro/collections/signature"
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
	if err := signature.Verify(e.secret, r.Header.Get(signature.TimestampHeader), r.Header.Get(signature.SignatureHeader), body, e.now); err != nil {
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
			w := &stream.Webhook{Clock: clock.NewManual(now), Backoff: kit.Backoff{Attempts: tt.retryLimit, Base: time.Millisecond}, Egress: loopback,
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
	w = &stream.Webhook{Backoff: kit.Backoff{Attempts: 1}, Egress: loopback, Targets: func(context.Context, string) (stream.WebhookTarget, bool, error) {
		return stream.WebhookTarget{URL: "http://127.0.0.1:1/events", Secret: "s"}, true, nil
	}}
	err := w.Publish(context.Background(), []stream.Event{{ID: "1-0", Tenant: "ta"}})
	if err == nil || errors.Is(err, stream.ErrWebhookRejected) {
		t.Fatalf("unreachable endpoint: %v", err)
	}
}

// memDeadEvents is an events dead letter in memory.
type memDeadEvents struct {
	mu     sync.Mutex
	fail   error
	kept   []string // tenant/id
	causes []error
}

func (d *memDeadEvents) DeadEvents(_ context.Context, tn string, evs []stream.Event, cause error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return d.fail
	}
	for _, e := range evs {
		d.kept = append(d.kept, tn+"/"+e.ID)
	}
	d.causes = append(d.causes, cause)
	return nil
}

// TestWebhookDeadLettersAFailingTenant: with a dead letter, a tenant
// whose endpoint gives up does not hold the others back: its batch is
// kept with the cause, its next batches skip the endpoint for the pause,
// and once the pause is over it is tried again.
func TestWebhookDeadLettersAFailingTenant(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 21, 13, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		statuses  []int // tenant ta's answers
		wantCause error
		wantCalls int // ta's endpoint calls on the first batch
	}{
		{"retries spent", []int{500, 503, 500}, kit.ErrAttemptsExhausted, 3},
		{"rejected", []int{400}, stream.ErrWebhookRejected, 1},
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
			reg := prometheus.NewRegistry()
			m, err := stream.NewMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			wall := clock.NewManual(now)
			dead := &memDeadEvents{}
			w := &stream.Webhook{Clock: clock.NewManual(now), Wall: wall, Backoff: kit.Backoff{Attempts: 3, Base: time.Millisecond},
				DeadLetter: dead, Pause: time.Minute, Metrics: m, Egress: loopback,
				Targets: func(_ context.Context, tn string) (stream.WebhookTarget, bool, error) {
					tg, ok := targets[tn]
					return tg, ok, nil
				}}
			batch := func(seq string) []stream.Event {
				return []stream.Event{{ID: seq + "-0", Tenant: "ta", Type: stream.BucketChanged}, {ID: seq + "-1", Tenant: "tb", Type: stream.BucketChanged}}
			}
			if err := w.Publish(context.Background(), batch("1")); err != nil {
				t.Fatalf("first batch: %v", err)
			}
			if a.calls != tt.wantCalls || !slices.Equal(dead.kept, []string{"ta/1-0"}) || !errors.Is(dead.causes[0], tt.wantCause) {
				t.Fatalf("ta: %d calls, kept %v (%v)", a.calls, dead.kept, dead.causes)
			}
			// Within the pause ta's endpoint is not called at all.
			wall.Advance(30 * time.Second)
			if err := w.Publish(context.Background(), batch("2")); err != nil {
				t.Fatalf("second batch: %v", err)
			}
			if a.calls != tt.wantCalls || !slices.Equal(dead.kept, []string{"ta/1-0", "ta/2-0"}) || !errors.Is(dead.causes[1], stream.ErrWebhookPaused) {
				t.Fatalf("paused ta: %d calls, kept %v (%v)", a.calls, dead.kept, dead.causes)
			}
			// After it, ta is tried again (and now accepts).
			wall.Advance(31 * time.Second)
			if err := w.Publish(context.Background(), batch("3")); err != nil {
				t.Fatalf("third batch: %v", err)
			}
			if len(a.received) != 1 || !slices.Equal(a.received[0], []string{"ta/3-0"}) || len(dead.kept) != 2 {
				t.Errorf("ta after the pause: received %v, kept %v", a.received, dead.kept)
			}
			if len(b.received) != 3 {
				t.Errorf("tb received %d batches, want all 3", len(b.received))
			}
			if got := testutil.ToFloat64(m.DeadEvents); got != 2 {
				t.Errorf("dead events metric = %v, want 2", got)
			}
			if got := testutil.ToFloat64(m.Failures.WithLabelValues("webhook")); got != 1 {
				t.Errorf("webhook failures metric = %v, want 1 (the pause is not a failure)", got)
			}
			if got := testutil.ToFloat64(m.Published.WithLabelValues("webhook", stream.BucketChanged)); got != 4 {
				t.Errorf("webhook published metric = %v, want 4 (tb's 3, ta's last)", got)
			}
		})
	}
}

// TestWebhookDeadLetterFailures: a dead letter that cannot keep the
// batch, or the context's end, fails Publish (the chunk is published
// again), and a stop keeps nothing.
func TestWebhookDeadLetterFailures(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer down.Close()
	full := errors.New("disk full")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		ctx      context.Context
		dead     *memDeadEvents
		want     error
		wantKept int
	}{
		{"dead letter fails", context.Background(), &memDeadEvents{fail: full}, full, 0},
		{"stopped", canceled, &memDeadEvents{}, context.Canceled, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := &stream.Webhook{Backoff: kit.Backoff{Attempts: 2, Base: time.Millisecond}, DeadLetter: tt.dead, Egress: loopback,
				Targets: func(context.Context, string) (stream.WebhookTarget, bool, error) {
					return stream.WebhookTarget{URL: down.URL, Secret: "s"}, true, nil
				}}
			err := w.Publish(tt.ctx, []stream.Event{{ID: "1-0", Tenant: "ta"}})
			if !errors.Is(err, tt.want) || len(tt.dead.kept) != tt.wantKept {
				t.Fatalf("err = %v, kept %v; want %v", err, tt.dead.kept, tt.want)
			}
		})
	}
}

// TestEventDeadLetterFileRoundTrip: the file keeps each event with its
// tenant and cause, read back in order.
func TestEventDeadLetterFileRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "events-dead-letter.jsonl")
	d := stream.NewEventDeadLetterFile(path)
	evs := []stream.Event{{ID: "1-0", Tenant: "ta", Type: stream.BucketChanged}, {ID: "2-0", Tenant: "ta", Type: stream.WrittenOff}}
	if err := d.DeadEvents(context.Background(), "ta", evs, stream.ErrWebhookRejected); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := stream.ReadDeadEvents(path)
	if err != nil || len(got) != 2 {
		t.Fatalf("read back %d: %v", len(got), err)
	}
	for i, de := range got {
		if de.Tenant != "ta" || de.Event.ID != evs[i].ID || de.Event.Type != evs[i].Type || de.Cause != stream.ErrWebhookRejected.Error() || de.DeadAt.IsZero() {
			t.Errorf("line %d: %+v", i, de)
		}
	}
	if none, err := stream.ReadDeadEvents(filepath.Join(t.TempDir(), "absent")); err != nil || none != nil {
		t.Errorf("absent file: %v %v", none, err)
	}
}
