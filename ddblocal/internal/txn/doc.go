// Package txn is the transactions: TransactWriteItems and
// TransactGetItems, with their idempotency tokens and the transaction
// runner that PartiQL's ExecuteTransaction reuses. It imports dataplane,
// engine and wire (ADR 0061).
package txn

import (
	"lastro/ddblocal/internal/dataplane"
)

// Store is the data plane seen by the transactions: its handlers are
// methods on it; the single-item helpers (lookups, projections, condition
// checks) and the engine are promoted from the embedded dataplane.Store.
type Store struct{ *dataplane.Store }

// New returns the transactions' view of d.
func New(d *dataplane.Store) *Store { return &Store{d} }
