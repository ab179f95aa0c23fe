package ddblocal

import (
	"math/rand/v2"
	"sync"
)

// faultKind names an injectable failure.
type faultKind string

const (
	faultUnprocessed faultKind = "UnprocessedItems"
	faultConflict    faultKind = "TransactionConflict"
)

// faults holds the active fault injection rules (off by default).
type faults struct {
	mu    sync.RWMutex
	rules map[faultKey]float64
}

type faultKey struct {
	table string
	kind  faultKind
}

// inject reports whether a fault of the given kind should be injected now
// for table.
func (s *Store) inject(table string, kind faultKind) bool {
	s.faults.mu.RLock()
	defer s.faults.mu.RUnlock()
	if len(s.faults.rules) == 0 {
		return false
	}
	rate := s.faults.rules[faultKey{table, kind}]
	if rate == 0 {
		rate = s.faults.rules[faultKey{"", kind}]
	}
	return rate > 0 && rand.Float64() < rate
}
