package ui

import (
	"reflect"
	"testing"

	"lastro/agenda"
	"lastro/portfolio"
	"lastro/worklist"
)

func day(date string, counts map[string]int64) portfolio.DaySummary {
	return portfolio.DaySummary{Date: date, Counts: counts}
}

func TestRatesInPartsPerMillion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ part, whole, want int64 }{
		{0, 0, 0}, {1, 0, 0}, {0, 5, 0}, {1, 2, 500_000}, {2, 3, 666_666}, {3, 3, 1_000_000}, {1, -1, 0},
	} {
		if got := rate(c.part, c.whole); got != c.want {
			t.Errorf("rate(%d, %d) = %d, want %d", c.part, c.whole, got, c.want)
		}
	}
}

func TestPromisesOfAWindow(t *testing.T) {
	t.Parallel()
	days := []portfolio.DaySummary{
		day("2026-09-01", map[string]int64{"promisesMade": 4, "promisesKept": 1}),
		day("2026-09-23", map[string]int64{"promisesKept": 2, "promisesBroken": 1}),
		day("2026-09-24", map[string]int64{"promisesMade": 1, "promisesKept": 1, "promisesBroken": 3, "cures": 9}),
	}
	for _, c := range []struct {
		from, to string
		want     promiseFigures
		ppm      int64
	}{
		{"2026-09-24", "2026-09-24", promiseFigures{Made: 1, Kept: 1, Broken: 3}, 250_000},
		{"2026-09-01", "2026-09-24", promiseFigures{Made: 5, Kept: 4, Broken: 4}, 500_000},
		{"2026-09-02", "2026-09-22", promiseFigures{}, 0},
	} {
		got := sumPromises(days, c.from, c.to)
		if got != c.want || got.KeptPPM() != c.ppm {
			t.Errorf("%s..%s: %+v (%d ppm), want %+v (%d ppm)", c.from, c.to, got, got.KeptPPM(), c.want, c.ppm)
		}
	}
}

func TestCureRateOfTheMonth(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		days       []portfolio.DaySummary
		delinquent int64
		want       cureFigures
	}{
		{"nothing counted", nil, 10, cureFigures{Delinquent: 10, AtStart: 10, Exposed: 10}},
		// 10 at the start, 2 entered, 3 left (2 cured, 1 agreement): 9 now;
		// 2 cured of the 12 delinquent in the month.
		{"cures, entries and other exits", []portfolio.DaySummary{
			day("2026-09-02", map[string]int64{"delinquencyEntries": 2, "delinquencyExits": 1}),
			day("2026-09-20", map[string]int64{"delinquencyExits": 2, "cures": 2, "curedCents": 51000}),
		}, 9, cureFigures{Cures: 2, CuredCents: 51000, Entries: 2, Exits: 3, Delinquent: 9, AtStart: 10, Exposed: 12, RatePPM: 166_666}},
		{"all cured", []portfolio.DaySummary{day("2026-09-05", map[string]int64{"delinquencyExits": 4, "cures": 4})},
			0, cureFigures{Cures: 4, Exits: 4, AtStart: 4, Exposed: 4, RatePPM: 1_000_000}},
		// Counters behind the buckets (a start-of-month stock below zero)
		// never make a negative denominator.
		{"entries beyond the stock", []portfolio.DaySummary{day("2026-09-05", map[string]int64{"delinquencyEntries": 5})},
			2, cureFigures{Entries: 5, Delinquent: 2, AtStart: 0, Exposed: 5}},
	} {
		if got := cure(c.days, c.delinquent); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestContactsOfTheDay(t *testing.T) {
	t.Parallel()
	got := contactsOf(day("2026-09-24", map[string]int64{"contactsSMS": 3, "contactsCALL": 2, "joinedContacts": 1,
		"refusedLIMIT": 2, "refusedHOLIDAY": 1, "refusedNO_ADDRESS": 1}), 2)
	if got.Spent != 5 || got.Joined != 1 || got.Blocked != 4 || got.Cap != 2 {
		t.Errorf("totals %+v", got)
	}
	want := []contactRow{{"SMS", 3}, {"WHATSAPP", 0}, {"EMAIL", 0}, {"CALL", 2}, {"LETTER", 0}}
	if !reflect.DeepEqual(got.Channels, want) {
		t.Errorf("channels %v, want %v", got.Channels, want)
	}
	wantR := []refusalRow{{"LIMIT", 2}, {"WINDOW", 0}, {"HOLIDAY", 1}, {"OPT_OUT", 0}, {"DISPUTE", 0}, {"NO_ADDRESS", 1}}
	if !reflect.DeepEqual(got.Refused, wantR) {
		t.Errorf("refusals %v, want %v", got.Refused, wantR)
	}
}

func TestCollectorsOfTheDay(t *testing.T) {
	t.Parallel()
	now := "2026-09-24T12:00:00.000Z"
	tasks := []worklist.Task{
		{ClaimedBy: "aaaa", Status: worklist.StatusDone, Outcome: "NO_ANSWER"},
		{ClaimedBy: "aaaa", Status: worklist.StatusDone, Outcome: "PROMISE"},
		{ClaimedBy: "aaaa", Status: worklist.StatusCallback, Outcome: "CALLBACK"},
		{ClaimedBy: "bbbb", Status: worklist.StatusOpen, ClaimedUntil: "2026-09-24T12:10:00.000Z"},
		{ClaimedBy: "bbbb", Status: worklist.StatusOpen, ClaimedUntil: "2026-09-24T11:00:00.000Z"}, // a lapsed claim
		{ClaimedBy: "cccc", Status: worklist.StatusDone, Outcome: "REACHED"},
		{Status: worklist.StatusOpen},
	}
	got := collectors(tasks, now)
	want := []collectorRow{
		{Operator: "aaaa", Claimed: 3, Callbacks: 1, Done: 2, Outcomes: []outcomeCount{{"NO_ANSWER", 1}, {"PROMISE", 1}, {"CALLBACK", 1}}},
		{Operator: "cccc", Claimed: 1, Done: 1, Outcomes: []outcomeCount{{"REACHED", 1}}},
		{Operator: "bbbb", Claimed: 2, Working: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("collectors\n%+v\nwant\n%+v", got, want)
	}
}

func TestShardTotals(t *testing.T) {
	t.Parallel()
	got := shardTotals([]agenda.ShardProgress{{Shard: 0, Started: true, Finished: true, Executed: 3, Waiting: 1}, {Shard: 1, Executed: 0, Waiting: 4}})
	if got.Executed != 3 || got.Waiting != 5 || got.Due() != 8 || got.Finished || got.Started {
		t.Errorf("totals %+v", got)
	}
}
