package stream_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lastro/collections/egress"
	"lastro/collections/kit"
	"lastro/engine/enginetest"
	"lastro/stream"
)

// loopback lets tests post to httptest endpoints: an explicit opt-in, as
// an operator's LASTRO_EGRESS_ALLOW=loopback.
var loopback = egress.New(egress.AllowLoopback())

// TestEventsWebhookRefusedWhenItResolvesToLoopback: a supervisor sets
// its events webhook to a public-looking name (accepted: it is no IP
// literal), which resolves to loopback only when the publisher dials it
// (DNS rebinding). The publisher refuses before connecting, as a
// rejection no retry changes; the endpoint receives nothing. A default
// publisher (no Egress) is as strict about the loopback URL itself.
func TestEventsWebhookRefusedWhenItResolvesToLoopback(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	k := env.CreateTenant(t, "t-rebind")
	url := "https://events.example:" + srv.URL[strings.LastIndexByte(srv.URL, ':')+1:] + "/events"
	if status, out := env.Do(t, http.MethodPut, "/v1/tenant/events-webhook", k["supervisor"], `{"url":"`+url+`"}`); status != http.StatusOK {
		t.Fatalf("set: %d %v", status, out)
	}
	rebind := egress.New(egress.Resolver(func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}))
	hook := &stream.Webhook{Targets: stream.TenantTargets(env.Tenants), Clock: env.Clock, Egress: rebind,
		Backoff: kit.Backoff{Attempts: 3, Base: time.Millisecond}}
	err := hook.Publish(context.Background(), []stream.Event{{ID: "1-0", Tenant: "t-rebind", Type: stream.BucketChanged}})
	if !errors.Is(err, stream.ErrWebhookRejected) || !errors.Is(err, egress.ErrNotAllowed) {
		t.Fatalf("publish: %v", err)
	}
	// The strict default refuses the loopback URL itself (a target an
	// older, looser configuration left behind).
	strict := &stream.Webhook{Clock: env.Clock, Backoff: kit.Backoff{Attempts: 3, Base: time.Millisecond},
		Targets: func(context.Context, string) (stream.WebhookTarget, bool, error) {
			return stream.WebhookTarget{URL: srv.URL + "/events", Secret: "s"}, true, nil
		}}
	if err := strict.Publish(context.Background(), []stream.Event{{ID: "1-0", Tenant: "t-rebind"}}); !errors.Is(err, egress.ErrNotAllowed) {
		t.Fatalf("strict publish: %v", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the endpoint got %d requests", hits.Load())
	}
}
