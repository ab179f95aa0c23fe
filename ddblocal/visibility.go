package ddblocal

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// Visibility follows durability (ADR 0024).
//
// Pebble publishes a batch to its readers as soon as it is in the
// memtable, before its WAL record is synced, so a reader of the live
// database can see a write that a crash then loses. The store's readers
// (GetItem, Query, Scan, batch and transactional reads, GetRecords)
// therefore read a view: a Pebble snapshot that holds only durable
// commits. Writers apply their batches under the commit lock without a
// sync and then call publish, which runs the group commit: one caller at
// a time (the leader) takes a snapshot under the commit lock — it holds
// exactly the commits applied so far —, syncs the WAL outside the lock
// (everything written before the sync is then durable, the WAL being
// sequential) and installs the snapshot as the view. Every committer whose
// ticket the round covers returns; commits applied during the sync wait
// for the next round, which is what Pebble's own WAL group commit did.
//
// Writers keep their item locks until publish returns, so the live image
// of an item seen under its lock holds nothing unsynced.

// reader is what a view reads from: a Pebble snapshot.
type reader interface {
	Get(key []byte) ([]byte, io.Closer, error)
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

// view is one published image of the store. refs counts its users plus
// one while it is the current view; the snapshot is closed at zero.
type view struct {
	r    reader
	snap *pebble.Snapshot
	refs atomic.Int64
	// seq is the last stream sequence number the view holds.
	seq uint64
}

func (v *view) release() {
	if v.refs.Add(-1) == 0 {
		v.snap.Close()
	}
}

type visibility struct {
	db *pebble.DB

	mu      sync.Mutex
	cond    sync.Cond
	syncing bool   // a leader is running a round
	durable uint64 // tickets up to this one are visible
	cur     *view
	closed  bool
}

// init installs a first view of the database as Open found it (all of
// it durable).
func (g *visibility) init(db *pebble.DB) {
	g.db = db
	g.cond.L = &g.mu
	g.cur = newView(db.NewSnapshot(), 0)
}

func newView(snap *pebble.Snapshot, seq uint64) *view {
	v := &view{r: snap, snap: snap, seq: seq}
	v.refs.Store(1)
	return v
}

// acquire returns the current view; the caller releases it.
func (g *visibility) acquire() *view {
	g.mu.Lock()
	v := g.cur
	v.refs.Add(1)
	g.mu.Unlock()
	return v
}

// close drops the current view (Close, before the database closes).
func (g *visibility) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cur != nil && !g.closed {
		g.closed = true
		g.cur.release()
	}
}

var errStoreClosed = errors.New("ddblocal: store closed")

// publish returns once the commit with the given ticket is durable and
// visible to readers, leading a round when no other caller is.
func (g *visibility) publish(s *Store, ticket uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.durable < ticket {
		if g.closed {
			return errStoreClosed
		}
		if g.syncing {
			g.cond.Wait()
			continue
		}
		g.syncing = true
		g.mu.Unlock()
		v, upto, err := g.round(s)
		g.mu.Lock()
		g.syncing = false
		g.cond.Broadcast()
		if err != nil {
			return err
		}
		if g.closed {
			v.release()
			return errStoreClosed
		}
		old := g.cur
		g.cur, g.durable = v, upto
		old.release()
	}
	return nil
}

// round takes a snapshot of everything applied so far and makes it
// durable. The snapshot is taken under the commit lock, so it holds
// exactly the commits up to upto; the sync runs outside the lock, so
// writers keep applying meanwhile.
func (g *visibility) round(s *Store) (v *view, upto uint64, err error) {
	var snap *pebble.Snapshot
	defer func() {
		if r := recover(); r != nil { // Pebble panics on a closed store
			err = fmt.Errorf("ddblocal: commit: %v", r)
		}
		if err != nil && snap != nil {
			snap.Close()
		}
	}()
	var seq uint64
	func() {
		s.commit.Lock()
		defer s.commit.Unlock()
		upto, seq = s.applied, s.streams.last.Load()
		snap = g.db.NewSnapshot()
	}()
	if s.sync {
		// An empty log record, synced: the WAL is sequential, so every
		// batch applied before it is durable once it is.
		if err := g.db.LogData(nil, pebble.Sync); err != nil {
			return nil, 0, fmt.Errorf("ddblocal: commit: %w", err)
		}
	}
	return newView(snap, seq), upto, nil
}
