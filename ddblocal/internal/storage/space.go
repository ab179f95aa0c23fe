package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// ErrDiskFull reports a write refused because the data directory's
// file system has less free space than the engine keeps in reserve (or
// because the engine failed writing, which on a full disk is the same
// cause). Nothing of the refused write was applied; writes are accepted
// again once space is freed.
var ErrDiskFull = errors.New("storage: disk full")

// DefaultMinFree is the free space kept in reserve unless configured: two
// memtables, so a flush and the log always have room (ADR 0059).
const DefaultMinFree = 2 * memTableSize

// space guards writes against a full disk (ADR 0059). Pebble treats a
// failed log or MANIFEST write as fatal: its commit pipeline stays
// blocked and every later commit waits forever, so the only safe write on
// a full disk is the one never handed to Pebble. Each write first checks
// the file system's free space (one statfs) and is refused with
// ErrDiskFull below the reserve; the reserve leaves room for what Pebble
// writes in the background (flushes, compactions, the MANIFEST).
type space struct {
	dir     string
	minFree uint64 // 0: no guard (in memory, or disabled)
	log     *slog.Logger
	full    atomic.Bool // last check found the disk full: logged once per episode
	// failed is set when Pebble reported a fatal error: its commit
	// pipeline cannot be trusted, so writes are refused without touching
	// it (reads keep working on their snapshots) until a restart.
	failed atomic.Pointer[string]
}

// check returns ErrDiskFull unless n more bytes leave the reserve free.
func (s *space) check(n int) error {
	if f := s.failed.Load(); f != nil {
		return fmt.Errorf("%w: the engine stopped writing after %s; restart the store", ErrDiskFull, *f)
	}
	if s.minFree == 0 {
		return nil
	}
	free, err := freeBytes(s.dir)
	if err != nil {
		return nil // unknown here: Pebble's own error, if any, decides
	}
	if free < s.minFree+uint64(n) {
		if !s.full.Swap(true) {
			s.log.Error("storage: disk full, refusing writes until space is freed", "dir", s.dir, "free", free, "reserve", s.minFree)
		}
		return fmt.Errorf("%w: %d bytes free in %s, %d kept in reserve", ErrDiskFull, free, s.dir, s.minFree)
	}
	if s.full.Swap(false) {
		s.log.Info("storage: disk space available again, accepting writes", "dir", s.dir, "free", free)
	}
	return nil
}

// logLimit bounds how often Pebble's error lines are logged: a failing
// background job retries in a loop, and a full disk made that 132,000
// lines in 20 seconds (issue 25). Past the burst, one line per interval
// says how many were dropped.
type logLimit struct {
	mu      sync.Mutex
	next    time.Time
	burst   int
	dropped int
}

const (
	logBurst    = 10
	logInterval = 10 * time.Second
)

// allow reports whether a line may be logged now, and how many lines were
// dropped since the last one.
func (l *logLimit) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.After(l.next) {
		l.next, l.burst = now.Add(logInterval), 0
	}
	if l.burst < logBurst {
		l.burst++
		d := l.dropped
		l.dropped = 0
		return true, d
	}
	l.dropped++
	return false, 0
}
