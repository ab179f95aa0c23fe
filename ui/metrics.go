package ui

import (
	"cmp"
	"slices"

	"lastro/agenda"
	"lastro/collections/calendar"
	"lastro/contactlimit"
	"lastro/portfolio"
	"lastro/stream"
	"lastro/worklist"
)

// The dashboard's figures beyond the buckets (ADR 0085), each from keyed
// reads: the day counters the stream consumer keeps (one Query of the
// month), the day's call list (the Query the desk reads), the agenda's
// run items and one COUNT per shard. The arithmetic lives here, apart from
// the reads, so each rate is tested on its own.

// csvTables are the dashboard's CSV downloads (?table=), in page order.
var csvTables = []string{"buckets", "promises", "cure", "contacts", "collectors", "shards"}

// rate is part over whole in parts per million (0 when whole is 0): the
// rolls' unit, written by lang.ppm.
func rate(part, whole int64) int64 {
	if whole <= 0 {
		return 0
	}
	return part * 1_000_000 / whole
}

// promiseFigures are the promises resolved in a window: kept and broken
// (a write-off's cancellation is neither), and those made.
type promiseFigures struct {
	Made, Kept, Broken int64
}

// Resolved is kept plus broken.
func (p promiseFigures) Resolved() int64 { return p.Kept + p.Broken }

// KeptPPM is the kept share of the resolved promises.
func (p promiseFigures) KeptPPM() int64 { return rate(p.Kept, p.Resolved()) }

// sumPromises adds the promise counters of the days from..to (ISO dates
// compare as strings).
func sumPromises(days []portfolio.DaySummary, from, to string) promiseFigures {
	var p promiseFigures
	for _, d := range days {
		if d.Date < from || d.Date > to {
			continue
		}
		p.Made += d.Counts[stream.DayPromisesMade]
		p.Kept += d.Counts[stream.DayPromisesKept]
		p.Broken += d.Counts[stream.DayPromisesBroken]
	}
	return p
}

// cureFigures is the month's cure rate (ADR 0085): the contracts cured in
// the month (left the portfolio paid up to date, or paid off — not by an
// agreement or a write-off) over the contracts delinquent at some point of
// the month, which are those delinquent at its start plus those that
// entered since. The start is not stored: it is today's delinquent count
// (the bucket counters) minus the month's entries plus its exits, so the
// denominator is Delinquent + Exits.
type cureFigures struct {
	Cures, CuredCents int64
	Entries, Exits    int64
	Delinquent        int64 // the bucket counters' total now
	AtStart, Exposed  int64 // delinquent when the month began; and the denominator
	RatePPM           int64
}

// cure computes the month's cure rate from its day counters and the
// delinquent contracts now.
func cure(days []portfolio.DaySummary, delinquent int64) cureFigures {
	c := cureFigures{Delinquent: delinquent}
	for _, d := range days {
		c.Cures += d.Counts[stream.DayCures]
		c.CuredCents += d.Counts[stream.DayCuredCents]
		c.Entries += d.Counts[stream.DayDelinquencyIn]
		c.Exits += d.Counts[stream.DayDelinquencyOut]
	}
	c.AtStart = max(0, delinquent-c.Entries+c.Exits)
	c.Exposed = c.AtStart + c.Entries
	c.RatePPM = rate(c.Cures, c.Exposed)
	return c
}

// contactRow is one channel's contacts of the day.
type contactRow struct {
	Channel string
	N       int64
}

// refusalRow is one reason's refused contacts of the day.
type refusalRow struct {
	Reason string
	N      int64
}

// contactFigures are the day's contacts against the cap.
type contactFigures struct {
	Date     string
	Cap      int // maxDailyContacts per debtor per day (the tenant's dunning policy)
	Channels []contactRow
	Spent    int64 // contacts spent, every channel
	Joined   int64 // contracts served by a debtor's contact already spent
	Refused  []refusalRow
	Blocked  int64 // refusals, every reason
}

// contactsOf reads one day's counters as contacts by channel (every
// channel, zeros included, in the gateway's order) and refusals by reason.
func contactsOf(d portfolio.DaySummary, capPerDay int) contactFigures {
	f := contactFigures{Date: d.Date, Cap: capPerDay, Joined: d.Counts[stream.DayJoinedContacts]}
	for _, ch := range contactlimit.Channels {
		n := d.Counts[stream.DayContactsPrefix+string(ch)]
		f.Channels = append(f.Channels, contactRow{string(ch), n})
		f.Spent += n
	}
	for _, r := range stream.RefusalReasons {
		n := d.Counts[stream.DayRefusedPrefix+r]
		f.Refused = append(f.Refused, refusalRow{r, n})
		f.Blocked += n
	}
	return f
}

// collectorRow is one collector's day on the call list.
type collectorRow struct {
	Operator  string // the API key id
	Claimed   int    // tasks taken (working now, waiting a callback or done)
	Working   int    // held now
	Callbacks int    // waiting for the callback the debtor asked
	Done      int
	Outcomes  []outcomeCount // the done and callback tasks by outcome, built-in kinds first (outcomeOrder)
}

// collectors groups the day's tasks by the collector who took them, most
// done first. A task nobody took is in nobody's row.
func collectors(tasks []worklist.Task, now string) []collectorRow {
	idx := map[string]int{}
	var rows []collectorRow
	by := map[string]map[string]int{}
	for _, t := range tasks {
		if t.ClaimedBy == "" {
			continue
		}
		i, ok := idx[t.ClaimedBy]
		if !ok {
			i = len(rows)
			idx[t.ClaimedBy] = i
			rows = append(rows, collectorRow{Operator: t.ClaimedBy})
			by[t.ClaimedBy] = map[string]int{}
		}
		r := &rows[i]
		r.Claimed++
		switch {
		case t.Status == worklist.StatusDone:
			r.Done++
		case t.Status == worklist.StatusCallback:
			r.Callbacks++
		case t.ClaimedUntil >= now:
			r.Working++
		}
		if t.Outcome != "" {
			by[t.ClaimedBy][t.Outcome]++
		}
	}
	for i := range rows {
		for _, o := range outcomeOrder(by[rows[i].Operator]) {
			if n := by[rows[i].Operator][o]; n > 0 {
				rows[i].Outcomes = append(rows[i].Outcomes, outcomeCount{o, n})
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b collectorRow) int {
		return cmp.Or(cmp.Compare(b.Done, a.Done), cmp.Compare(b.Claimed, a.Claimed), cmp.Compare(a.Operator, b.Operator))
	})
	return rows
}

// shardTotals adds the shards' progress.
func shardTotals(ps []agenda.ShardProgress) agenda.ShardProgress {
	t := agenda.ShardProgress{Shard: -1, Started: true, Finished: len(ps) > 0}
	for _, p := range ps {
		t.Executed += p.Executed
		t.Waiting += p.Waiting
		t.Started = t.Started && p.Started
		t.Finished = t.Finished && p.Finished
	}
	return t
}

// monthStart is the first day of d's month.
func monthStart(d calendar.Date) calendar.Date { return d.AddDays(1 - d.Day()) }
