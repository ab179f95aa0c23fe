package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowRequest opens a connection to addr and sends a request whose headers
// (and, with body, a declared 100-byte body) arrive one byte every drip,
// for at most stopAfter. It reads the answer and returns it (empty when
// the server closed without one), how long the server kept the
// connection, and whether the client was cut before it had dripped all
// it meant to send. Loopback only; it stops by itself.
func slowRequest(t *testing.T, addr, path string, slowHeaders bool, drip, stopAfter time.Duration) (answer string, held time.Duration, cut bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	head := "POST " + path + " HTTP/1.1\r\nHost: lastro\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
	drip1 := head
	if !slowHeaders {
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
		drip1 = strings.Repeat("{", 100)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent atomic.Int64
	wg.Go(func() {
		tick := time.NewTicker(drip)
		defer tick.Stop()
		for i := 0; i < len(drip1) && time.Since(start) < stopAfter; i++ {
			if _, err := conn.Write([]byte{drip1[i]}); err != nil {
				return
			}
			sent.Add(1)
			select {
			case <-tick.C:
			case <-stop:
				return
			}
		}
	})
	conn.SetReadDeadline(start.Add(stopAfter + 5*time.Second))
	raw, _ := io.ReadAll(conn) // until the server closes (or the deadline)
	held = time.Since(start)
	close(stop)
	wg.Wait()
	return string(raw), held, sent.Load() < int64(len(drip1))
}

// TestSlowClientsAreCutAtTheReadTimeout: a request dripped one byte at a
// time — headers, or a body, on the unauthenticated webhook and on an
// authenticated route — is cut when the read timeouts expire, not held
// for as long as the client keeps dripping.
func TestSlowClientsAreCutAtTheReadTimeout(t *testing.T) {
	t.Parallel()
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken},
		"--read-header-timeout", "1s", "--read-timeout", "2s")
	tests := []struct {
		name        string
		path        string
		slowHeaders bool
		within      time.Duration
	}{
		{"slow headers", "/v1/tenants", true, 1 * time.Second},
		{"slow body on the webhook (refused unread: no signature)", "/v1/webhooks/t-x/settlements", false, 2 * time.Second},
		{"slow body on a route", "/v1/tenants", false, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The client drips 85-100 bytes at 10 a second: 8.5-10 s, four
			// times the timeout. Cut before it finished is the proof, in
			// bytes rather than in a wall-clock bound the machine's load
			// could break.
			_, held, cut := slowRequest(t, s.addr, tt.path, tt.slowHeaders, 100*time.Millisecond, 20*time.Second)
			t.Logf("held %v (timeout %v)", held, tt.within)
			if !cut {
				t.Fatalf("the server read the whole dripped request (%v): it was not cut at its %v timeout", held, tt.within)
			}
		})
	}
}

// overloadedAnswer checks an answer is the 503 past a cap: Retry-After
// and the error shape.
func overloadedAnswer(raw string) bool {
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(raw)), nil)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var body struct {
		Error struct{ Code, Message string }
	}
	return resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" &&
		json.NewDecoder(resp.Body).Decode(&body) == nil && body.Error.Code == "overloaded" && body.Error.Message != ""
}

// TestSlowConnectionFloodIsRefusedPastTheCaps: 1,000 slow connections at
// once against caps of 40 connections and 10 requests in flight. Those
// past a cap are answered 503 (Retry-After, error shape) at once; the
// ones held are cut at the read timeout; and a normal request made during
// the flood is answered by the time the read timeout frees the server,
// retrying on 503 as Retry-After says. Loopback only, bounded in time.
func TestSlowConnectionFloodIsRefusedPastTheCaps(t *testing.T) {
	t.Parallel()
	const flood, maxConns, maxInFlight = 1000, 40, 10
	readTimeout := 2 * time.Second
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken},
		"--read-timeout", readTimeout.String(), "--max-conns", "40", "--max-in-flight", "10")
	var refused, held, other atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range flood {
		wg.Go(func() {
			conn, err := net.Dial("tcp", s.addr)
			if err != nil {
				other.Add(1)
				return
			}
			defer conn.Close()
			// Headers and one byte of a 100-byte body, then silence, on a
			// route whose handler waits for the body (a webhook without a
			// signature is refused before its body is read).
			io.WriteString(conn, "POST /v1/tenants HTTP/1.1\r\nHost: lastro\r\nAuthorization: Bearer "+testAdminToken+
				"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
			conn.SetReadDeadline(time.Now().Add(readTimeout + 8*time.Second))
			raw, _ := io.ReadAll(conn)
			switch {
			case overloadedAnswer(string(raw)):
				refused.Add(1)
			case time.Since(start) >= readTimeout:
				held.Add(1) // cut by the read timeout
			default:
				other.Add(1)
			}
		})
	}
	// A normal request during the flood.
	time.Sleep(200 * time.Millisecond)
	client := &http.Client{Timeout: 2 * time.Second}
	answered := false
	var last string
	for deadline := time.Now().Add(readTimeout + 5*time.Second); time.Now().Before(deadline); {
		resp, err := client.Get("http://" + s.addr + "/healthz")
		if err != nil {
			last = err.Error()
			time.Sleep(100 * time.Millisecond)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			answered = true
			break
		}
		last = resp.Status
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("normal request during the flood: %s, want 200 or 503 with Retry-After", resp.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	wg.Wait()
	t.Logf("refused %d, held %d, other %d, in %v", refused.Load(), held.Load(), other.Load(), time.Since(start))
	if !answered {
		t.Fatalf("a normal request was never answered during the flood (last: %s)", last)
	}
	if held.Load() > maxConns || refused.Load() < flood-maxConns || other.Load() != 0 {
		t.Fatalf("refused %d, held %d, other %d: want at most %d held and the rest refused with 503",
			refused.Load(), held.Load(), other.Load(), maxConns)
	}
}

// TestInFlightCapAnswers503: with the in-flight cap taken by two slow
// requests (tenant creations whose handler waits on the body), a third is
// answered 503 with Retry-After in the error shape; once they are gone the
// server answers again.
func TestInFlightCapAnswers503(t *testing.T) {
	t.Parallel()
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken},
		"--max-in-flight", "2", "--read-timeout", "30s")
	slow := func() net.Conn {
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		io.WriteString(conn, "POST /v1/tenants HTTP/1.1\r\nHost: lastro\r\nAuthorization: Bearer "+testAdminToken+
			"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
		return conn
	}
	conns := []net.Conn{slow(), slow()}
	// answered reports whether the server already answered conn: a slow
	// request that reached the server while a probe held the other slot
	// was itself refused, and must be sent again.
	answered := func(conn net.Conn) bool {
		conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		var b [1]byte
		_, err := conn.Read(b[:])
		var ne net.Error
		return !errors.As(err, &ne) || !ne.Timeout()
	}
	get := func() *http.Response {
		resp, err := http.Get("http://" + s.addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// The slow requests hold their slots until the 30 s read timeout; on a
	// loaded machine they may take seconds to reach the handler, so the
	// wait is bounded well inside that window.
	saw503, last := false, ""
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !saw503; time.Sleep(50 * time.Millisecond) {
		for i, c := range conns {
			if answered(c) {
				c.Close()
				conns[i] = slow()
			}
		}
		resp := get()
		saw503 = resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "1"
		last = resp.Status
	}
	if !saw503 {
		t.Fatalf("with two slow requests in flight under a cap of 2, a third was never refused with 503 Retry-After: 1 (last: %s)", last)
	}
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: lastro\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	raw, _ := io.ReadAll(conn)
	conn.Close()
	if !overloadedAnswer(string(raw)) {
		t.Fatalf("answer past the cap: %q, want 503 in the error shape", raw)
	}
	for _, c := range conns {
		c.Close()
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if get().StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not answer again once the slow requests left")
		}
	}
}

// TestUnparsableRequestsGetTheErrorShape: the answers net/http writes
// itself — 431 for headers over the 1 MiB limit, 400 for a malformed
// request — come in the error shape like every other error, not as
// plain text.
func TestUnparsableRequestsGetTheErrorShape(t *testing.T) {
	t.Parallel()
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken})
	tests := []struct {
		name    string
		request string
		status  int
		code    string
	}{
		{"headers over 1 MiB", "GET /healthz HTTP/1.1\r\nHost: lastro\r\nX-Big: " + strings.Repeat("a", 1<<20+8192) + "\r\n\r\n",
			http.StatusRequestHeaderFieldsTooLarge, "headers_too_large"},
		{"malformed header", "GET /healthz HTTP/1.1\r\nHost: lastro\r\nno colon here\r\n\r\n", http.StatusBadRequest, "bad_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			go io.WriteString(conn, tt.request) // the server may answer before reading it all
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error struct{ Code, Message string }
			}
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/json" ||
				json.NewDecoder(resp.Body).Decode(&body) != nil || body.Error.Code != tt.code || body.Error.Message == "" {
				t.Fatalf("%s %s, body %+v; want %d %s in the error shape", resp.Status, resp.Header.Get("Content-Type"), body, tt.status, tt.code)
			}
		})
	}
}
