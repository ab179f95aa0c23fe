package cost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"lastro/collections/signature"
)

// Client calls the engine's API as a tenant's systems do. It carries no
// personal data in its errors: an answer that is not the expected one is
// reported by method, path template and status, with the engine's error
// code.
type Client struct {
	URL  string       // the API's base URL
	HTTP *http.Client // nil: http.DefaultClient
	// Retries is how many times a 503 (overloaded or throttled: the
	// engine says Retry-After) is sent again, as a provider redelivers;
	// 0 for none. Retried counts them when set.
	Retries int
	Retried *atomic.Int64
}

// do sends req (rebuilt by mk for each attempt), sending it again after
// a 503 while retries last.
func (c *Client) do(mk func() (*http.Request, error)) (*http.Response, error) {
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	for attempt := 0; ; attempt++ {
		req, err := mk()
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil || resp.StatusCode != http.StatusServiceUnavailable || attempt >= c.Retries {
			return resp, err
		}
		wait := 100 * time.Millisecond
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			wait = time.Duration(s) * time.Second
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if c.Retried != nil {
			c.Retried.Add(1)
		}
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(wait):
		}
	}
}

// Call sends body (nil for none) with a bearer token and extra header
// name/value pairs, and returns the status and the raw answer; an error
// only when the request could not be made or the answer not read.
func (c *Client) Call(ctx context.Context, method, path, token string, body []byte, headers ...string) (int, []byte, error) {
	resp, err := c.do(func() (*http.Request, error) {
		var r io.Reader
		if body != nil {
			r = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, c.URL+path, r)
		if err != nil {
			return nil, err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		return req, nil
	})
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// Expect sends body (marshalled to JSON; nil for none), fails unless the
// status is want, and decodes the answer into out (nil: discarded). The
// error names the route and the engine's error code, never the request's
// content.
func (c *Client) Expect(ctx context.Context, want int, method, path, token string, body, out any, headers ...string) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	status, answer, err := c.Call(ctx, method, path, token, raw, headers...)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, template(path), err)
	}
	if status != want {
		var e APIError
		_ = json.Unmarshal(answer, &e)
		return fmt.Errorf("%s %s: status %d, want %d (error code %q)", method, template(path), status, want, e.Error.Code)
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			return fmt.Errorf("%s %s: the answer is not the expected JSON: %w", method, template(path), err)
		}
	}
	return nil
}

// APIError is the engine's error shape.
type APIError struct {
	Error struct {
		Code string `json:"code"`
	} `json:"error"`
}

// Webhook posts a settlement notification body to path signed with the
// tenant's webhook secret at signedAt, as a payment provider does, and
// returns the status and the answer.
func (c *Client) Webhook(ctx context.Context, path, secret string, body []byte, signedAt time.Time) (int, []byte, error) {
	ts := signedAt.Unix()
	sig := signature.Sign(secret, ts, body)
	resp, err := c.do(func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(signature.TimestampHeader, strconv.FormatInt(ts, 10))
		req.Header.Set(signature.SignatureHeader, sig)
		return req, nil
	})
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// template is path with its identifiers replaced by placeholders, so an
// error names the route and nothing a debtor could be recognised by.
func template(path string) string {
	path, _, _ = strings.Cut(path, "?")
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if i >= 2 && p != "" && !isRouteWord(p) {
			parts[i] = "{id}"
		}
	}
	return strings.Join(parts, "/")
}

func isRouteWord(p string) bool {
	switch p {
	case "debtors", "contracts", "installments", "events", "charges", "webhooks", "settlements", "pix", "contacts",
		"promises", "agreements", "disputes", "write-off", "portfolio", "agenda", "run", "tenants", "tenant", "resolve":
		return true
	}
	return false
}
