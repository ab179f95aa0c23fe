package engine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

// The catalog's on-disk format (ADR 0030). A table definition is
// persisted — in the catalog and inside every backup descriptor — as a
// diskTable: types of its own, with their own JSON names, so that
// changing an API struct (attributeDefinition, provisionedThroughput, …)
// cannot silently change the file format. tableDef's JSON methods
// convert through them.
//
// Format 1 is byte-for-byte what the store wrote before the format was
// versioned (format 0, no version key), so a data directory of format 0
// is migrated by recording the version. A change to these types that old
// readers cannot read needs a new format number and a conversion in
// loadFormat.

// CatalogFormat is the format this build writes and the newest it reads.
const CatalogFormat = 1

// ErrFormat reports a data directory this build cannot read.
var ErrFormat = errors.New("ddblocal: unsupported catalog format")

type diskKey struct {
	Name string `json:"name,omitempty"`
	Type uint8  `json:"type,omitempty"` // av.Type's numbering
}

type diskAttr struct {
	Name string `json:"AttributeName"`
	Type string `json:"AttributeType"`
}

type diskThroughput struct {
	Read  *int64 `json:"ReadCapacityUnits,omitempty"`
	Write *int64 `json:"WriteCapacityUnits,omitempty"`
}

type diskOnDemand struct {
	MaxRead  *int64 `json:"MaxReadRequestUnits,omitempty"`
	MaxWrite *int64 `json:"MaxWriteRequestUnits,omitempty"`
}

type diskSSE struct {
	Enabled  *bool  `json:"Enabled,omitempty"`
	Type     string `json:"SSEType,omitempty"`
	KMSKeyID string `json:"KMSMasterKeyId,omitempty"`
}

type diskTag struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

type diskThroughputLog struct {
	LastIncrease time.Time `json:"lastIncrease"`
	LastDecrease time.Time `json:"lastDecrease"`
	Decreases    int       `json:"decreases,omitempty"`
}

type diskWarm struct {
	Read  int64 `json:"read,omitempty"`
	Write int64 `json:"write,omitempty"`
}

type diskPITR struct {
	Enabled bool      `json:"enabled"`
	Since   time.Time `json:"since"`
	Days    int64     `json:"days"`
}

type diskRestore struct {
	SourceBackupArn string    `json:"sourceBackupArn"`
	SourceTableArn  string    `json:"sourceTableArn"`
	RestoredAt      time.Time `json:"restoredAt"`
}

type diskIndex struct {
	Name           string            `json:"name"`
	ID             uint16            `json:"id"`
	Local          bool              `json:"local,omitempty"`
	Hash           diskKey           `json:"hash"`
	Range          diskKey           `json:"range"`
	ProjectionType string            `json:"projectionType"`
	NonKey         []string          `json:"nonKey,omitempty"`
	Throughput     *diskThroughput   `json:"throughput,omitempty"`
	OnDemand       *diskOnDemand     `json:"onDemand,omitempty"`
	Backfilling    bool              `json:"backfilling,omitempty"`
	ThroughputLog  diskThroughputLog `json:"throughputLog"`
	Warm           diskWarm          `json:"warm"`
}

type diskTable struct {
	Name           string            `json:"name"`
	ID             uint32            `json:"id"`
	Hash           diskKey           `json:"hash"`
	Range          diskKey           `json:"range"`
	AttrDefs       []diskAttr        `json:"attrDefs"`
	Indexes        []*diskIndex      `json:"indexes,omitempty"`
	NextIndexID    uint16            `json:"nextIndexId"`
	Created        time.Time         `json:"created"`
	BillingMode    string            `json:"billingMode"`
	Throughput     diskThroughput    `json:"throughput"`
	OnDemand       *diskOnDemand     `json:"onDemand,omitempty"`
	TableClass     string            `json:"tableClass,omitempty"`
	Protected      bool              `json:"protected,omitempty"`
	SSE            *diskSSE          `json:"sse,omitempty"`
	Tags           []diskTag         `json:"tags,omitempty"`
	TableID        string            `json:"tableId"`
	StreamEnabled  bool              `json:"streamEnabled,omitempty"`
	StreamViewType string            `json:"streamViewType,omitempty"`
	StreamLabel    string            `json:"streamLabel,omitempty"`
	TTLAttribute   string            `json:"ttlAttribute,omitempty"`
	TTLEnabled     bool              `json:"ttlEnabled,omitempty"`
	ThroughputLog  diskThroughputLog `json:"throughputLog"`
	Warm           diskWarm          `json:"warm"`
	PayPerRequest  time.Time         `json:"payPerRequestAt"`
	ClassUpdated   time.Time         `json:"tableClassUpdated"`
	PITR           *diskPITR         `json:"pitr,omitempty"`
	Restore        *diskRestore      `json:"restore,omitempty"`
}

// MarshalJSON writes the definition in the catalog's format.
func (d TableDef) MarshalJSON() ([]byte, error) { return json.Marshal(toDisk(&d)) }

// UnmarshalJSON reads the definition from the catalog's format.
func (d *TableDef) UnmarshalJSON(raw []byte) error {
	var w diskTable
	if err := json.Unmarshal(raw, &w); err != nil {
		return err
	}
	*d = fromDisk(&w)
	return nil
}

// mapPtr converts what p points to, keeping nil.
func mapPtr[T, U any](p *T, f func(T) U) *U {
	if p == nil {
		return nil
	}
	u := f(*p)
	return &u
}

func diskKeyOf(k KeyDef) diskKey { return diskKey{Name: k.Name, Type: uint8(k.Type)} }
func keyOfDisk(k diskKey) KeyDef { return KeyDef{Name: k.Name, Type: av.Type(k.Type)} }

func diskTP(t wire.ProvisionedThroughput) diskThroughput {
	return diskThroughput{Read: t.ReadCapacityUnits, Write: t.WriteCapacityUnits}
}
func tpOfDisk(t diskThroughput) wire.ProvisionedThroughput {
	return wire.ProvisionedThroughput{ReadCapacityUnits: t.Read, WriteCapacityUnits: t.Write}
}
func diskOD(t wire.OnDemandThroughput) diskOnDemand {
	return diskOnDemand{MaxRead: t.MaxReadRequestUnits, MaxWrite: t.MaxWriteRequestUnits}
}
func odOfDisk(t diskOnDemand) wire.OnDemandThroughput {
	return wire.OnDemandThroughput{MaxReadRequestUnits: t.MaxRead, MaxWriteRequestUnits: t.MaxWrite}
}
func diskLog(l ThroughputLog) diskThroughputLog {
	//lint:ignore S1016 the disk and memory types may diverge; a conversion would bind them
	return diskThroughputLog{LastIncrease: l.LastIncrease, LastDecrease: l.LastDecrease, Decreases: l.Decreases}
}
func logOfDisk(l diskThroughputLog) ThroughputLog {
	//lint:ignore S1016 the disk and memory types may diverge; a conversion would bind them
	return ThroughputLog{LastIncrease: l.LastIncrease, LastDecrease: l.LastDecrease, Decreases: l.Decreases}
}

func toDisk(d *TableDef) *diskTable {
	w := &diskTable{
		Name: d.Name, ID: d.ID, Hash: diskKeyOf(d.Hash), Range: diskKeyOf(d.Range),
		NextIndexID: d.NextIndexID, Created: d.Created, BillingMode: d.BillingMode,
		Throughput: diskTP(d.Throughput), OnDemand: mapPtr(d.OnDemand, diskOD),
		TableClass: d.TableClass, Protected: d.Protected, TableID: d.TableID,
		SSE: mapPtr(d.SSE, func(s wire.SSESpecification) diskSSE {
			return diskSSE{Enabled: s.Enabled, Type: s.SSEType, KMSKeyID: s.KMSMasterKeyId}
		}),
		StreamEnabled: d.StreamEnabled, StreamViewType: d.StreamViewType, StreamLabel: d.StreamLabel,
		TTLAttribute: d.TTLAttribute, TTLEnabled: d.TTLEnabled,
		ThroughputLog: diskLog(d.ThroughputLog), Warm: diskWarm{Read: d.Warm.Read, Write: d.Warm.Write},
		PayPerRequest: d.PayPerRequestAt, ClassUpdated: d.TableClassUpdated,
		//lint:ignore S1016 the disk and memory types may diverge; a conversion would bind them
		PITR: mapPtr(d.PITR, func(p PITRState) diskPITR { return diskPITR{Enabled: p.Enabled, Since: p.Since, Days: p.Days} }),
		Restore: mapPtr(d.Restore, func(r RestoreSummary) diskRestore {
			//lint:ignore S1016 the disk and memory types may diverge; a conversion would bind them
			return diskRestore{SourceBackupArn: r.SourceBackupArn, SourceTableArn: r.SourceTableArn, RestoredAt: r.RestoredAt}
		}),
	}
	if d.AttrDefs != nil {
		w.AttrDefs = make([]diskAttr, len(d.AttrDefs))
		for i, a := range d.AttrDefs {
			w.AttrDefs[i] = diskAttr{Name: a.AttributeName, Type: a.AttributeType}
		}
	}
	for _, t := range d.Tags {
		w.Tags = append(w.Tags, diskTag{Key: t.Key, Value: t.Value})
	}
	for _, ix := range d.Indexes {
		w.Indexes = append(w.Indexes, &diskIndex{
			Name: ix.Name, ID: ix.ID, Local: ix.Local, Hash: diskKeyOf(ix.Hash), Range: diskKeyOf(ix.Range),
			ProjectionType: ix.ProjectionType, NonKey: ix.NonKey,
			Throughput: mapPtr(ix.Throughput, diskTP), OnDemand: mapPtr(ix.OnDemand, diskOD),
			Backfilling: ix.Backfilling, ThroughputLog: diskLog(ix.ThroughputLog),
			Warm: diskWarm{Read: ix.Warm.Read, Write: ix.Warm.Write},
		})
	}
	return w
}

func fromDisk(w *diskTable) TableDef {
	d := TableDef{
		Name: w.Name, ID: w.ID, Hash: keyOfDisk(w.Hash), Range: keyOfDisk(w.Range),
		NextIndexID: w.NextIndexID, Created: w.Created, BillingMode: w.BillingMode,
		Throughput: tpOfDisk(w.Throughput), OnDemand: mapPtr(w.OnDemand, odOfDisk),
		TableClass: w.TableClass, Protected: w.Protected, TableID: w.TableID,
		SSE: mapPtr(w.SSE, func(s diskSSE) wire.SSESpecification {
			return wire.SSESpecification{Enabled: s.Enabled, SSEType: s.Type, KMSMasterKeyId: s.KMSKeyID}
		}),
		StreamEnabled: w.StreamEnabled, StreamViewType: w.StreamViewType, StreamLabel: w.StreamLabel,
		TTLAttribute: w.TTLAttribute, TTLEnabled: w.TTLEnabled,
		ThroughputLog: logOfDisk(w.ThroughputLog), Warm: WarmThroughput{Read: w.Warm.Read, Write: w.Warm.Write},
		PayPerRequestAt: w.PayPerRequest, TableClassUpdated: w.ClassUpdated,
		//lint:ignore S1016 the disk and memory types may diverge; a conversion would bind them
		PITR: mapPtr(w.PITR, func(p diskPITR) PITRState { return PITRState{Enabled: p.Enabled, Since: p.Since, Days: p.Days} }),
		Restore: mapPtr(w.Restore, func(r diskRestore) RestoreSummary {
			//lint:ignore S1016 the disk and memory types may diverge; a conversion would bind them
			return RestoreSummary{SourceBackupArn: r.SourceBackupArn, SourceTableArn: r.SourceTableArn, RestoredAt: r.RestoredAt}
		}),
	}
	if w.AttrDefs != nil {
		d.AttrDefs = make([]wire.AttributeDefinition, len(w.AttrDefs))
		for i, a := range w.AttrDefs {
			d.AttrDefs[i] = wire.AttributeDefinition{AttributeName: a.Name, AttributeType: a.Type}
		}
	}
	for _, t := range w.Tags {
		d.Tags = append(d.Tags, wire.Tag{Key: t.Key, Value: t.Value})
	}
	for _, ix := range w.Indexes {
		d.Indexes = append(d.Indexes, &IndexDef{
			Name: ix.Name, ID: ix.ID, Local: ix.Local, Hash: keyOfDisk(ix.Hash), Range: keyOfDisk(ix.Range),
			ProjectionType: ix.ProjectionType, NonKey: ix.NonKey,
			Throughput: mapPtr(ix.Throughput, tpOfDisk), OnDemand: mapPtr(ix.OnDemand, odOfDisk),
			Backfilling: ix.Backfilling, ThroughputLog: logOfDisk(ix.ThroughputLog),
			Warm: WarmThroughput{Read: ix.Warm.Read, Write: ix.Warm.Write},
		})
	}
	return d
}

// loadFormat checks the catalog's format version at Open and records it
// on a new or format-0 store (whose entries format 1 reads unchanged).
func (s *Store) loadFormat() error {
	v, err := s.DB.Get(storage.FormatVersionKey)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return s.DB.Set(storage.FormatVersionKey, binary.BigEndian.AppendUint32(nil, CatalogFormat))
	case err != nil:
		return fmt.Errorf("ddblocal: read catalog format: %w", err)
	case len(v) != 4:
		return fmt.Errorf("%w: malformed version %x", ErrFormat, v)
	}
	if n := binary.BigEndian.Uint32(v); n > CatalogFormat {
		return fmt.Errorf("%w %d: this build reads formats up to %d", ErrFormat, n, CatalogFormat)
	}
	return nil
}
