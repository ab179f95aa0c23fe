package kit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// ErrAttemptsExhausted is returned by Backoff.Retry when every attempt
// asked for another one. Callers map it to their own answer (throttled,
// contended) with errors.Is.
var ErrAttemptsExhausted = errors.New("kit: retry attempts exhausted")

// Backoff is a bounded retry policy: at most Attempts calls, with an
// exponential delay and full jitter between them, so writers that
// collided spread out instead of colliding again in step. The zero value
// makes one attempt. A Backoff is a value with no state: one can be shared
// by any number of goroutines.
type Backoff struct {
	// Attempts is the number of calls, the first included; below 1 it
	// counts as 1.
	Attempts int
	// Base is the ceiling of the delay before the second call; the
	// ceiling doubles before each call after it.
	Base time.Duration
	// Max caps every ceiling; zero means no cap but Base's doubling.
	Max time.Duration
}

// Retry calls fn with attempt = 1, 2, ... until fn says not to retry, and
// returns fn's error then (nil on success). Between calls it sleeps a
// random delay in [0, Ceiling(attempt)] ("full jitter"), and returns
// ctx.Err() when ctx ends first. When the last attempt still asks for a
// retry, it returns an error matching ErrAttemptsExhausted that also wraps
// that attempt's error, if any.
func (b Backoff) Retry(ctx context.Context, fn func(attempt int) (retry bool, err error)) error {
	attempts := max(b.Attempts, 1)
	for attempt := 1; ; attempt++ {
		retry, err := fn(attempt)
		if !retry {
			return err
		}
		if attempt >= attempts {
			if err != nil {
				return fmt.Errorf("%w after %d attempts: %w", ErrAttemptsExhausted, attempts, err)
			}
			return fmt.Errorf("%w after %d attempts", ErrAttemptsExhausted, attempts)
		}
		if err := sleep(ctx, b.delay(attempt)); err != nil {
			return err
		}
	}
}

// Ceiling is the longest delay after the given attempt (1-based):
// Base·2^(attempt−1), capped at Max, never negative and never overflowing.
func (b Backoff) Ceiling(attempt int) time.Duration {
	d := max(b.Base, 0)
	for i := 1; i < attempt && d > 0 && (b.Max <= 0 || d < b.Max) && d < time.Duration(1<<62); i++ {
		d *= 2
	}
	if b.Max > 0 {
		d = min(d, b.Max)
	}
	return d
}

// delay draws the jittered delay after attempt, uniform in [0, Ceiling].
func (b Backoff) delay(attempt int) time.Duration {
	c := b.Ceiling(attempt)
	if c <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(c) + 1))
}

// sleep waits d, or returns ctx.Err() as soon as ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
