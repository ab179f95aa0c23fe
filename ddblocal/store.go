package ddblocal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/storage"
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
	// 24 hours. Zero means 30 seconds: each pass walks the table, and
	// DynamoDB itself deletes expired items within days, so the sweep is
	// housekeeping. Negative disables the sweeper (tests then call
	// SweepExpired).
	TTLSweepInterval time.Duration
	// ExportDir is the folder standing for S3 in table exports: bucket
	// B, prefix P go to ExportDir/B/P. Empty means "exports" in Dir, or,
	// for an in-memory store, a temporary folder removed by Close.
	ExportDir string
	// CacheSize is the storage engine's block cache in bytes; 0 means
	// DefaultCacheSize. It holds read blocks and grows only as they are
	// read.
	CacheSize int64
	// MinFreeBytes is the free space writes leave on the data directory's
	// file system: below it a write is answered InternalServerError, with
	// nothing applied, until space is freed, and Open refuses to start
	// (ADR 0059). 0 means 64 MB; negative turns the guard off.
	MinFreeBytes int64
	// ResponseBudgetBytes bounds the item bytes that BatchGetItem
	// answers and Query and Scan pages hold at once, store-wide, until
	// they are written: past it a batch returns the rest of its keys as
	// UnprocessedKeys, or is throttled
	// (ProvisionedThroughputExceededException) when it could read
	// nothing, and a page is throttled. 0 means DefaultResponseBudget; at
	// least 16 MB (one full response) is used.
	ResponseBudgetBytes int64
	// ValidationLayer is the DynamoDB validation layer whose wording
	// PutItem, UpdateItem and DeleteItem errors follow (ADR 0060); the
	// zero value is the current one.
	ValidationLayer ValidationLayer
}

// ErrDiskFull is reported (wrapped) by Open when the data directory's file
// system has less free space than Options.MinFreeBytes, and by writes
// refused for the same reason (answered InternalServerError on the wire).
var ErrDiskFull = storage.ErrDiskFull

// DefaultCacheSize is the block cache's capacity unless Options.CacheSize
// says otherwise.
const DefaultCacheSize = storage.DefaultCacheSize

// Store is an embedded DynamoDB-compatible database. It is safe for
// concurrent use; serve it with Handler.
type Store struct {
	// db is the storage engine: its commit pipeline orders commits
	// (stream sequence numbers follow it) and publishes them to readers
	// once durable; its Locks are the item locks.
	db     *storage.DB
	opts   Options
	log    *slog.Logger
	now    func() time.Time
	faults faults
	tokens tokenCache
	meter  meter

	streams streamState // guarded by the commit lock where noted
	bg      background  // TTL sweeper and stream trimmer
	exports exportState // table exports running in the background

	closeOnce sync.Once
	closeErr  error

	mu     sync.RWMutex // guards tables, deleting and nextID
	tables map[string]*table
	// deleting holds the names whose DeleteTable has not yet committed
	// its catalog delete: CreateTable refuses them as DynamoDB refuses a
	// DELETING table's name, or the delete would erase the new entry.
	deleting map[string]bool
	nextID   uint32
	// respBudget bounds the item bytes of answers in flight.
	respBudget respBudget
}

// Open opens (or creates) a store.
func Open(opts Options) (*Store, error) {
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.AccountID == "" {
		opts.AccountID = defaultAccountID
	}
	if opts.ResponseBudgetBytes == 0 {
		opts.ResponseBudgetBytes = DefaultResponseBudget
	}
	s := &Store{opts: opts, log: opts.Logger, now: opts.Now, tables: map[string]*table{}, deleting: map[string]bool{}, nextID: 1}
	s.respBudget.limit = max(opts.ResponseBudgetBytes, maxResponseBytes)
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.now == nil {
		s.now = time.Now
	}
	db, err := storage.Open(storage.Options{Dir: opts.Dir, Logger: s.log, Mark: s.streams.last.Load, CacheSize: opts.CacheSize, MinFree: opts.MinFreeBytes})
	if err != nil {
		return nil, fmt.Errorf("ddblocal: %w", err)
	}
	s.db = db
	for _, step := range []func() error{s.loadFormat, s.load, s.loadTokens, s.recoverBackups, s.recoverExports, s.resumeBackfills, s.startServices} {
		if err := step(); err != nil {
			s.stopServices()
			db.Close()
			return nil, err
		}
	}
	// A view holding the stream state just loaded.
	if err := s.db.Settle(); err != nil {
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
		s.closeExports()
		s.stopServices()
		s.closeErr = s.db.Close()
		s.removeTempExports()
	})
	return s.closeErr
}

// load reads the catalog and counts items.
func (s *Store) load() error {
	iter, err := s.db.NewIter(storage.TableDefSpan())
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
	v, err := s.db.Get(storage.NextIDKey)
	if err == nil {
		s.nextID = binary.BigEndian.Uint32(v)
	} else if !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return nil
}

// count recomputes a table's item and byte counters from storage.
func (s *Store) count(t *table) error {
	d := t.def.Load()
	iter, err := s.db.NewIter(storage.TableSpan(d.ID))
	if err != nil {
		return err
	}
	defer iter.Close()
	for iter.First(); iter.Valid(); iter.Next() {
		k := iter.Key()
		_, id := storage.DataKeyTable(k)
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

// get reads one item by storage key from the live database; nil when
// absent. Only for writers holding the item's lock (the live image then
// holds nothing unsynced: the item's previous writer kept the lock until
// its commit was durable) and for control-plane work; readers go through
// a view.
func (s *Store) get(key []byte) (av.Item, error) { return getFrom(s.db, key) }

// read reads one item by storage key from the durable view; nil when
// absent.
func (s *Store) read(key []byte) (av.Item, error) {
	v := s.db.Acquire()
	defer v.Release()
	return getFrom(v, key)
}

func getFrom(r storage.Reader, key []byte) (av.Item, error) {
	v, err := r.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
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
func (s *Store) stage(b *storage.Batch, c *change, deltas *[]counterDelta) {
	d := c.def
	if c.new != nil {
		b.Set(c.key, av.AppendItemBinary(nil, c.new))
	} else {
		b.Delete(c.key)
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
			if ix.Backfilling && !s.db.Has(oldKey) {
				inOld = false
			}
		}
		if inNew {
			newKey = d.entryKey(ix, c.new)
			newProj = d.project(ix, c.new)
		}
		if inOld && (!inNew || !bytes.Equal(oldKey, newKey)) {
			b.Delete(oldKey)
		}
		if inNew {
			b.Set(newKey, av.AppendItemBinary(nil, newProj))
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
			b.Set(e.key, e.value)
		}
	}
	stageExtra()
	err := s.db.Commit(b, func() error {
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

// setDef publishes a new table definition. It takes the commit lock so
// that every commit either precedes it (and is visible to whatever the
// caller does next, e.g. a backfill listing the table) or sees it.
func (s *Store) setDef(t *table, d *tableDef) {
	s.db.Lock()
	t.def.Store(d)
	s.db.Unlock()
}
