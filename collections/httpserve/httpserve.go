// Package httpserve runs the binary's HTTP servers (the API, and the
// embedded store when it listens) under limits a slow or greedy client
// cannot get around: read, write and idle timeouts, a cap on open
// connections (and on those of one client address) and on requests in
// flight, with the unauthenticated webhooks in a budget of their own. Past
// any cap the answer is an immediate 503 with Retry-After in the API's
// error shape, so refusing costs almost nothing and the server keeps
// answering (ADR 0020, ADR 0056).
package httpserve

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound what the server gives its clients.
type Limits struct {
	ReadHeaderTimeout time.Duration // request line and headers
	ReadTimeout       time.Duration // the whole request, body included
	WriteTimeout      time.Duration // from the end of the headers to the end of the answer
	IdleTimeout       time.Duration // a kept-alive connection between requests
	MaxConns          int           // open connections; past it a new one gets 503 and is closed
	MaxConnsPerAddr   int           // open connections of one client address (an IPv6 /64); past it the same
	MaxInFlight       int           // API requests being handled; past it 503
	// MaxInFlightWebhooks is the webhooks' own in-flight budget (paths
	// under WebhookPrefix): unauthenticated callers that fill it cannot
	// take the API's.
	MaxInFlightWebhooks int
	// WebhookBodyTimeout bounds the time a webhook's body may take to
	// arrive once its headers are in (at most ReadTimeout): the webhooks
	// answer callers no API key vouches for.
	WebhookBodyTimeout time.Duration
	MaxHeaderBytes     int // request line and headers; 0 means 1 MiB
	// Overload is the 503 answered past a cap; the zero value is the
	// API's error shape. A server speaking another protocol (the embedded
	// store: DynamoDB's) sets its own, so its clients recognise a
	// retryable refusal.
	Overload Overload
}

// Overload is the content type and body of the answer past a cap.
type Overload struct {
	ContentType string
	Body        string
}

// orAPI is o, or the API's error shape when o is unset.
func (o Overload) orAPI() Overload {
	if o.Body == "" {
		return Overload{ContentType: "application/json", Body: overloaded}
	}
	return o
}

// WebhookPrefix starts the paths of the unauthenticated webhook routes:
// their requests use MaxInFlightWebhooks and WebhookBodyTimeout.
const WebhookPrefix = "/v1/webhooks/"

// DefaultLimits are the limits unless configured: a request that has not
// arrived in 30 s is not a client worth waiting for, and no handler of the
// engine runs anywhere near a minute.
func DefaultLimits() Limits {
	return Limits{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second,
		IdleTimeout: 120 * time.Second, MaxConns: 1024, MaxConnsPerAddr: 128, MaxInFlight: 256, MaxInFlightWebhooks: 128,
		WebhookBodyTimeout: 5 * time.Second, MaxHeaderBytes: 1 << 20}
}

// Validate says which limit is unusable.
func (l Limits) Validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"read header timeout", l.ReadHeaderTimeout}, {"read timeout", l.ReadTimeout}, {"write timeout", l.WriteTimeout}, {"idle timeout", l.IdleTimeout},
		{"webhook body timeout", l.WebhookBodyTimeout}} {
		if d.v <= 0 {
			return fmt.Errorf("the %s must be positive, got %v", d.name, d.v)
		}
	}
	if l.MaxConns < 1 || l.MaxConnsPerAddr < 1 || l.MaxInFlight < 1 || l.MaxInFlightWebhooks < 1 {
		return fmt.Errorf("the connection and in-flight caps must be at least 1, got %d connections, %d per address, %d and %d (webhooks) in flight",
			l.MaxConns, l.MaxConnsPerAddr, l.MaxInFlight, l.MaxInFlightWebhooks)
	}
	return nil
}

// RetryAfter is the Retry-After (seconds) of a refusal past a cap.
const RetryAfter = 1

// overloaded is the answer past a cap, in the API's error shape.
const overloaded = `{"error":{"code":"overloaded","message":"the server is at its limit of concurrent requests; retry later"}}` + "\n"

// NewServer returns an http.Server for h under l; its handler refuses
// requests past their budget's in-flight cap. Serve it on Listener(ln, l).
func NewServer(h http.Handler, l Limits, log *slog.Logger) *http.Server {
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = 1 << 20
	}
	return &http.Server{Handler: limitInFlight(h, l), ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout: l.ReadTimeout, WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: l.MaxHeaderBytes,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
}

// isWebhook classifies a request into the webhooks' budget. It looks at
// the decoded path: the router matches the raw path when there is one,
// and a raw path that starts with WebhookPrefix decodes to a path that
// does too, so no request routed to a webhook lands in the API's budget.
// (The converse, an API path dressed up to count as a webhook, only
// spends the webhooks' budget and matches no API route.)
func isWebhook(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, WebhookPrefix) }

// limitInFlight answers 503 past the in-flight cap of the request's
// budget: webhooks (MaxInFlightWebhooks) and everything else
// (MaxInFlight) never take each other's slots. A webhook's body must
// arrive within WebhookBodyTimeout of its headers. An answer given before
// the request's body was read to its end (a refusal, a 404, a 401, a read
// timed out) closes the connection: net/http would otherwise keep it
// alive with the rest of the body unread.
func limitInFlight(h http.Handler, l Limits) http.Handler {
	api, hooks := make(chan struct{}, l.MaxInFlight), make(chan struct{}, l.MaxInFlightWebhooks)
	bodyTimeout := min(l.WebhookBodyTimeout, l.ReadTimeout)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sem, webhook := api, isWebhook(r)
		if webhook {
			sem = hooks
		}
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
			if webhook && r.Body != http.NoBody {
				// Only the body is left to read. Once it is in, net/http
				// clears the deadline for its background read, so a
				// handler may take longer than this without its context
				// being cancelled. A connection that cannot take a
				// deadline keeps ReadTimeout.
				_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyTimeout))
			}
			body := &trackedBody{ReadCloser: r.Body}
			r.Body = body
			cw := &closingWriter{ResponseWriter: w, r: r, body: body}
			h.ServeHTTP(cw, r)
			if cw.closing {
				abandonBody(w)
			}
		default:
			writeOverloaded(w, l.Overload.orAPI())
			if r.ContentLength != 0 {
				abandonBody(w)
			}
		}
	})
}

// abandonBody bounds what is left of a request whose answer was given
// with the body unread. net/http reads up to 256 KiB of the rest before
// closing (so the client, still sending, reads the answer rather than a
// reset), waiting on a slow client until the read deadline: a refused
// slow body would keep its connection, and its slot under the
// connection caps, for the whole read timeout. Past drainGrace that read
// fails and the connection closes; the answer, already written, is
// flushed first.
func abandonBody(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(drainGrace))
}

// drainGrace is how long the rest of an abandoned body is read for: a
// client sending at any useful speed is done well within it.
const drainGrace = time.Second

// trackedBody remembers whether the body was read to its end.
type trackedBody struct {
	io.ReadCloser
	eof atomic.Bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof.Store(true)
	}
	return n, err
}

// closingWriter adds Connection: close to an answer that starts while
// the request's body is unread.
type closingWriter struct {
	http.ResponseWriter
	r       *http.Request
	body    *trackedBody
	started bool
	closing bool // the answer started with the body unread
}

func (w *closingWriter) WriteHeader(code int) {
	if !w.started {
		w.started = true
		if w.r.ContentLength != 0 && !w.body.eof.Load() {
			w.closing = true
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *closingWriter) Write(p []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *closingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func writeOverloaded(w http.ResponseWriter, o Overload) {
	h := w.Header()
	h.Set("Content-Type", o.ContentType)
	h.Set("Retry-After", strconv.Itoa(RetryAfter))
	h.Set("Connection", "close")
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write([]byte(o.Body))
}

// refusal is the whole answer written on a connection past MaxConns,
// before any request is read.
func refusal(o Overload) []byte {
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: " + o.ContentType + "\r\nRetry-After: " +
		strconv.Itoa(RetryAfter) + "\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(o.Body)) + "\r\n\r\n" + o.Body)
}

// Run serves h on ln under l until ctx is cancelled, then shuts down,
// waiting up to grace for requests in flight.
func Run(ctx context.Context, ln net.Listener, h http.Handler, l Limits, grace time.Duration, log *slog.Logger) error {
	if err := l.Validate(); err != nil {
		return err
	}
	return serve(ctx, NewServer(h, l, log), Listener(ln, l), grace)
}

// RunTLS is Run over TLS under cfg: the connection caps apply to the raw
// connections, and TLS wraps them outermost, so the handlers see the
// handshake's state (r.TLS, a client's certificates).
func RunTLS(ctx context.Context, ln net.Listener, h http.Handler, l Limits, grace time.Duration, log *slog.Logger, cfg *tls.Config) error {
	if err := l.Validate(); err != nil {
		return err
	}
	return serve(ctx, NewServer(h, l, log), tls.NewListener(Listener(ln, l), cfg), grace)
}

// serve runs srv on ln until ctx is cancelled, then shuts it down,
// waiting up to grace.
func serve(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(shutdown)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// Listener caps ln at l.MaxConns open connections, and at
// l.MaxConnsPerAddr for one client address (see clientKey), so one client
// cannot hold every slot. Unlike a listener that stops accepting at the
// cap (the kernel then queues connections that wait in silence), a
// connection past a cap is accepted, answered 503 and closed: the client
// learns at once, and a slot freed by a timeout goes to the next client.
func Listener(ln net.Listener, l Limits) net.Listener {
	return &capListener{Listener: ln, slots: make(chan struct{}, l.MaxConns), perAddr: max(1, l.MaxConnsPerAddr),
		open: map[string]int{}, refuseWait: time.Second, refusal: refusal(l.Overload.orAPI())}
}

type capListener struct {
	net.Listener
	slots      chan struct{}
	perAddr    int
	refuseWait time.Duration
	refusal    []byte // the answer past a cap

	mu sync.Mutex
	// open counts the open connections of each client key; a key leaves
	// with its last connection, so the map holds at most MaxConns keys.
	open map[string]int
}

func (c *capListener) Accept() (net.Conn, error) {
	for {
		conn, err := c.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := clientKey(conn.RemoteAddr())
		if !c.takeAddr(key) {
			go refuse(conn, c.refusal, c.refuseWait)
			continue
		}
		select {
		case c.slots <- struct{}{}:
			return &slotConn{Conn: conn, release: func() { <-c.slots; c.releaseAddr(key) }}, nil
		default:
			c.releaseAddr(key)
			go refuse(conn, c.refusal, c.refuseWait)
		}
	}
}

// takeAddr counts one more connection of key, unless key is at its cap.
func (c *capListener) takeAddr(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[key] >= c.perAddr {
		return false
	}
	c.open[key]++
	return true
}

func (c *capListener) releaseAddr(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[key]--; c.open[key] <= 0 {
		delete(c.open, key)
	}
}

// clientKey is what the per-address cap counts a connection under: its
// IPv4 address, or the /64 of an IPv6 one — a single IPv6 client usually
// holds a whole /64 and could otherwise take a new address per
// connection. An IPv4-mapped IPv6 address counts as the IPv4 one. An
// address that is not IP (a Unix socket) counts as it is written.
func clientKey(a net.Addr) string {
	var ip netip.Addr
	if ta, ok := a.(*net.TCPAddr); ok {
		ip = ta.AddrPort().Addr()
	} else if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		ip = ap.Addr()
	} else {
		return a.Network() + ":" + a.String()
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.Prefix(64)
	if err != nil {
		return ip.String()
	}
	return p.String()
}

// refuse writes the 503 on conn and closes it, reading a little of what
// the client sent meanwhile so the close is a FIN the client can read the
// answer before, not a reset. It takes at most wait.
func refuse(conn net.Conn, answer []byte, wait time.Duration) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(wait))
	if _, err := conn.Write(answer); err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	buf := make([]byte, 4096)
	for range 16 {
		if _, err := conn.Read(buf); err != nil {
			return
		}
	}
}

// slotConn frees its slot once, when closed, and puts net/http's own
// answers to requests it could not parse in the error shape.
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// plainErrorHeaders follow the status line of the answers net/http writes
// itself, straight on the connection, when it cannot parse a request
// (headers over MaxHeaderBytes: 431; malformed: 400; unknown transfer
// coding: 501). A handler's answer never looks like this: net/http sorts
// its headers (Connection before Content-Type) and adds Date.
const plainErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// Write replaces one of net/http's plain-text error answers by the same
// status in the error shape; anything else goes through unchanged.
func (c *slotConn) Write(p []byte) (int, error) {
	if shaped, ok := shapeError(p); ok {
		if _, err := c.Conn.Write(shaped); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// shapeError turns "HTTP/1.1 NNN Text" + plainErrorHeaders + text into
// the error shape, keeping the status.
func shapeError(p []byte) ([]byte, bool) {
	s := string(p)
	line, _, ok := strings.Cut(s, plainErrorHeaders) // net/http's text after it is replaced, never echoed
	if !ok || !strings.HasPrefix(line, "HTTP/1.1 ") || len(line) < len("HTTP/1.1 NNN") || strings.Contains(line, "\r\n") {
		return nil, false
	}
	code, err := strconv.Atoi(line[len("HTTP/1.1 ") : len("HTTP/1.1 ")+3])
	if err != nil || code < 400 || code > 599 {
		return nil, false
	}
	errCode, msg := "bad_request", "malformed HTTP request"
	switch code {
	case http.StatusRequestHeaderFieldsTooLarge:
		errCode, msg = "headers_too_large", "request headers too large"
	case http.StatusNotImplemented:
		errCode, msg = "not_implemented", "unsupported transfer encoding"
	}
	body, _ := json.Marshal(map[string]map[string]string{"error": {"code": errCode, "message": msg}})
	body = append(body, '\n')
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		code, http.StatusText(code), len(body), body), true
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
