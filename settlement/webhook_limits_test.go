package settlement_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"lastro/collections/httpserve"
	"lastro/collections/signature"
	"lastro/engine/enginetest"
	"lastro/settlement"
	"lastro/tenant"
)

// newLimitFixture is newPixFixture with the failure limit of auth.
func newLimitFixture(t *testing.T, auth tenant.Options) *pixFixture {
	t.Helper()
	env := enginetest.New(t, enginetest.At(testNow), enginetest.Auth(auth))
	tn, k := env.Tenant(t, "t-pay")
	return &pixFixture{fixture: &fixture{Env: env, t: tn}, secret: k["webhook"], supervisor: k["supervisor"]}
}

// serveLimited serves h as lastro serve does, under httpserve's default
// limits (an answer given with the body unread closes the connection
// instead of draining the body first), until the test ends.
func serveLimited(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- httpserve.Run(ctx, ln, h, httpserve.DefaultLimits(), time.Second, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return "http://" + ln.Addr().String()
}

// rawAnswer sends head (request line and headers, declaring a body) on a
// connection of its own and reads the answer without sending a byte of
// the body: an answer at all shows the server did not wait for it.
func rawAnswer(t *testing.T, base, head string) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer before the body was sent: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		Error struct{ Code, Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Error.Message == "" {
		t.Fatalf("%s: not the error shape (%v)", resp.Status, err)
	}
	if !resp.Close {
		t.Errorf("%s with the body unread keeps the connection alive", resp.Status)
	}
	return resp.StatusCode, body.Error.Code
}

// TestWebhookRefusesBeforeReadingTheBody: on every webhook route, missing,
// malformed or stale signature headers, an unknown tenant, and a declared
// body over the route's limit are answered before the body is sent (the
// client here never sends it), whatever its declared size.
func TestWebhookRefusesBeforeReadingTheBody(t *testing.T) {
	t.Parallel()
	// Every refusal here is a failure of one address: a budget that lasts.
	f := newLimitFixture(t, tenant.Options{FailureBurst: 1000})
	base := serveLimited(t, f.Handler())
	now := f.Clock.Now()
	ts := strconv.FormatInt(now.Unix(), 10)
	wellFormed := "v1=" + strings.Repeat("ab", 32)
	tests := []struct {
		name, tenant, ts, sig string
		length                int
		status                int
		code                  string
	}{
		{"no headers", "t-pay", "", "", 1 << 20, 401, "signature_missing"},
		{"no signature", "t-pay", ts, "", 1 << 20, 401, "signature_missing"},
		{"no timestamp", "t-pay", "", wellFormed, 1 << 20, 401, "signature_missing"},
		{"signature without its scheme", "t-pay", ts, strings.Repeat("ab", 32), 1 << 20, 401, "invalid_signature"},
		{"signature too short", "t-pay", ts, "v1=abcd", 1 << 20, 401, "invalid_signature"},
		{"signature not hex", "t-pay", ts, "v1=" + strings.Repeat("zz", 32), 1 << 20, 401, "invalid_signature"},
		{"timestamp not a number", "t-pay", "17x", wellFormed, 1 << 20, 401, "invalid_signature"},
		{"stale timestamp", "t-pay", strconv.FormatInt(now.Add(-signature.Window-time.Second).Unix(), 10), wellFormed, 1 << 20, 401, "signature_stale"},
		{"future timestamp", "t-pay", strconv.FormatInt(now.Add(signature.Window+time.Second).Unix(), 10), wellFormed, 1 << 20, 401, "signature_stale"},
		{"unknown tenant", "t-nobody", ts, wellFormed, 1 << 20, 404, "tenant_not_found"},
		{"well-formed headers, body over the route's limit", "t-pay", ts, wellFormed, 1 << 20, 413, "body_too_large"},
	}
	for _, route := range []struct {
		path  string
		limit int
	}{{"settlements", settlement.MaxBodyBytes}, {"pix", settlement.MaxPixBodyBytes}, {"pix/pix", settlement.MaxPixBodyBytes}} {
		for _, tt := range tests {
			head := "POST /v1/webhooks/" + tt.tenant + "/" + route.path + " HTTP/1.1\r\nHost: lastro\r\nContent-Type: application/json\r\n" +
				"Content-Length: " + strconv.Itoa(tt.length) + "\r\n"
			if tt.ts != "" {
				head += signature.TimestampHeader + ": " + tt.ts + "\r\n"
			}
			if tt.sig != "" {
				head += signature.SignatureHeader + ": " + tt.sig + "\r\n"
			}
			if status, code := rawAnswer(t, base, head+"\r\n"); status != tt.status || code != tt.code {
				t.Errorf("%s, %s: %d %s, want %d %s", route.path, tt.name, status, code, tt.status, tt.code)
			}
		}
		// One byte over the limit is refused unread too, and a body at the
		// limit is read (then refused by its forged signature).
		head := "POST /v1/webhooks/t-pay/" + route.path + " HTTP/1.1\r\nHost: lastro\r\nContent-Length: " + strconv.Itoa(route.limit+1) + "\r\n" +
			signature.TimestampHeader + ": " + ts + "\r\n" + signature.SignatureHeader + ": " + wellFormed + "\r\n\r\n"
		if status, code := rawAnswer(t, base, head); status != 413 || code != "body_too_large" {
			t.Errorf("%s, one byte over the limit declared: %d %s, want 413 body_too_large", route.path, status, code)
		}
		body := strings.Repeat(" ", route.limit-2) + "{}"
		status, out := f.Do(t, http.MethodPost, "/v1/webhooks/t-pay/"+route.path, "", body,
			signature.TimestampHeader, ts, signature.SignatureHeader, wellFormed)
		if status != 401 || enginetest.ErrorCode(out) != "invalid_signature" {
			t.Errorf("%s, a forged body at the limit: %d %v, want 401 invalid_signature", route.path, status, out)
		}
	}
}

// chunked posts body to path with the signature headers, as chunks (no
// Content-Length), and returns the status and error code.
func chunked(t *testing.T, f *pixFixture, path, body string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.URL+path, io.MultiReader(strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1 // unknown: the client sends it chunked
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := f.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, enginetest.ErrorCode(out)
}

// TestSignedOversizedWebhookIs413NotAFailure: a correctly signed body over
// the route's limit is 413 body_too_large, declared or chunked, and no
// failed authentication: after 30 of them the address still has its
// whole failure budget (3 unknown-tenant answers, then 429), and nothing
// was applied.
func TestSignedOversizedWebhookIs413NotAFailure(t *testing.T) {
	t.Parallel()
	// A budget of 3 that no refill tops up during the test.
	f := newLimitFixture(t, tenant.Options{FailureBurst: 3, FailureEvery: time.Hour})
	dk, ch := lateContract(t, f.fixture, "C-1")
	before := f.partition(t, dk)
	// A valid payment padded past 256 KiB with a field the decoder would
	// ignore: only its size is wrong.
	big := pixBody(pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "10.00"})
	big = strings.Replace(big, `"chave":`, `"pad":"`+strings.Repeat("a", settlement.MaxPixBodyBytes)+`","chave":`, 1)
	for i := range 30 {
		var status int
		var code string
		if i%2 == 0 {
			var out map[string]any
			status, out = f.post(t, pixPaths[i%4/2], big)
			code = enginetest.ErrorCode(out)
		} else {
			status, code = chunked(t, f, pixPaths[0], big, enginetest.WebhookHeaders(f.secret, big, f.Clock.Now())...)
		}
		if status != http.StatusRequestEntityTooLarge || code != "body_too_large" {
			t.Fatalf("signed body over 256 KiB (%d): %d %s, want 413 body_too_large", i, status, code)
		}
	}
	small := enginetest.WebhookBody("stl-1", ch.ChargeID, 1000, "2026-09-24T09:00:00-03:00")
	small = strings.Replace(small, `"stl-1"`, `"stl-1`+strings.Repeat("x", settlement.MaxBodyBytes)+`"`, 1)
	if status, code := chunked(t, f, "/v1/webhooks/t-pay/settlements", small, enginetest.WebhookHeaders(f.secret, small, f.Clock.Now())...); status != 413 || code != "body_too_large" {
		t.Fatalf("signed settlement body over 4096 bytes, chunked: %d %s", status, code)
	}
	if f.stl(t, e2e(1)) != nil {
		t.Fatal("an oversized body was applied")
	}
	if after := f.partition(t, dk); len(after) != len(before) {
		t.Fatalf("an oversized body changed the debtor's items: %d before, %d after", len(before), len(after))
	}
	// The failure budget is whole: an unknown tenant is 404 (a failure)
	// as many times as the burst, and only then 429.
	for i := range 4 {
		body := `{"pix":[]}`
		status, out := f.Do(t, http.MethodPost, "/v1/webhooks/t-nobody/pix", "", body, enginetest.WebhookHeaders("whsec_none", body, f.Clock.Now())...)
		want, code := http.StatusNotFound, "tenant_not_found"
		if i == 3 {
			want, code = http.StatusTooManyRequests, "too_many_failures"
		}
		if status != want || enginetest.ErrorCode(out) != code {
			t.Fatalf("unknown tenant after 30 oversized bodies, failure %d: %d %v, want %d %s", i+1, status, out, want, code)
		}
	}
}
