package storage

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// Visibility follows durability (ADR 0024).
//
// Pebble publishes a batch to its readers as soon as it is in the
// memtable, before its WAL record is synced, so a reader of the live
// engine can see a write that a crash then loses. The store's readers
// therefore read a View: a snapshot that holds only durable commits.
// Writers apply their batches under the commit lock without a sync and
// then call publish, which runs the group commit: one caller at a time
// (the leader) takes a snapshot under the commit lock — it holds exactly
// the commits applied so far —, syncs the WAL outside the lock
// (everything written before the sync is then durable, the WAL being
// sequential) and installs the snapshot as the view. Every committer whose
// ticket the round covers returns; commits applied during the sync wait
// for the next round.
//
// Writers keep their item locks until Commit returns, so the live image
// of an item seen under its lock holds nothing unsynced.

// Pipeline orders commits and publishes them to readers once durable.
// Its lock (Lock, Unlock) is the commit lock: whatever must follow commit
// order (stream sequence numbers, a table definition a commit checks)
// changes under it.
type Pipeline struct {
	d    *DB
	mark func() uint64

	commit  sync.Mutex
	applied uint64 // commits applied so far (guarded by commit)
	// ramp is the bytes applied since Open and rampNext the next of them
	// at which the memtables are flushed, 0 once the ramp is over (both
	// guarded by commit; ADR 0089).
	ramp, rampNext uint64

	mu      sync.Mutex
	cond    sync.Cond
	syncing bool   // a leader is running a round
	durable uint64 // tickets up to this one are visible
	cur     *View
	closed  bool
}

// View is one published image of the store. refs counts its users plus
// one while it is the current view; the snapshot is closed at zero.
type View struct {
	snap *pebble.Snapshot
	refs atomic.Int64
	mark uint64
}

// Get implements Reader.
func (v *View) Get(key []byte) ([]byte, error) { return get(v.snap, key) }

// NewIter implements Reader.
func (v *View) NewIter(lo, hi []byte) (*Iter, error) { return newIter(v.snap, lo, hi) }

// Mark is what Options.Mark returned when the view was taken.
func (v *View) Mark() uint64 { return v.mark }

// Release ends the caller's use of the view.
func (v *View) Release() {
	if v.refs.Add(-1) == 0 {
		v.snap.Close()
	}
}

// init installs a first view of the engine as Open found it (all of it
// durable).
func (p *Pipeline) init(d *DB, mark func() uint64) {
	p.d = d
	p.mark = mark
	if p.mark == nil {
		p.mark = func() uint64 { return 0 }
	}
	p.cond.L = &p.mu
	p.cur = newView(d.db.NewSnapshot(), 0)
	p.rampNext = memTableSize / 8
}

func newView(snap *pebble.Snapshot, mark uint64) *View {
	v := &View{snap: snap, mark: mark}
	v.refs.Store(1)
	return v
}

// Lock takes the commit lock.
func (p *Pipeline) Lock() { p.commit.Lock() }

// Unlock releases the commit lock.
func (p *Pipeline) Unlock() { p.commit.Unlock() }

// TryLock tries the commit lock (tests check nothing holds it).
func (p *Pipeline) TryLock() bool { return p.commit.TryLock() }

// Acquire returns the current view; the caller releases it.
func (p *Pipeline) Acquire() *View {
	p.mu.Lock()
	v := p.cur
	v.refs.Add(1)
	p.mu.Unlock()
	return v
}

// SnapshotAt returns a durable view of exactly the commits applied
// before it, and runs at under the commit lock at that point, so at can
// read the clock at the view's instant (an export's ExportTime, ADR
// 0059). Unlike a round's view it is not published: readers keep the
// current one. at must be short: every committer waits for it.
func (p *Pipeline) SnapshotAt(at func()) (v *View, err error) {
	if err := p.d.space.check(0); err != nil {
		return nil, err
	}
	var snap *pebble.Snapshot
	var mark uint64
	func() {
		p.commit.Lock()
		defer p.commit.Unlock()
		at()
		mark = p.mark()
		snap = p.d.db.NewSnapshot()
	}()
	if p.d.durable {
		// Everything in the snapshot precedes this synced record in the
		// WAL, so the view holds only durable commits (ADR 0024).
		if err := p.d.db.LogData(nil, pebble.Sync); err != nil {
			snap.Close()
			return nil, fmt.Errorf("storage: snapshot: %w", err)
		}
	}
	return newView(snap, mark), nil
}

// close drops the current view (before the engine closes).
func (p *Pipeline) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil && !p.closed {
		p.closed = true
		p.cur.Release()
	}
}

// Commit applies b under the commit lock, after prepare (which runs under
// it and may refuse the commit), and then waits outside the lock until
// the commit is durable and visible to readers: concurrent committers
// share fsyncs.
func (p *Pipeline) Commit(b *Batch, prepare func() error) error {
	ticket, err := p.apply(b, prepare, true)
	if err != nil {
		return err
	}
	return p.publish(ticket)
}

// ApplyUnsynced applies b under the commit lock without waiting for an
// fsync. Only for writes that a later synced commit makes durable (the WAL
// is sequential) and that are redone after a crash, such as index
// backfill entries.
func (p *Pipeline) ApplyUnsynced(b *Batch, prepare func() error) error {
	_, err := p.apply(b, prepare, false)
	return err
}

// Settle makes every commit applied so far, by any path, durable and
// visible to readers. Control-plane work that writes outside Commit (a
// restore, an index backfill) calls it before answering.
func (p *Pipeline) Settle() error {
	if err := p.d.space.check(0); err != nil {
		return err
	}
	p.commit.Lock()
	p.applied++
	ticket := p.applied
	p.commit.Unlock()
	return p.publish(ticket)
}

// apply runs prepare and applies b under the commit lock. The lock is
// released even if either panics (Pebble panics on a closed engine), as
// the HTTP handler recovers panics and keeps serving.
//
// The batch is applied without a sync: the commit becomes durable and
// visible together when publish syncs the WAL and installs a snapshot
// taken before the sync. It returns the commit's ticket.
func (p *Pipeline) apply(b *Batch, prepare func() error, ticket bool) (uint64, error) {
	// Before the lock: a write refused for space never reaches Pebble.
	if err := p.d.space.check(b.Len()); err != nil {
		return 0, err
	}
	t, flush, err := p.applyLocked(b, prepare, ticket)
	if flush {
		p.flushRamp()
	}
	return t, err
}

func (p *Pipeline) applyLocked(b *Batch, prepare func() error, ticket bool) (t uint64, flush bool, err error) {
	p.commit.Lock()
	defer p.commit.Unlock()
	if err := prepare(); err != nil {
		return 0, false, err
	}
	if err := p.d.db.Apply(b.b, pebble.NoSync); err != nil {
		return 0, false, fmt.Errorf("storage: commit: %w", err)
	}
	if p.rampNext > 0 {
		p.ramp += uint64(b.Len())
		if flush = p.ramp >= p.rampNext; flush {
			p.rampNext *= 2
			if p.rampNext > memTableSize/2 {
				p.rampNext = 0 // Pebble's own rule keeps the queue short from here
			}
		}
	}
	if !ticket {
		return 0, flush, nil
	}
	p.applied++
	return p.applied, flush, nil
}

// flushRamp flushes the memtables of Pebble's ramp (ADR 0089). After
// Open, Pebble's memtables start at 256 KB and double up to memTableSize,
// and it flushes none of them until the queued ones hold half of
// memTableSize: the first 32 MB written sit in up to seven memtables,
// each of which every read seeks, and a read of a 100,000-item table
// costs twice what it does once they are flushed. Flushing at 4, 8 and
// 16 MB keeps at most two in front of the sstables past the first 4 MB.
// The flush runs in the background; it changes where durable data sits,
// not what is durable (the WAL was synced already) nor what any view
// sees. A failed flush only leaves the ramp as Pebble has it.
func (p *Pipeline) flushRamp() {
	defer func() {
		if r := recover(); r != nil { // Pebble panics on a closed engine
			p.d.space.log.Warn("storage: memtable flush", "err", r)
		}
	}()
	if _, err := p.d.db.AsyncFlush(); err != nil {
		p.d.space.log.Warn("storage: memtable flush", "err", err)
	}
}

// publish returns once the commit with the given ticket is durable and
// visible to readers, leading a round when no other caller is.
func (p *Pipeline) publish(ticket uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.durable < ticket {
		if p.closed {
			return ErrClosed
		}
		if p.syncing {
			p.cond.Wait()
			continue
		}
		p.syncing = true
		p.mu.Unlock()
		// Let writers that are ready to apply do so before the round takes
		// its snapshot: one fsync then covers them too. With nothing else
		// runnable this returns at once.
		runtime.Gosched()
		v, upto, err := p.round()
		p.mu.Lock()
		p.syncing = false
		p.cond.Broadcast()
		if err != nil {
			return err
		}
		if p.closed {
			v.Release()
			return ErrClosed
		}
		old := p.cur
		p.cur, p.durable = v, upto
		old.Release()
	}
	return nil
}

// round takes a snapshot of everything applied so far and makes it
// durable. The snapshot is taken under the commit lock, so it holds
// exactly the commits up to upto; the sync runs outside the lock, so
// writers keep applying meanwhile.
func (p *Pipeline) round() (v *View, upto uint64, err error) {
	var snap *pebble.Snapshot
	defer func() {
		if r := recover(); r != nil { // Pebble panics on a closed engine
			err = fmt.Errorf("storage: commit: %v", r)
		}
		if err != nil && snap != nil {
			snap.Close()
		}
	}()
	var mark uint64
	func() {
		p.commit.Lock()
		defer p.commit.Unlock()
		upto, mark = p.applied, p.mark()
		snap = p.d.db.NewSnapshot()
	}()
	if p.d.durable {
		// An empty log record, synced: the WAL is sequential, so every
		// batch applied before it is durable once it is.
		if err := p.d.db.LogData(nil, pebble.Sync); err != nil {
			return nil, 0, fmt.Errorf("storage: commit: %w", err)
		}
	}
	return newView(snap, mark), upto, nil
}
