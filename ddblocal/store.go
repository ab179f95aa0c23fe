package ddblocal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"lastro/ddblocal/internal/av"
)

// Options configure a Store.
type Options struct {
	// Dir is the data directory. Empty means an in-memory store.
	Dir string
	// Region and AccountID appear in ARNs. Defaults: us-east-1,
	// 123456789012. The account is the caller's: ARNs naming another
	// account are refused with AccessDeniedException where DynamoDB
	// authorizes on them (tags, backups). It is not the all-zero
	// placeholder, which real DynamoDB treats as a foreign account.
	Region    string
	AccountID string
	// Logger receives the store's own log lines; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// TTLSweepInterval is how often the background sweeper deletes items
	// whose time to live has passed and trims stream records older than
	// 24 hours. Zero means 5 seconds; negative disables the sweeper (tests
	// then call SweepExpired).
	TTLSweepInterval time.Duration
}

// Store is an embedded DynamoDB-compatible database. It is safe for
// concurrent use; serve it with Handler.
type Store struct {
	db     *pebble.DB
	sync   bool
	opts   Options
	log    *slog.Logger
	now    func() time.Time
	locks  lockTable
	faults faults
	tokens tokenCache
	meter  meter
	commit sync.Mutex // orders commits (stream sequence numbers follow it)
	// applied counts the commits applied so far (guarded by commit); vis
	// publishes them to readers once durable.
	applied uint64
	vis     visibility

	streams streamState // guarded by commit where noted
	bg      background  // TTL sweeper and stream trimmer

	closeOnce sync.Once
	closeErr  error

	mu     sync.RWMutex // guards tables, deleting and nextID
	tables map[string]*table
	// deleting holds the names whose DeleteTable has not yet committed
	// its catalog delete: CreateTable refuses them as DynamoDB refuses a
	// DELETING table's name, or the delete would erase the new entry.
	deleting map[string]bool
	nextID   uint32
}

// Open opens (or creates) a store.
func Open(opts Options) (*Store, error) {
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.AccountID == "" {
		opts.AccountID = defaultAccountID
	}
	s := &Store{opts: opts, log: opts.Logger, now: opts.Now, tables: map[string]*table{}, deleting: map[string]bool{}, nextID: 1}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.now == nil {
		s.now = time.Now
	}
	po := &pebble.Options{Logger: quietLogger{s.log}}
	dir := opts.Dir
	if dir == "" {
		po.FS = vfs.NewMem()
		dir = "mem"
	} else {
		s.sync = true
		// The store holds every tenant's data: its folder and files are
		// the owner's only, whatever the umask.
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("ddblocal: create %s: %w", dir, err)
		}
		po.FS = privateFS{vfs.Default}
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("ddblocal: open %s: %w", dir, err)
	}
	s.db = db
	if err := s.load(); err != nil {
		db.Close()
		return nil, err
	}
	s.vis.init(s.db)
	if err := s.loadTokens(); err != nil {
		s.vis.close()
		db.Close()
		return nil, err
	}
	if err := s.recoverBackups(); err != nil {
		s.vis.close()
		db.Close()
		return nil, err
	}
	if err := s.resumeBackfills(); err != nil {
		s.vis.close()
		db.Close()
		return nil, err
	}
	if err := s.startServices(); err != nil {
		s.vis.close()
		db.Close()
		return nil, err
	}
	// A view holding the stream state just loaded.
	if err := s.settle(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close stops the background services, flushes and closes the store.
// Later calls return the first call's result (Pebble panics on a second
// close).
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.stopServices()
		s.vis.close()
		s.closeErr = s.db.Close()
	})
	return s.closeErr
}

type quietLogger struct{ l *slog.Logger }

func (q quietLogger) Infof(format string, args ...any) {}
func (q quietLogger) Errorf(format string, args ...any) {
	q.l.Error("pebble", "msg", fmt.Sprintf(format, args...))
}
func (q quietLogger) Fatalf(format string, args ...any) {
	q.l.Error("pebble fatal", "msg", fmt.Sprintf(format, args...))
	panic(fmt.Sprintf(format, args...))
}

// load reads the catalog and counts items.
func (s *Store) load() error {
	iter, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixMeta, 'T'}, UpperBound: []byte{prefixMeta, 'U'}})
	if err != nil {
		return err
	}
	defer iter.Close()
	for iter.First(); iter.Valid(); iter.Next() {
		var d tableDef
		if err := json.Unmarshal(iter.Value(), &d); err != nil {
			return fmt.Errorf("ddblocal: catalog entry %q: %w", iter.Key(), err)
		}
		t := &table{}
		t.def.Store(&d)
		if err := s.count(t); err != nil {
			return err
		}
		s.tables[d.Name] = t
	}
	v, closer, err := s.db.Get(metaNextIDKey)
	if err == nil {
		s.nextID = binary.BigEndian.Uint32(v)
		closer.Close()
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	return nil
}

// count recomputes a table's item and byte counters from storage.
func (s *Store) count(t *table) error {
	d := t.def.Load()
	lo, hi := tableSpan(d.ID)
	iter, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	defer iter.Close()
	for iter.First(); iter.Valid(); iter.Next() {
		k := iter.Key()
		id := binary.BigEndian.Uint16(k[5:7])
		it, err := av.DecodeItem(iter.Value())
		if err != nil {
			return err
		}
		size := int64(av.ItemSize(it))
		if id == 0 {
			t.items.Add(1)
			t.bytes.Add(size)
		} else {
			t.idxItems[id].Add(1)
			t.idxBytes[id].Add(size)
		}
	}
	return nil
}

// table finds a live table by name or table ARN.
func (s *Store) table(name string) *table {
	name = tableNameOf(name)
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tables[name]
}

// hasKey reports whether a storage key exists; a read error counts as
// present, which errs towards the entry the writer then overwrites.
func (s *Store) hasKey(key []byte) bool {
	_, closer, err := s.db.Get(key)
	if err != nil {
		return !errors.Is(err, pebble.ErrNotFound)
	}
	closer.Close()
	return true
}

// get reads one item by storage key from the live database; nil when
// absent. Only for writers holding the item's lock (the live image then
// holds nothing unsynced: the item's previous writer kept the lock until
// its commit was durable) and for control-plane work; readers go through
// a view.
func (s *Store) get(key []byte) (av.Item, error) { return getFrom(s.db, key) }

// read reads one item by storage key from the durable view; nil when
// absent.
func (s *Store) read(key []byte) (av.Item, error) {
	v := s.vis.acquire()
	defer v.release()
	return getFrom(v.r, key)
}

type getter interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

func getFrom(r getter, key []byte) (av.Item, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return av.DecodeItem(v)
}

// change is one item write: old and new images (nil when absent).
type change struct {
	t        *table
	def      *tableDef
	key      []byte
	old, new av.Item
	ttl      bool // deleted by the TTL sweeper: its stream record names the service
}

// stage adds the writes of one change, with its index entries, to a batch
// and returns the counter deltas it implies.
func (s *Store) stage(b *pebble.Batch, c *change, deltas *[]counterDelta) {
	d := c.def
	if c.new != nil {
		b.Set(c.key, av.AppendItemBinary(nil, c.new), nil)
	} else {
		b.Delete(c.key, nil)
	}
	oldSize, newSize := 0, 0
	if c.old != nil {
		oldSize = av.ItemSize(c.old)
	}
	if c.new != nil {
		newSize = av.ItemSize(c.new)
	}
	dl := counterDelta{t: c.t, id: 0, bytes: int64(newSize - oldSize)}
	switch {
	case c.old == nil && c.new != nil:
		dl.items = 1
	case c.old != nil && c.new == nil:
		dl.items = -1
	}
	*deltas = append(*deltas, dl)
	for _, ix := range d.Indexes {
		inOld, inNew := ix.inIndex(c.old), ix.inIndex(c.new)
		var oldKey, newKey []byte
		var oldProj, newProj av.Item
		if inOld {
			oldKey = d.entryKey(ix, c.old)
			oldProj = d.project(ix, c.old)
			// While an index is being backfilled, an item written before
			// the index existed has no entry yet: it must not be
			// uncounted (the writer holds the item lock, as the backfill
			// does, so the entry cannot appear meanwhile).
			if ix.Backfilling && !s.hasKey(oldKey) {
				inOld = false
			}
		}
		if inNew {
			newKey = d.entryKey(ix, c.new)
			newProj = d.project(ix, c.new)
		}
		if inOld && (!inNew || !bytes.Equal(oldKey, newKey)) {
			b.Delete(oldKey, nil)
		}
		if inNew {
			b.Set(newKey, av.AppendItemBinary(nil, newProj), nil)
		}
		dl := counterDelta{t: c.t, id: ix.ID}
		if inOld {
			dl.items--
			dl.bytes -= int64(av.ItemSize(oldProj))
		}
		if inNew {
			dl.items++
			dl.bytes += int64(av.ItemSize(newProj))
		}
		if dl.items != 0 || dl.bytes != 0 {
			*deltas = append(*deltas, dl)
		}
	}
}

type counterDelta struct {
	t     *table
	id    uint16
	items int64
	bytes int64
}

// write commits changes atomically and durably (in a persistent store,
// the call returns once the WAL holding them is synced; concurrent writers
// share fsyncs), with the extra keys (a transaction's request token).
func (s *Store) write(changes []*change, extra ...kv) error {
	b := s.db.NewBatch()
	defer b.Close()
	var deltas []counterDelta
	for _, c := range changes {
		s.stage(b, c, &deltas)
	}
	stageExtra := func() {
		for _, e := range extra {
			b.Set(e.key, e.value, nil)
		}
	}
	stageExtra()
	err := s.commitBatch(b, func() error {
		for _, c := range changes {
			if c.t.dropped.Load() {
				return errResourceNotFound()
			}
		}
		// The definitions were read before the commit lock: one changed
		// since (an index added or deleted, a stream switched) must be
		// honoured, or an index added meanwhile would miss this item (its
		// backfill may already have listed the table) and a deleted one
		// would keep an entry. Index and stream changes publish their
		// definition under the commit lock (setDef).
		stale := false
		for _, c := range changes {
			stale = stale || c.t.def.Load() != c.def
		}
		if stale {
			b.Reset()
			deltas = deltas[:0]
			for _, c := range changes {
				c.def = c.t.def.Load()
				s.stage(b, c, &deltas)
			}
			stageExtra()
		}
		// Stream records join the same batch under the commit lock, so
		// their sequence numbers follow commit order.
		s.appendStreamRecords(b, changes)
		return nil
	})
	if err != nil {
		return err
	}
	for _, dl := range deltas {
		if dl.id == 0 {
			dl.t.items.Add(dl.items)
			dl.t.bytes.Add(dl.bytes)
		} else {
			dl.t.idxItems[dl.id].Add(dl.items)
			dl.t.idxBytes[dl.id].Add(dl.bytes)
		}
	}
	return nil
}

// commitBatch applies b under the commit lock, after prepare (which runs
// under it and may refuse the commit), and then waits outside the lock
// until the commit is durable and visible to readers (visibility.publish):
// concurrent committers share fsyncs.
func (s *Store) commitBatch(b *pebble.Batch, prepare func() error) error {
	ticket, err := s.applyLocked(b, prepare)
	if err != nil {
		return err
	}
	return s.vis.publish(s, ticket)
}

// settle makes every commit applied so far, by any path, durable and
// visible to readers. Control-plane work that writes data outside
// commitBatch (a restore, an index backfill) calls it before answering.
func (s *Store) settle() error {
	s.commit.Lock()
	s.applied++
	ticket := s.applied
	s.commit.Unlock()
	return s.vis.publish(s, ticket)
}

// applyLocked runs prepare and applies b under the commit lock. The lock
// is released even if either panics (Pebble panics on a closed store), as
// the HTTP handler recovers panics and keeps serving.
//
// The batch is applied without a sync: Pebble makes an applied batch
// visible to its own readers before its WAL record is synced, so the
// store's readers never read the live database; the commit becomes
// durable and visible together when publish syncs the WAL and installs a
// snapshot taken before the sync. It returns the commit's ticket.
func (s *Store) applyLocked(b *pebble.Batch, prepare func() error) (uint64, error) {
	s.commit.Lock()
	defer s.commit.Unlock()
	if err := prepare(); err != nil {
		return 0, err
	}
	if err := s.db.Apply(b, pebble.NoSync); err != nil {
		return 0, fmt.Errorf("ddblocal: commit: %w", err)
	}
	s.applied++
	return s.applied, nil
}

// applyUnsynced applies b under the commit lock without waiting for an
// fsync. Only for writes that a later synced commit makes durable (the WAL
// is sequential) and that are redone after a crash: index backfill entries,
// which the synced catalog write ending the backfill covers, and which Open
// rebuilds when a backfill was interrupted.
func (s *Store) applyUnsynced(b *pebble.Batch, prepare func() error) error {
	s.commit.Lock()
	defer s.commit.Unlock()
	if err := prepare(); err != nil {
		return err
	}
	if err := s.db.Apply(b, pebble.NoSync); err != nil {
		return fmt.Errorf("ddblocal: commit: %w", err)
	}
	return nil
}

// setDef publishes a new table definition. It takes the commit lock so
// that every commit either precedes it (and is visible to whatever the
// caller does next, e.g. a backfill listing the table) or sees it.
func (s *Store) setDef(t *table, d *tableDef) {
	s.commit.Lock()
	t.def.Store(d)
	s.commit.Unlock()
}

// lockTable serialises writers of the same item. Transactions that meet
// an item locked by another transaction fail fast (TransactionConflict, as
// DynamoDB does); everything else waits. Keys are always acquired in
// sorted order, so waiting cannot deadlock.
type lockTable struct {
	mu   sync.Mutex
	held map[string]*lockEntry
}

type lockEntry struct {
	tx   bool
	done chan struct{}
}

// acquire locks one key. It returns false when tx is set and another
// transaction holds the key.
func (l *lockTable) acquire(key string, tx bool) bool {
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

func (l *lockTable) release(key string) {
	l.mu.Lock()
	e := l.held[key]
	delete(l.held, key)
	l.mu.Unlock()
	if e != nil {
		close(e.done)
	}
}

// privateFS is Pebble's file system with every file it creates made 0600
// and every folder 0700: Pebble asks for 0666 and 0755, which the usual
// umask leaves world-readable. The chmod follows the create, inside a
// folder that is already 0700, so no one else can open the file between.
type privateFS struct{ vfs.FS }

func private(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return f, err
	}
	if err := os.Chmod(name, 0o600); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (p privateFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := p.FS.Create(name, c)
	return private(name, f, err)
}

func (p privateFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := p.FS.OpenReadWrite(name, c, opts...)
	return private(name, f, err)
}

func (p privateFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := p.FS.ReuseForWrite(oldname, newname, c)
	return private(newname, f, err)
}

func (p privateFS) MkdirAll(dir string, _ os.FileMode) error { return p.FS.MkdirAll(dir, 0o700) }

func (p privateFS) Lock(name string) (io.Closer, error) {
	l, err := p.FS.Lock(name)
	if err != nil {
		return l, err
	}
	if err := os.Chmod(name, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}
