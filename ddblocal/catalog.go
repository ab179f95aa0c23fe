package ddblocal

import (
	"encoding/binary"
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

// Storage key layout (all in one Pebble keyspace):
//
//	0x00 'T' <table name>                      table definition (JSON)
//	0x00 'N'                                   next table ID
//	0x00 'Q'                                   stream sequence numbers reserved up to (u64, streams.go)
//	0x00 'S' <tableID u32> <stream label>      stream descriptor (JSON)
//	0x00 'H' <tableID u32>                     stream trim horizon: lower sequence numbers were trimmed (u64)
//	0x00 'B' <backup ARN>                      on-demand backup descriptor (JSON, ondemand.go)
//	0x00 'K' <client request token>            transaction token: request hash, Unix ms, response JSON (tokens.go)
//	0x01 <tableID u32> <indexID u16> <hash u32> <enc(hash key)> [enc(range key)] [base key, for indexes]
//	0x02 <tableID u32> <sequence number u64>   stream record: created at, Unix ms (u64), then its JSON
//	0x03 <backupID u32> <hash u32> <enc(hash key)> [enc(range key)]   backed-up item (binary)
//
// Index 0 is the base table. The 32-bit hash of the encoded partition key
// comes first so that a Scan visits partitions in hash order (as DynamoDB
// does) and parallel Scan segments are contiguous key ranges. Stream
// records are written in the batch of the change they describe (see
// streams.go) and outlive their table's data for the 24 hours a stream
// stays readable.
const (
	prefixMeta   byte = 0x00
	prefixData   byte = 0x01
	prefixStream byte = 0x02
)

func metaTableKey(name string) []byte { return append([]byte{prefixMeta, 'T'}, name...) }

var metaNextIDKey = []byte{prefixMeta, 'N'}

// spaceKey returns the prefix of one table index's key space.
func spaceKey(tableID uint32, indexID uint16) []byte {
	b := make([]byte, 0, 64)
	b = append(b, prefixData)
	b = binary.BigEndian.AppendUint32(b, tableID)
	return binary.BigEndian.AppendUint16(b, indexID)
}

// tableSpan returns the key range holding every index of a table.
func tableSpan(tableID uint32) (lo, hi []byte) {
	lo = append([]byte{prefixData}, binary.BigEndian.AppendUint32(nil, tableID)...)
	hi = append([]byte{prefixData}, binary.BigEndian.AppendUint32(nil, tableID+1)...)
	return lo, hi
}

// partitionHash is FNV-1a over the encoded partition key.
func partitionHash(enc []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range enc {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}

// appendPartition appends hash and encoding of a partition key value.
func appendPartition(b []byte, v *av.Value) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = av.AppendKey(b, v)
	binary.BigEndian.PutUint32(b[start:], partitionHash(b[start+4:]))
	return b
}

// baseKey returns the storage key of an item of the base table. The item
// must hold the key attributes.
func (d *tableDef) baseKey(it av.Item) []byte {
	b := spaceKey(d.ID, 0)
	b = appendPartition(b, it[d.Hash.Name])
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
	b := spaceKey(d.ID, ix.ID)
	b = appendPartition(b, it[ix.Hash.Name])
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
