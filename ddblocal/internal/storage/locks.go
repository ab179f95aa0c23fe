package storage

import "sync"

// Locks serialises writers of the same item. Transactions that meet an
// item locked by another transaction fail fast (TransactionConflict, as
// DynamoDB does); everything else waits. Keys are always acquired in
// sorted order, so waiting cannot deadlock.
type Locks struct {
	mu   sync.Mutex
	held map[string]*lockEntry
}

type lockEntry struct {
	tx   bool
	done chan struct{}
}

// Acquire locks one key. It returns false when tx is set and another
// transaction holds the key.
func (l *Locks) Acquire(key string, tx bool) bool {
	for {
		l.mu.Lock()
		if l.held == nil {
			l.held = map[string]*lockEntry{}
		}
		e := l.held[key]
		if e == nil {
			l.held[key] = &lockEntry{tx: tx, done: make(chan struct{})}
			l.mu.Unlock()
			return true
		}
		if tx && e.tx {
			l.mu.Unlock()
			return false
		}
		ch := e.done
		l.mu.Unlock()
		<-ch
	}
}

// Release unlocks one key and wakes its waiters.
func (l *Locks) Release(key string) {
	l.mu.Lock()
	e := l.held[key]
	delete(l.held, key)
	l.mu.Unlock()
	if e != nil {
		close(e.done)
	}
}
