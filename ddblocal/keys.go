package ddblocal

import (
	"fmt"
	"sort"

	"lastro/ddblocal/internal/av"
)

const (
	maxItemBytes     = 400 * 1024
	maxHashKeyBytes  = 2048
	maxRangeKeyBytes = 1024
)

const (
	errSchemaMismatch = "The provided key element does not match the schema"
	// msgUpdateEmptyIndexKey starts the message for an update that empties
	// an index key; a transaction reports it for the whole request.
	msgUpdateEmptyIndexKey = "One or more parameter values are not valid. The update expression attempted to update a secondary index key"
)

// checkKeyValue applies the rules every key attribute value obeys.
func checkKeyValue(name string, v *av.Value, isRange bool) error {
	switch v.T {
	case av.S:
		if v.Str == "" {
			return validation("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: %s", name)
		}
	case av.B:
		if len(v.Bin) == 0 {
			return validation("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty binary value. Key: %s", name)
		}
	}
	size := av.Size(v)
	if !isRange && size > maxHashKeyBytes {
		return validation("One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes")
	}
	if isRange && size > maxRangeKeyBytes {
		return validation("One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes")
	}
	return nil
}

// keyFromWire validates the attribute values of a Key member, before the
// table is known.
func keyFromWire(w av.WireItem) (av.Item, error) {
	key, err := av.ItemFromWire(w)
	if err != nil {
		return nil, avError(err)
	}
	return key, nil
}

// matchKey checks that key holds exactly the table's key attributes. A
// mismatch cancels a transaction; an empty or oversized key value fails the
// whole request.
func matchKey(d *tableDef, key av.Item) error {
	want := 1
	if d.Range.Name != "" {
		want = 2
	}
	h := key[d.Hash.Name]
	if len(key) != want || h == nil || h.T != d.Hash.Type {
		return cancelling(validation(errSchemaMismatch))
	}
	if d.Range.Name != "" {
		r := key[d.Range.Name]
		if r == nil || r.T != d.Range.Type {
			return cancelling(validation(errSchemaMismatch))
		}
	}
	if err := checkKeyValue(d.Hash.Name, h, false); err != nil {
		return err
	}
	if d.Range.Name != "" {
		return checkKeyValue(d.Range.Name, key[d.Range.Name], true)
	}
	return nil
}

// checkItemKeys validates the key attributes of an item about to be
// written: table keys present and typed (a failure cancels a transaction),
// key values not empty nor too large, index keys typed and not empty.
func checkItemKeys(d *tableDef, it av.Item) error {
	for _, k := range []keyDef{d.Hash, d.Range} {
		if k.Name == "" {
			continue
		}
		v := it[k.Name]
		if v == nil {
			return cancelling(validation("One or more parameter values were invalid: Missing the key %s in the item", k.Name))
		}
		if v.T != k.Type {
			return cancelling(validation("One or more parameter values were invalid: Type mismatch for key %s expected: %s actual: %s", k.Name, k.Type, v.T))
		}
	}
	for _, k := range []keyDef{d.Hash, d.Range} {
		if k.Name == "" {
			continue
		}
		if err := checkKeyValue(k.Name, it[k.Name], k == d.Range); err != nil {
			return err
		}
	}
	return checkIndexKeys(d, it, false)
}

// checkItem validates a whole item about to be written: its keys, then its
// size.
func checkItem(d *tableDef, it av.Item) error {
	if err := checkItemKeys(d, it); err != nil {
		return err
	}
	return checkItemSize(it)
}

func checkItemSize(it av.Item) error {
	if av.ItemSize(it) > maxItemBytes {
		return validation("Item size has exceeded the maximum allowed size")
	}
	return nil
}

// checkIndexKeys rejects index key attributes of the wrong type, empty or
// over the key size limits (2048 bytes for a partition key, 1024 for a
// sort key, as for the table's keys): an index holds them as keys, so a
// value it could never be queried by is refused on write, as DynamoDB
// does. DynamoDB names the first offending index in alphabetical order. An
// empty value produced by an update expression has its own wording.
func checkIndexKeys(d *tableDef, it av.Item, byUpdate bool) error {
	indexes := make([]*indexDef, len(d.Indexes))
	copy(indexes, d.Indexes)
	sort.Slice(indexes, func(i, j int) bool { return indexes[i].Name < indexes[j].Name })
	for _, ix := range indexes {
		for _, k := range []keyDef{ix.Hash, ix.Range} {
			if k.Name == "" {
				continue
			}
			v := it[k.Name]
			if v == nil {
				continue
			}
			if v.T != k.Type {
				return cancelling(validation("One or more parameter values were invalid: Type mismatch for Index Key %s Expected: %s Actual: %s IndexName: %s", k.Name, k.Type, v.T, ix.Name))
			}
			if (v.T == av.S && v.Str == "") || (v.T == av.B && len(v.Bin) == 0) {
				if byUpdate {
					return validation("%s to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty %s value.", msgUpdateEmptyIndexKey, emptyKind(v.T))
				}
				return validation("One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty %s value. IndexName: %s, IndexKey: %s", emptyKind(v.T), ix.Name, k.Name)
			}
			limit := maxHashKeyBytes
			if k == ix.Range {
				limit = maxRangeKeyBytes
			}
			if size := av.Size(v); size > limit {
				return validation("One or more parameter values were invalid: Size limit exceeded for Index Key %s Actual Size: %d bytes Max Size: %d bytes IndexName: %s", k.Name, size, limit, ix.Name)
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

// keyOf extracts the primary key attributes of an item.
func keyOf(d *tableDef, it av.Item) av.Item {
	k := av.Item{d.Hash.Name: it[d.Hash.Name]}
	if d.Range.Name != "" {
		k[d.Range.Name] = it[d.Range.Name]
	}
	return k
}

func (d *tableDef) String() string { return fmt.Sprintf("table %s", d.Name) }
