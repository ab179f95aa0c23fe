package ddblocal

import (
	"context"
	"encoding/json"
	"time"
)

// Continuous backups and point-in-time recovery. PITR is validated,
// persisted per table and reported the way DynamoDB reports it, which is
// what applications and infrastructure tools check. Its only effect is on
// history: a table with PITR keeps its stream records for the recovery
// window, from which exports rebuild the past (ADR 0042); there is no
// restore from it. Continuous backups themselves read ENABLED on every
// table, as they do in DynamoDB once a new table has settled.
//
// On-demand backups are real copies (ondemand.go, restore.go);
// RestoreTableToPointInTime stays an unknown operation
// (UnknownOperationException), so a caller learns at once that it cannot
// rely on it.

const (
	defaultRecoveryDays = 35
	maxRecoveryDays     = 35
	// latestRestorableLag is how far LatestRestorableDateTime trails the
	// current time ("typically 5 minutes" in DynamoDB).
	latestRestorableLag = 5 * time.Minute
)

// pitrState is a table's point-in-time recovery setting.
type pitrState struct {
	Enabled bool      `json:"enabled"`
	Since   time.Time `json:"since"` // when it was last enabled
	Days    int64     `json:"days"`  // RecoveryPeriodInDays
}

// earliest is EarliestRestorableDateTime at now: when PITR was enabled,
// or the start of the recovery period if that is later. Exports of the
// past are served from it on (ADR 0042).
func (p *pitrState) earliest(now time.Time) time.Time {
	if oldest := now.AddDate(0, 0, -int(p.Days)); oldest.After(p.Since) {
		return oldest
	}
	return p.Since
}

type pointInTimeRecoverySpecification struct {
	PointInTimeRecoveryEnabled *bool  `json:"PointInTimeRecoveryEnabled"`
	RecoveryPeriodInDays       *int64 `json:"RecoveryPeriodInDays"`
}

type updateContinuousBackupsInput struct {
	TableName                        *string                           `json:"TableName"`
	PointInTimeRecoverySpecification *pointInTimeRecoverySpecification `json:"PointInTimeRecoverySpecification"`
}

func tableNotFoundForBackups(name string) *apiError {
	return &apiError{Type: "TableNotFoundException", Message: "Table not found: " + tableNameOf(name), Status: 400}
}

func (s *Store) describeContinuousBackups(ctx context.Context, body []byte) (any, error) {
	var in tableNameInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.tableName("tableName", in.TableName)
	if err := c.err(); err != nil {
		return nil, err
	}
	t := s.table(*in.TableName)
	if t == nil {
		return nil, tableNotFoundForBackups(*in.TableName)
	}
	return s.continuousBackups(t.def.Load()), nil
}

func (s *Store) updateContinuousBackups(ctx context.Context, body []byte) (any, error) {
	var in updateContinuousBackupsInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.tableName("tableName", in.TableName)
	spec := in.PointInTimeRecoverySpecification
	c.notNull("pointInTimeRecoverySpecification", spec == nil)
	if spec != nil {
		c.notNull("pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled", spec.PointInTimeRecoveryEnabled == nil)
		c.min("pointInTimeRecoverySpecification.recoveryPeriodInDays", spec.RecoveryPeriodInDays, 1)
		c.max("pointInTimeRecoverySpecification.recoveryPeriodInDays", spec.RecoveryPeriodInDays, maxRecoveryDays)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	enable := *spec.PointInTimeRecoveryEnabled
	if !enable && spec.RecoveryPeriodInDays != nil {
		return nil, validation("Invalid Request: Cannot specify RecoveryPeriodInDays when disabling point-in-time recovery.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tables[tableNameOf(*in.TableName)]
	if t == nil {
		return nil, tableNotFoundForBackups(*in.TableName)
	}
	old := t.def.Load()
	d := *old
	p := pitrState{}
	if old.PITR != nil {
		p = *old.PITR
	}
	switch {
	case enable && !p.Enabled:
		// A period is forgotten on disable: re-enabling starts from 35 days.
		p = pitrState{Enabled: true, Since: s.now(), Days: defaultRecoveryDays}
	case !enable:
		p = pitrState{}
	}
	if enable && spec.RecoveryPeriodInDays != nil {
		p.Days = *spec.RecoveryPeriodInDays
	}
	d.PITR = &p
	if err := s.persistDef(&d); err != nil {
		return nil, err
	}
	t.def.Store(&d)
	return s.continuousBackups(&d), nil
}

// continuousBackups is the response of both operations: a
// ContinuousBackupsDescription.
func (s *Store) continuousBackups(d *tableDef) map[string]any {
	pitr := map[string]any{"PointInTimeRecoveryStatus": "DISABLED"}
	if p := d.PITR; p != nil && p.Enabled {
		now := s.now()
		earliest := p.earliest(now)
		latest := now.Add(-latestRestorableLag)
		if latest.Before(earliest) {
			latest = earliest
		}
		pitr = map[string]any{
			"PointInTimeRecoveryStatus":  "ENABLED",
			"EarliestRestorableDateTime": epoch(earliest),
			"LatestRestorableDateTime":   epoch(latest),
			"RecoveryPeriodInDays":       p.Days,
		}
	}
	return map[string]any{"ContinuousBackupsDescription": map[string]any{
		"ContinuousBackupsStatus":        "ENABLED",
		"PointInTimeRecoveryDescription": pitr,
	}}
}

type listBackupsInput struct {
	TableName               *string          `json:"TableName"`
	Limit                   *int64           `json:"Limit"`
	TimeRangeLowerBound     *json.RawMessage `json:"TimeRangeLowerBound"`
	TimeRangeUpperBound     *json.RawMessage `json:"TimeRangeUpperBound"`
	ExclusiveStartBackupArn *string          `json:"ExclusiveStartBackupArn"`
	BackupType              string           `json:"BackupType"`
}

// backupTimeRange reads the optional epoch-seconds bounds of ListBackups.
func backupTimeRange(lo, hi *json.RawMessage) (*float64, *float64, error) {
	read := func(m *json.RawMessage, member string) (*float64, error) {
		if m == nil {
			return nil, nil
		}
		var v float64
		if err := json.Unmarshal(*m, &v); err != nil {
			return nil, serialization("Unexpected value type in payload for member " + member)
		}
		return &v, nil
	}
	l, err := read(lo, "TimeRangeLowerBound")
	if err != nil {
		return nil, nil, err
	}
	h, err := read(hi, "TimeRangeUpperBound")
	return l, h, err
}
