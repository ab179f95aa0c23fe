// Package storage is the embedded store's storage engine: the only package
// that imports Pebble (ADR 0001, 0030). It owns the key layout (keys.go),
// the commit pipeline with its group commit and the rule that readers see
// only durable commits (pipeline.go, ADR 0024), item locks (locks.go) and
// the bulk operations the control plane runs over key ranges: range copy,
// range delete and batched writes that can be cancelled (bulk.go). Its
// errors are typed (ErrNotFound, ErrClosed); the wire front end maps them
// to DynamoDB's.
package storage

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

var (
	// ErrNotFound reports a key that is absent.
	ErrNotFound = errors.New("storage: not found")
	// ErrClosed reports a call on a closed store.
	ErrClosed = errors.New("storage: store closed")
)

// memTableSize: a larger memtable flushes less often, so fewer small L0
// tables are compacted again.
const memTableSize = 32 << 20

// DefaultCacheSize is the block cache's capacity unless configured. The
// cache keeps read blocks uncompressed and grows only as blocks are read,
// so a small store never uses it all; a table of a hundred thousand
// contracts (about 1 GB on disk) needs this much for its hot part
// (docs/performance.md, "Agenda run").
const DefaultCacheSize = 1 << 30

// Options configure Open.
type Options struct {
	// Dir is the data directory; empty means in memory (nothing is
	// synced).
	Dir string
	// Logger receives the engine's errors.
	Logger *slog.Logger
	// Mark is read under the commit lock each time a view is taken; the
	// view reports it (View.Mark). The store passes the last stream
	// sequence number, so a reader knows which records its view holds.
	Mark func() uint64
	// CacheSize is the block cache's capacity in bytes; 0 means
	// DefaultCacheSize.
	CacheSize int64
	// MinFree is the free space, in bytes, that writes leave on the data
	// directory's file system: below it they fail with ErrDiskFull, and
	// Open refuses to start (ADR 0059). 0 means DefaultMinFree; negative
	// turns the guard off.
	MinFree int64
}

// DB is an open storage engine with its commit pipeline.
type DB struct {
	db      *pebble.DB
	durable bool
	space   space
	Pipeline
	Locks Locks
}

// Open opens (or creates) the engine.
func Open(o Options) (*DB, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	d := &DB{}
	d.space.log = log
	po := &pebble.Options{Logger: &quietLogger{l: log, space: &d.space}, MemTableSize: memTableSize}
	// The block cache is shared by every read: Pebble's 8 MB default
	// misses on most reads of a table of a few hundred MB, and each miss
	// reads and decompresses a block (docs/performance.md, "Agenda run").
	size := o.CacheSize
	if size <= 0 {
		size = DefaultCacheSize
	}
	cache := pebble.NewCache(size)
	defer cache.Unref() // the engine holds its own reference
	po.Cache = cache
	dir := o.Dir
	if dir == "" {
		po.FS = vfs.NewMem()
		dir = "mem"
	} else {
		d.durable = true
		// The store holds every tenant's data: its folder and files are
		// the owner's only, whatever the umask.
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("storage: create %s: %w", dir, err)
		}
		po.FS = privateFS{vfs.Default}
		d.space.dir = dir
		switch {
		case o.MinFree == 0:
			d.space.minFree = DefaultMinFree
		case o.MinFree > 0:
			d.space.minFree = uint64(o.MinFree)
		}
		// Opening writes (a new log, a MANIFEST, OPTIONS), and Pebble
		// treats a failed write as fatal: on a full disk it would neither
		// start nor fail. Refuse at once, in one line.
		if free, err := freeBytes(dir); err == nil && d.space.minFree > 0 && free < d.space.minFree {
			return nil, fmt.Errorf("%w: %s has %d bytes free and the store needs %d to start: free space and start again",
				ErrDiskFull, dir, free, d.space.minFree)
		}
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	d.db = db
	d.Pipeline.init(d, o.Mark)
	return d, nil
}

// Close drops the current view and closes the engine.
func (d *DB) Close() error {
	d.Pipeline.close()
	return d.db.Close()
}

// Durable reports whether commits are synced to disk.
func (d *DB) Durable() bool { return d.durable }

func (d *DB) writeOpts() *pebble.WriteOptions {
	if d.durable {
		return pebble.Sync
	}
	return pebble.NoSync
}

// Reader reads keys: the live engine, a snapshot or a view.
type Reader interface {
	// Get returns a copy of the value of key, or ErrNotFound.
	Get(key []byte) ([]byte, error)
	// NewIter returns an iterator over [lo, hi).
	NewIter(lo, hi []byte) (*Iter, error)
}

type pebbleReader interface {
	Get(key []byte) ([]byte, io.Closer, error)
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

func get(r pebbleReader, key []byte) ([]byte, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), v...)
	closer.Close()
	return out, nil
}

func newIter(r pebbleReader, lo, hi []byte) (*Iter, error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	return &Iter{it: it}, nil
}

// Get reads the live engine: only for writers holding the key's lock and
// for control-plane work; readers read a view.
func (d *DB) Get(key []byte) ([]byte, error) { return get(d.db, key) }

// Has reports whether key exists; a read error counts as present, which
// errs towards the entry the writer then overwrites.
func (d *DB) Has(key []byte) bool {
	_, err := d.Get(key)
	return !errors.Is(err, ErrNotFound)
}

// NewIter iterates the live engine over [lo, hi).
func (d *DB) NewIter(lo, hi []byte) (*Iter, error) { return newIter(d.db, lo, hi) }

// Set writes one key, synced on a persistent store.
func (d *DB) Set(key, value []byte) error {
	if err := d.space.check(len(key) + len(value)); err != nil {
		return err
	}
	return d.db.Set(key, value, d.writeOpts())
}

// DeleteRange deletes [lo, hi), synced on a persistent store.
func (d *DB) DeleteRange(lo, hi []byte) error {
	if err := d.space.check(len(lo) + len(hi)); err != nil {
		return err
	}
	return d.db.DeleteRange(lo, hi, d.writeOpts())
}

// NewSnapshot returns a point-in-time image of the live engine.
func (d *DB) NewSnapshot() *Snapshot { return &Snapshot{s: d.db.NewSnapshot()} }

// Snapshot is a point-in-time image; Close releases it.
type Snapshot struct{ s *pebble.Snapshot }

// Get implements Reader.
func (s *Snapshot) Get(key []byte) ([]byte, error) { return get(s.s, key) }

// NewIter implements Reader.
func (s *Snapshot) NewIter(lo, hi []byte) (*Iter, error) { return newIter(s.s, lo, hi) }

// Close releases the snapshot.
func (s *Snapshot) Close() error { return s.s.Close() }

// Batch is a set of writes applied atomically.
type Batch struct {
	b *pebble.Batch
	d *DB
}

// NewBatch returns an empty batch.
func (d *DB) NewBatch() *Batch { return &Batch{b: d.db.NewBatch(), d: d} }

// Set adds a write of key.
func (b *Batch) Set(key, value []byte) { b.b.Set(key, value, nil) }

// Delete adds a delete of key.
func (b *Batch) Delete(key []byte) { b.b.Delete(key, nil) }

// DeleteRange adds a delete of [lo, hi).
func (b *Batch) DeleteRange(lo, hi []byte) { b.b.DeleteRange(lo, hi, nil) }

// Len is the batch's encoded size in bytes.
func (b *Batch) Len() int { return b.b.Len() }

// Empty reports whether the batch holds no write.
func (b *Batch) Empty() bool { return b.b.Empty() }

// Reset empties the batch for reuse.
func (b *Batch) Reset() { b.b.Reset() }

// Close releases the batch.
func (b *Batch) Close() error { return b.b.Close() }

// Commit applies the batch on its own, synced on a persistent store. It
// is for control-plane and background writes that do not go through the
// pipeline's commit order; the caller settles before readers must see it.
func (b *Batch) Commit() error {
	if err := b.d.space.check(b.Len()); err != nil {
		return err
	}
	return b.b.Commit(b.d.writeOpts())
}

// CommitNoSync applies the batch without a sync: only for writes that a
// later synced write makes durable (the log is sequential) or that are
// redone after a crash.
func (b *Batch) CommitNoSync() error {
	if err := b.d.space.check(b.Len()); err != nil {
		return err
	}
	return b.b.Commit(pebble.NoSync)
}

// Iter walks a key range in order.
type Iter struct{ it *pebble.Iterator }

// First positions at the first key; it reports whether one exists.
func (i *Iter) First() bool { return i.it.First() }

// Last positions at the last key.
func (i *Iter) Last() bool { return i.it.Last() }

// Next advances.
func (i *Iter) Next() bool { return i.it.Next() }

// Prev steps back.
func (i *Iter) Prev() bool { return i.it.Prev() }

// SeekGE positions at the first key at or after key.
func (i *Iter) SeekGE(key []byte) bool { return i.it.SeekGE(key) }

// SeekLT positions at the last key before key.
func (i *Iter) SeekLT(key []byte) bool { return i.it.SeekLT(key) }

// Valid reports whether the iterator is at a key.
func (i *Iter) Valid() bool { return i.it.Valid() }

// Key is the current key, valid until the iterator moves.
func (i *Iter) Key() []byte { return i.it.Key() }

// Value is the current value, valid until the iterator moves.
func (i *Iter) Value() []byte { return i.it.Value() }

// Error is the iteration's error, if any.
func (i *Iter) Error() error { return i.it.Error() }

// Close releases the iterator and returns its error.
func (i *Iter) Close() error { return i.it.Close() }

// quietLogger is Pebble's logger: errors go to the store's log, at a
// bounded rate; a fatal error also stops the engine's writes (space.failed)
// before it panics as Pebble requires (Fatalf must not return).
type quietLogger struct {
	l     *slog.Logger
	limit logLimit
	space *space
}

func (q *quietLogger) Infof(format string, args ...any) {}
func (q *quietLogger) Errorf(format string, args ...any) {
	if ok, dropped := q.limit.allow(time.Now()); ok {
		q.l.Error("pebble", "msg", fmt.Sprintf(format, args...), "dropped", dropped)
	}
}
func (q *quietLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	q.space.failed.CompareAndSwap(nil, &msg)
	q.l.Error("pebble fatal", "msg", msg)
	panic(msg)
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
