package engine

import (
	"time"
)

// Continuous backups and point-in-time recovery. PITR is validated,
// persisted per table and reported the way DynamoDB reports it, which is
// what applications and infrastructure tools check. Its only effect is on
// history: a table with PITR keeps its stream records for the recovery
// window, from which exports and RestoreTableToPointInTime rebuild the
// past (ADR 0042; the backup package). Continuous backups themselves read
// ENABLED on every table, as they do in DynamoDB once a new table has
// settled. On-demand backups are real copies (the backup package).

const (
	DefaultRecoveryDays = 35
	MaxRecoveryDays     = 35
	// LatestRestorableLag is how far LatestRestorableDateTime trails the
	// current time ("typically 5 minutes" in DynamoDB).
	LatestRestorableLag = 5 * time.Minute
)

// PITRState is a table's point-in-time recovery setting.
type PITRState struct {
	Enabled bool      `json:"enabled"`
	Since   time.Time `json:"since"` // when it was last enabled
	Days    int64     `json:"days"`  // RecoveryPeriodInDays
}

// Earliest is EarliestRestorableDateTime at now: when PITR was enabled,
// or the start of the recovery period if that is later. Exports of the
// past are served from it on (ADR 0042).
func (p *PITRState) Earliest(now time.Time) time.Time {
	if oldest := now.AddDate(0, 0, -int(p.Days)); oldest.After(p.Since) {
		return oldest
	}
	return p.Since
}
