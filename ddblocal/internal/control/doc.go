// Package control is the control plane: CreateTable, DeleteTable,
// DescribeTable, ListTables, UpdateTable (index creation and backfill,
// throughput, streams), tags and DescribeLimits. It imports engine and
// wire only (ADR 0061); backup builds on it to restore tables.
package control

import (
	"lastro/ddblocal/internal/engine"
)

// Store is the engine seen by this package: its handlers are methods on
// it, the engine's state and helpers are promoted from the embedded
// engine.Store.
type Store struct{ *engine.Store }

// New returns the package's view of e.
func New(e *engine.Store) *Store { return &Store{e} }
