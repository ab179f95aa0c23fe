// Package clock gives domain code its notion of now. Nothing in the engine
// calls time.Now directly: it is handed a Clock, so LASTRO_NOW can freeze
// time for demos and tests can move it.
package clock

import (
	"fmt"
	"sync"
	"time"
)

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

// System is the real clock.
type System struct{}

// Now returns the current time.
func (System) Now() time.Time { return time.Now() }

// Manual is a clock that only moves when told; safe for concurrent use.
type Manual struct {
	mu sync.Mutex
	t  time.Time
}

// NewManual returns a clock stopped at t.
func NewManual(t time.Time) *Manual { return &Manual{t: t} }

// Now returns the clock's time.
func (m *Manual) Now() time.Time { m.mu.Lock(); defer m.mu.Unlock(); return m.t }

// Set moves the clock to t.
func (m *Manual) Set(t time.Time) { m.mu.Lock(); defer m.mu.Unlock(); m.t = t }

// Advance moves the clock forward by d.
func (m *Manual) Advance(d time.Duration) { m.mu.Lock(); defer m.mu.Unlock(); m.t = m.t.Add(d) }

// FromEnv returns a frozen clock when value (LASTRO_NOW, RFC 3339) is set,
// else the system clock.
func FromEnv(value string) (Clock, bool, error) {
	if value == "" {
		return System{}, false, nil
	}
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return nil, false, fmt.Errorf("LASTRO_NOW %q is not RFC 3339: %w", value, err)
	}
	return NewManual(t), true, nil
}
