package ddblocal

import (
	"lastro/ddblocal/internal/storage"
	"sync/atomic"
	"time"

	"lastro/ddblocal/internal/av"
)

// keyDef names a key attribute and its type; an empty Name means absent.
type keyDef struct {
	Name string  `json:"name,omitempty"`
	Type av.Type `json:"type,omitempty"`
}

// indexDef describes a secondary index as the store keeps it.
type indexDef struct {
	Name           string                 `json:"name"`
	ID             uint16                 `json:"id"`
	Local          bool                   `json:"local,omitempty"`
	Hash           keyDef                 `json:"hash"`
	Range          keyDef                 `json:"range"`
	ProjectionType string                 `json:"projectionType"`
	NonKey         []string               `json:"nonKey,omitempty"`
	Throughput     *provisionedThroughput `json:"throughput,omitempty"`
	OnDemand       *onDemandThroughput    `json:"onDemand,omitempty"`
	// Backfilling is true while an index added by UpdateTable is being filled.
	Backfilling bool `json:"backfilling,omitempty"`
	// Control-plane bookkeeping reported by DescribeTable (control.go).
	ThroughputLog throughputLog  `json:"throughputLog"`
	Warm          warmThroughput `json:"warm"`
}

// tableDef describes a table; it is persisted as JSON in the catalog.
type tableDef struct {
	Name        string                `json:"name"`
	ID          uint32                `json:"id"`
	Hash        keyDef                `json:"hash"`
	Range       keyDef                `json:"range"`
	AttrDefs    []attributeDefinition `json:"attrDefs"`
	Indexes     []*indexDef           `json:"indexes,omitempty"`
	NextIndexID uint16                `json:"nextIndexId"`
	Created     time.Time             `json:"created"`
	BillingMode string                `json:"billingMode"`
	Throughput  provisionedThroughput `json:"throughput"`
	OnDemand    *onDemandThroughput   `json:"onDemand,omitempty"`
	TableClass  string                `json:"tableClass,omitempty"`
	Protected   bool                  `json:"protected,omitempty"`
	SSE         *sseSpecification     `json:"sse,omitempty"`
	Tags        []tag                 `json:"tags,omitempty"`
	TableID     string                `json:"tableId"`

	StreamEnabled  bool   `json:"streamEnabled,omitempty"`
	StreamViewType string `json:"streamViewType,omitempty"`
	StreamLabel    string `json:"streamLabel,omitempty"`

	TTLAttribute string `json:"ttlAttribute,omitempty"`
	TTLEnabled   bool   `json:"ttlEnabled,omitempty"`

	// Control-plane bookkeeping reported by DescribeTable (control.go).
	ThroughputLog     throughputLog  `json:"throughputLog"`
	Warm              warmThroughput `json:"warm"`
	PayPerRequestAt   time.Time      `json:"payPerRequestAt"`   // last switch to PAY_PER_REQUEST; zero if never
	TableClassUpdated time.Time      `json:"tableClassUpdated"` // zero unless UpdateTable changed the class

	// PITR is the point-in-time recovery setting (backups.go); nil until
	// UpdateContinuousBackups first enables it.
	PITR *pitrState `json:"pitr,omitempty"`

	// Restore is set on a table restored from a backup (restore.go).
	Restore *restoreSummary `json:"restore,omitempty"`
}

// table is a live table: its definition (replaced whole on change) and
// counters kept in memory.
type table struct {
	def atomic.Pointer[tableDef]
	// dropped is set by DeleteTable under the commit lock: later commits
	// to the table are refused, so none lands after its data is deleted.
	dropped atomic.Bool
	items   atomic.Int64
	bytes   atomic.Int64
	// per index ID
	idxItems [maxIndexes]atomic.Int64
	idxBytes [maxIndexes]atomic.Int64
}

// maxIndexes bounds index IDs: 20 GSIs and 5 LSIs, with room for the
// IDs of deleted indexes, which are never reused.
const maxIndexes = 256

func (d *tableDef) index(name string) *indexDef {
	for _, ix := range d.Indexes {
		if ix.Name == name {
			return ix
		}
	}
	return nil
}

// keyNames returns the base table's key attribute names.
func (d *tableDef) keyNames() []string {
	if d.Range.Name == "" {
		return []string{d.Hash.Name}
	}
	return []string{d.Hash.Name, d.Range.Name}
}

// isKeyAttr reports whether name is a key attribute of the table or of
// any index.
func (d *tableDef) isTableKey(name string) bool {
	return name == d.Hash.Name || (d.Range.Name != "" && name == d.Range.Name)
}

// The key layout is storage.keys.go; these build the keys of items.

// baseKey returns the storage key of an item of the base table. The item
// must hold the key attributes.
func (d *tableDef) baseKey(it av.Item) []byte {
	b := storage.SpaceKey(d.ID, 0)
	b = storage.AppendPartition(b, it[d.Hash.Name])
	if d.Range.Name != "" {
		b = av.AppendKey(b, it[d.Range.Name])
	}
	return b
}

// appendBaseKeySuffix appends the table's primary key to an index key, so
// that index entries with equal index keys stay distinct.
func (d *tableDef) appendPrimary(b []byte, it av.Item) []byte {
	b = av.AppendKey(b, it[d.Hash.Name])
	if d.Range.Name != "" {
		b = av.AppendKey(b, it[d.Range.Name])
	}
	return b
}

// inIndex reports whether an item belongs to an index: it must hold every
// key attribute of the index with the declared type (sparse indexes).
func (ix *indexDef) inIndex(it av.Item) bool {
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

// entryKey returns the storage key of an item's entry in an index.
func (d *tableDef) entryKey(ix *indexDef, it av.Item) []byte {
	b := storage.SpaceKey(d.ID, ix.ID)
	b = storage.AppendPartition(b, it[ix.Hash.Name])
	if ix.Range.Name != "" {
		b = av.AppendKey(b, it[ix.Range.Name])
	}
	return d.appendPrimary(b, it)
}

// project returns the attributes of it that the index stores.
func (d *tableDef) project(ix *indexDef, it av.Item) av.Item {
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
