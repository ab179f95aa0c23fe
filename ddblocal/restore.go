package ddblocal

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"lastro/ddblocal/internal/storage"
	"time"

	"github.com/google/uuid"

	"lastro/ddblocal/internal/av"
)

// RestoreTableFromBackup creates a new table holding exactly the items of
// a backup, with the backup's key schema and indexes (rebuilt from the
// items), billing and encryption, unless the request overrides them. As
// DynamoDB does, it does not restore tags, streams, time to live,
// point-in-time recovery or deletion protection. The restore is complete
// when the call returns; the response still reports the table CREATING
// with RestoreInProgress, and DescribeTable then reports it ACTIVE.

type restoreTableFromBackupInput struct {
	TargetTableName               *string                `json:"TargetTableName"`
	BackupArn                     *string                `json:"BackupArn"`
	BillingModeOverride           string                 `json:"BillingModeOverride"`
	GlobalSecondaryIndexOverride  []indexSpec            `json:"GlobalSecondaryIndexOverride"`
	LocalSecondaryIndexOverride   []indexSpec            `json:"LocalSecondaryIndexOverride"`
	ProvisionedThroughputOverride *provisionedThroughput `json:"ProvisionedThroughputOverride"`
	OnDemandThroughputOverride    *onDemandThroughput    `json:"OnDemandThroughputOverride"`
	SSESpecificationOverride      *sseSpecification      `json:"SSESpecificationOverride"`
}

// restoreSummary records where a restored table came from.
type restoreSummary struct {
	SourceBackupArn string    `json:"sourceBackupArn"`
	SourceTableArn  string    `json:"sourceTableArn"`
	RestoredAt      time.Time `json:"restoredAt"`
}

func (r *restoreSummary) describe(inProgress bool) map[string]any {
	return map[string]any{
		"SourceBackupArn":   r.SourceBackupArn,
		"SourceTableArn":    r.SourceTableArn,
		"RestoreDateTime":   epoch(r.RestoredAt),
		"RestoreInProgress": inProgress,
	}
}

func tableAlreadyExists(name string) *apiError {
	return &apiError{Type: "TableAlreadyExistsException", Message: "Table already exists: " + name, Status: 400}
}

func (s *Store) restoreTableFromBackup(ctx context.Context, body []byte) (any, error) {
	var in restoreTableFromBackupInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.newTableName("targetTableName", in.TargetTableName)
	c.backupARN(in.BackupArn)
	c.enum("billingModeOverride", in.BillingModeOverride, billingModes...)
	c.throughput("provisionedThroughputOverride", in.ProvisionedThroughputOverride)
	for i, ix := range in.GlobalSecondaryIndexOverride {
		c.index(fmt.Sprintf("globalSecondaryIndexOverride.%d.member", i+1), ix, true)
	}
	for i, ix := range in.LocalSecondaryIndexOverride {
		c.index(fmt.Sprintf("localSecondaryIndexOverride.%d.member", i+1), ix, false)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	target := *in.TargetTableName

	// The descriptor and the snapshot of the backup's items are taken
	// together under the catalog lock, which DeleteBackup holds.
	s.mu.Lock()
	b, err := s.lookupBackup("RestoreTableFromBackup", in.BackupArn)
	if err == nil && b.Status == backupCreating {
		err = backupInUse(b.ARN)
	}
	if err == nil && s.tables[target] != nil {
		err = tableAlreadyExists(target)
	}
	if err == nil && s.deleting[target] {
		err = tableBeingDeleted(target)
	}
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	snap := s.db.NewSnapshot()
	s.mu.Unlock()
	defer snap.Close()

	d, err := s.restoredDef(b, &in)
	if err != nil {
		return nil, err
	}
	t := &table{}
	if err := s.allocateRestore(d); err != nil {
		return nil, err
	}
	t.def.Store(d)
	if err := s.fillRestore(ctx, snap, b, t); err != nil {
		s.discardRestore(d.ID)
		return nil, err
	}
	// The restored items are read through the durable view: publish them
	// before the table appears.
	if err := s.db.Settle(); err != nil {
		s.discardRestore(d.ID)
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tables[target] != nil {
		// Created meanwhile by CreateTable or another restore.
		s.discardRestore(d.ID)
		return nil, tableAlreadyExists(target)
	}
	if s.deleting[target] {
		s.discardRestore(d.ID)
		return nil, tableBeingDeleted(target)
	}
	if err := s.persistDef(d); err != nil {
		s.discardRestore(d.ID)
		return nil, err
	}
	s.tables[target] = t
	desc := s.describe(t, descOpts{status: "CREATING", indexStatus: "CREATING", created: true})
	return map[string]any{"TableDescription": desc}, nil
}

// restoredDef builds the definition of the table a restore creates: the
// backup's schema with the request's overrides, checked as CreateTable
// checks a new table.
func (s *Store) restoredDef(b *backupDesc, in *restoreTableFromBackupInput) (*tableDef, error) {
	src := &b.Table
	billing := src.BillingMode
	if in.BillingModeOverride != "" {
		billing = in.BillingModeOverride
	}
	ct := createTableInput{
		TableName:   in.TargetTableName,
		KeySchema:   keySchemaOf(src.Hash, src.Range),
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
		spec := indexSpec{
			IndexName:  &ix.Name,
			KeySchema:  keySchemaOf(ix.Hash, ix.Range),
			Projection: &projection{ProjectionType: ix.ProjectionType, NonKeyAttributes: ix.NonKey},
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
	for _, ks := range append([][]keySchemaElement{ct.KeySchema}, indexKeySchemas(ct.LocalSecondaryIndexes, ct.GlobalSecondaryIndexes)...) {
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
	d, err := s.checkCreateTable(&ct)
	if err != nil {
		return nil, err
	}
	now := s.now()
	d.Name = *in.TargetTableName
	d.Created = now
	d.TableID = uuid.NewString()
	d.TableClass = src.TableClass
	d.SSE = ct.SSESpecification
	d.Restore = &restoreSummary{SourceBackupArn: b.ARN, SourceTableArn: s.tableARN(src.Name), RestoredAt: now}
	if d.BillingMode == "PAY_PER_REQUEST" {
		d.PayPerRequestAt = now
		d.OnDemand = ct.OnDemandThroughput
		d.Warm.raise(onDemandWarmRead, onDemandWarmWrite)
	} else {
		d.Throughput = *ct.ProvisionedThroughput
		d.Warm.raise(*d.Throughput.ReadCapacityUnits, *d.Throughput.WriteCapacityUnits)
	}
	for _, ix := range d.Indexes {
		switch {
		case ix.Local:
		case d.BillingMode == "PAY_PER_REQUEST":
			ix.Warm.raise(onDemandWarmRead, onDemandWarmWrite)
		default:
			ix.Warm.raise(*ix.Throughput.ReadCapacityUnits, *ix.Throughput.WriteCapacityUnits)
		}
	}
	return d, nil
}

func indexKeySchemas(lists ...[]indexSpec) [][]keySchemaElement {
	var out [][]keySchemaElement
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
func (s *Store) allocateRestore(d *tableDef) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d.ID = s.nextID
	s.nextID++
	b := s.db.NewBatch()
	defer b.Close()
	b.Set(storage.NextIDKey, binary.BigEndian.AppendUint32(nil, s.nextID))
	return b.Commit()
}

// fillRestore writes the backup's items, with their index entries, into
// the new table t and counts them.
func (s *Store) fillRestore(ctx context.Context, snap *storage.Snapshot, b *backupDesc, t *table) error {
	d := t.def.Load()
	lo, hi := storage.BackupSpan(b.ID)
	var deltas []counterDelta
	return s.db.Fill(ctx, snap, lo, hi, func(batch *storage.Batch, _, value []byte) error {
		it, err := av.DecodeItem(value)
		if err != nil {
			return fmt.Errorf("ddblocal: restore of %s: %w", b.ARN, err)
		}
		s.stage(batch, &change{t: t, def: d, key: d.baseKey(it), new: it}, &deltas)
		return nil
	}, func() {
		for _, dl := range deltas {
			if dl.id == 0 {
				t.items.Add(dl.items)
				t.bytes.Add(dl.bytes)
			} else {
				t.idxItems[dl.id].Add(dl.items)
				t.idxBytes[dl.id].Add(dl.bytes)
			}
		}
		deltas = deltas[:0]
	})
}

// discardRestore deletes what a failed restore wrote.
func (s *Store) discardRestore(id uint32) {
	lo, hi := storage.TableSpan(id)
	if err := s.db.DeleteRange(lo, hi); err != nil {
		s.log.Error("discard failed restore", "table", id, "err", err)
	}
}

// recoverBackups discards, at Open, what a crash left of unfinished
// backup copies (descriptors still CREATING) and restores (items of a
// table ID with no catalog entry).
func (s *Store) recoverBackups() error {
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
	for _, t := range s.tables {
		known[t.def.Load().ID] = true
	}
	iter, err := s.db.NewIter(storage.DataSpan())
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
		if err := s.db.DeleteRange(lo, hi); err != nil {
			return fmt.Errorf("ddblocal: discard interrupted restore: %w", err)
		}
	}
	return nil
}
