// Package ddblocal is Lastro's embedded DynamoDB-compatible store: an
// HTTP server speaking the DynamoDB JSON 1.0 protocol (and the Streams
// protocol) over a Pebble database, which the engine reaches only through
// the AWS SDK, as it would reach DynamoDB.
//
// This package is the store's front: Open and Close, the HTTP handler
// that routes each operation to its API family, and the knobs tests and
// the binary turn (faults, the capacity meter, the TTL sweeper, export
// folders). The families live in internal packages that import one way
// (ADR 0061): wire (request shapes, errors, validation) ← engine (the
// catalog, item storage, streams, tokens, capacity) ← control (tables,
// indexes, tags) and dataplane (item operations, Query, Scan, batches);
// dataplane ← txn (transactions) ← statement (PartiQL); control ← backup
// (backups, PITR, restores, exports); engine ← streams (the Streams API).
package ddblocal

import (
	"lastro/ddblocal/internal/backup"
	"lastro/ddblocal/internal/control"
	"lastro/ddblocal/internal/dataplane"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/statement"
	"lastro/ddblocal/internal/streams"
	"lastro/ddblocal/internal/txn"
	"lastro/ddblocal/internal/wire"
)

// Options configure a Store.
type Options = engine.Options

// ErrDiskFull is reported (wrapped) by Open when the data directory's file
// system has less free space than Options.MinFreeBytes, and by writes
// refused for the same reason (answered InternalServerError on the wire).
var ErrDiskFull = engine.ErrDiskFull

// DefaultCacheSize is the block cache's capacity unless Options.CacheSize
// says otherwise.
const DefaultCacheSize = engine.DefaultCacheSize

// DefaultResponseBudget bounds the item bytes of the answers in flight
// unless Options.ResponseBudgetBytes says otherwise.
const DefaultResponseBudget = engine.DefaultResponseBudget

// ValidationLayer is a DynamoDB validation layer whose wording the store's
// errors follow (ADR 0060).
type ValidationLayer = wire.ValidationLayer

// The validation layers; see wire.ValidationLayer.
const (
	ValidationCurrent = wire.ValidationCurrent
	ValidationOlder   = wire.ValidationOlder
)

// ParseValidationLayer reads "current" or "older".
func ParseValidationLayer(s string) (ValidationLayer, error) { return wire.ParseValidationLayer(s) }

// FaultKind names an injectable failure.
type FaultKind = engine.FaultKind

// The injectable failures; see engine.FaultKind.
const (
	FaultThroughputExceeded  = engine.FaultThroughputExceeded
	FaultThrottling          = engine.FaultThrottling
	FaultInternalError       = engine.FaultInternalError
	FaultTransactionConflict = engine.FaultTransactionConflict
	FaultUnprocessed         = engine.FaultUnprocessed
)

// FaultRule injects one kind of failure into matching requests.
type FaultRule = engine.FaultRule

// Consumed is the capacity a table consumed, as ConsumedCapacity reports.
type Consumed = engine.Consumed

// Store is an embedded DynamoDB-compatible database. It is safe for
// concurrent use; serve it with Handler.
type Store struct {
	eng *engine.Store
	// The API families' views of eng; they hold no state of their own.
	ctl  *control.Store
	data *dataplane.Store
	tx   *txn.Store
	pq   *statement.Store
	str  *streams.Store
	bk   *backup.Store
}

// newStore builds the API families over e.
func newStore(e *engine.Store) *Store {
	s := &Store{eng: e, ctl: control.New(e), data: dataplane.New(e), str: streams.New(e)}
	s.tx = txn.New(s.data)
	s.pq = statement.New(s.tx)
	s.bk = backup.New(s.ctl)
	return s
}

// Open opens (or creates) a store.
func Open(opts Options) (*Store, error) {
	// The families' recovery runs inside the engine's Open, before the
	// background services start; each builds its view of the engine
	// there, as the engine cannot import them.
	e, err := engine.Open(opts, engine.Hooks{
		Recover: []func(*engine.Store) error{
			func(e *engine.Store) error { return newStore(e).bk.RecoverBackups() },
			func(e *engine.Store) error { return newStore(e).bk.RecoverExports() },
			func(e *engine.Store) error { return newStore(e).ctl.ResumeBackfills() },
		},
		Closing: func(e *engine.Store) { newStore(e).bk.CloseExports() },
		Closed:  func(e *engine.Store) { newStore(e).bk.RemoveTempExports() },
	})
	if err != nil {
		return nil, err
	}
	return newStore(e), nil
}

// Close stops the background services, flushes and closes the store.
// Later calls return the first call's result (Pebble panics on a second
// close).
func (s *Store) Close() error { return s.eng.Close() }

// SetFault adds a fault injection rule.
func (s *Store) SetFault(rule FaultRule) error { return s.eng.SetFault(rule) }

// ClearFaults removes every fault injection rule.
func (s *Store) ClearFaults() { s.eng.ClearFaults() }

// Faults lists the active rules (with Count reduced by what they already
// injected).
func (s *Store) Faults() []FaultRule { return s.eng.Faults() }

// SetFaultSeed makes fault injection deterministic: the same seed and the
// same sequence of requests inject the same faults.
func (s *Store) SetFaultSeed(seed uint64) { s.eng.SetFaultSeed(seed) }

// ConsumedCapacity returns what the named table has consumed since the
// store opened (zero for a table never used).
func (s *Store) ConsumedCapacity(table string) Consumed { return s.eng.ConsumedCapacity(table) }

// ResetConsumedCapacity zeroes the meter of every table.
func (s *Store) ResetConsumedCapacity() { s.eng.ResetConsumedCapacity() }

// ExportDir returns the folder of an export's objects (the one holding
// manifest-summary.json), or "" when the ARN names no export.
func (s *Store) ExportDir(exportARN string) (string, error) { return s.bk.ExportDir(exportARN) }

// SweepExpired runs one pass of the TTL sweeper now (it also trims stream
// records older than 24 hours) and returns how many items it deleted.
// The background sweeper calls it every Options.TTLSweepInterval.
func (s *Store) SweepExpired() (int, error) { return s.eng.SweepExpired() }
