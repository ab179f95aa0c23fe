package engine

import (
	"sync/atomic"
	"time"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

// KeyDef names a key attribute and its type; an empty Name means absent.
type KeyDef struct {
	Name string  `json:"name,omitempty"`
	Type av.Type `json:"type,omitempty"`
}

// IndexDef describes a secondary index as the store keeps it.
type IndexDef struct {
	Name           string                      `json:"name"`
	ID             uint16                      `json:"id"`
	Local          bool                        `json:"local,omitempty"`
	Hash           KeyDef                      `json:"hash"`
	Range          KeyDef                      `json:"range"`
	ProjectionType string                      `json:"projectionType"`
	NonKey         []string                    `json:"nonKey,omitempty"`
	Throughput     *wire.ProvisionedThroughput `json:"throughput,omitempty"`
	OnDemand       *wire.OnDemandThroughput    `json:"onDemand,omitempty"`
	// Backfilling is true while an index added by UpdateTable is being filled.
	Backfilling bool `json:"backfilling,omitempty"`
	// Control-plane bookkeeping reported by DescribeTable (control.go).
	ThroughputLog ThroughputLog  `json:"throughputLog"`
	Warm          WarmThroughput `json:"warm"`
}

// TableDef describes a table; it is persisted as JSON in the catalog.
type TableDef struct {
	Name        string                     `json:"name"`
	ID          uint32                     `json:"id"`
	Hash        KeyDef                     `json:"hash"`
	Range       KeyDef                     `json:"range"`
	AttrDefs    []wire.AttributeDefinition `json:"attrDefs"`
	Indexes     []*IndexDef                `json:"indexes,omitempty"`
	NextIndexID uint16                     `json:"nextIndexId"`
	Created     time.Time                  `json:"created"`
	BillingMode string                     `json:"billingMode"`
	Throughput  wire.ProvisionedThroughput `json:"throughput"`
	OnDemand    *wire.OnDemandThroughput   `json:"onDemand,omitempty"`
	TableClass  string                     `json:"tableClass,omitempty"`
	Protected   bool                       `json:"protected,omitempty"`
	SSE         *wire.SSESpecification     `json:"sse,omitempty"`
	Tags        []wire.Tag                 `json:"tags,omitempty"`
	TableID     string                     `json:"tableId"`

	StreamEnabled  bool   `json:"streamEnabled,omitempty"`
	StreamViewType string `json:"streamViewType,omitempty"`
	StreamLabel    string `json:"streamLabel,omitempty"`

	TTLAttribute string `json:"ttlAttribute,omitempty"`
	TTLEnabled   bool   `json:"ttlEnabled,omitempty"`

	// Control-plane bookkeeping reported by DescribeTable (control.go).
	ThroughputLog     ThroughputLog  `json:"throughputLog"`
	Warm              WarmThroughput `json:"warm"`
	PayPerRequestAt   time.Time      `json:"payPerRequestAt"`   // last switch to PAY_PER_REQUEST; zero if never
	TableClassUpdated time.Time      `json:"tableClassUpdated"` // zero unless UpdateTable changed the class

	// PITR is the point-in-time recovery setting (backups.go); nil until
	// UpdateContinuousBackups first enables it.
	PITR *PITRState `json:"pitr,omitempty"`

	// Restore is set on a table restored from a backup (restore.go).
	Restore *RestoreSummary `json:"restore,omitempty"`
}

// Table is a live table: its definition (replaced whole on change) and
// counters kept in memory.
type Table struct {
	Def atomic.Pointer[TableDef]
	// Dropped is set by DeleteTable under the commit lock: later commits
	// to the table are refused, so none lands after its data is deleted.
	Dropped atomic.Bool
	Items   atomic.Int64
	Bytes   atomic.Int64
	// per index ID
	IdxItems [MaxIndexes]atomic.Int64
	IdxBytes [MaxIndexes]atomic.Int64
}

// MaxIndexes bounds index IDs: 20 GSIs and 5 LSIs, with room for the
// IDs of deleted indexes, which are never reused.
const MaxIndexes = 256

func (d *TableDef) Index(name string) *IndexDef {
	for _, ix := range d.Indexes {
		if ix.Name == name {
			return ix
		}
	}
	return nil
}

// KeyNames returns the base table's key attribute names.
func (d *TableDef) KeyNames() []string {
	if d.Range.Name == "" {
		return []string{d.Hash.Name}
	}
	return []string{d.Hash.Name, d.Range.Name}
}

// isKeyAttr reports whether name is a key attribute of the table or of
// any index.
func (d *TableDef) isTableKey(name string) bool {
	return name == d.Hash.Name || (d.Range.Name != "" && name == d.Range.Name)
}

// The key layout is storage.keys.go; these build the keys of items.

// BaseKey returns the storage key of an item of the base table. The item
// must hold the key attributes.
func (d *TableDef) BaseKey(it av.Item) []byte {
	b := storage.SpaceKey(d.ID, 0)
	b = storage.AppendPartition(b, it[d.Hash.Name])
	if d.Range.Name != "" {
		b = av.AppendKey(b, it[d.Range.Name])
	}
	return b
}

// appendBaseKeySuffix appends the table's primary key to an index key, so
// that index entries with equal index keys stay distinct.
func (d *TableDef) appendPrimary(b []byte, it av.Item) []byte {
	b = av.AppendKey(b, it[d.Hash.Name])
	if d.Range.Name != "" {
		b = av.AppendKey(b, it[d.Range.Name])
	}
	return b
}

// InIndex reports whether an item belongs to an index: it must hold every
// key attribute of the index with the declared type (sparse indexes).
func (ix *IndexDef) InIndex(it av.Item) bool {
	if it == nil {
		return false
	}
	h := it[ix.Hash.Name]
	if h == nil || h.T != ix.Hash.Type {
		return false
	}
	if ix.Range.Name != "" {
		r := it[ix.Range.Name]
		if r == nil || r.T != ix.Range.Type {
			return false
		}
	}
	return true
}

// EntryKey returns the storage key of an item's entry in an index.
func (d *TableDef) EntryKey(ix *IndexDef, it av.Item) []byte {
	b := storage.SpaceKey(d.ID, ix.ID)
	b = storage.AppendPartition(b, it[ix.Hash.Name])
	if ix.Range.Name != "" {
		b = av.AppendKey(b, it[ix.Range.Name])
	}
	return d.appendPrimary(b, it)
}

// Project returns the attributes of it that the index stores.
func (d *TableDef) Project(ix *IndexDef, it av.Item) av.Item {
	if ix.ProjectionType == "ALL" {
		return it
	}
	out := make(av.Item, 4+len(ix.NonKey))
	for _, k := range []string{d.Hash.Name, d.Range.Name, ix.Hash.Name, ix.Range.Name} {
		if v, ok := it[k]; ok && k != "" {
			out[k] = v
		}
	}
	if ix.ProjectionType == "INCLUDE" {
		for _, k := range ix.NonKey {
			if v, ok := it[k]; ok {
				out[k] = v
			}
		}
	}
	return out
}

// RestoreSummary records where a restored table came from: a backup, or
// (SourceBackupArn empty) its source table at RestoredAt, the instant a
// point-in-time restore rebuilt.
type RestoreSummary struct {
	SourceBackupArn string    `json:"sourceBackupArn"`
	SourceTableArn  string    `json:"sourceTableArn"`
	RestoredAt      time.Time `json:"restoredAt"`
}

func (r *RestoreSummary) describe(inProgress bool) map[string]any {
	out := map[string]any{
		"SourceTableArn":    r.SourceTableArn,
		"RestoreDateTime":   Epoch(r.RestoredAt),
		"RestoreInProgress": inProgress,
	}
	if r.SourceBackupArn != "" { // a point-in-time restore has none
		out["SourceBackupArn"] = r.SourceBackupArn
	}
	return out
}

// AddIndex appends an index, assigning it the next index ID.
func (d *TableDef) AddIndex(ix *IndexDef) {
	d.NextIndexID++
	ix.ID = d.NextIndexID
	d.Indexes = append(d.Indexes, ix)
}

// UsesKey reports whether the table or one of its indexes is keyed on name.
func (d *TableDef) UsesKey(name string) bool {
	if d.isTableKey(name) {
		return true
	}
	for _, ix := range d.Indexes {
		if ix.Hash.Name == name || ix.Range.Name == name {
			return true
		}
	}
	return false
}

func (d *TableDef) IndexByID(id uint16) *IndexDef {
	for _, ix := range d.Indexes {
		if ix.ID == id {
			return ix
		}
	}
	return nil
}
