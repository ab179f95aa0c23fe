package ui

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"lastro/agenda"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/contract"
	"lastro/debtor"
)

// anyCents reads a number decoded from an item shown as is (float64 from
// the attribute value decoder) as cents.
func anyCents(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	}
	return 0
}

// recentContacts keeps the contacts of local dates on or after since
// (ISO dates compare as strings), latest first as the view has them.
func recentContacts(all []map[string]any, since string) []map[string]any {
	out := []map[string]any{}
	for _, c := range all {
		if d, _ := c["localDate"].(string); d >= since {
			out = append(out, c)
		}
	}
	return out
}

var errEventsParam = errs.E(errs.Invalid, "invalid_events", "events must be <contractId>/<seq>")

// parseEventsParam reads ?events=<contractId>/<seq>.
func parseEventsParam(s string) (string, int, error) {
	cid, seqS, ok := strings.Cut(s, "/")
	seq, err := strconv.Atoi(seqS)
	if !ok || err != nil || seq < 0 || seq > 999 || !keys.ValidIdentifier(cid) {
		return "", 0, errEventsParam
	}
	return cid, seq, nil
}

// instalmentEvents is the audit trail of one instalment (seq 0: the
// contract itself), oldest first, from the events the 360 view read.
func instalmentEvents(v *debtor.View360, cid string, seq int) []contract.EventView {
	var out []contract.EventView
	for _, c := range v.Contracts {
		if c.ContractID != cid {
			continue
		}
		for _, e := range c.Events {
			s := 0
			if e.Seq != nil {
				s = *e.Seq
			}
			if s == seq {
				out = append(out, e)
			}
		}
	}
	slices.Reverse(out)
	return out
}

// groupAgenda groups entries by shard, then action, in that order.
func groupAgenda(items []agenda.Entry) []agendaGroup {
	var out []agendaGroup
	idx := map[[2]string]int{}
	for _, e := range items {
		k := [2]string{strconv.Itoa(e.Shard), e.NextAction}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, agendaGroup{Shard: e.Shard, Action: e.NextAction})
		}
		out[i].Entries = append(out[i].Entries, e)
	}
	slices.SortStableFunc(out, func(a, b agendaGroup) int {
		return cmp.Or(cmp.Compare(a.Shard, b.Shard), cmp.Compare(a.Action, b.Action))
	})
	return out
}
