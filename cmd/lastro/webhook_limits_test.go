package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lastro/collections/signature"
	"lastro/settlement"
)

// hookTenant creates tenant id on the server at base with the admin token
// and returns an API key of it and its webhook secret.
func hookTenant(t *testing.T, base, id string) (apiKey, secret string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/tenants", strings.NewReader(`{"tenantId":"`+id+`","name":"Crediário `+id+`"}`))
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		APIKeys       map[string]string
		WebhookSecret string
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create tenant %s: %s %v", id, resp.Status, err)
	}
	return out.APIKeys["operator"], out.WebhookSecret
}

// hookDial opens a TCP connection to addr from the loopback address from
// (Linux routes all of 127/8 to lo), closed when the test ends.
func hookDial(t *testing.T, from, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
	conn, err := d.Dial("tcp", addr)
	if err == nil {
		t.Cleanup(func() { conn.Close() })
	}
	return conn, err
}

// hookHead is the head of a webhook call to path declaring length bytes
// of body, with the given signature headers (none when empty).
func hookHead(path string, length int, ts, sig string) string {
	head := "POST " + path + " HTTP/1.1\r\nHost: lastro\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(length) + "\r\n"
	if ts != "" {
		head += signature.TimestampHeader + ": " + ts + "\r\n"
	}
	if sig != "" {
		head += signature.SignatureHeader + ": " + sig + "\r\n"
	}
	return head + "\r\n"
}

// wellFormedSig has the form of a signature and matches no body.
var wellFormedSig = "v1=" + strings.Repeat("ab", 32)

// listenerRefusal reports whether raw is the listener's own 503: the
// error shape and Retry-After, written before any request was read (no
// Date header, which every answer of net/http's handlers carries).
func listenerRefusal(raw string) bool {
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(raw)), nil)
	return err == nil && resp.Header.Get("Date") == "" && overloadedAnswer(raw)
}

// TestSlowWebhooksDoNotStarveTheAPI is finding 5 against the binary: 300
// webhook calls with well-formed signature headers for a real tenant,
// their bodies dribbled a byte a second, from one address (127.0.0.2).
// The per-address cap (128) refuses the connections past it at once with
// the listener's 503; the 128 it holds fill the webhooks' in-flight budget
// (a webhook from a third address is refused 503 overloaded), and an API
// request from 127.0.0.1 is answered 200 all along. Its latency is logged,
// not asserted.
func TestSlowWebhooksDoNotStarveTheAPI(t *testing.T) {
	t.Parallel()
	const flood, perAddr = 300, 128
	// The webhook body deadline is raised to the read timeout so the slow
	// bodies are surely held while the API is asked; the test closes them.
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken, "LASTRO_SCHEDULER": "off"},
		"--webhook-body-timeout", "30s")
	base := "http://" + s.addr
	key, _ := hookTenant(t, base, "t-hook")
	head := hookHead("/v1/webhooks/t-hook/settlements", 100, strconv.FormatInt(time.Now().Unix(), 10), wellFormedSig)

	stop := make(chan struct{})
	// refused: by the listener at accept; budget: 503 by the full
	// webhooks' budget (a held call that lost its race with the probe
	// below); held: open until the test closed it; answered: anything
	// else, which a held slow body should not get yet.
	var refused, budget, held, answered, other atomic.Int64
	var wg sync.WaitGroup
	for range flood {
		wg.Go(func() {
			conn, err := hookDial(t, "127.0.0.2", s.addr)
			if err != nil {
				other.Add(1)
				return
			}
			if _, err := io.WriteString(conn, head); err != nil {
				other.Add(1)
				return
			}
			got := make(chan string, 1)
			go func() {
				conn.SetReadDeadline(time.Now().Add(60 * time.Second))
				raw, _ := io.ReadAll(conn)
				got <- string(raw)
			}()
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case raw := <-got:
					switch {
					case listenerRefusal(raw):
						refused.Add(1)
					case overloadedAnswer(raw):
						budget.Add(1)
					default:
						answered.Add(1)
					}
					return
				case <-stop:
					held.Add(1)
					conn.Close()
					<-got
					return
				case <-tick.C:
					conn.Write([]byte{' '}) // one more byte of the body
				}
			}
		})
	}
	t.Cleanup(func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	})

	// Every connection past the per-address cap is refused; once they all
	// are, the held ones are in flight, or about to be: a webhook from
	// another address is then refused by the full webhooks' budget.
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("never saw %s (refused %d, budget %d, answered %d, other %d)", what, refused.Load(), budget.Load(), answered.Load(), other.Load())
			}
		}
	}
	waitFor("the connections past the per-address cap refused", func() bool { return refused.Load()+other.Load() >= flood-perAddr })
	// The probe has no signature: let in, it is answered 401 at once and
	// holds a slot only for that instant.
	time.Sleep(500 * time.Millisecond) // let the held calls reach their handler first
	probe := hookHead("/v1/webhooks/t-hook/settlements", 100, "", "")
	waitFor("the webhooks' budget full", func() bool {
		conn, err := hookDial(t, "127.0.0.3", s.addr)
		if err != nil {
			return false
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(conn, probe)
		raw, _ := io.ReadAll(conn)
		return overloadedAnswer(string(raw)) && !listenerRefusal(string(raw))
	})

	// The API, from 127.0.0.1, meanwhile.
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	for i := range 3 {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/tenant", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET /v1/tenant during the webhook flood: %v", err)
		}
		resp.Body.Close()
		t.Logf("GET /v1/tenant during the flood (%d): %s in %v", i, resp.Status, time.Since(start))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v1/tenant during the webhook flood: %s, want 200", resp.Status)
		}
	}
	if n := answered.Load(); n != 0 {
		t.Fatalf("%d held slow bodies were answered before they were complete", n)
	}
	close(stop)
	wg.Wait()
	t.Logf("refused by the per-address cap %d, by the webhooks' budget %d, held %d, other %d", refused.Load(), budget.Load(), held.Load(), other.Load())
	if refused.Load() < flood-perAddr-budget.Load() || held.Load() > perAddr || answered.Load() != 0 || other.Load() != 0 {
		t.Fatalf("refused %d, budget %d, held %d, answered %d, other %d: want at most %d held and the rest refused by the per-address cap",
			refused.Load(), budget.Load(), held.Load(), answered.Load(), other.Load(), perAddr)
	}
}

// hookAnswer sends head on a new connection and reads the answer and then
// the connection to its end, without sending a byte of the declared body:
// an answer and an EOF show the server neither read the body nor waited
// for it (its read deadlines are all far past the client's).
func hookAnswer(t *testing.T, addr, head string) (status int, code string, closed bool) {
	t.Helper()
	conn, err := hookDial(t, "127.0.0.1", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer before the body was sent: %v", err)
	}
	var out struct {
		Error struct{ Code, Message string }
	}
	if json.NewDecoder(resp.Body).Decode(&out) != nil || out.Error.Message == "" {
		t.Fatalf("%s: not the error shape", resp.Status)
	}
	resp.Body.Close()
	_, err = br.ReadByte()
	return resp.StatusCode, out.Error.Code, errors.Is(err, io.EOF)
}

// TestUnsignedWebhookIsRefusedUnread: against the binary, a webhook call
// declaring a 1 MiB body with no, or a malformed, signature header is
// 401 before the client sends the body, and the connection is closed
// then, not at a read timeout.
func TestUnsignedWebhookIsRefusedUnread(t *testing.T) {
	t.Parallel()
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken, "LASTRO_SCHEDULER": "off"},
		"--read-timeout", "60s", "--webhook-body-timeout", "60s")
	hookTenant(t, "http://"+s.addr, "t-hook")
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	for _, path := range []string{"/v1/webhooks/t-hook/settlements", "/v1/webhooks/t-hook/pix", "/v1/webhooks/t-hook/pix/pix"} {
		for _, tt := range []struct{ name, ts, sig, code string }{
			{"no signature headers", "", "", "signature_missing"},
			{"no signature", ts, "", "signature_missing"},
			{"a malformed signature", ts, "v1=" + strings.Repeat("ab", 31), "invalid_signature"},
			{"a stale timestamp", strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10), wellFormedSig, "signature_stale"},
		} {
			status, code, closed := hookAnswer(t, s.addr, hookHead(path, 1<<20, tt.ts, tt.sig))
			if status != http.StatusUnauthorized || code != tt.code || !closed {
				t.Errorf("%s, %s, 1 MiB declared: %d %s, closed %v; want 401 %s and the connection closed", path, tt.name, status, code, closed, tt.code)
			}
		}
	}
}

// TestSignedOversizedPixIs413NotAFailure is finding 7 against the binary:
// a correctly signed Pix body over 256 KiB is 413 body_too_large (it was
// 401, a failed login) — declared and refused before it is sent, declared
// with Expect: 100-continue, or chunked; thirty of them spend none of the
// address's failure budget (20): a bad signature is still 401 and an
// unknown tenant 404, not 429.
func TestSignedOversizedPixIs413NotAFailure(t *testing.T) {
	t.Parallel()
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken, "LASTRO_SCHEDULER": "off"})
	base := "http://" + s.addr
	_, secret := hookTenant(t, base, "t-hook")
	// A client that sends a large body only once the server asks for it,
	// as curl does: a refusal before the body then never races the body.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{ExpectContinueTimeout: 5 * time.Second}}
	defer client.CloseIdleConnections()
	post := func(path, body, secret string, chunked bool) (int, string) {
		t.Helper()
		var r io.Reader = strings.NewReader(body)
		if chunked {
			r = io.MultiReader(r) // no length known: sent chunked
		}
		req, _ := http.NewRequest(http.MethodPost, base+path, r)
		now := time.Now().Unix()
		req.Header.Set(signature.TimestampHeader, strconv.FormatInt(now, 10))
		req.Header.Set(signature.SignatureHeader, signature.Sign(secret, now, []byte(body)))
		if len(body) > 1024 {
			req.Header.Set("Expect", "100-continue")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Error struct{ Code string }
		}
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out.Error.Code
	}
	big := `{"pix":[{"endToEndId":"E00000000202609241200000000001","valor":"10.00","horario":"2026-09-24T12:00:00Z","pad":"` +
		strings.Repeat("a", settlement.MaxPixBodyBytes) + `"}]}`
	for i := range 30 {
		path := []string{"/v1/webhooks/t-hook/pix", "/v1/webhooks/t-hook/pix/pix"}[i%2]
		var status int
		var code string
		switch i % 3 {
		case 0: // declared, without Expect: answered before the body is sent
			now := time.Now().Unix()
			status, code, _ = hookAnswer(t, s.addr, hookHead(path, len(big), strconv.FormatInt(now, 10), signature.Sign(secret, now, []byte(big))))
		case 1:
			status, code = post(path, big, secret, false)
		case 2:
			status, code = post(path, big, secret, true)
		}
		if status != http.StatusRequestEntityTooLarge || code != "body_too_large" {
			t.Fatalf("signed Pix body over 256 KiB (%d, %s): %d %s, want 413 body_too_large", i, path, status, code)
		}
	}
	if status, code := post("/v1/webhooks/t-hook/pix", `{"pix":[]}`, "whsec_wrong", false); status != http.StatusUnauthorized || code != "invalid_signature" {
		t.Fatalf("a bad signature after 30 oversized bodies: %d %s, want 401 invalid_signature", status, code)
	}
	// The failure budget is consulted for tenants not in the cache: had
	// the 413s counted, this would be 429.
	if status, code := post("/v1/webhooks/t-nobody/pix", `{"pix":[]}`, "whsec_wrong", false); status != http.StatusNotFound || code != "tenant_not_found" {
		t.Fatalf("an unknown tenant after 30 oversized bodies: %d %s, want 404 tenant_not_found (not 429)", status, code)
	}
}

// TestSlowWebhookBodyIsCutAtItsDeadline: with a 60 s read timeout and a
// 1 s webhook body deadline, a signed webhook whose body is dribbled a
// byte every 100 ms (10 s for all of it) is answered 400 body_incomplete
// and closed before the client has sent all of it; the same dribble on
// an authenticated route is read whole. The bound is in bytes sent, not
// in time measured.
func TestSlowWebhookBodyIsCutAtItsDeadline(t *testing.T) {
	t.Parallel()
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken, "LASTRO_SCHEDULER": "off"},
		"--read-timeout", "60s", "--webhook-body-timeout", "1s")
	key, _ := hookTenant(t, "http://"+s.addr, "t-hook")
	const length = 100
	drip := func(head string) (sent int, status int, code string) {
		t.Helper()
		conn, err := hookDial(t, "127.0.0.1", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
		type answer struct {
			status int
			code   string
		}
		got := make(chan answer, 1)
		var sentAt atomic.Int64 // bytes of body sent when the answer arrived
		go func() {
			conn.SetReadDeadline(time.Now().Add(60 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				got <- answer{}
				return
			}
			defer resp.Body.Close()
			var out struct {
				Error struct{ Code string }
			}
			json.NewDecoder(resp.Body).Decode(&out)
			got <- answer{resp.StatusCode, out.Error.Code}
		}()
		body := strings.Repeat(" ", length-2) + "{}"
		for i := 0; i < length; i++ {
			select {
			case a := <-got:
				return int(sentAt.Load()), a.status, a.code
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				break // the server closed: its answer is on the way
			}
			sentAt.Store(int64(i + 1))
		}
		a := <-got
		return int(sentAt.Load()), a.status, a.code
	}
	ts := time.Now().Unix()
	sent, status, code := drip(hookHead("/v1/webhooks/t-hook/settlements", length, strconv.FormatInt(ts, 10), wellFormedSig))
	t.Logf("webhook: %d of %d bytes sent when answered %d %s", sent, length, status, code)
	if sent >= length || status != http.StatusBadRequest || code != "body_incomplete" {
		t.Fatalf("a slow webhook body: answered %d %s after %d of %d bytes, want 400 body_incomplete before the body was whole", status, code, sent, length)
	}
	apiHead := "POST /v1/debtors HTTP/1.1\r\nHost: lastro\r\nAuthorization: Bearer " + key + "\r\nContent-Type: application/json\r\nContent-Length: " +
		fmt.Sprint(length) + "\r\n\r\n"
	sent, status, code = drip(apiHead)
	t.Logf("API: %d of %d bytes sent when answered %d %s", sent, length, status, code)
	if sent != length || status == 0 || code == "body_incomplete" {
		t.Fatalf("the same dribble on an API route: answered %d %s after %d of %d bytes, want its body read whole (then answered on its merits)", status, code, sent, length)
	}
}
