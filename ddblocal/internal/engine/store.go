package engine

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
	"lastro/ddblocal/internal/wire"
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
	ValidationLayer wire.ValidationLayer
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
	// DB is the storage engine: its commit pipeline orders commits
	// (stream sequence numbers follow it) and publishes them to readers
	// once durable; its Locks are the item locks.
	DB     *storage.DB
	Opts   Options
	Log    *slog.Logger
	Now    func() time.Time
	faults faults
	Tokens tokenCache
	Meter  meter

	Streams streamState // guarded by the commit lock where noted
	Bg      background  // TTL sweeper and stream trimmer
	Exports exportState // table exports running in the background

	hooks     Hooks
	closeOnce sync.Once
	closeErr  error

	Mu     sync.RWMutex // guards tables, deleting and nextID
	Tables map[string]*Table
	// Deleting holds the names whose DeleteTable has not yet committed
	// its catalog delete: CreateTable refuses them as DynamoDB refuses a
	// DELETING table's name, or the delete would erase the new entry.
	Deleting map[string]bool
	NextID   uint32
	// RespBudget bounds the item bytes of answers in flight.
	RespBudget respBudget
}

// Hooks are the steps of the packages above the engine that Open and
// Close run in the engine's order: the engine cannot import them
// (ADR 0061), yet their recovery must run before the background services
// start and their exports must stop before the database closes.
type Hooks struct {
	// Recover runs at Open after the catalog and the tokens load, in
	// order; the first error fails Open.
	Recover []func(*Store) error
	// Closing runs first in Close; Closed after the database closed.
	Closing, Closed func(*Store)
}

// Open opens (or creates) a store, running h's steps around its own.
func Open(opts Options, h Hooks) (*Store, error) {
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.AccountID == "" {
		opts.AccountID = defaultAccountID
	}
	if opts.ResponseBudgetBytes == 0 {
		opts.ResponseBudgetBytes = DefaultResponseBudget
	}
	s := &Store{hooks: h, Opts: opts, Log: opts.Logger, Now: opts.Now, Tables: map[string]*Table{}, Deleting: map[string]bool{}, NextID: 1}
	s.RespBudget.Limit = max(opts.ResponseBudgetBytes, MaxResponseBytes)
	if s.Log == nil {
		s.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	db, err := storage.Open(storage.Options{Dir: opts.Dir, Logger: s.Log, Mark: s.Streams.last.Load, CacheSize: opts.CacheSize, MinFree: opts.MinFreeBytes})
	if err != nil {
		return nil, fmt.Errorf("ddblocal: %w", err)
	}
	s.DB = db
	steps := []func() error{s.loadFormat, s.load, s.loadTokens}
	for _, r := range h.Recover {
		steps = append(steps, func() error { return r(s) })
	}
	for _, step := range append(steps, s.startServices) {
		if err := step(); err != nil {
			s.stopServices()
			db.Close()
			return nil, err
		}
	}
	// A view holding the stream state just loaded.
	if err := s.DB.Settle(); err != nil {
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
		if s.hooks.Closing != nil {
			s.hooks.Closing(s)
		}
		s.stopServices()
		s.closeErr = s.DB.Close()
		if s.hooks.Closed != nil {
			s.hooks.Closed(s)
		}
	})
	return s.closeErr
}

// load reads the catalog and counts items.
func (s *Store) load() error {
	iter, err := s.DB.NewIter(storage.TableDefSpan())
	if err != nil {
		return err
	}
	defer iter.Close()
	for iter.First(); iter.Valid(); iter.Next() {
		var d TableDef
		if err := json.Unmarshal(iter.Value(), &d); err != nil {
			return fmt.Errorf("ddblocal: catalog entry %q: %w", iter.Key(), err)
		}
		t := &Table{}
		t.Def.Store(&d)
		if err := s.count(t); err != nil {
			return err
		}
		s.Tables[d.Name] = t
	}
	v, err := s.DB.Get(storage.NextIDKey)
	if err == nil {
		s.NextID = binary.BigEndian.Uint32(v)
	} else if !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return nil
}

// count recomputes a table's item and byte counters from storage.
func (s *Store) count(t *Table) error {
	d := t.Def.Load()
	iter, err := s.DB.NewIter(storage.TableSpan(d.ID))
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
			t.Items.Add(1)
			t.Bytes.Add(size)
		} else {
			t.IdxItems[id].Add(1)
			t.IdxBytes[id].Add(size)
		}
	}
	return nil
}

// Table finds a live table by name or table ARN.
func (s *Store) Table(name string) *Table {
	name = wire.TableNameOf(name)
	s.Mu.RLock()
	defer s.Mu.RUnlock()
	return s.Tables[name]
}

// Get reads one item by storage key from the live database; nil when
// absent. Only for writers holding the item's lock (the live image then
// holds nothing unsynced: the item's previous writer kept the lock until
// its commit was durable) and for control-plane work; readers go through
// a view.
func (s *Store) Get(key []byte) (av.Item, error) { return GetFrom(s.DB, key) }

// Read reads one item by storage key from the durable view; nil when
// absent.
func (s *Store) Read(key []byte) (av.Item, error) {
	v := s.DB.Acquire()
	defer v.Release()
	return GetFrom(v, key)
}

func GetFrom(r storage.Reader, key []byte) (av.Item, error) {
	v, err := r.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return av.DecodeItem(v)
}

// Change is one item write: old and new images (nil when absent).
type Change struct {
	T        *Table
	Def      *TableDef
	Key      []byte
	Old, New av.Item
	ttl      bool // deleted by the TTL sweeper: its stream record names the service
}

// Stage adds the writes of one change, with its index entries, to a batch
// and returns the counter deltas it implies.
func (s *Store) Stage(b *storage.Batch, c *Change, deltas *[]CounterDelta) {
	d := c.Def
	if c.New != nil {
		b.Set(c.Key, av.AppendItemBinary(nil, c.New))
	} else {
		b.Delete(c.Key)
	}
	oldSize, newSize := 0, 0
	if c.Old != nil {
		oldSize = av.ItemSize(c.Old)
	}
	if c.New != nil {
		newSize = av.ItemSize(c.New)
	}
	dl := CounterDelta{t: c.T, ID: 0, Bytes: int64(newSize - oldSize)}
	switch {
	case c.Old == nil && c.New != nil:
		dl.Items = 1
	case c.Old != nil && c.New == nil:
		dl.Items = -1
	}
	*deltas = append(*deltas, dl)
	for _, ix := range d.Indexes {
		inOld, inNew := ix.InIndex(c.Old), ix.InIndex(c.New)
		var oldKey, newKey []byte
		var oldProj, newProj av.Item
		if inOld {
			oldKey = d.EntryKey(ix, c.Old)
			oldProj = d.Project(ix, c.Old)
			// While an index is being backfilled, an item written before
			// the index existed has no entry yet: it must not be
			// uncounted (the writer holds the item lock, as the backfill
			// does, so the entry cannot appear meanwhile).
			if ix.Backfilling && !s.DB.Has(oldKey) {
				inOld = false
			}
		}
		if inNew {
			newKey = d.EntryKey(ix, c.New)
			newProj = d.Project(ix, c.New)
		}
		if inOld && (!inNew || !bytes.Equal(oldKey, newKey)) {
			b.Delete(oldKey)
		}
		if inNew {
			b.Set(newKey, av.AppendItemBinary(nil, newProj))
		}
		dl := CounterDelta{t: c.T, ID: ix.ID}
		if inOld {
			dl.Items--
			dl.Bytes -= int64(av.ItemSize(oldProj))
		}
		if inNew {
			dl.Items++
			dl.Bytes += int64(av.ItemSize(newProj))
		}
		if dl.Items != 0 || dl.Bytes != 0 {
			*deltas = append(*deltas, dl)
		}
	}
}

type CounterDelta struct {
	t     *Table
	ID    uint16
	Items int64
	Bytes int64
}

// Write commits changes atomically and durably (in a persistent store,
// the call returns once the WAL holding them is synced; concurrent writers
// share fsyncs), with the extra keys (a transaction's request token).
func (s *Store) Write(changes []*Change, extra ...Kv) error {
	b := s.DB.NewBatch()
	defer b.Close()
	var deltas []CounterDelta
	for _, c := range changes {
		s.Stage(b, c, &deltas)
	}
	stageExtra := func() {
		for _, e := range extra {
			b.Set(e.key, e.value)
		}
	}
	stageExtra()
	err := s.DB.Commit(b, func() error {
		for _, c := range changes {
			if c.T.Dropped.Load() {
				return wire.ErrResourceNotFound()
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
			stale = stale || c.T.Def.Load() != c.Def
		}
		if stale {
			b.Reset()
			deltas = deltas[:0]
			for _, c := range changes {
				c.Def = c.T.Def.Load()
				s.Stage(b, c, &deltas)
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
		if dl.ID == 0 {
			dl.t.Items.Add(dl.Items)
			dl.t.Bytes.Add(dl.Bytes)
		} else {
			dl.t.IdxItems[dl.ID].Add(dl.Items)
			dl.t.IdxBytes[dl.ID].Add(dl.Bytes)
		}
	}
	return nil
}

// SetDef publishes a new table definition. It takes the commit lock so
// that every commit either precedes it (and is visible to whatever the
// caller does next, e.g. a backfill listing the table) or sees it.
func (s *Store) SetDef(t *Table, d *TableDef) {
	s.DB.Lock()
	t.Def.Store(d)
	s.DB.Unlock()
}
