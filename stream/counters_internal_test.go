package stream

import (
	"maps"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/keys"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

// hdr is a header image: in bucket (GSI2PK set) when bucket is not "".
func hdr(status, bucket, oldest, cents string) map[string]types.AttributeValue {
	img := map[string]types.AttributeValue{"PK": s(keys.Debtor("t-1", "0123456789abcdef")), "type": s("CONTRACT"),
		"status": s(status), "outstandingCents": n(cents)}
	if bucket != "" {
		img["GSI2PK"] = s(keys.Bucket("t-1", bucket))
	}
	if oldest != "" {
		img["oldestOverdueDueDate"] = s(oldest)
	}
	return img
}

func prom(status string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"PK": s(keys.Debtor("t-1", "0123456789abcdef")), "type": s("PROMISE"), "status": s(status)}
}

func contact(outcome, channel, reason, number string) map[string]types.AttributeValue {
	img := map[string]types.AttributeValue{"PK": s(keys.Debtor("t-1", "0123456789abcdef")), "type": s("CONTACT"),
		"outcome": s(outcome), "channel": s(channel), "localDate": s("2026-09-24")}
	if reason != "" {
		img["reason"] = s(reason)
	}
	if number != "" {
		img["attemptNumber"] = n(number)
	}
	return img
}

// TestDayCountersCountWhatHappenedOnTheTenantsDay: each kind of record
// moves the day counters it should, on the tenant's civil date of the
// record (contacts on the attempt's local date), and nothing else.
func TestDayCountersCountWhatHappenedOnTheTenantsDay(t *testing.T) {
	t.Parallel()
	sp, _ := time.LoadLocation("America/Sao_Paulo")
	z := zones{"t-1": sp}
	// 01:30 UTC on the 25th is still the 24th in São Paulo.
	late := time.Date(2026, 9, 25, 1, 30, 0, 0, time.UTC)
	day := counterKey{tenant: "t-1", day: "2026-09-24"}
	for _, c := range []struct {
		name     string
		old, new map[string]types.AttributeValue
		want     delta
	}{
		{"a contract enters delinquency", hdr("ACTIVE", "", "", "1000"), hdr("IN_COLLECTION", "D001_030", "2026-09-20", "1000"), delta{DayDelinquencyIn: 1}},
		{"a bucket move is no entry", hdr("IN_COLLECTION", "D001_030", "2026-08-20", "1000"), hdr("IN_COLLECTION", "D031_060", "2026-08-20", "1000"), nil},
		{"paid up to date: a cure", hdr("IN_COLLECTION", "D031_060", "2026-08-20", "1500"), hdr("ACTIVE", "", "", "700"), delta{DayDelinquencyOut: 1, DayCures: 1, DayCuredCents: 1500}},
		{"paid off: a cure", hdr("IN_COLLECTION", "D001_030", "2026-09-10", "700"), hdr("SETTLED", "", "", "0"), delta{DayDelinquencyOut: 1, DayCures: 1, DayCuredCents: 700}},
		{"an agreement is an exit, no cure", hdr("IN_COLLECTION", "D061_090", "2026-07-10", "900"), hdr("IN_AGREEMENT", "", "", "900"), delta{DayDelinquencyOut: 1}},
		{"a write-off is an exit, no cure", hdr("IN_COLLECTION", "D091_PLUS", "2026-05-10", "900"), hdr("WRITTEN_OFF", "", "2026-05-10", "900"), delta{DayDelinquencyOut: 1}},
		{"a partial payment moves no day counter", hdr("IN_COLLECTION", "D001_030", "2026-09-10", "900"), hdr("IN_COLLECTION", "D001_030", "2026-09-10", "400"), nil},
		{"a promise made", nil, prom("OPEN"), delta{DayPromisesMade: 1}},
		{"a promise kept", prom("OPEN"), prom("KEPT"), delta{DayPromisesKept: 1}},
		{"a promise broken", prom("OPEN"), prom("BROKEN"), delta{DayPromisesBroken: 1}},
		{"a promise cancelled by a write-off", prom("OPEN"), prom("CANCELLED"), nil},
		{"a promise rewritten while open", prom("OPEN"), prom("OPEN"), nil},
		{"the first contact of the debtor's day", nil, contact("PENDING", "SMS", "", "1"), delta{DayContactsPrefix + "SMS": 1}},
		{"a second contact", nil, contact("PENDING", "CALL", "", "2"), delta{DayContactsPrefix + "CALL": 1}},
		{"a joined contact spends none", nil, contact("JOINED", "CALL", "", ""), delta{DayJoinedContacts: 1}},
		{"refused by the cap", nil, contact("BLOCKED", "SMS", "LIMIT", ""), delta{DayRefusedPrefix + "LIMIT": 1}},
		{"refused on a holiday", nil, contact("BLOCKED", "SMS", "HOLIDAY", ""), delta{DayRefusedPrefix + "HOLIDAY": 1}},
		{"refused by an opt-out", nil, contact("BLOCKED", "WHATSAPP", "OPT_OUT", ""), delta{DayRefusedPrefix + "OPT_OUT": 1}},
		{"skipped without an address", nil, contact("SKIPPED_NO_ADDRESS", "SMS", "NO_ADDRESS", ""), delta{DayRefusedPrefix + "NO_ADDRESS": 1}},
		{"an unknown reason names no attribute", nil, contact("BLOCKED", "SMS", "x=1", ""), nil},
		{"an outcome on an attempt counts nothing more", contact("PENDING", "SMS", "", "1"), contact("SENT", "SMS", "", "1"), nil},
	} {
		got := counters{}
		got.apply(Record{Old: c.old, New: c.new, At: late}, false, z)
		var d delta
		if len(got) > 0 {
			d = got[day]
			if len(got) != 1 || d == nil {
				t.Errorf("%s: moved %v, want only %v", c.name, got, day)
				continue
			}
		}
		if !maps.Equal(d, c.want) {
			t.Errorf("%s: %v, want %v", c.name, d, c.want)
		}
	}
	// Without the tenant's zone a header or a promise moves no day; a
	// contact still does (its date is its own).
	got := counters{}
	got.apply(Record{Old: prom("OPEN"), New: prom("KEPT"), At: late}, false, zones{})
	got.apply(Record{New: contact("BLOCKED", "SMS", "LIMIT", "")}, false, zones{})
	if len(got) != 1 || got[day][DayRefusedPrefix+"LIMIT"] != 1 {
		t.Errorf("without a zone: %v", got)
	}
}

// TestCounterActionsSkipZeroMovesAndNameTheirItems: moves that cancel out
// write nothing; a bucket and a day land on their own items.
func TestCounterActionsSkipZeroMovesAndNameTheirItems(t *testing.T) {
	t.Parallel()
	c := counters{}
	c.add(counterKey{tenant: "t-1", bucket: "D001_030"}, "contracts", 1)
	c.add(counterKey{tenant: "t-1", bucket: "D001_030"}, "contracts", -1)
	c.add(counterKey{tenant: "t-1", day: "2026-09-24"}, DayCures, 2)
	acts := c.actions(time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC))
	if len(acts) != 1 {
		t.Fatalf("%d actions, want the day's only", len(acts))
	}
}
