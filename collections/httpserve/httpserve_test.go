package httpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

// testServer serves h under l on a loopback port until the test ends.
func testServer(t *testing.T, h http.Handler, l Limits) string {
	t.Helper()
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, ln, h, l, time.Second, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return ln.Addr().String()
}

// isOverloaded reports whether resp is the 503 past a cap: Retry-After
// and the error shape.
func isOverloaded(resp *http.Response) bool {
	var body struct {
		Error struct{ Code, Message string }
	}
	return resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" &&
		json.NewDecoder(resp.Body).Decode(&body) == nil && body.Error.Code == "overloaded" && body.Error.Message != ""
}

// TestInFlightBudgetsAreIndependent: webhooks (paths under
// /v1/webhooks/) and the rest have separate in-flight caps. Filling
// one answers 503 there and leaves the other answering 200.
func TestInFlightBudgetsAreIndependent(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("hold") != "" {
			entered <- struct{}{}
			<-release
		}
		io.WriteString(w, "ok")
	})
	l := DefaultLimits()
	l.MaxInFlight, l.MaxInFlightWebhooks = 2, 3
	addr := testServer(t, h, l)
	client := &http.Client{Timeout: 10 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	get := func(path string) *http.Response {
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			t.Error(err)
			return nil
		}
		return resp
	}
	status := func(path string) (int, bool) {
		resp := get(path)
		if resp == nil {
			return 0, false
		}
		defer resp.Body.Close()
		return resp.StatusCode, resp.StatusCode != http.StatusOK && isOverloaded(resp)
	}
	hold := func(path string, n int) chan struct{} {
		done := make(chan struct{})
		for range n {
			go func() {
				if resp := get(path + "?hold=1"); resp != nil {
					resp.Body.Close()
				}
				done <- struct{}{}
			}()
			<-entered
		}
		return done
	}
	// The webhooks' budget full: a webhook is refused, the API answers.
	hooksDone := hold("/v1/webhooks/t-1/pix", 3)
	if code, refused := status("/v1/webhooks/t-2/settlements"); !refused {
		t.Fatalf("a webhook past its cap of 3: %d, want 503 overloaded with Retry-After", code)
	}
	if code, _ := status("/v1/tenant"); code != http.StatusOK {
		t.Fatalf("the API with the webhooks' budget full: %d, want 200", code)
	}
	// Both full: each refuses on its own.
	apiDone := hold("/v1/tenant", 2)
	if code, refused := status("/v1/tenant"); !refused {
		t.Fatalf("the API past its cap of 2: %d, want 503 overloaded", code)
	}
	// Webhooks free again while the API stays full.
	for range 3 {
		release <- struct{}{}
		<-hooksDone
	}
	if code, _ := status("/v1/webhooks/t-1/pix"); code != http.StatusOK {
		t.Fatalf("a webhook with only the API's budget full: %d, want 200", code)
	}
	if code, refused := status("/v1/tenant"); !refused {
		t.Fatalf("the API still full: %d, want 503", code)
	}
	for range 2 {
		release <- struct{}{}
		<-apiDone
	}
	if code, _ := status("/v1/tenant"); code != http.StatusOK {
		t.Fatalf("the API once free: %d, want 200", code)
	}
}

// dialFrom opens a connection to addr from the local address from
// (127.0.0.2 is loopback too on Linux).
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("cannot dial from %s: %v", from, err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn
}

// roundTrip sends GET /ok on conn (kept alive) and returns the answer.
func roundTrip(t *testing.T, conn net.Conn) *http.Response {
	t.Helper()
	if _, err := io.WriteString(conn, "GET /ok HTTP/1.1\r\nHost: lastro\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestConnsPerAddrCap: one client address holds at most MaxConnsPerAddr
// connections; one more is answered 503 by the listener, before any
// request is read, while another address still connects, and a slot
// freed by a close is taken again.
func TestConnsPerAddrCap(t *testing.T) {
	t.Parallel()
	l := DefaultLimits()
	l.MaxConns, l.MaxConnsPerAddr = 10, 2
	addr := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), l)
	held := []net.Conn{dialFrom(t, "127.0.0.2", addr), dialFrom(t, "127.0.0.2", addr)}
	for _, c := range held {
		if resp := roundTrip(t, c); resp.StatusCode != http.StatusOK {
			t.Fatalf("a connection under the per-address cap: %s", resp.Status)
		}
	}
	// The listener's refusal is written without reading a request: the
	// answer is there though nothing was sent.
	extra := dialFrom(t, "127.0.0.2", addr)
	resp, err := http.ReadResponse(bufio.NewReader(extra), nil)
	if err != nil {
		t.Fatalf("a third connection from the address got no answer: %v", err)
	}
	if !isOverloaded(resp) || resp.Header.Get("Date") != "" {
		t.Fatalf("a third connection from the address: %s %v, want the listener's 503", resp.Status, resp.Header)
	}
	if resp := roundTrip(t, dialFrom(t, "127.0.0.1", addr)); resp.StatusCode != http.StatusOK {
		t.Fatalf("another address while the first is at its cap: %s", resp.Status)
	}
	// A closed connection gives its slot back (once the server sees the
	// close, so try a few times, bounded).
	held[0].Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp := roundTrip(t, dialFrom(t, "127.0.0.2", addr))
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot of a closed connection never came back: %s", resp.Status)
		}
	}
}

// TestClientKey: IPv4 addresses count alone, IPv6 ones by their /64.
func TestClientKey(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ addr, want string }{
		{"192.0.2.1:443", "192.0.2.1"},
		{"[::ffff:192.0.2.1]:443", "192.0.2.1"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff:ffff:ffff:1]:80", "2001:db8:1:2::/64"},
		{"[2001:db8:1:3::1]:80", "2001:db8:1:3::/64"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
	} {
		ta, err := net.ResolveTCPAddr("tcp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := clientKey(ta); got != tt.want {
			t.Errorf("clientKey(%s) = %q, want %q", tt.addr, got, tt.want)
		}
	}
	if got := clientKey(&net.UnixAddr{Name: "/run/lastro.sock", Net: "unix"}); got != "unix:/run/lastro.sock" {
		t.Errorf("a Unix socket: %q", got)
	}
}

// TestWebhookBodyDeadline: a webhook's body must arrive within
// WebhookBodyTimeout of its headers, an API request's only within the
// read timeout; and once the body is in, the handler may take longer
// than the body timeout without its context being cancelled.
func TestWebhookBodyDeadline(t *testing.T) {
	t.Parallel()
	const bodyTimeout = 200 * time.Millisecond
	type outcome struct {
		readErr error
		ctxErr  error
	}
	seen := make(chan outcome, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		if err == nil && r.URL.Query().Get("work") != "" {
			time.Sleep(3 * bodyTimeout) // a handler slower than the body timeout
		}
		seen <- outcome{err, r.Context().Err()}
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
		}
	})
	l := DefaultLimits()
	l.ReadTimeout, l.WebhookBodyTimeout = time.Minute, bodyTimeout
	addr := testServer(t, h, l)
	send := func(path string, wait time.Duration) outcome {
		conn := dialFrom(t, "127.0.0.1", addr)
		io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: lastro\r\nContent-Length: 2\r\n\r\n")
		timer := time.AfterFunc(wait, func() { io.WriteString(conn, "{}") })
		defer timer.Stop()
		select {
		case o := <-seen:
			return o
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the handler never finished", path)
		}
		return outcome{}
	}
	// The client waits far past the body timeout (but well inside the read
	// timeout) before sending the body.
	if o := send("/v1/webhooks/t-1/settlements", 10*time.Second); !errors.Is(o.readErr, os.ErrDeadlineExceeded) {
		t.Fatalf("a webhook body late by far more than the body timeout: read %v, want a deadline error", o.readErr)
	}
	if o := send("/v1/tenants", 3*bodyTimeout); o.readErr != nil {
		t.Fatalf("an API body later than the webhook body timeout: %v, want it read", o.readErr)
	}
	if o := send("/v1/webhooks/t-1/settlements?work=1", 0); o.readErr != nil || o.ctxErr != nil {
		t.Fatalf("a webhook whose handler outlives the body timeout: read %v, context %v; want neither", o.readErr, o.ctxErr)
	}
}

// TestValidateRefusesTheNewLimits: the per-address cap, the webhooks'
// budget and their body timeout must be positive.
func TestValidateRefusesTheNewLimits(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(*Limits){
		"per address": func(l *Limits) { l.MaxConnsPerAddr = 0 },
		"webhooks":    func(l *Limits) { l.MaxInFlightWebhooks = 0 },
		"body":        func(l *Limits) { l.WebhookBodyTimeout = 0 },
	} {
		l := DefaultLimits()
		f(&l)
		if err := l.Validate(); err == nil {
			t.Errorf("%s: %v, want an error", name, err)
		}
	}
	if err := DefaultLimits().Validate(); err != nil {
		t.Fatal(err)
	}
}

// closedAtOnce sends the head of a request declaring a 100-byte body, and
// never the body, then reads until the server closes. With every read
// deadline of the server far past the client's own, an EOF shows the
// server closed soon after its answer (drainGrace) instead of waiting on
// the body until a read deadline.
func closedAtOnce(t *testing.T, addr, path string) (status int, closed bool) {
	t.Helper()
	conn := dialFrom(t, "127.0.0.1", addr)
	conn.SetDeadline(time.Now().Add(15 * time.Second))
	io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: lastro\r\nContent-Length: 100\r\n\r\n{")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%s: no answer: %v", path, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_, err = br.ReadByte()
	return resp.StatusCode, errors.Is(err, io.EOF)
}

// TestAnswerWithTheBodyUnreadClosesAtOnce: a handler's refusal that left
// the body unread, and a refusal past the in-flight cap, close the
// connection soon after they are written: a slow body does not keep its
// connection (and its slot under the connection caps) until the read
// timeout.
func TestAnswerWithTheBodyUnreadClosesAtOnce(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("hold") != "" {
			entered <- struct{}{}
			<-release
		}
		w.WriteHeader(http.StatusUnauthorized) // without reading the body
	})
	l := DefaultLimits()
	l.ReadTimeout, l.WebhookBodyTimeout, l.MaxInFlight = time.Minute, time.Minute, 1
	addr := testServer(t, h, l)
	for _, path := range []string{"/v1/webhooks/t-1/settlements", "/v1/tenants"} {
		if status, closed := closedAtOnce(t, addr, path); status != http.StatusUnauthorized || !closed {
			t.Errorf("%s: %d, closed %v; want 401 and the connection closed", path, status, closed)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Get("http://" + addr + "/v1/tenant?hold=1")
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	if status, closed := closedAtOnce(t, addr, "/v1/tenants"); status != http.StatusServiceUnavailable || !closed {
		t.Errorf("past the in-flight cap: %d, closed %v; want 503 and the connection closed", status, closed)
	}
	release <- struct{}{}
	<-done
}
