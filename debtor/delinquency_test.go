package debtor

import (
	"testing"

	"lastro/collections/calendar"
	"lastro/policy"
)

func TestBucket(t *testing.T) {
	t.Parallel()
	for dpd, want := range map[int]string{0: "", -3: "", 1: B001_030, 30: B001_030, 31: B031_060, 60: B031_060, 61: B061_090, 90: B061_090, 91: B091_PLUS, 400: B091_PLUS} {
		if got := Bucket(dpd); got != want {
			t.Errorf("Bucket(%d) = %q, want %q", dpd, got, want)
		}
	}
}

func TestDerive(t *testing.T) {
	t.Parallel()
	d := calendar.MustParse
	monthly := func(first string, n int) []due {
		out := make([]due, n)
		for i := range out {
			out[i] = due{Date: d(first).AddMonths(i), Open: true}
		}
		return out
	}
	regua := policy.DefaultDunning()
	tests := []struct {
		name       string
		insts      []due
		today      string
		status     string
		oldest     string
		dpd        int
		bucket     string
		action     string
		actionDate string
	}{
		{"current: Saturday due date, Monday Oct 12 holiday → payable Tuesday, checked Wednesday", monthly("2026-10-10", 12), "2026-09-24", StatusActive, "", 0, "", policy.DueCheck, "2026-10-14"},
		{"current: due today is not late", monthly("2026-09-24", 3), "2026-09-24", StatusActive, "", 0, "", policy.DueCheck, "2026-09-25"},
		{"current: saturday due date is payable monday", monthly("2026-10-03", 3), "2026-10-05", StatusActive, "", 0, "", policy.DueCheck, "2026-10-06"},
		{"seed example: 45 days → SMS_D45 today", monthly("2026-08-10", 12), "2026-09-24", StatusInCollection, "2026-08-10", 45, B031_060, "SMS_D45", "2026-09-24"},
		{"3 days late → SMS_D5", monthly("2026-09-21", 12), "2026-09-24", StatusInCollection, "2026-09-21", 3, B001_030, "SMS_D5", "2026-09-26"},
		{"20 days late → bucket move before the day-45 step", monthly("2026-09-04", 12), "2026-09-24", StatusInCollection, "2026-09-04", 20, B001_030, policy.BucketMove, "2026-10-05"},
		{"59 days → notice on day 60", monthly("2026-07-27", 12), "2026-09-24", StatusInCollection, "2026-07-27", 59, B031_060, policy.BureauNotice, "2026-09-25"},
		{"62 days → report on day 75", monthly("2026-07-24", 12), "2026-09-24", StatusInCollection, "2026-07-24", 62, B061_090, policy.BureauReport, "2026-10-07"},
		{"80 days → bucket move on day 91", monthly("2026-07-06", 3), "2026-09-24", StatusInCollection, "2026-07-06", 80, B061_090, policy.BucketMove, "2026-10-05"},
		{"180 days, all late → nothing left", monthly("2026-03-28", 3), "2026-09-24", StatusInCollection, "2026-03-28", 180, B091_PLUS, "", ""},
		{"180 days, a future instalment → due check", monthly("2026-03-28", 12), "2026-09-24", StatusInCollection, "2026-03-28", 180, B091_PLUS, policy.DueCheck, "2026-09-29"},
		{"paid instalments don't count", append([]due{{Date: d("2026-01-10")}}, monthly("2026-10-10", 2)...), "2026-09-24", StatusActive, "", 0, "", policy.DueCheck, "2026-10-14"},
	}
	for _, tt := range tests {
		st := Derive(tt.insts, d(tt.today), calendar.National, regua)
		if st.Status != tt.status || st.OldestOverdue.String() != tt.oldest || st.DaysPastDue != tt.dpd || st.Bucket != tt.bucket ||
			st.NextAction != tt.action || st.NextActionDate.String() != tt.actionDate {
			t.Errorf("%s: %s %s %d %s %s %s", tt.name, st.Status, st.OldestOverdue, st.DaysPastDue, st.Bucket, st.NextAction, st.NextActionDate)
		}
	}
}
