package tenant

import (
	"errors"
	"math"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"lastro/collections/errs"
)

// failureLimiter is a token bucket per client address that only failed
// authentications drain (docs/adr/0023): a client starts with burst
// failures and earns one back every `every`. A client with an empty
// bucket is refused before the store is read. Memory is bounded at max
// addresses: buckets full again are swept first, then an arbitrary one
// goes (an attacker with that many addresses is limited by the store's
// own capacity, as without the limiter).
type failureLimiter struct {
	burst float64
	every time.Duration
	max   int

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newFailureLimiter(burst int, every time.Duration, max int) *failureLimiter {
	return &failureLimiter{burst: float64(burst), every: every, max: max, buckets: map[string]*bucket{}}
}

func (l *failureLimiter) refill(b *bucket, now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = math.Min(l.burst, b.tokens+float64(d)/float64(l.every))
		b.at = now
	}
}

// wait is how long client must wait before it may fail again (0: now).
func (l *failureLimiter) wait(client string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[client]
	if !ok {
		return 0
	}
	l.refill(b, now)
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) * float64(l.every))
}

// fail takes one token from client's bucket.
func (l *failureLimiter) fail(client string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[client]
	if !ok {
		if len(l.buckets) >= l.max {
			l.sweep(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[client] = b
	}
	l.refill(b, now)
	b.tokens = math.Max(0, b.tokens-1)
}

// sweep drops the buckets that are full again (they hold no state worth
// keeping); if none is, it drops one at random so the map stays bounded.
func (l *failureLimiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		l.refill(b, now)
		if b.tokens >= l.burst {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) < l.max {
			return
		}
		delete(l.buckets, k)
	}
}

// tooManyFailures is the 429 of a client over its failure budget; the
// handler sets Retry-After from it.
type tooManyFailures struct{ retryAfter int }

func (e *tooManyFailures) Error() string { return "too many failed authentications" }

func errTooManyFailures(wait time.Duration) error {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	return errs.Wrap(errs.Limit, "too_many_failures", &tooManyFailures{retryAfter: secs},
		"too many failed authentications from this address; retry in "+strconv.Itoa(secs)+" s")
}

// setRetryAfter adds the Retry-After header when err is a failure-limit
// refusal.
func setRetryAfter(c echo.Context, err error) {
	var tm *tooManyFailures
	if errors.As(err, &tm) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(tm.retryAfter))
	}
}

// overLimit is the 429 for a client that has no failure left, or nil.
func (s *Service) overLimit(client string, now time.Time) error {
	if client == "" {
		return nil
	}
	if w := s.fails.wait(client, now); w > 0 {
		return errTooManyFailures(w)
	}
	return nil
}

// failed spends one of client's failures ("" : not limited).
func (s *Service) failed(client string, now time.Time) {
	if client != "" {
		s.fails.fail(client, now)
	}
}

// ClientAddress is the address a request's failures are counted against:
// the peer's IP (an IPv6 peer's /64, which one host usually owns whole).
// Forwarding headers count only when the server is told to trust them
// (echo's IPExtractor is set, behind a known proxy): otherwise a client
// would pick its own address.
func ClientAddress(c echo.Context) string {
	host := c.Request().RemoteAddr
	if c.Echo().IPExtractor != nil {
		host = c.RealIP()
	} else if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap()
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.String()
		}
	}
	return a.String()
}

// LimitFailures guards a public route that authenticates by its own means
// and names its tenant in path parameter param (the settlement webhook):
// a client over its failure budget gets 429 unless the tenant is cached
// (then the check costs no store read), and every 401 or unknown tenant
// the route answers spends one of the client's failures.
func (s *Service) LimitFailures(param string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			client := ClientAddress(c)
			if !s.cachedTenant(c.Param(param)) {
				if err := s.overLimit(client, time.Now()); err != nil {
					setRetryAfter(c, err)
					return err
				}
			}
			err := next(c)
			if isAuthFailure(err) {
				s.failed(client, time.Now())
			}
			return err
		}
	}
}

func isAuthFailure(err error) bool {
	if errs.Is(err, errs.Unauth) {
		return true
	}
	var e *errs.Error
	return errors.As(err, &e) && e.Code == errTenantNotFound.Code
}
