package migrate

import (
	"math"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/kit"
)

// The size rules DynamoDB bills by (its developer guide, "item sizes"):
// names and strings their UTF-8 bytes, binaries their bytes, numbers about
// a byte per two significant digits plus one, booleans and nulls one
// byte, lists and maps three bytes plus one per member.

func itemSize(it kit.Item) int {
	n := 0
	for k, v := range it {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, c := range v.Value {
			n += 1 + len(k) + valueSize(c)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, c := range v.Value {
			n += 1 + valueSize(c)
		}
		return n
	}
	return 0
}

func numberSize(s string) int {
	s = strings.TrimLeft(s, "+-")
	if e := strings.IndexAny(s, "eE"); e >= 0 {
		s = s[:e]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	intPart = strings.TrimLeft(intPart, "0")
	frac = strings.TrimRight(frac, "0")
	digits := len(intPart) + len(frac)
	if digits == 0 {
		return 1
	}
	lead := len(intPart) % 2 // an odd integer part starts with a lone digit
	return (lead+digits+1)/2 + 1
}

// writeUnits is what one write of size bytes costs: 1 KB units, at least one.
func writeUnits(size int) float64 { return max(math.Ceil(float64(size)/1024), 1) }

// backfillUnits estimates what setting want (and the schemaVersion stamp)
// on item costs: the table's write at the larger of the old and new sizes,
// plus one index entry of the item's keys (the target index's projection
// is KEYS_ONLY, docs/design.md#gsi3-tenant-debtors).
func (m *Migration) backfillUnits(item kit.Item, want map[string]string) float64 {
	added := len(SchemaVersion) + numberSize(strconv.Itoa(m.Version))
	if _, ok := item[SchemaVersion]; ok {
		added = 0
	}
	entry := len("PK") + len(str(item, "PK")) + len("SK") + len(str(item, "SK"))
	for a, v := range want {
		if _, ok := item[a]; !ok {
			added += len(a) + len(v)
		}
		entry += len(a) + len(v)
	}
	return writeUnits(itemSize(item)+added) + writeUnits(entry)
}
