package stream

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
)

// summaryType is the type of a bucket counters item.
const summaryType = "BUCKET_SUMMARY"

// counterKey names one bucket counters item.
type counterKey struct{ tenant, bucket string }

// delta is a move of one bucket's counters.
type delta struct{ contracts, cents int64 }

// counters are the bucket counter moves of a run of records. A bucket
// counts exactly what its portfolio partition (GSI2) holds: a header is
// in bucket B while its GSI2PK is T#<t>#B#<B>, with its outstandingCents
// (the index's sort key). A record moves the old image out and the new
// one in, so a balance change, a bucket move (the agenda's BUCKET_MOVE
// writes the header) and a cure (GSI2PK removed) all come out right, and
// a contract's bucket never changes without a write (ADR 0047).
type counters map[counterKey]delta

func (c counters) clone() counters { return maps.Clone(c) }

// apply adds one record's moves.
func (c counters) apply(r Record) {
	if k, cents, ok := inBucket(r.Old); ok {
		d := c[k]
		d.contracts--
		d.cents -= cents
		c[k] = d
	}
	if k, cents, ok := inBucket(r.New); ok {
		d := c[k]
		d.contracts++
		d.cents += cents
		c[k] = d
	}
}

// inBucket reports the bucket a header image is counted in.
func inBucket(img map[string]types.AttributeValue) (counterKey, int64, bool) {
	if str(img, "type") != contract.TypeHeader { // the counters read only headers
		return counterKey{}, 0, false
	}
	p, err := keys.Parse(keys.GSI2PK, str(img, "GSI2PK"))
	if err != nil || len(p.Parts) != 2 || p.Parts[1].Prefix != "B" {
		return counterKey{}, 0, false
	}
	var cents int64
	if n, ok := img["outstandingCents"].(*types.AttributeValueMemberN); ok {
		cents, _ = strconv.ParseInt(n.Value, 10, 64)
	}
	return counterKey{tenant: p.Parts[0].Fields["tenantId"], bucket: p.Parts[1].Fields["bucket"]}, cents, true
}

func str(img map[string]types.AttributeValue, name string) string {
	if s, ok := img[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// actions are the ADDs of the non-zero moves, in a stable order, on the
// counters items PK T#<t>, SK BSUM#<bucket> (ADR 0028) — the fields the
// portfolio page reads.
func (c counters) actions(now time.Time) []kit.Action {
	ks := slices.SortedFunc(maps.Keys(c), func(a, b counterKey) int {
		if a.tenant != b.tenant {
			if a.tenant < b.tenant {
				return -1
			}
			return 1
		}
		if a.bucket < b.bucket {
			return -1
		}
		if a.bucket > b.bucket {
			return 1
		}
		return 0
	})
	var out []kit.Action
	name, val := expression.Name, expression.Value
	for _, k := range ks {
		d := c[k]
		if d == (delta{}) {
			continue
		}
		upd := expression.Add(name("contracts"), val(d.contracts)).Add(name("outstandingCents"), val(d.cents)).
			Set(name("updatedAt"), val(keys.Timestamp(now))).Set(name("type"), val(summaryType)).
			Set(name("tenantId"), val(k.tenant)).Set(name("bucket"), val(k.bucket))
		out = append(out, kit.UpdateAction(kit.Key{PK: keys.Tenant(k.tenant), SK: keys.BucketSummary(k.bucket)}, upd, nil))
	}
	return out
}
