package ddblocal

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"lastro/ddblocal/internal/storage"
	"slices"
	"strings"
	"time"

	"lastro/ddblocal/internal/av"
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
	Table tableDef `json:"table"`
}

type createBackupInput struct {
	TableName  *string `json:"TableName"`
	BackupName *string `json:"BackupName"`
}

type backupARNInput struct {
	BackupArn *string `json:"BackupArn"`
}

func backupNotFound(arn string) *apiError {
	return &apiError{Type: "BackupNotFoundException", Message: "Backup not found: " + arn, Status: 400}
}

func backupInUse(arn string) *apiError {
	return &apiError{Type: "BackupInUseException", Message: "Backup is being created: " + arn, Status: 400}
}

func (s *Store) createBackup(ctx context.Context, body []byte) (any, error) {
	var in createBackupInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.tableName("tableName", in.TableName)
	if in.BackupName == nil {
		c.notNull("backupName", true)
	} else {
		c.name("backupName", *in.BackupName, 3)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	if isTableARN(*in.TableName) {
		if err := s.foreignARN("CreateBackup", *in.TableName); err != nil {
			return nil, err
		}
	}
	t := s.table(*in.TableName)
	if t == nil {
		return nil, tableNotFoundForBackups(*in.TableName)
	}
	d := t.def.Load()
	now := s.now()
	var suffix [4]byte
	rand.Read(suffix[:])
	b := &backupDesc{
		ARN:     fmt.Sprintf("%s/backup/%014d-%x", s.tableARN(d.Name), now.UnixMilli(), suffix),
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
			s.log.Error("discard failed backup", "backup", b.ARN, "err", derr)
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
	s.mu.Lock()
	defer s.mu.Unlock()
	b.ID = s.nextID
	s.nextID++
	raw, err := json.Marshal(b)
	if err != nil {
		return err
	}
	batch := s.db.NewBatch()
	defer batch.Close()
	batch.Set(storage.BackupKey(b.ARN), raw)
	batch.Set(storage.NextIDKey, binary.BigEndian.AppendUint32(nil, s.nextID))
	return batch.Commit()
}

// copyBackup copies t's items, as of now, into b's key space and marks b
// AVAILABLE.
func (s *Store) copyBackup(ctx context.Context, t *table, b *backupDesc) error {
	snap := s.db.NewSnapshot()
	defer snap.Close()
	// DeleteTable marks the table before deleting its data: unmarked after
	// the snapshot, the snapshot holds all of it.
	if t.dropped.Load() {
		return tableNotFoundForBackups(b.Table.Name)
	}
	lo, hi := storage.SpaceKey(b.Table.ID, 0), storage.SpaceKey(b.Table.ID, 1)
	dst, _ := storage.BackupSpan(b.ID)
	err := s.db.Fill(ctx, snap, lo, hi, func(batch *storage.Batch, key, value []byte) error {
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
	return s.db.Set(storage.BackupKey(b.ARN), raw)
}

// dropBackup deletes a backup's descriptor and items.
func (s *Store) dropBackup(b *backupDesc) error {
	lo, hi := storage.BackupSpan(b.ID)
	batch := s.db.NewBatch()
	defer batch.Close()
	batch.Delete(storage.BackupKey(b.ARN))
	batch.DeleteRange(lo, hi)
	return batch.Commit()
}

// loadBackup reads a backup's descriptor; nil when there is none.
func (s *Store) loadBackup(arn string) (*backupDesc, error) {
	raw, err := s.db.Get(storage.BackupKey(arn))
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
	if a := *arn; strings.HasPrefix(a, "arn:") && arnAccount(a) != "" {
		if err := s.foreignARN(action, a); err != nil {
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

// backupARNConstraints checks a BackupArn member.
func (c *constraints) backupARN(arn *string) {
	c.notNull("backupArn", arn == nil)
	c.length("backupArn", arn, 37, 1024)
}

func (s *Store) describeBackup(ctx context.Context, body []byte) (any, error) {
	var in backupARNInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.backupARN(in.BackupArn)
	if err := c.err(); err != nil {
		return nil, err
	}
	b, err := s.lookupBackup("DescribeBackup", in.BackupArn)
	if err != nil {
		return nil, err
	}
	return map[string]any{"BackupDescription": s.backupDescription(b)}, nil
}

func (s *Store) deleteBackup(ctx context.Context, body []byte) (any, error) {
	var in backupARNInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.backupARN(in.BackupArn)
	if err := c.err(); err != nil {
		return nil, err
	}
	// Under the catalog lock, two deletions of one backup cannot both
	// succeed.
	s.mu.Lock()
	defer s.mu.Unlock()
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
		"BackupCreationDateTime": epoch(b.Created),
	}
}

// backupDescription is a BackupDescription: the backup, its source table
// and the table's features at the time of the backup.
func (s *Store) backupDescription(b *backupDesc) map[string]any {
	d := &b.Table
	tp := map[string]any{"ReadCapacityUnits": int64(0), "WriteCapacityUnits": int64(0)}
	if d.BillingMode != "PAY_PER_REQUEST" {
		tp = map[string]any{"ReadCapacityUnits": deref(d.Throughput.ReadCapacityUnits), "WriteCapacityUnits": deref(d.Throughput.WriteCapacityUnits)}
	}
	src := map[string]any{
		"TableName":             d.Name,
		"TableId":               d.TableID,
		"TableArn":              s.tableARN(d.Name),
		"TableSizeBytes":        b.Bytes,
		"KeySchema":             keySchemaOf(d.Hash, d.Range),
		"TableCreationDateTime": epoch(d.Created),
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
		m := map[string]any{"IndexName": ix.Name, "KeySchema": keySchemaOf(ix.Hash, ix.Range), "Projection": p}
		if ix.Local {
			lsis = append(lsis, m)
			continue
		}
		if d.BillingMode == "PAY_PER_REQUEST" {
			if ix.OnDemand != nil {
				m["OnDemandThroughput"] = ix.OnDemand
			}
		} else if ix.Throughput != nil {
			m["ProvisionedThroughput"] = map[string]any{"ReadCapacityUnits": deref(ix.Throughput.ReadCapacityUnits),
				"WriteCapacityUnits": deref(ix.Throughput.WriteCapacityUnits)}
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
		features["SSEDescription"] = map[string]any{"Status": "ENABLED", "SSEType": "KMS", "KMSMasterKeyArn": s.kmsKeyARN(d.SSE.KMSMasterKeyId)}
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

// listBackups lists the backups of the store (the USER ones: the store
// makes no others), filtered and paged as the request asks.
func (s *Store) listBackups(ctx context.Context, body []byte) (any, error) {
	var in listBackupsInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.length("tableName", in.TableName, 3, 1024)
	c.min("limit", in.Limit, 1)
	c.max("limit", in.Limit, 100)
	c.length("exclusiveStartBackupArn", in.ExclusiveStartBackupArn, 37, 1024)
	c.enum("backupType", in.BackupType, "USER", "SYSTEM", "AWS_BACKUP", "ALL")
	if err := c.err(); err != nil {
		return nil, err
	}
	lo, hi, err := backupTimeRange(in.TimeRangeLowerBound, in.TimeRangeUpperBound)
	if err != nil {
		return nil, err
	}
	if lo != nil && hi != nil && *lo > *hi {
		return nil, invalidParam("Time range lower bound must be less than or equal to upper bound")
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
			created := epoch(b.Created)
			switch {
			case in.TableName != nil && tableNameOf(*in.TableName) != b.Table.Name,
				lo != nil && created < *lo,  // the lower bound is inclusive,
				hi != nil && created >= *hi: // the upper one exclusive
				continue
			}
			summaries = append(summaries, map[string]any{
				"TableName":              b.Table.Name,
				"TableId":                b.Table.TableID,
				"TableArn":               s.tableARN(b.Table.Name),
				"BackupArn":              b.ARN,
				"BackupName":             b.Name,
				"BackupCreationDateTime": epoch(b.Created),
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
