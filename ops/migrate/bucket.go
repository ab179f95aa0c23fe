package migrate

import (
	"context"
	"sync"
	"time"

	"lastro/collections/clock"
)

// bucket is a token bucket of write units shared by a backfill's segments:
// rate units a second, at most a second's worth saved up, so the parallel
// segments together stay under the rate the operator gave.
type bucket struct {
	mu     sync.Mutex
	rate   float64 // 0: no limit
	tokens float64
	last   time.Time
	clock  clock.Clock
}

func newBucket(rate float64, c clock.Clock) *bucket {
	if c == nil {
		c = clock.System{}
	}
	return &bucket{rate: rate, tokens: rate, last: c.Now(), clock: c}
}

// take blocks until n units are available and spends them, or ctx ends.
// A write dearer than a second's worth waits until the bucket is full and
// then leaves it in debt, which the next writes wait out.
func (b *bucket) take(ctx context.Context, n float64) error {
	if b == nil || b.rate <= 0 {
		return ctx.Err()
	}
	for {
		b.mu.Lock()
		now := b.clock.Now()
		b.tokens = min(b.rate, b.tokens+now.Sub(b.last).Seconds()*b.rate)
		b.last = now
		need := min(n, b.rate)
		if b.tokens >= need {
			b.tokens -= n
			b.mu.Unlock()
			return ctx.Err()
		}
		wait := time.Duration((need - b.tokens) / b.rate * float64(time.Second))
		b.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// settle corrects the bucket once a write reports what it really cost.
func (b *bucket) settle(estimated, actual float64) {
	if b == nil || b.rate <= 0 {
		return
	}
	b.mu.Lock()
	b.tokens -= actual - estimated
	b.mu.Unlock()
}
