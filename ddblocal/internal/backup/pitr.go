package backup

import (
	"context"
	"strings"
	"time"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/control"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

// RestoreTableToPointInTime creates a new table holding the items of a
// table with point-in-time recovery as they were at an instant of its
// restorable window, rebuilt from the table's stream records the way a
// full export of the past is (ADR 0042): the current items with every
// later change rolled back to the image it replaced. The new table takes
// the source's current key schema, indexes (filled from the items),
// billing and encryption unless the request overrides them, and, as on
// DynamoDB, no tags, stream, time to live, point-in-time recovery or
// deletion protection. As RestoreTableFromBackup, the restore is complete
// when the call returns; the response reports the table CREATING with
// RestoreInProgress and DescribeTable then reports it ACTIVE.

type restoreTableToPointInTimeInput struct {
	SourceTableArn          *string  `json:"SourceTableArn"`
	SourceTableName         *string  `json:"SourceTableName"`
	TargetTableName         *string  `json:"TargetTableName"`
	RestoreDateTime         *float64 `json:"RestoreDateTime"`
	UseLatestRestorableTime *bool    `json:"UseLatestRestorableTime"`
	restoreOverrides
}

func invalidRestoreTime(msg string) *wire.APIError {
	return &wire.APIError{Type: "InvalidRestoreTimeException", Message: msg, Status: 400}
}

// restorableWindow is [EarliestRestorableDateTime, LatestRestorableDateTime]
// of a table with point-in-time recovery at now; DescribeContinuousBackups
// reports the same bounds.
func restorableWindow(p *engine.PITRState, now time.Time) (earliest, latest time.Time) {
	earliest = p.Earliest(now)
	latest = now.Add(-engine.LatestRestorableLag)
	if latest.Before(earliest) {
		latest = earliest
	}
	return earliest, latest
}

// RestoreTableToPointInTime answers the RestoreTableToPointInTime operation.
func (s *Store) RestoreTableToPointInTime(ctx context.Context, body []byte) (any, error) {
	var in restoreTableToPointInTimeInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.NewTableName("targetTableName", in.TargetTableName)
	if in.SourceTableName != nil {
		c.TableName("sourceTableName", in.SourceTableName)
	}
	if in.SourceTableArn != nil {
		c.MinLen("sourceTableArn", *in.SourceTableArn, len(*in.SourceTableArn), 1)
		c.MaxLen("sourceTableArn", *in.SourceTableArn, len(*in.SourceTableArn), 1024)
	}
	c.Enum("billingModeOverride", in.BillingModeOverride, wire.BillingModes...)
	c.Throughput("provisionedThroughputOverride", in.ProvisionedThroughputOverride)
	if err := c.Err(); err != nil {
		return nil, err
	}
	latestAsked := in.UseLatestRestorableTime != nil && *in.UseLatestRestorableTime
	switch {
	case (in.SourceTableName == nil) == (in.SourceTableArn == nil):
		return nil, wire.Validation("Exactly one of SourceTableName or SourceTableArn must be specified")
	case latestAsked && in.RestoreDateTime != nil:
		return nil, wire.Validation("Only one of RestoreDateTime or UseLatestRestorableTime can be specified")
	case !latestAsked && in.RestoreDateTime == nil:
		return nil, wire.Validation("Either RestoreDateTime or UseLatestRestorableTime must be specified")
	}
	source := ""
	if in.SourceTableArn != nil {
		arn := *in.SourceTableArn
		if wire.IsTableARN(arn) && engine.ARNAccount(arn) != "" {
			if err := s.ForeignARN("RestoreTableToPointInTime", arn); err != nil {
				return nil, err
			}
		}
		name, ok := strings.CutPrefix(arn, s.TableARN(""))
		if !ok || name == "" || strings.Contains(name, "/") {
			return nil, wire.Validation("Invalid SourceTableArn: %s", arn)
		}
		source = name
	} else {
		source = *in.SourceTableName
	}
	target := *in.TargetTableName

	s.Mu.Lock()
	t := s.Tables[source]
	var err error
	switch {
	case t == nil:
		err = tableNotFoundForBackups(source)
	case s.Tables[target] != nil:
		err = tableAlreadyExists(target)
	case s.Deleting[target]:
		err = control.TableBeingDeleted(target)
	}
	s.Mu.Unlock()
	if err != nil {
		return nil, err
	}
	src := t.Def.Load()
	if src.PITR == nil || !src.PITR.Enabled {
		return nil, &wire.APIError{Type: "PointInTimeRecoveryUnavailableException", Status: 400,
			Message: "Point in time recovery is not enabled for table '" + src.Name + "'"}
	}
	now := s.Now().UTC()
	earliest, latest := restorableWindow(src.PITR, now)
	at := latest
	if !latestAsked {
		at = fromEpoch(*in.RestoreDateTime).UTC()
		if at.Before(earliest) || at.After(latest) {
			return nil, invalidRestoreTime("RestoreDateTime " + at.Format(time.RFC3339Nano) + " must be between EarliestRestorableDateTime " +
				earliest.Format(time.RFC3339Nano) + " and LatestRestorableDateTime " + latest.Format(time.RFC3339Nano))
		}
	}
	// The records must hold every change from the instant on, with the
	// images that roll it back.
	if err := s.covers(src, at, now, true, false); err != nil {
		if ae, ok := err.(*wire.APIError); ok && ae.Type == "InvalidExportTimeException" {
			return nil, invalidRestoreTime(ae.Message)
		}
		return nil, err
	}

	// The overrides and checks are those of a restore from a backup of
	// the source's current definition.
	b := &backupDesc{Table: *src}
	d, err := s.restoredDef(b, &restoreTableFromBackupInput{TargetTableName: in.TargetTableName, restoreOverrides: in.restoreOverrides})
	if err != nil {
		return nil, err
	}
	d.Restore = &engine.RestoreSummary{SourceTableArn: s.TableARN(src.Name), RestoredAt: at}

	view, err := s.DB.SnapshotAt(func() {})
	if err != nil {
		return nil, err
	}
	defer view.Release()
	return s.publishRestore(d, target, func(t *engine.Table) error { return s.fillAt(ctx, view, src, at, t) })
}

// fillAt writes the items table src held at instant at, with their index
// entries, into the new table t and counts them.
func (s *Store) fillAt(ctx context.Context, view *storage.View, src *engine.TableDef, at time.Time, t *engine.Table) error {
	d := t.Def.Load()
	batch := s.DB.NewBatch()
	defer func() { batch.Close() }()
	var deltas []engine.CounterDelta
	flush := func() error {
		if err := batch.CommitNoSync(); err != nil {
			return err
		}
		addDeltas(t, deltas)
		deltas = deltas[:0]
		batch.Close()
		batch = s.DB.NewBatch()
		return nil
	}
	err := s.itemsAt(ctx, view, src, at, true, func(it av.Item) error {
		s.Stage(batch, &engine.Change{T: t, Def: d, Key: d.BaseKey(it), New: it}, &deltas)
		if batch.Len() >= storage.Chunk {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// addDeltas adds the item and byte counts of a committed fill to t.
func addDeltas(t *engine.Table, deltas []engine.CounterDelta) {
	for _, dl := range deltas {
		if dl.ID == 0 {
			t.Items.Add(dl.Items)
			t.Bytes.Add(dl.Bytes)
		} else {
			t.IdxItems[dl.ID].Add(dl.Items)
			t.IdxBytes[dl.ID].Add(dl.Bytes)
		}
	}
}
