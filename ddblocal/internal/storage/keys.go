package storage

import (
	"bytes"
	"encoding/binary"

	"lastro/ddblocal/internal/av"
)

// Key layout (all in one keyspace). Every prefix the store writes is
// defined in this file and nowhere else:
//
//	0x00 'V'                                   catalog format version (u32, catalog.go)
//	0x00 'T' <table name>                      table definition (versioned JSON)
//	0x00 'N'                                   next table ID
//	0x00 'Q'                                   stream sequence numbers reserved up to (u64)
//	0x00 'S' <tableID u32> <stream label>      stream descriptor (JSON)
//	0x00 'H' <tableID u32>                     stream trim horizon: lower sequence numbers are hidden from Streams (u64),
//	                                           then the Unix ms before which records may be deleted (u64; absent in older stores)
//	0x00 'B' <backup ARN>                      on-demand backup descriptor (JSON)
//	0x00 'K' <client request token>            transaction token: request hash, Unix ms, response JSON
//	0x00 'E' <export ARN>                      table export descriptor (JSON)
//	0x01 <tableID u32> <indexID u16> <hash u32> <enc(hash key)> [enc(range key)] [base key, for indexes]
//	0x02 <tableID u32> <sequence number u64>   stream record: created at, Unix ms (u64), then its JSON
//	0x03 <backupID u32> <hash u32> <enc(hash key)> [enc(range key)]   backed-up item (binary)
//
// Index 0 is the base table. The 32-bit hash of the encoded partition key
// comes first so that a Scan visits partitions in hash order (as DynamoDB
// does) and parallel Scan segments are contiguous key ranges. Stream
// records are written in the batch of the change they describe and
// outlive their table's data for the 24 hours a stream stays readable;
// a table with point-in-time recovery keeps them (below the horizon once
// a day old) for its 35-day window, as exports' history.
const (
	prefixMeta   byte = 0x00
	prefixData   byte = 0x01
	prefixStream byte = 0x02
	prefixBackup byte = 0x03
)

// Meta keys with no argument.
var (
	// FormatVersionKey holds the catalog's format version.
	FormatVersionKey = []byte{prefixMeta, 'V'}
	// NextIDKey holds the next table ID.
	NextIDKey = []byte{prefixMeta, 'N'}
	// SeqKey holds the stream sequence numbers reserved so far.
	SeqKey = []byte{prefixMeta, 'Q'}
)

func meta(kind byte) []byte { return []byte{prefixMeta, kind} }

// TableKey is the catalog key of a table definition.
func TableKey(name string) []byte { return append(meta('T'), name...) }

// TableDefSpan is the key range of every table definition.
func TableDefSpan() (lo, hi []byte) { return meta('T'), meta('U') }

// StreamKey is the key of a table's stream descriptor.
func StreamKey(tableID uint32, label string) []byte {
	return append(binary.BigEndian.AppendUint32(meta('S'), tableID), label...)
}

// StreamSpan is the key range of every stream descriptor.
func StreamSpan() (lo, hi []byte) { return meta('S'), meta('T') }

// HorizonKey is the key of a table's stream trim horizon.
func HorizonKey(tableID uint32) []byte { return binary.BigEndian.AppendUint32(meta('H'), tableID) }

// HorizonSpan is the key range of every trim horizon.
func HorizonSpan() (lo, hi []byte) { return meta('H'), meta('I') }

// HorizonTable returns the table ID of a trim horizon key.
func HorizonTable(key []byte) uint32 { return binary.BigEndian.Uint32(key[2:6]) }

// BackupKey is the key of a backup descriptor.
func BackupKey(arn string) []byte { return append(meta('B'), arn...) }

// BackupDescSpan is the key range of every backup descriptor.
func BackupDescSpan() (lo, hi []byte) { return meta('B'), meta('C') }

// TokenKey is the key of a transaction's client request token.
func TokenKey(token string) []byte { return append(meta('K'), token...) }

// TokenSpan is the key range of every request token.
func TokenSpan() (lo, hi []byte) { return meta('K'), meta('L') }

// ExportKey is the key of a table export's descriptor.
func ExportKey(arn string) []byte { return append(meta('E'), arn...) }

// ExportSpan is the key range of every export descriptor.
func ExportSpan() (lo, hi []byte) { return meta('E'), meta('F') }

// RecordKey is the key of a stream record.
func RecordKey(tableID uint32, seq uint64) []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 1, 13), tableID)
	b[0] = prefixStream
	return binary.BigEndian.AppendUint64(b, seq)
}

// RecordSpan is the key range of a table's stream records.
func RecordSpan(tableID uint32) (lo, hi []byte) {
	lo = binary.BigEndian.AppendUint32([]byte{prefixStream}, tableID)
	return lo, PrefixEnd(lo)
}

// RecordSeq returns the sequence number of a stream record key.
func RecordSeq(key []byte) uint64 { return binary.BigEndian.Uint64(key[5:13]) }

// SpaceKey returns the prefix of one table index's key space.
func SpaceKey(tableID uint32, indexID uint16) []byte {
	b := make([]byte, 0, 64)
	b = append(b, prefixData)
	b = binary.BigEndian.AppendUint32(b, tableID)
	return binary.BigEndian.AppendUint16(b, indexID)
}

// TableSpan returns the key range holding every index of a table.
func TableSpan(tableID uint32) (lo, hi []byte) {
	lo = binary.BigEndian.AppendUint32([]byte{prefixData}, tableID)
	hi = binary.BigEndian.AppendUint32([]byte{prefixData}, tableID+1)
	return lo, hi
}

// DataSpan is the key range of every table's data.
func DataSpan() (lo, hi []byte) { return []byte{prefixData}, []byte{prefixData + 1} }

// DataKeyTable returns the table and index IDs of a data key.
func DataKeyTable(key []byte) (tableID uint32, indexID uint16) {
	return binary.BigEndian.Uint32(key[1:5]), binary.BigEndian.Uint16(key[5:7])
}

// DataKeySuffix returns a data key after its table and index prefix: the
// partition hash and the encoded key, which a backup keeps.
func DataKeySuffix(key []byte) []byte { return key[7:] }

// BackupSpan returns the key range of a backup's items.
func BackupSpan(id uint32) (lo, hi []byte) {
	lo = binary.BigEndian.AppendUint32([]byte{prefixBackup}, id)
	hi = binary.BigEndian.AppendUint32([]byte{prefixBackup}, id+1)
	return lo, hi
}

// BackupKeySuffix returns a backed-up item's key after its backup prefix.
func BackupKeySuffix(key []byte) []byte { return key[5:] }

// PrefixEnd returns the smallest key greater than every key with prefix p.
func PrefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// PartitionHash is FNV-1a over the encoded partition key.
func PartitionHash(enc []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range enc {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}

// AppendPartition appends hash and encoding of a partition key value.
func AppendPartition(b []byte, v *av.Value) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = av.AppendKey(b, v)
	binary.BigEndian.PutUint32(b[start:], PartitionHash(b[start+4:]))
	return b
}
