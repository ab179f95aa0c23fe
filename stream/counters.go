package stream

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/arrangement"
	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contactlimit"
	"lastro/contract"
)

// summaryType is the type of a bucket counters item; daySummaryType the
// type of a day counters item (ADR 0085).
const (
	summaryType    = "BUCKET_SUMMARY"
	daySummaryType = "DAY_SUMMARY"
)

// The day counters' attributes (ADR 0085). Contacts and refusals are
// counted per channel and per reason under Contacts+channel and
// Refused+reason (contactsSMS, refusedLIMIT).
const (
	DayPromisesMade   = "promisesMade"
	DayPromisesKept   = "promisesKept"
	DayPromisesBroken = "promisesBroken"
	DayCures          = "cures"
	DayCuredCents     = "curedCents"
	DayDelinquencyIn  = "delinquencyEntries"
	DayDelinquencyOut = "delinquencyExits"
	DayContactsPrefix = "contacts"
	DayFirstContacts  = "firstContacts"
	DayJoinedContacts = "joinedContacts"
	DayRefusedPrefix  = "refused"
)

// counterKey names one counters item: a bucket's (bucket set) or a civil
// date's (day set).
type counterKey struct{ tenant, bucket, day string }

// delta is the moves of one counters item, by attribute.
type delta map[string]int64

// counters are the counter moves of a run of records. A bucket counts
// exactly what its portfolio partition (GSI2) holds: a header is in
// bucket B while its GSI2PK is T#<t>#B#<B>, with its outstandingCents
// (the index's sort key). A record moves the old image out and the new
// one in, so a balance change, a bucket move (the agenda's BUCKET_MOVE
// writes the header) and a cure (GSI2PK removed) all come out right, and
// a contract's bucket never changes without a write (ADR 0047).
//
// A day counts what happened on it (ADR 0085): promises made, kept and
// broken and the contracts that entered, left and were cured of
// delinquency on the tenant's civil date of the record; contacts spent
// per channel and refused per reason on the debtor's local date of the
// attempt, the date its daily cap counts on.
type counters map[counterKey]delta

func (c counters) clone() counters {
	out := make(counters, len(c))
	for k, d := range c {
		out[k] = maps.Clone(d)
	}
	return out
}

func (c counters) add(k counterKey, field string, n int64) {
	d := c[k]
	if d == nil {
		d = delta{}
		c[k] = d
	}
	d[field] += n
}

// zones are the tenants' time zones a chunk's day counters date records
// in; a tenant without one keeps no day counters of its headers and
// promises.
type zones map[string]*time.Location

// apply adds one record's bucket moves (when buckets) and day moves.
func (c counters) apply(r Record, buckets bool, z zones) {
	if buckets {
		if k, cents, ok := inBucket(r.Old); ok {
			c.add(k, "contracts", -1)
			c.add(k, "outstandingCents", -cents)
		}
		if k, cents, ok := inBucket(r.New); ok {
			c.add(k, "contracts", 1)
			c.add(k, "outstandingCents", cents)
		}
	}
	c.day(r, z)
}

// day adds a record's day moves.
func (c counters) day(r Record, z zones) {
	if r.New == nil {
		return // a removal is no business fact
	}
	switch str(r.New, "type") {
	case contract.TypeHeader:
		oldK, oldCents, wasIn := inBucket(r.Old)
		newK, _, isIn := inBucket(r.New)
		tenant := cmp.Or(newK.tenant, oldK.tenant)
		loc := z[tenant]
		if loc == nil || wasIn == isIn {
			return
		}
		k := counterKey{tenant: tenant, day: calendar.Of(r.At, loc).String()}
		if isIn {
			c.add(k, DayDelinquencyIn, 1)
			return
		}
		c.add(k, DayDelinquencyOut, 1)
		if cured(r.New) {
			c.add(k, DayCures, 1)
			c.add(k, DayCuredCents, oldCents)
		}
	case arrangement.TypePromise:
		o, err := ownerOf(r.New)
		loc := z[o.tenant]
		if err != nil || loc == nil {
			return
		}
		before, now := str(r.Old, "status"), str(r.New, "status")
		field := ""
		switch {
		case r.Old == nil && now == arrangement.PromiseOpen:
			field = DayPromisesMade
		case before == arrangement.PromiseOpen && now == arrangement.PromiseKept:
			field = DayPromisesKept
		case before == arrangement.PromiseOpen && now == arrangement.PromiseBroken:
			field = DayPromisesBroken
		default:
			return
		}
		c.add(counterKey{tenant: o.tenant, day: calendar.Of(r.At, loc).String()}, field, 1)
	case contactlimit.TypeContact:
		if r.Old != nil {
			return // an attempt counts once, when its evidence is written
		}
		o, err := ownerOf(r.New)
		d, derr := calendar.Parse(str(r.New, "localDate"))
		if err != nil || derr != nil {
			return
		}
		k := counterKey{tenant: o.tenant, day: d.String()}
		switch str(r.New, "outcome") {
		case contactlimit.OutcomePending:
			ch := str(r.New, "channel")
			if !contactlimit.ValidChannel(contactlimit.Channel(ch)) {
				return
			}
			c.add(k, DayContactsPrefix+ch, 1)
		case contactlimit.OutcomeJoined:
			c.add(k, DayJoinedContacts, 1)
		case contactlimit.OutcomeBlocked, contactlimit.OutcomeSkippedNoAddress:
			if reason := str(r.New, "reason"); knownReason(reason) {
				c.add(k, DayRefusedPrefix+reason, 1)
			}
		}
	}
}

// knownReason keeps the refusal reasons the gateway writes, so a bad
// image cannot name attributes.
func knownReason(r string) bool {
	return slices.Contains(RefusalReasons, r)
}

// RefusalReasons are the gateway's reasons the day counters count.
var RefusalReasons = []string{string(contactlimit.ReasonLimit), string(contactlimit.ReasonWindow), string(contactlimit.ReasonHoliday),
	string(contactlimit.ReasonOptOut), string(contactlimit.ReasonDispute), string(contactlimit.ReasonNoAddress)}

// cured reports a header that left the portfolio by its instalments (paid
// up to date, or paid off): the ContractCured event's rule, not an
// agreement or a write-off taking over.
func cured(img map[string]types.AttributeValue) bool {
	st := str(img, "status")
	return str(img, "oldestOverdueDueDate") == "" && (st == contract.StatusActive || st == contract.StatusSettled)
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

// actions are the ADDs of the non-zero moves, in a stable order: on the
// bucket counters items PK T#<t>, SK BSUM#<bucket> (ADR 0028) and the
// day counters items PK T#<t>, SK DSUM#<date> (ADR 0085) — the fields the
// portfolio page and the dashboard read.
func (c counters) actions(now time.Time) []kit.Action {
	ks := slices.SortedFunc(maps.Keys(c), func(a, b counterKey) int {
		return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.bucket, b.bucket), cmp.Compare(a.day, b.day))
	})
	var out []kit.Action
	name, val := expression.Name, expression.Value
	for _, k := range ks {
		d := c[k]
		fields := slices.Sorted(maps.Keys(d))
		upd := expression.Set(name("updatedAt"), val(keys.Timestamp(now))).Set(name("tenantId"), val(k.tenant))
		moved := false
		for _, f := range fields {
			if d[f] != 0 {
				upd, moved = upd.Add(name(f), val(d[f])), true
			}
		}
		if !moved {
			continue
		}
		key := kit.Key{PK: keys.Tenant(k.tenant), SK: keys.BucketSummary(k.bucket)}
		if k.day != "" {
			key.SK = keys.DaySummary(k.day)
			upd = upd.Set(name("type"), val(daySummaryType)).Set(name("date"), val(k.day))
		} else {
			upd = upd.Set(name("type"), val(summaryType)).Set(name("bucket"), val(k.bucket))
		}
		out = append(out, kit.UpdateAction(key, upd, nil))
	}
	return out
}
