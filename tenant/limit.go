package tenant

import (
	"errors"
	"math"
	"strconv"
	"sync"
	"time"

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

func isAuthFailure(err error) bool {
	if errs.Is(err, errs.Unauth) {
		return true
	}
	var e *errs.Error
	return errors.As(err, &e) && e.Code == errTenantNotFound.Code
}
