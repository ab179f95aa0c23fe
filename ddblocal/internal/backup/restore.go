package backup

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/control"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

// RestoreTableFromBackup creates a new table holding exactly the items of
// a backup, with the backup's key schema and indexes (rebuilt from the
// items), billing and encryption, unless the request overrides them. As
// DynamoDB does, it does not restore tags, streams, time to live,
// point-in-time recovery or deletion protection. The restore is complete
// when the call returns; the response still reports the table CREATING
// with RestoreInProgress, and DescribeTable then reports it ACTIVE.

type restoreTableFromBackupInput struct {
	TargetTableName *string `json:"TargetTableName"`
	BackupArn       *string `json:"BackupArn"`
	restoreOverrides
}

// restoreOverrides are what a restore may set apart from the source's
// definition, the same for a restore from a backup and to a point in
// time.
type restoreOverrides struct {
	BillingModeOverride           string                      `json:"BillingModeOverride"`
	GlobalSecondaryIndexOverride  []wire.IndexSpec            `json:"GlobalSecondaryIndexOverride"`
	LocalSecondaryIndexOverride   []wire.IndexSpec            `json:"LocalSecondaryIndexOverride"`
	ProvisionedThroughputOverride *wire.ProvisionedThroughput `json:"ProvisionedThroughputOverride"`
	OnDemandThroughputOverride    *wire.OnDemandThroughput    `json:"OnDemandThroughputOverride"`
	SSESpecificationOverride      *wire.SSESpecification      `json:"SSESpecificationOverride"`
}

func tableAlreadyExists(name string) *wire.APIError {
	return &wire.APIError{Type: "TableAlreadyExistsException", Message: "Table already exists: " + name, Status: 400}
}

// RestoreTableFromBackup answers the RestoreTableFromBackup operation.
func (s *Store) RestoreTableFromBackup(ctx context.Context, body []byte) (any, error) {
	var in restoreTableFromBackupInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.NewTableName("targetTableName", in.TargetTableName)
	c.BackupARN(in.BackupArn)
	c.Enum("billingModeOverride", in.BillingModeOverride, wire.BillingModes...)
	c.Throughput("provisionedThroughputOverride", in.ProvisionedThroughputOverride)
	for i, ix := range in.GlobalSecondaryIndexOverride {
		c.Index(fmt.Sprintf("globalSecondaryIndexOverride.%d.member", i+1), ix, true)
	}
	for i, ix := range in.LocalSecondaryIndexOverride {
		c.Index(fmt.Sprintf("localSecondaryIndexOverride.%d.member", i+1), ix, false)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	target := *in.TargetTableName

	// The descriptor and the snapshot of the backup's items are taken
	// together under the catalog lock, which DeleteBackup holds.
	s.Mu.Lock()
	b, err := s.lookupBackup("RestoreTableFromBackup", in.BackupArn)
	if err == nil && b.Status == backupCreating {
		err = backupInUse(b.ARN)
	}
	if err == nil && s.Tables[target] != nil {
		err = tableAlreadyExists(target)
	}
	if err == nil && s.Deleting[target] {
		err = control.TableBeingDeleted(target)
	}
	if err != nil {
		s.Mu.Unlock()
		return nil, err
	}
	snap := s.DB.NewSnapshot()
	s.Mu.Unlock()
	defer snap.Close()

	d, err := s.restoredDef(b, &in)
	if err != nil {
		return nil, err
	}
	return s.publishRestore(d, target, func(t *engine.Table) error { return s.fillRestore(ctx, snap, b, t) })
}

// publishRestore allocates the new table of definition d, fills it with
// fill, and publishes it under target once its items are durable, unless
// a table of that name appeared meanwhile (created by CreateTable or
// another restore). Any failure discards what fill wrote. Restores from
// a backup and to a point in time both end here.
func (s *Store) publishRestore(d *engine.TableDef, target string, fill func(*engine.Table) error) (any, error) {
	t := &engine.Table{}
	if err := s.allocateRestore(d); err != nil {
		return nil, err
	}
	t.Def.Store(d)
	if err := fill(t); err != nil {
		s.discardRestore(d.ID)
		return nil, err
	}
	// The restored items are read through the durable view: publish them
	// before the table appears.
	if err := s.DB.Settle(); err != nil {
		s.discardRestore(d.ID)
		return nil, err
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.Tables[target] != nil {
		s.discardRestore(d.ID)
		return nil, tableAlreadyExists(target)
	}
	if s.Deleting[target] {
		s.discardRestore(d.ID)
		return nil, control.TableBeingDeleted(target)
	}
	if err := s.PersistDef(d); err != nil {
		s.discardRestore(d.ID)
		return nil, err
	}
	s.Tables[target] = t
	desc := s.Describe(t, engine.DescOpts{Status: "CREATING", IndexStatus: "CREATING", Created: true})
	return map[string]any{"TableDescription": desc}, nil
}

// restoredDef builds the definition of the table a restore creates: the
// backup's schema with the request's overrides, checked as CreateTable
// checks a new table.
//
// It is one long function on purpose: its checks run in the order DynamoDB
// reports violations, the first refusal is the wire contract, and the
// sequence reads top to bottom in one place.
func (s *Store) restoredDef(b *backupDesc, in *restoreTableFromBackupInput) (*engine.TableDef, error) {
	src := &b.Table
	billing := src.BillingMode
	if in.BillingModeOverride != "" {
		billing = in.BillingModeOverride
	}
	ct := wire.CreateTableInput{
		TableName:   in.TargetTableName,
		KeySchema:   engine.KeySchemaOf(src.Hash, src.Range),
		BillingMode: billing,
	}
	switch {
	case in.ProvisionedThroughputOverride != nil:
		ct.ProvisionedThroughput = in.ProvisionedThroughputOverride
	case billing == "PROVISIONED" && src.BillingMode == "PROVISIONED":
		tp := src.Throughput
		ct.ProvisionedThroughput = &tp
	}
	switch {
	case in.OnDemandThroughputOverride != nil:
		ct.OnDemandThroughput = in.OnDemandThroughputOverride
	case billing == "PAY_PER_REQUEST" && src.BillingMode == "PAY_PER_REQUEST":
		ct.OnDemandThroughput = src.OnDemand
	}
	for _, ix := range src.Indexes {
		spec := wire.IndexSpec{
			IndexName:  &ix.Name,
			KeySchema:  engine.KeySchemaOf(ix.Hash, ix.Range),
			Projection: &wire.Projection{ProjectionType: ix.ProjectionType, NonKeyAttributes: ix.NonKey},
		}
		if ix.Local {
			ct.LocalSecondaryIndexes = append(ct.LocalSecondaryIndexes, spec)
			continue
		}
		if billing == "PROVISIONED" {
			// An index keeps its throughput, or takes the table's when
			// the restore switches the table to provisioned capacity.
			spec.ProvisionedThroughput = ct.ProvisionedThroughput
			if src.BillingMode == "PROVISIONED" && ix.Throughput != nil {
				spec.ProvisionedThroughput = ix.Throughput
			}
		} else if src.BillingMode == "PAY_PER_REQUEST" {
			spec.OnDemandThroughput = ix.OnDemand
		}
		ct.GlobalSecondaryIndexes = append(ct.GlobalSecondaryIndexes, spec)
	}
	// An override replaces the backup's indexes of its kind (an empty one
	// leaves none).
	if in.GlobalSecondaryIndexOverride != nil {
		ct.GlobalSecondaryIndexes = in.GlobalSecondaryIndexOverride
	}
	if in.LocalSecondaryIndexOverride != nil {
		ct.LocalSecondaryIndexes = in.LocalSecondaryIndexOverride
	}
	if len(ct.GlobalSecondaryIndexes) == 0 {
		ct.GlobalSecondaryIndexes = nil
	}
	if len(ct.LocalSecondaryIndexes) == 0 {
		ct.LocalSecondaryIndexes = nil
	}
	// Only the attributes the remaining keys use stay defined.
	used := map[string]bool{}
	for _, ks := range append([][]wire.KeySchemaElement{ct.KeySchema}, indexKeySchemas(ct.LocalSecondaryIndexes, ct.GlobalSecondaryIndexes)...) {
		for _, k := range ks {
			used[k.AttributeName] = true
		}
	}
	for _, a := range src.AttrDefs {
		if used[a.AttributeName] {
			ct.AttributeDefinitions = append(ct.AttributeDefinitions, a)
		}
	}
	ct.SSESpecification = src.SSE
	if in.SSESpecificationOverride != nil {
		ct.SSESpecification = in.SSESpecificationOverride
	}
	d, err := s.CheckCreateTable(&ct)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	d.Name = *in.TargetTableName
	d.Created = now
	d.TableID = uuid.NewString()
	d.TableClass = src.TableClass
	d.SSE = ct.SSESpecification
	d.Restore = &engine.RestoreSummary{SourceBackupArn: b.ARN, SourceTableArn: s.TableARN(src.Name), RestoredAt: now}
	if d.BillingMode == "PAY_PER_REQUEST" {
		d.PayPerRequestAt = now
		d.OnDemand = ct.OnDemandThroughput
		d.Warm.Raise(engine.OnDemandWarmRead, engine.OnDemandWarmWrite)
	} else {
		d.Throughput = *ct.ProvisionedThroughput
		d.Warm.Raise(*d.Throughput.ReadCapacityUnits, *d.Throughput.WriteCapacityUnits)
	}
	for _, ix := range d.Indexes {
		switch {
		case ix.Local:
		case d.BillingMode == "PAY_PER_REQUEST":
			ix.Warm.Raise(engine.OnDemandWarmRead, engine.OnDemandWarmWrite)
		default:
			ix.Warm.Raise(*ix.Throughput.ReadCapacityUnits, *ix.Throughput.WriteCapacityUnits)
		}
	}
	return d, nil
}

func indexKeySchemas(lists ...[]wire.IndexSpec) [][]wire.KeySchemaElement {
	var out [][]wire.KeySchemaElement
	for _, l := range lists {
		for _, ix := range l {
			out = append(out, ix.KeySchema)
		}
	}
	return out
}

// allocateRestore gives the table being restored its ID. The table is
// published only once filled; a crash before leaves its items without a
// catalog entry, which the next Open deletes.
func (s *Store) allocateRestore(d *engine.TableDef) error {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	d.ID = s.NextID
	s.NextID++
	b := s.DB.NewBatch()
	defer b.Close()
	b.Set(storage.NextIDKey, binary.BigEndian.AppendUint32(nil, s.NextID))
	return b.Commit()
}

// fillRestore writes the backup's items, with their index entries, into
// the new table t and counts them.
func (s *Store) fillRestore(ctx context.Context, snap *storage.Snapshot, b *backupDesc, t *engine.Table) error {
	d := t.Def.Load()
	lo, hi := storage.BackupSpan(b.ID)
	var deltas []engine.CounterDelta
	return s.DB.Fill(ctx, snap, lo, hi, func(batch *storage.Batch, _, value []byte) error {
		it, err := av.DecodeItem(value)
		if err != nil {
			return fmt.Errorf("ddblocal: restore of %s: %w", b.ARN, err)
		}
		s.Stage(batch, &engine.Change{T: t, Def: d, Key: d.BaseKey(it), New: it}, &deltas)
		return nil
	}, func() {
		addDeltas(t, deltas)
		deltas = deltas[:0]
	})
}

// discardRestore deletes what a failed restore wrote.
func (s *Store) discardRestore(id uint32) {
	lo, hi := storage.TableSpan(id)
	if err := s.DB.DeleteRange(lo, hi); err != nil {
		s.Log.Error("discard failed restore", "table", id, "err", err)
	}
}

// RecoverBackups discards, at Open, what a crash left of unfinished
// backup copies (descriptors still CREATING) and restores (items of a
// table ID with no catalog entry).
func (s *Store) RecoverBackups() error {
	all, err := s.backups()
	if err != nil {
		return err
	}
	for _, b := range all {
		if b.Status == backupCreating {
			if err := s.dropBackup(b); err != nil {
				return fmt.Errorf("ddblocal: discard interrupted backup %s: %w", b.ARN, err)
			}
		}
	}
	known := map[uint32]bool{}
	for _, t := range s.Tables {
		known[t.Def.Load().ID] = true
	}
	iter, err := s.DB.NewIter(storage.DataSpan())
	if err != nil {
		return err
	}
	var orphans []uint32
	for iter.First(); iter.Valid(); {
		k := iter.Key()
		if len(k) < 5 {
			iter.Next()
			continue
		}
		id, _ := storage.DataKeyTable(k)
		if !known[id] {
			orphans = append(orphans, id)
		}
		if id == ^uint32(0) {
			break
		}
		_, next := storage.TableSpan(id)
		iter.SeekGE(next)
	}
	if err := errors.Join(iter.Error(), iter.Close()); err != nil {
		return err
	}
	for _, id := range orphans {
		lo, hi := storage.TableSpan(id)
		if err := s.DB.DeleteRange(lo, hi); err != nil {
			return fmt.Errorf("ddblocal: discard interrupted restore: %w", err)
		}
	}
	return nil
}
