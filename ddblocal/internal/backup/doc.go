// Package backup is backups and exports: point-in-time recovery
// settings, on-demand backups, RestoreTableFromBackup and
// ExportTableToPointInTime with its background export jobs. It imports
// control (a restore creates a table) and everything below it
// (ADR 0061).
package backup

import (
	"lastro/ddblocal/internal/control"
)

// Store is the control plane seen by backups, restores and exports: its
// handlers are methods on it; table creation and the engine are promoted
// from the embedded control.Store.
type Store struct{ *control.Store }

// New returns the backups' view of c.
func New(c *control.Store) *Store { return &Store{c} }
