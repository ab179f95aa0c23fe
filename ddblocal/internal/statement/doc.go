// Package statement executes PartiQL: ExecuteStatement,
// BatchExecuteStatement and ExecuteTransaction, translating the parsed
// statements of the partiql package into the data plane's reads and
// writes and the transaction runner. It imports txn and everything below
// it (ADR 0061).
package statement

import (
	"lastro/ddblocal/internal/txn"
)

// Store is the transactions seen by PartiQL: its handlers are methods on
// it; the transaction runner, the data plane's read plans and the engine
// are promoted from the embedded txn.Store.
type Store struct{ *txn.Store }

// New returns PartiQL's view of t.
func New(t *txn.Store) *Store { return &Store{t} }
