package backup

import (
	"context"
	"encoding/json"

	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/wire"
)

type pointInTimeRecoverySpecification struct {
	PointInTimeRecoveryEnabled *bool  `json:"PointInTimeRecoveryEnabled"`
	RecoveryPeriodInDays       *int64 `json:"RecoveryPeriodInDays"`
}

type updateContinuousBackupsInput struct {
	TableName                        *string                           `json:"TableName"`
	PointInTimeRecoverySpecification *pointInTimeRecoverySpecification `json:"PointInTimeRecoverySpecification"`
}

func tableNotFoundForBackups(name string) *wire.APIError {
	return &wire.APIError{Type: "TableNotFoundException", Message: "Table not found: " + wire.TableNameOf(name), Status: 400}
}

// DescribeContinuousBackups answers the DescribeContinuousBackups operation.
func (s *Store) DescribeContinuousBackups(ctx context.Context, body []byte) (any, error) {
	var in wire.TableNameInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.TableName("tableName", in.TableName)
	if err := c.Err(); err != nil {
		return nil, err
	}
	t := s.Table(*in.TableName)
	if t == nil {
		return nil, tableNotFoundForBackups(*in.TableName)
	}
	return s.continuousBackups(t.Def.Load()), nil
}

// UpdateContinuousBackups answers the UpdateContinuousBackups operation.
func (s *Store) UpdateContinuousBackups(ctx context.Context, body []byte) (any, error) {
	var in updateContinuousBackupsInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.TableName("tableName", in.TableName)
	spec := in.PointInTimeRecoverySpecification
	c.NotNull("pointInTimeRecoverySpecification", spec == nil)
	if spec != nil {
		c.NotNull("pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled", spec.PointInTimeRecoveryEnabled == nil)
		c.Min("pointInTimeRecoverySpecification.recoveryPeriodInDays", spec.RecoveryPeriodInDays, 1)
		c.Max("pointInTimeRecoverySpecification.recoveryPeriodInDays", spec.RecoveryPeriodInDays, engine.MaxRecoveryDays)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	enable := *spec.PointInTimeRecoveryEnabled
	if !enable && spec.RecoveryPeriodInDays != nil {
		return nil, wire.Validation("Invalid Request: Cannot specify RecoveryPeriodInDays when disabling point-in-time recovery.")
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	t := s.Tables[wire.TableNameOf(*in.TableName)]
	if t == nil {
		return nil, tableNotFoundForBackups(*in.TableName)
	}
	old := t.Def.Load()
	d := *old
	p := engine.PITRState{}
	if old.PITR != nil {
		p = *old.PITR
	}
	switch {
	case enable && !p.Enabled:
		// A period is forgotten on disable: re-enabling starts from 35 days.
		p = engine.PITRState{Enabled: true, Since: s.Now(), Days: engine.DefaultRecoveryDays}
	case !enable:
		p = engine.PITRState{}
	}
	if enable && spec.RecoveryPeriodInDays != nil {
		p.Days = *spec.RecoveryPeriodInDays
	}
	d.PITR = &p
	if err := s.PersistDef(&d); err != nil {
		return nil, err
	}
	t.Def.Store(&d)
	return s.continuousBackups(&d), nil
}

// continuousBackups is the response of both operations: a
// ContinuousBackupsDescription.
func (s *Store) continuousBackups(d *engine.TableDef) map[string]any {
	pitr := map[string]any{"PointInTimeRecoveryStatus": "DISABLED"}
	if p := d.PITR; p != nil && p.Enabled {
		earliest, latest := restorableWindow(p, s.Now())
		pitr = map[string]any{
			"PointInTimeRecoveryStatus":  "ENABLED",
			"EarliestRestorableDateTime": engine.Epoch(earliest),
			"LatestRestorableDateTime":   engine.Epoch(latest),
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
			return nil, wire.Serialization("Unexpected value type in payload for member " + member)
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
