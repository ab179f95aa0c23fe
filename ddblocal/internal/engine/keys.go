package engine

import (
	"fmt"
	"sort"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/wire"
)

const (
	maxItemBytes     = 400 * 1024
	maxHashKeyBytes  = 2048
	maxRangeKeyBytes = 1024
)

const (
	errSchemaMismatch = "The provided key element does not match the schema"
	// MsgUpdateEmptyIndexKey starts the message for an update that empties
	// an index key; a transaction reports it for the whole request.
	MsgUpdateEmptyIndexKey = "One or more parameter values are not valid. The update expression attempted to update a secondary index key"
)

// CheckKeyValue applies the rules every key attribute value obeys.
func CheckKeyValue(name string, v *av.Value, isRange bool) error {
	switch v.T {
	case av.S:
		if v.Str == "" {
			return wire.Validation("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: %s", name)
		}
	case av.B:
		if len(v.Bin) == 0 {
			return wire.Validation("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty binary value. Key: %s", name)
		}
	}
	size := av.Size(v)
	if !isRange && size > maxHashKeyBytes {
		return wire.Validation("One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes")
	}
	if isRange && size > maxRangeKeyBytes {
		return wire.Validation("One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes")
	}
	return nil
}

// KeyFromWire validates the attribute values of a Key member, before the
// table is known.
func KeyFromWire(w av.WireItem) (av.Item, error) {
	key, err := av.ItemFromWire(w)
	if err != nil {
		return nil, AvError(err)
	}
	return key, nil
}

// MatchKey checks that key holds exactly the table's key attributes. A
// mismatch cancels a transaction; an empty or oversized key value fails the
// whole request.
func MatchKey(d *TableDef, key av.Item) error {
	want := 1
	if d.Range.Name != "" {
		want = 2
	}
	h := key[d.Hash.Name]
	if len(key) != want || h == nil || h.T != d.Hash.Type {
		return wire.Cancelling(wire.Validation(errSchemaMismatch))
	}
	if d.Range.Name != "" {
		r := key[d.Range.Name]
		if r == nil || r.T != d.Range.Type {
			return wire.Cancelling(wire.Validation(errSchemaMismatch))
		}
	}
	if err := CheckKeyValue(d.Hash.Name, h, false); err != nil {
		return err
	}
	if d.Range.Name != "" {
		return CheckKeyValue(d.Range.Name, key[d.Range.Name], true)
	}
	return nil
}

// CheckItemKeys validates the key attributes of an item about to be
// written: table keys present and typed (a failure cancels a transaction),
// key values not empty nor too large, index keys typed and not empty.
func CheckItemKeys(d *TableDef, it av.Item) error {
	for _, k := range []KeyDef{d.Hash, d.Range} {
		if k.Name == "" {
			continue
		}
		v := it[k.Name]
		if v == nil {
			return wire.Cancelling(wire.Validation("One or more parameter values were invalid: Missing the key %s in the item", k.Name))
		}
		if v.T != k.Type {
			return wire.Cancelling(wire.Validation("One or more parameter values were invalid: Type mismatch for key %s expected: %s actual: %s", k.Name, k.Type, v.T))
		}
	}
	for _, k := range []KeyDef{d.Hash, d.Range} {
		if k.Name == "" {
			continue
		}
		if err := CheckKeyValue(k.Name, it[k.Name], k == d.Range); err != nil {
			return err
		}
	}
	return checkIndexKeys(d, it, false)
}

// CheckItem validates a whole item about to be written: its keys, then its
// size.
func CheckItem(d *TableDef, it av.Item) error {
	if err := CheckItemKeys(d, it); err != nil {
		return err
	}
	return CheckItemSize(it)
}

func CheckItemSize(it av.Item) error {
	if av.ItemSize(it) > maxItemBytes {
		return wire.Validation("Item size has exceeded the maximum allowed size")
	}
	return nil
}

// checkIndexKeys rejects index key attributes of the wrong type, empty or
// over the key size limits (2048 bytes for a partition key, 1024 for a
// sort key, as for the table's keys): an index holds them as keys, so a
// value it could never be queried by is refused on write, as DynamoDB
// does. DynamoDB names the first offending index in alphabetical order. An
// empty value produced by an update expression has its own wording.
func checkIndexKeys(d *TableDef, it av.Item, byUpdate bool) error {
	indexes := make([]*IndexDef, len(d.Indexes))
	copy(indexes, d.Indexes)
	sort.Slice(indexes, func(i, j int) bool { return indexes[i].Name < indexes[j].Name })
	for _, ix := range indexes {
		for _, k := range []KeyDef{ix.Hash, ix.Range} {
			if k.Name == "" {
				continue
			}
			v := it[k.Name]
			if v == nil {
				continue
			}
			if v.T != k.Type {
				return wire.Cancelling(wire.Validation("One or more parameter values were invalid: Type mismatch for Index Key %s Expected: %s Actual: %s IndexName: %s", k.Name, k.Type, v.T, ix.Name))
			}
			if (v.T == av.S && v.Str == "") || (v.T == av.B && len(v.Bin) == 0) {
				if byUpdate {
					return wire.Validation("%s to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty %s value.", MsgUpdateEmptyIndexKey, emptyKind(v.T))
				}
				return wire.Validation("One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty %s value. IndexName: %s, IndexKey: %s", emptyKind(v.T), ix.Name, k.Name)
			}
			limit := maxHashKeyBytes
			if k == ix.Range {
				limit = maxRangeKeyBytes
			}
			if size := av.Size(v); size > limit {
				return wire.Validation("One or more parameter values were invalid: Size limit exceeded for Index Key %s Actual Size: %d bytes Max Size: %d bytes IndexName: %s", k.Name, size, limit, ix.Name)
			}
		}
	}
	return nil
}

func emptyKind(t av.Type) string {
	if t == av.B {
		return "binary"
	}
	return "string"
}

// KeyOf extracts the primary key attributes of an item.
func KeyOf(d *TableDef, it av.Item) av.Item {
	k := av.Item{d.Hash.Name: it[d.Hash.Name]}
	if d.Range.Name != "" {
		k[d.Range.Name] = it[d.Range.Name]
	}
	return k
}

func (d *TableDef) String() string { return fmt.Sprintf("table %s", d.Name) }
