// Package dataplane is the data plane: GetItem, PutItem, UpdateItem,
// DeleteItem, Query, Scan, BatchGetItem and BatchWriteItem. It imports
// engine and wire only (ADR 0061); txn builds on its single-item
// helpers.
package dataplane

import (
	"lastro/ddblocal/internal/engine"
)

// Store is the engine seen by this package: its handlers are methods on
// it, the engine's state and helpers are promoted from the embedded
// engine.Store.
type Store struct{ *engine.Store }

// New returns the package's view of e.
func New(e *engine.Store) *Store { return &Store{e} }
