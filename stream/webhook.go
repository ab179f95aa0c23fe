package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"lastro/collections/clock"
	"lastro/collections/kit"
	"lastro/settlement"
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
// HMAC-SHA256(secret, ts + "." + body) (settlement.Sign), so a receiver
// verifies it with the same code. Transient failures (network, 408, 429,
// 5xx) are retried with Backoff.
type Webhook struct {
	Targets WebhookTargets
	Client  *http.Client // a 10 s timeout client unless set
	Clock   clock.Clock  // signs with its time; the system clock unless set
	Backoff kit.Backoff  // 4 attempts from 200 ms unless set
}

// WebhookBody is the JSON a tenant's endpoint receives.
type WebhookBody struct {
	Events []Event `json:"events"`
}

func (w *Webhook) defaults() (*http.Client, clock.Clock, kit.Backoff) {
	c, clk, b := w.Client, w.Clock, w.Backoff
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
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
// appear; it stops at the first tenant whose batch is not accepted.
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
		if err := w.post(ctx, tn, target, by[tn]); err != nil {
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
		req.Header.Set(settlement.TimestampHeader, strconv.FormatInt(ts, 10))
		req.Header.Set(settlement.SignatureHeader, settlement.Sign(target.Secret, ts, body))
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
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
