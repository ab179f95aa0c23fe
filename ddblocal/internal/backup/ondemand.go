package backup

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/control"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

// On-demand backups: CreateBackup, DescribeBackup, DeleteBackup and
// ListBackups (RestoreTableFromBackup is in restore.go).
//
// A backup is a point-in-time copy of a table's items: CreateBackup takes
// a Pebble snapshot, which holds every commit made before it and none
// after (commits are atomic), and copies the table's items from it into
// the backup's own key space. Index entries are not copied: a restore
// rebuilds them. Backups live in the store (they survive restarts and the
// deletion of their table) and are described by a descriptor:
//
//	0x00 'B' <backup ARN>                     backup descriptor (JSON)
//	0x03 <backup ID u32> <partition hash u32> <enc(hash key)> [enc(range key)]
//	                                          item (binary), as in the table
//
// Backup IDs come from the counter of table IDs. The copy is made before
// CreateBackup returns, so a backup is AVAILABLE at once; the response
// still says CREATING, as DynamoDB's does. A copy a crash interrupted is
// discarded at the next Open (its descriptor still says CREATING).

const (
	backupCreating  = "CREATING"
	backupAvailable = "AVAILABLE"
	backupDeleted   = "DELETED"
)

// backupDesc is a backup's descriptor.
type backupDesc struct {
	ARN     string    `json:"arn"`
	Name    string    `json:"name"`
	ID      uint32    `json:"id"`
	Status  string    `json:"status"`
	Created time.Time `json:"created"`
	Items   int64     `json:"items"`
	Bytes   int64     `json:"bytes"`
	// Table is the source table's definition at the time of the backup.
	Table engine.TableDef `json:"table"`
}

type createBackupInput struct {
	TableName  *string `json:"TableName"`
	BackupName *string `json:"BackupName"`
}

type backupARNInput struct {
	BackupArn *string `json:"BackupArn"`
}

func backupNotFound(arn string) *wire.APIError {
	return &wire.APIError{Type: "BackupNotFoundException", Message: "Backup not found: " + arn, Status: 400}
}

func backupInUse(arn string) *wire.APIError {
	return &wire.APIError{Type: "BackupInUseException", Message: "Backup is being created: " + arn, Status: 400}
}

// CreateBackup answers the CreateBackup operation.
func (s *Store) CreateBackup(ctx context.Context, body []byte) (any, error) {
	var in createBackupInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.TableName("tableName", in.TableName)
	if in.BackupName == nil {
		c.NotNull("backupName", true)
	} else {
		c.Name("backupName", *in.BackupName, 3)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	if wire.IsTableARN(*in.TableName) {
		if err := s.ForeignARN("CreateBackup", *in.TableName); err != nil {
			return nil, err
		}
	}
	t := s.Table(*in.TableName)
	if t == nil {
		return nil, tableNotFoundForBackups(*in.TableName)
	}
	d := t.Def.Load()
	now := s.Now()
	var suffix [4]byte
	rand.Read(suffix[:])
	b := &backupDesc{
		ARN:     fmt.Sprintf("%s/backup/%014d-%x", s.TableARN(d.Name), now.UnixMilli(), suffix),
		Name:    *in.BackupName,
		Status:  backupCreating,
		Created: now,
		Table:   *d,
	}
	if err := s.startBackup(b); err != nil {
		return nil, err
	}
	if err := s.copyBackup(ctx, t, b); err != nil {
		// Leave nothing behind: neither the descriptor nor a partial copy.
		if derr := s.dropBackup(b); derr != nil {
			s.Log.Error("discard failed backup", "backup", b.ARN, "err", derr)
		}
		return nil, err
	}
	// The response reports the backup as DynamoDB's does, still creating.
	details := b.details()
	details["BackupStatus"] = backupCreating
	return map[string]any{"BackupDetails": details}, nil
}

// startBackup allocates the backup's ID and records it as CREATING.
func (s *Store) startBackup(b *backupDesc) error {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	b.ID = s.NextID
	s.NextID++
	raw, err := json.Marshal(b)
	if err != nil {
		return err
	}
	batch := s.DB.NewBatch()
	defer batch.Close()
	batch.Set(storage.BackupKey(b.ARN), raw)
	batch.Set(storage.NextIDKey, binary.BigEndian.AppendUint32(nil, s.NextID))
	return batch.Commit()
}

// copyBackup copies t's items, as of now, into b's key space and marks b
// AVAILABLE.
func (s *Store) copyBackup(ctx context.Context, t *engine.Table, b *backupDesc) error {
	snap := s.DB.NewSnapshot()
	defer snap.Close()
	// DeleteTable marks the table before deleting its data: unmarked after
	// the snapshot, the snapshot holds all of it.
	if t.Dropped.Load() {
		return tableNotFoundForBackups(b.Table.Name)
	}
	lo, hi := storage.SpaceKey(b.Table.ID, 0), storage.SpaceKey(b.Table.ID, 1)
	dst, _ := storage.BackupSpan(b.ID)
	err := s.DB.Fill(ctx, snap, lo, hi, func(batch *storage.Batch, key, value []byte) error {
		it, err := av.DecodeItem(value)
		if err != nil {
			return fmt.Errorf("ddblocal: backup of %s: %w", b.Table.Name, err)
		}
		b.Items++
		b.Bytes += int64(av.ItemSize(it))
		batch.Set(append(slices.Clip(dst), storage.DataKeySuffix(key)...), value)
		return nil
	}, nil)
	if err != nil {
		return err
	}
	b.Status = backupAvailable
	raw, err := json.Marshal(b)
	if err != nil {
		return err
	}
	// Synced: the copy's unsynced chunks precede it in the log.
	return s.DB.Set(storage.BackupKey(b.ARN), raw)
}

// dropBackup deletes a backup's descriptor and items.
func (s *Store) dropBackup(b *backupDesc) error {
	lo, hi := storage.BackupSpan(b.ID)
	batch := s.DB.NewBatch()
	defer batch.Close()
	batch.Delete(storage.BackupKey(b.ARN))
	batch.DeleteRange(lo, hi)
	return batch.Commit()
}

// loadBackup reads a backup's descriptor; nil when there is none.
func (s *Store) loadBackup(arn string) (*backupDesc, error) {
	raw, err := s.DB.Get(storage.BackupKey(arn))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var b backupDesc
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("ddblocal: backup descriptor %s: %w", arn, err)
	}
	return &b, nil
}

// lookupBackup validates a BackupArn member and finds its backup. A
// backup ARN of another account is refused as unauthorized, whether it
// exists or not.
func (s *Store) lookupBackup(action string, arn *string) (*backupDesc, error) {
	if a := *arn; strings.HasPrefix(a, "arn:") && engine.ARNAccount(a) != "" {
		if err := s.ForeignARN(action, a); err != nil {
			return nil, err
		}
	}
	b, err := s.loadBackup(*arn)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, backupNotFound(*arn)
	}
	return b, nil
}

// DescribeBackup answers the DescribeBackup operation.
func (s *Store) DescribeBackup(ctx context.Context, body []byte) (any, error) {
	var in backupARNInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.BackupARN(in.BackupArn)
	if err := c.Err(); err != nil {
		return nil, err
	}
	b, err := s.lookupBackup("DescribeBackup", in.BackupArn)
	if err != nil {
		return nil, err
	}
	return map[string]any{"BackupDescription": s.backupDescription(b)}, nil
}

// DeleteBackup answers the DeleteBackup operation.
func (s *Store) DeleteBackup(ctx context.Context, body []byte) (any, error) {
	var in backupARNInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.BackupARN(in.BackupArn)
	if err := c.Err(); err != nil {
		return nil, err
	}
	// Under the catalog lock, two deletions of one backup cannot both
	// succeed.
	s.Mu.Lock()
	defer s.Mu.Unlock()
	b, err := s.lookupBackup("DeleteBackup", in.BackupArn)
	if err != nil {
		return nil, err
	}
	if b.Status == backupCreating {
		return nil, backupInUse(b.ARN)
	}
	if err := s.dropBackup(b); err != nil {
		return nil, err
	}
	b.Status = backupDeleted
	return map[string]any{"BackupDescription": s.backupDescription(b)}, nil
}

// details is a BackupDetails.
func (b *backupDesc) details() map[string]any {
	return map[string]any{
		"BackupArn":              b.ARN,
		"BackupName":             b.Name,
		"BackupSizeBytes":        b.Bytes,
		"BackupStatus":           b.Status,
		"BackupType":             "USER",
		"BackupCreationDateTime": engine.Epoch(b.Created),
	}
}

// backupDescription is a BackupDescription: the backup, its source table
// and the table's features at the time of the backup.
func (s *Store) backupDescription(b *backupDesc) map[string]any {
	d := &b.Table
	tp := map[string]any{"ReadCapacityUnits": int64(0), "WriteCapacityUnits": int64(0)}
	if d.BillingMode != "PAY_PER_REQUEST" {
		tp = map[string]any{"ReadCapacityUnits": engine.Deref(d.Throughput.ReadCapacityUnits), "WriteCapacityUnits": engine.Deref(d.Throughput.WriteCapacityUnits)}
	}
	src := map[string]any{
		"TableName":             d.Name,
		"TableId":               d.TableID,
		"TableArn":              s.TableARN(d.Name),
		"TableSizeBytes":        b.Bytes,
		"KeySchema":             engine.KeySchemaOf(d.Hash, d.Range),
		"TableCreationDateTime": engine.Epoch(d.Created),
		"ProvisionedThroughput": tp,
		"ItemCount":             b.Items,
		"BillingMode":           d.BillingMode,
	}
	if d.OnDemand != nil && d.BillingMode == "PAY_PER_REQUEST" {
		src["OnDemandThroughput"] = d.OnDemand
	}
	features := map[string]any{}
	var gsis, lsis []map[string]any
	for _, ix := range d.Indexes {
		p := map[string]any{"ProjectionType": ix.ProjectionType}
		if len(ix.NonKey) > 0 {
			p["NonKeyAttributes"] = ix.NonKey
		}
		m := map[string]any{"IndexName": ix.Name, "KeySchema": engine.KeySchemaOf(ix.Hash, ix.Range), "Projection": p}
		if ix.Local {
			lsis = append(lsis, m)
			continue
		}
		if d.BillingMode == "PAY_PER_REQUEST" {
			if ix.OnDemand != nil {
				m["OnDemandThroughput"] = ix.OnDemand
			}
		} else if ix.Throughput != nil {
			m["ProvisionedThroughput"] = map[string]any{"ReadCapacityUnits": engine.Deref(ix.Throughput.ReadCapacityUnits),
				"WriteCapacityUnits": engine.Deref(ix.Throughput.WriteCapacityUnits)}
		}
		gsis = append(gsis, m)
	}
	if lsis != nil {
		features["LocalSecondaryIndexes"] = lsis
	}
	if gsis != nil {
		features["GlobalSecondaryIndexes"] = gsis
	}
	if d.StreamEnabled {
		features["StreamDescription"] = map[string]any{"StreamEnabled": true, "StreamViewType": d.StreamViewType}
	}
	if d.TTLEnabled {
		features["TimeToLiveDescription"] = map[string]any{"TimeToLiveStatus": "ENABLED", "AttributeName": d.TTLAttribute}
	}
	if d.SSE != nil && (d.SSE.Enabled == nil || *d.SSE.Enabled) {
		features["SSEDescription"] = map[string]any{"Status": "ENABLED", "SSEType": "KMS", "KMSMasterKeyArn": s.KMSKeyARN(d.SSE.KMSMasterKeyId)}
	}
	return map[string]any{
		"BackupDetails":             b.details(),
		"SourceTableDetails":        src,
		"SourceTableFeatureDetails": features,
	}
}

// backups lists every backup descriptor, oldest first.
func (s *Store) backups() ([]*backupDesc, error) {
	lo, hi := storage.BackupDescSpan()
	out, err := descriptors[backupDesc](s, lo, hi, "backup")
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *backupDesc) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ARN, b.ARN)
	})
	return out, nil
}

// ListBackups lists the backups of the store (the USER ones: the store
// makes no others), filtered and paged as the request asks.
func (s *Store) ListBackups(ctx context.Context, body []byte) (any, error) {
	var in listBackupsInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.Length("tableName", in.TableName, 3, 1024)
	c.Min("limit", in.Limit, 1)
	c.Max("limit", in.Limit, 100)
	c.Length("exclusiveStartBackupArn", in.ExclusiveStartBackupArn, 37, 1024)
	c.Enum("backupType", in.BackupType, "USER", "SYSTEM", "AWS_BACKUP", "ALL")
	if err := c.Err(); err != nil {
		return nil, err
	}
	lo, hi, err := backupTimeRange(in.TimeRangeLowerBound, in.TimeRangeUpperBound)
	if err != nil {
		return nil, err
	}
	if lo != nil && hi != nil && *lo > *hi {
		return nil, control.InvalidParam("Time range lower bound must be less than or equal to upper bound")
	}
	all, err := s.backups()
	if err != nil {
		return nil, err
	}
	summaries := []map[string]any{}
	if in.BackupType == "" || in.BackupType == "USER" || in.BackupType == "ALL" {
		started := in.ExclusiveStartBackupArn == nil
		for _, b := range all {
			if !started {
				started = b.ARN == *in.ExclusiveStartBackupArn
				continue
			}
			created := engine.Epoch(b.Created)
			switch {
			case in.TableName != nil && wire.TableNameOf(*in.TableName) != b.Table.Name,
				lo != nil && created < *lo,  // the lower bound is inclusive,
				hi != nil && created >= *hi: // the upper one exclusive
				continue
			}
			summaries = append(summaries, map[string]any{
				"TableName":              b.Table.Name,
				"TableId":                b.Table.TableID,
				"TableArn":               s.TableARN(b.Table.Name),
				"BackupArn":              b.ARN,
				"BackupName":             b.Name,
				"BackupCreationDateTime": engine.Epoch(b.Created),
				"BackupStatus":           b.Status,
				"BackupType":             "USER",
				"BackupSizeBytes":        b.Bytes,
			})
		}
	}
	out := map[string]any{}
	limit := 100
	if in.Limit != nil {
		limit = int(*in.Limit)
	}
	if len(summaries) > limit {
		summaries = summaries[:limit]
		out["LastEvaluatedBackupArn"] = summaries[limit-1]["BackupArn"]
	}
	out["BackupSummaries"] = summaries
	return out, nil
}
