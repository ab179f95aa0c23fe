package stream

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"lastro/collections/clock"
	"lastro/collections/egress"
	"lastro/collections/errs"
	"lastro/collections/kit"
	"lastro/collections/signature"
	"lastro/tenant"
)

// WebhookTarget is where one tenant's events are posted and the secret
// that signs them.
type WebhookTarget struct {
	URL    string
	Secret string
}

// WebhookTargets resolves a tenant's target; ok false means the tenant
// takes no event webhook, and its events are skipped by this publisher.
type WebhookTargets func(ctx context.Context, tenant string) (target WebhookTarget, ok bool, err error)

// ErrWebhookRejected is returned when a tenant's endpoint refuses a batch
// with a status no retry will change (a 4xx other than 408 and 429).
var ErrWebhookRejected = errors.New("stream: event webhook rejected the batch")

// Webhook posts each tenant's events to that tenant's endpoint, a batch
// per tenant ({"events": [...]}, in order), signed like the engine's
// other webhooks: X-Lastro-Timestamp and X-Lastro-Signature, v1=hex
// HMAC-SHA256(secret, ts + "." + body) (signature.Sign), so a receiver
// verifies it with the same code. Transient failures (network, 408, 429,
// 5xx) are retried with Backoff.
//
// Without a DeadLetter, a tenant whose batch is not accepted fails the
// whole Publish, and the consumer publishes the chunk again: one dead
// endpoint holds every tenant's events back. With one, that tenant's
// batch is kept there once the retries are spent (or at once when it is
// rejected), Publish goes on with the other tenants, and the tenant's
// following batches go straight to the dead letter for Pause, so a dead
// endpoint costs the others one retry cycle per Pause, not per chunk
// (ADR 0050).
type Webhook struct {
	Targets WebhookTargets
	// Client posts the batches; unless set, a 10 s timeout client of
	// Egress: a tenant's URL is dialled only where the outbound policy
	// allows, every redirect and resolved address included (ADR 0055).
	Client *http.Client
	// Egress is the outbound policy of the default client; nil is the
	// strict one.
	Egress  *egress.Policy
	Clock   clock.Clock // signs with its time; the system clock unless set
	Backoff kit.Backoff // 4 attempts from 200 ms unless set
	// DeadLetter keeps the events of a tenant whose endpoint gave up; nil:
	// a tenant's failure fails the batch.
	DeadLetter EventDeadLetter
	// Pause is how long a tenant's events skip its endpoint after a batch
	// went to the dead letter; 1 min unless set.
	Pause time.Duration
	// Wall times the pause (the system clock unless set): Clock may be a
	// frozen business clock.
	Wall clock.Clock
	// Metrics, when set, count the events each tenant's endpoint accepted
	// (publisher "webhook"), the batches given up and the events kept in
	// the dead letter; events of tenants without a webhook count nowhere.
	Metrics *Metrics

	mu     sync.Mutex
	paused map[string]pause // by tenant
	client *http.Client     // the default client, built once (one connection pool)
}

// pause is a tenant whose endpoint gave up: until when its events skip
// it, and why.
type pause struct {
	until time.Time
	cause error
}

// EventDeadLetter keeps events a publisher gave up on, per tenant, so
// they can be inspected and posted again.
type EventDeadLetter interface {
	DeadEvents(ctx context.Context, tenant string, events []Event, cause error) error
}

// ErrWebhookPaused is the cause kept with the events of a tenant whose
// endpoint gave up less than Pause ago.
var ErrWebhookPaused = errors.New("stream: event webhook paused after a failure")

// WebhookBody is the JSON a tenant's endpoint receives.
type WebhookBody struct {
	Events []Event `json:"events"`
}

func (w *Webhook) defaults() (*http.Client, clock.Clock, kit.Backoff) {
	c, clk, b := w.Client, w.Clock, w.Backoff
	if c == nil {
		w.mu.Lock()
		if w.client == nil {
			w.client = w.Egress.Client(10 * time.Second)
		}
		c = w.client
		w.mu.Unlock()
	}
	if clk == nil {
		clk = clock.System{}
	}
	if b.Attempts == 0 {
		b = kit.Backoff{Attempts: 4, Base: 200 * time.Millisecond, Max: 5 * time.Second}
	}
	return c, clk, b
}

// Publish posts every tenant's events, tenants in the order they first
// appear. Without a DeadLetter it stops at the first tenant whose batch
// is not accepted; with one, only a failure to resolve a target or to
// keep a dead batch, or the context's end, fails it.
func (w *Webhook) Publish(ctx context.Context, events []Event) error {
	var order []string
	by := map[string][]Event{}
	for _, e := range events {
		if _, ok := by[e.Tenant]; !ok {
			order = append(order, e.Tenant)
		}
		by[e.Tenant] = append(by[e.Tenant], e)
	}
	for _, tn := range order {
		target, ok, err := w.Targets(ctx, tn)
		if err != nil {
			return fmt.Errorf("event webhook: tenant %s: %w", tn, err)
		}
		if !ok {
			continue
		}
		if err := w.deliver(ctx, tn, target, by[tn]); err != nil {
			return err
		}
	}
	return nil
}

// deliver posts one tenant's batch, or, with a dead letter, keeps it
// there when the endpoint is paused or gives up.
func (w *Webhook) deliver(ctx context.Context, tn string, target WebhookTarget, events []Event) error {
	if w.DeadLetter == nil {
		err := w.post(ctx, tn, target, events)
		w.count(events, err, false)
		return err
	}
	wall := w.Wall
	if wall == nil {
		wall = clock.System{}
	}
	w.mu.Lock()
	p, paused := w.paused[tn]
	if paused && !wall.Now().Before(p.until) {
		delete(w.paused, tn)
		paused = false
	}
	w.mu.Unlock()
	var cause error
	if paused {
		cause = fmt.Errorf("%w: %w", ErrWebhookPaused, p.cause)
	} else {
		err := w.post(ctx, tn, target, events)
		if err == nil {
			w.count(events, nil, false)
			return nil
		}
		if ctx.Err() != nil {
			// Stopping is not the endpoint's fault: the chunk is
			// published again from the checkpoint.
			return err
		}
		cause = err
		w.mu.Lock()
		if w.paused == nil {
			w.paused = map[string]pause{}
		}
		w.paused[tn] = pause{until: wall.Now().Add(cmp.Or(w.Pause, time.Minute)), cause: err}
		w.mu.Unlock()
	}
	if err := w.DeadLetter.DeadEvents(ctx, tn, events, cause); err != nil {
		return fmt.Errorf("event webhook: tenant %s: %w", tn, err)
	}
	w.count(events, cause, true)
	return nil
}

// count records a tenant batch's outcome on the metrics, when set.
func (w *Webhook) count(events []Event, err error, dead bool) {
	m := w.Metrics
	if m == nil {
		return
	}
	switch {
	case err == nil:
		for _, e := range events {
			m.Published.WithLabelValues(webhookPublisher, e.Type).Inc()
		}
	case dead:
		m.DeadEvents.Add(float64(len(events)))
		if !errors.Is(err, ErrWebhookPaused) {
			m.Failures.WithLabelValues(webhookPublisher).Inc()
		}
	default:
		m.Failures.WithLabelValues(webhookPublisher).Inc()
	}
}

// webhookPublisher is the webhook's publisher label on the metrics.
const webhookPublisher = "webhook"

// TenantGetter loads a tenant: *tenant.Service.
type TenantGetter interface {
	Get(ctx context.Context, id string) (*tenant.Tenant, error)
}

// TenantTargets resolves each tenant's target from its settings (PUT
// /v1/tenant/events-webhook): no URL, or a tenant no longer found, takes
// no webhook; any other failure to load it fails the batch, which is
// published again.
func TenantTargets(tenants TenantGetter) WebhookTargets {
	return func(ctx context.Context, id string) (WebhookTarget, bool, error) {
		t, err := tenants.Get(ctx, id)
		if errs.Is(err, errs.NotFound) {
			return WebhookTarget{}, false, nil
		}
		if err != nil {
			return WebhookTarget{}, false, err
		}
		if t.EventsURL == "" || t.EventsWebhookSecret() == "" {
			return WebhookTarget{}, false, nil
		}
		return WebhookTarget{URL: t.EventsURL, Secret: t.EventsWebhookSecret()}, true, nil
	}
}

// Fanout publishes a batch to each publisher in turn, all or nothing: the
// first error fails the batch, which the consumer publishes again whole,
// so a publisher before the failing one sees it twice (publishers and
// their consumers tolerate duplicates, deduping by Event.ID). A publisher
// that must not hold the others back (a tenant's webhook) keeps its own
// failures instead of returning them (Webhook.DeadLetter).
type Fanout []Publisher

// Publish publishes events to each publisher in order.
func (f Fanout) Publish(ctx context.Context, events []Event) error {
	for _, p := range f {
		if err := p.Publish(ctx, events); err != nil {
			return err
		}
	}
	return nil
}

func (w *Webhook) post(ctx context.Context, tn string, target WebhookTarget, events []Event) error {
	client, clk, policy := w.defaults()
	body, err := json.Marshal(WebhookBody{Events: events})
	if err != nil {
		return fmt.Errorf("event webhook: encode: %w", err)
	}
	err = policy.Retry(ctx, func(int) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.URL, bytes.NewReader(body))
		if err != nil {
			return false, errors.New("bad endpoint URL") // the URL itself stays out of errors
		}
		ts := clk.Now().Unix()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(signature.TimestampHeader, strconv.FormatInt(ts, 10))
		req.Header.Set(signature.SignatureHeader, signature.Sign(target.Secret, ts, body))
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			// The outbound policy refused the URL, a redirect or the
			// address the name resolved to: no retry changes that.
			if errors.Is(err, egress.ErrNotAllowed) {
				return false, fmt.Errorf("%w: %w", ErrWebhookRejected, egress.ErrNotAllowed)
			}
			return true, errors.New("transport error")
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		switch code := resp.StatusCode; {
		case code >= 200 && code < 300:
			return false, nil
		case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests, code >= 500:
			return true, fmt.Errorf("status %d", code)
		default:
			return false, fmt.Errorf("%w: status %d", ErrWebhookRejected, code)
		}
	})
	if err != nil {
		return fmt.Errorf("event webhook: tenant %s: %w", tn, err)
	}
	return nil
}
