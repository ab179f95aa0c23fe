package regua

import (
	"slices"
	"testing"
	"time"

	"lastro/collections/calendar"
	"lastro/policy"
)

var d = calendar.MustParse

// open builds open instalments, numbered from 1, due on the given dates.
func open(dues ...string) []Installment {
	out := make([]Installment, len(dues))
	for i, s := range dues {
		out[i] = Installment{Seq: i + 1, Due: d(s), Open: true}
	}
	return out
}

// custom is a policy with the given steps and the default windows.
func custom(days int, steps ...policy.Step) *policy.Dunning {
	p := policy.DefaultDunning()
	p.Steps, p.BureauNoticeToReportDays = steps, days
	return p
}

// noticeAt30 is the brief's short régua: notice at 30, report at 45.
func noticeAt30() *policy.Dunning {
	return custom(15, policy.Step{DaysPastDue: 1, Action: "SMS_D1"}, policy.Step{DaysPastDue: 5, Action: "SMS_D5"},
		policy.Step{DaysPastDue: 15, Action: "CALL_D15"}, policy.Step{DaysPastDue: 30, Action: policy.BureauNotice},
		policy.Step{DaysPastDue: 45, Action: policy.BureauReport})
}

func TestNext(t *testing.T) {
	t.Parallel()
	monthly := open("2026-08-10", "2026-09-10", "2026-10-10", "2026-11-10", "2026-12-10", "2027-01-10")
	dec31 := calendar.New(d("2026-12-31"))
	noSaturday := func(x calendar.Date) bool { return x.Weekday() != time.Saturday }
	tests := []struct {
		name string
		f    Facts

		action, date, why string
		dpd               int
		bucket            string
		stepDays          int   // Step.DaysPastDue when a step is planned
		skipped           []int // days of Plan.Skipped
	}{
		// The design's example contract (docs/design.md#dunning-rule): oldest overdue Monday 2026-08-10.
		{name: "D16 after CALL_D15: the D31 boundary comes before SMS_D45",
			f:      Facts{Today: d("2026-08-26"), Installments: monthly[:1], Executed: Executed{LastStep: 15, LastAt: d("2026-08-25")}},
			action: policy.BucketMove, date: "2026-09-10", why: WhyBucketBoundary, dpd: 16, bucket: BucketD001_030},
		{name: "on the boundary day, after BUCKET_MOVE: SMS_D45 on its day",
			f:      Facts{Today: d("2026-09-10"), Installments: monthly[:1], Executed: Executed{LastStep: 15, LastAt: d("2026-08-25")}},
			action: "SMS_D45", date: "2026-09-24", why: WhyNextStep, dpd: 31, bucket: BucketD031_060, stepDays: 45},
		{name: "seen first on Sunday D41: only the latest owed step, on Monday",
			f:      Facts{Today: d("2026-09-20"), Installments: monthly[:1]},
			action: "CALL_D15", date: "2026-09-21", why: WhyLatestPassedStep, dpd: 41, bucket: BucketD031_060, stepDays: 15, skipped: []int{1, 5}},
		{name: "after that CALL_D15: SMS_D45 (the D61 boundary is 2026-10-10, later)",
			f:      Facts{Today: d("2026-09-21"), Installments: monthly[:1], Executed: Executed{LastStep: 15, LastAt: d("2026-09-21")}},
			action: "SMS_D45", date: "2026-09-24", why: WhyNextStep, dpd: 42, bucket: BucketD031_060, stepDays: 45},
		{name: "due Friday, DUE_CHECK Monday D3: SMS_D1 today, not SMS_D5 on its day",
			f:      Facts{Today: d("2026-08-10"), Installments: open("2026-08-07", "2026-09-07")},
			action: "SMS_D1", date: "2026-08-10", why: WhyLatestPassedStep, dpd: 3, bucket: BucketD001_030, stepDays: 1},
		{name: "current, due Friday: DUE_CHECK the next business day after",
			f:      Facts{Today: d("2026-08-05"), Installments: open("2026-08-07", "2026-09-07")},
			action: policy.DueCheck, date: "2026-08-10", why: WhyNextDue},
		{name: "due today is not late",
			f:      Facts{Today: d("2026-08-10"), Installments: monthly},
			action: policy.DueCheck, date: "2026-08-11", why: WhyNextDue},
		{name: "paid instalments do not count; the next open one is checked",
			f:      Facts{Today: d("2026-09-24"), Installments: append([]Installment{{Seq: 1, Due: d("2026-08-10")}}, open("2026-10-10")...)},
			action: policy.DueCheck, date: "2026-10-14", why: WhyNextDue}, // Sat 10-10, Mon 10-12 holiday → payable Tue, check Wed
		{name: "nothing open: no action",
			f:   Facts{Today: d("2026-09-24"), Installments: []Installment{{Seq: 1, Due: d("2026-08-10")}}},
			why: WhyNoOpen},

		// Bureau steps, short policy: notice on day 30, report on day 45.
		{name: "D35 nothing run: BUREAU_NOTICE, and on the next contact day (Sep 7 holiday)",
			f:      Facts{Today: d("2026-09-07"), Policy: noticeAt30(), Installments: open("2026-08-03")},
			action: policy.BureauNotice, date: "2026-09-08", why: WhyLatestPassedStep, dpd: 35, bucket: BucketD031_060, stepDays: 30, skipped: []int{1, 5, 15}},
		{name: "D45, notice delivered 2 days ago: BUREAU_REPORT at notice + 15, not today",
			f: Facts{Today: d("2026-09-17"), Policy: noticeAt30(), Installments: open("2026-08-03"),
				Executed: Executed{LastStep: 30, LastAt: d("2026-09-15"), NoticeAt: d("2026-09-15")}},
			action: policy.BureauReport, date: "2026-09-30", why: WhyNoticeWait, dpd: 45, bucket: BucketD031_060, stepDays: 45},
		{name: "D46 report waiting: a boundary before it comes first",
			f: Facts{Today: d("2026-09-18"), Policy: noticeAt30(), Installments: open("2026-08-03"),
				Executed: Executed{LastStep: 30, LastAt: d("2026-09-16"), NoticeAt: d("2026-09-16")}},
			action: policy.BureauReport, date: "2026-10-01", why: WhyNoticeWait, dpd: 46, bucket: BucketD031_060, stepDays: 45},
		{name: "D100 nothing run: BUREAU_NOTICE now, never a DUE_CHECK months away",
			f:      Facts{Today: d("2026-11-18"), Installments: monthly},
			action: policy.BureauNotice, date: "2026-11-18", why: WhyNoticeFirst, dpd: 100, bucket: BucketD091_PLUS, stepDays: 60, skipped: []int{1, 5, 15, 45}},
		{name: "D80, notice run but no delivery evidence: the notice again, not the report",
			f:      Facts{Today: d("2026-10-29"), Installments: monthly[:1], Executed: Executed{LastStep: 60, LastAt: d("2026-10-09")}},
			action: policy.BureauNotice, date: "2026-10-29", why: WhyNoticeBeforeReport, dpd: 80, bucket: BucketD061_090, stepDays: 60},
		{name: "D65, notice without evidence: the notice again on the report's day",
			f:      Facts{Today: d("2026-10-14"), Installments: monthly[:1], Executed: Executed{LastStep: 60, LastAt: d("2026-10-09")}},
			action: policy.BureauNotice, date: "2026-10-24", why: WhyNoticeBeforeReport, dpd: 65, bucket: BucketD061_090, stepDays: 60}, // D75, a Saturday
		{name: "D75, notice run 2 days ago, evidence not in yet: no second notice before notice + 15",
			f:      Facts{Today: d("2026-10-24"), Installments: monthly[:1], Executed: Executed{LastStep: 60, LastAt: d("2026-10-22")}},
			action: policy.BureauNotice, date: "2026-11-06", why: WhyNoticeBeforeReport, dpd: 75, bucket: BucketD061_090, stepDays: 60},
		{name: "D80, notice delivered 20 days ago: BUREAU_REPORT today",
			f: Facts{Today: d("2026-10-29"), Installments: monthly[:1],
				Executed: Executed{LastStep: 60, LastAt: d("2026-10-09"), NoticeAt: d("2026-10-09")}},
			action: policy.BureauReport, date: "2026-10-29", why: WhyLatestPassedStep, dpd: 80, bucket: BucketD061_090, stepDays: 75},
		{name: "D80 after the report: BUCKET_MOVE at D91",
			f: Facts{Today: d("2026-10-29"), Installments: monthly[:1],
				Executed: Executed{LastStep: 75, LastAt: d("2026-10-29"), NoticeAt: d("2026-10-09")}},
			action: policy.BucketMove, date: "2026-11-09", why: WhyBucketBoundary, dpd: 80, bucket: BucketD061_090},
		{name: "past the last step and boundary: off the agenda, future instalments or not",
			f: Facts{Today: d("2026-11-18"), Installments: monthly,
				Executed: Executed{LastStep: 75, LastAt: d("2026-10-29"), NoticeAt: d("2026-10-09")}},
			why: WhyReguaDone, dpd: 100, bucket: BucketD091_PLUS},
		{name: "a report owed before a later step runs first (never skipped)",
			f: Facts{Today: d("2026-11-13"), Installments: monthly[:1],
				Policy:   custom(15, policy.Step{DaysPastDue: 60, Action: policy.BureauNotice}, policy.Step{DaysPastDue: 75, Action: policy.BureauReport}, policy.Step{DaysPastDue: 90, Action: "SMS_D90"}),
				Executed: Executed{LastStep: 60, LastAt: d("2026-10-09"), NoticeAt: d("2026-10-09")}},
			action: policy.BureauReport, date: "2026-11-13", why: WhyReportFirst, dpd: 95, bucket: BucketD091_PLUS, stepDays: 75},
		{name: "one step a day: the owed step after a notice run today waits for tomorrow",
			f: Facts{Today: d("2026-10-19"), Installments: monthly[:1],
				Policy:   custom(15, policy.Step{DaysPastDue: 60, Action: policy.BureauNotice}, policy.Step{DaysPastDue: 65, Action: "SMS_D65"}, policy.Step{DaysPastDue: 90, Action: policy.BureauReport}),
				Executed: Executed{LastStep: 60, LastAt: d("2026-10-19"), NoticeAt: d("2026-10-19")}},
			action: "SMS_D65", date: "2026-10-20", why: WhyLatestPassedStep, dpd: 70, bucket: BucketD061_090, stepDays: 65},
		{name: "a step on the boundary day wins over BUCKET_MOVE",
			f: Facts{Today: d("2026-08-12"), Installments: monthly[:1],
				Policy:   custom(15, policy.Step{DaysPastDue: 1, Action: "SMS_D1"}, policy.Step{DaysPastDue: 31, Action: "SMS_D31"}),
				Executed: Executed{LastStep: 1, LastAt: d("2026-08-11")}},
			action: "SMS_D31", date: "2026-09-10", why: WhyNextStep, dpd: 2, bucket: BucketD001_030, stepDays: 31},

		// Payable dates and contact days.
		{name: "due on a holiday (Fri Nov 20): payable Monday, checked Tuesday",
			f:      Facts{Today: d("2026-11-20"), Installments: open("2026-11-20")},
			action: policy.DueCheck, date: "2026-11-24", why: WhyNextDue},
		{name: "due on a holiday, on its DUE_CHECK day: one day late",
			f:      Facts{Today: d("2026-11-24"), Installments: open("2026-11-20")},
			action: "SMS_D1", date: "2026-11-24", why: WhyLatestPassedStep, dpd: 1, bucket: BucketD001_030, stepDays: 1},
		// docs/design.md#dates-and-calendar makes Dec 31 a non-business day; calendar.National does not
		// know it yet, so these rows give the calendar the day.
		{name: "due Dec 31: payable Mon Jan 4, checked Jan 5",
			f:      Facts{Today: d("2026-12-30"), Calendar: dec31, Installments: open("2026-12-31")},
			action: policy.DueCheck, date: "2027-01-05", why: WhyNextDue},
		{name: "due Dec 31, on Jan 5: one day late, not five",
			f:      Facts{Today: d("2027-01-05"), Calendar: dec31, Installments: open("2026-12-31")},
			action: "SMS_D1", date: "2027-01-05", why: WhyLatestPassedStep, dpd: 1, bucket: BucketD001_030, stepDays: 1},
		{name: "due Saturday before Carnival: payable Ash Wednesday, checked Thursday",
			f:      Facts{Today: d("2027-02-05"), Installments: open("2027-02-06")},
			action: policy.DueCheck, date: "2027-02-11", why: WhyNextDue},
		{name: "Carnival payable date: D1 on Thursday",
			f:      Facts{Today: d("2027-02-11"), Installments: open("2027-02-06")},
			action: "SMS_D1", date: "2027-02-11", why: WhyLatestPassedStep, dpd: 1, bucket: BucketD001_030, stepDays: 1},
		{name: "a tenant's extra holiday moves the payable date",
			f:      Facts{Today: d("2026-08-01"), Calendar: calendar.New(d("2026-08-10")), Installments: open("2026-08-10")},
			action: policy.DueCheck, date: "2026-08-12", why: WhyNextDue},
		{name: "step day on a Sunday: Monday",
			f:      Facts{Today: d("2026-09-17"), Installments: open("2026-09-15"), Executed: Executed{LastStep: 1, LastAt: d("2026-09-16")}},
			action: "SMS_D5", date: "2026-09-21", why: WhyNextStep, dpd: 2, bucket: BucketD001_030, stepDays: 5},
		{name: "step owed on a Sunday: Monday",
			f:      Facts{Today: d("2026-09-20"), Installments: open("2026-09-15"), Executed: Executed{LastStep: 1, LastAt: d("2026-09-16")}},
			action: "SMS_D5", date: "2026-09-21", why: WhyLatestPassedStep, dpd: 5, bucket: BucketD001_030, stepDays: 5},
		{name: "step day on a Saturday: Saturday has a window",
			f:      Facts{Today: d("2026-08-12"), Installments: monthly[:1], Executed: Executed{LastStep: 1, LastAt: d("2026-08-11")}},
			action: "SMS_D5", date: "2026-08-15", why: WhyNextStep, dpd: 2, bucket: BucketD001_030, stepDays: 5},
		{name: "step day on a weekday holiday (Sep 7): the next day",
			f:      Facts{Today: d("2026-09-04"), Installments: open("2026-09-02"), Executed: Executed{LastStep: 1, LastAt: d("2026-09-03")}},
			action: "SMS_D5", date: "2026-09-08", why: WhyNextStep, dpd: 2, bucket: BucketD001_030, stepDays: 5},
		{name: "a stricter ContactDay (no Saturday) moves the step to Monday",
			f: Facts{Today: d("2026-08-12"), Installments: monthly[:1], Executed: Executed{LastStep: 1, LastAt: d("2026-08-11")},
				ContactDay: noSaturday},
			action: "SMS_D5", date: "2026-08-17", why: WhyNextStep, dpd: 2, bucket: BucketD001_030, stepDays: 5},
		{name: "no contact day at all: the bucket still moves",
			f: Facts{Today: d("2026-08-12"), Installments: monthly[:1],
				ContactDay: func(calendar.Date) bool { return false }},
			action: policy.BucketMove, date: "2026-09-10", why: WhyBucketBoundary, dpd: 2, bucket: BucketD001_030},
		{name: "no contact day at all, past the boundaries: off the agenda, never a forbidden contact",
			f: Facts{Today: d("2026-11-13"), Installments: monthly[:1], Executed: Executed{LastStep: 45, LastAt: d("2026-09-24")},
				ContactDay: func(calendar.Date) bool { return false }},
			why: WhyNoContactDay, dpd: 95, bucket: BucketD091_PLUS},
		{name: "oldest overdue is the earliest open one; same date, lowest seq",
			f: Facts{Today: d("2026-09-20"), Installments: []Installment{{Seq: 3, Due: d("2026-09-10"), Open: true},
				{Seq: 2, Due: d("2026-08-10"), Open: true}, {Seq: 1, Due: d("2026-08-10"), Open: true}, {Seq: 4, Due: d("2026-07-10")}}},
			action: "CALL_D15", date: "2026-09-21", why: WhyLatestPassedStep, dpd: 41, bucket: BucketD031_060, stepDays: 15, skipped: []int{1, 5}},

		// Holds.
		{name: "promise: PROMISE_CHECK the day after the promised date, no step",
			f:      Facts{Today: d("2026-08-20"), Installments: monthly, Hold: HoldPromise, PromiseDate: d("2026-08-28")},
			action: policy.PromiseCheck, date: "2026-08-29", why: WhyPromise, dpd: 10, bucket: BucketD001_030},
		{name: "promise past its date: checked today",
			f:      Facts{Today: d("2026-08-20"), Installments: monthly, Hold: HoldPromise, PromiseDate: d("2026-08-19")},
			action: policy.PromiseCheck, date: "2026-08-20", why: WhyPromise, dpd: 10, bucket: BucketD001_030},
		{name: "promise across a boundary: BUCKET_MOVE first",
			f:      Facts{Today: d("2026-09-05"), Installments: monthly, Hold: HoldPromise, PromiseDate: d("2026-09-15")},
			action: policy.BucketMove, date: "2026-09-10", why: WhyBucketBoundary, dpd: 26, bucket: BucketD001_030},
		{name: "dispute: no contact, only the bucket keeps up",
			f:      Facts{Today: d("2026-09-05"), Installments: monthly, Hold: HoldDispute},
			action: policy.BucketMove, date: "2026-09-10", why: WhyBucketBoundary, dpd: 26, bucket: BucketD001_030},
		{name: "dispute past the last boundary: off the agenda",
			f:   Facts{Today: d("2026-11-18"), Installments: monthly, Hold: HoldDispute},
			why: WhyOnHold, dpd: 100, bucket: BucketD091_PLUS},
		{name: "written off: off the agenda and the portfolio",
			f:   Facts{Today: d("2026-09-05"), Installments: monthly, Hold: HoldWrittenOff},
			why: WhyOnHold, dpd: 26},
		{name: "settled: nothing",
			f:   Facts{Today: d("2026-09-05"), Hold: HoldSettled},
			why: WhyOnHold},
		{name: "unknown hold: paused (no contact)",
			f:   Facts{Today: d("2026-11-18"), Installments: monthly, Hold: "LEGAL"},
			why: WhyUnknownHold, dpd: 100, bucket: BucketD091_PLUS},
		{name: "agreement: DUE_CHECK of the next instalment",
			f:      Facts{Today: d("2026-08-20"), Installments: open("2026-09-10", "2026-10-10"), Hold: HoldAgreement},
			action: policy.DueCheck, date: "2026-09-11", why: WhyNextDue},
		{name: "agreement with an overdue instalment: no step; its bucket keeps up",
			f:      Facts{Today: d("2026-09-14"), Installments: open("2026-09-10", "2026-10-10"), Hold: HoldAgreement},
			action: policy.BucketMove, date: "2026-10-11", why: WhyBucketBoundary, dpd: 4, bucket: BucketD001_030},
		{name: "agreement with an overdue instalment: the break check before the bucket move",
			f: Facts{Today: d("2026-09-14"), Installments: open("2026-09-10", "2026-10-10"), Hold: HoldAgreement,
				Policy: func() *policy.Dunning { p := policy.DefaultDunning(); p.AgreementBreakDays = 20; return p }()},
			action: policy.DueCheck, date: "2026-10-01", why: WhyAgreementBreak, dpd: 4, bucket: BucketD001_030},
		{name: "agreement with an overdue instalment, on the boundary: the next DUE_CHECK",
			f:      Facts{Today: d("2026-10-11"), Installments: open("2026-09-10", "2026-10-10"), Hold: HoldAgreement},
			action: policy.DueCheck, date: "2026-10-14", why: WhyNextDue, dpd: 31, bucket: BucketD031_060},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := Next(tt.f)
			if p.Action != tt.action || p.Date.String() != tt.date || p.Why != tt.why {
				t.Errorf("Next = %s on %s (%s), want %s on %s (%s)", p.Action, p.Date, p.Why, tt.action, tt.date, tt.why)
			}
			if p.DaysPastDue != tt.dpd || p.Bucket != tt.bucket || p.Delinquent != (tt.dpd > 0) {
				t.Errorf("delinquency = %v D%d %q, want D%d %q", p.Delinquent, p.DaysPastDue, p.Bucket, tt.dpd, tt.bucket)
			}
			switch {
			case tt.stepDays == 0 && p.Step != nil:
				t.Errorf("Step = %+v, want none", *p.Step)
			case tt.stepDays != 0 && (p.Step == nil || p.Step.DaysPastDue != tt.stepDays || p.Step.Action != p.Action):
				t.Errorf("Step = %+v, want day %d of %s", p.Step, tt.stepDays, p.Action)
			}
			var skipped []int
			for _, s := range p.Skipped {
				skipped = append(skipped, s.DaysPastDue)
			}
			if !slices.Equal(skipped, tt.skipped) {
				t.Errorf("Skipped = %v, want %v", skipped, tt.skipped)
			}
		})
	}
}

func TestNextSeq(t *testing.T) {
	t.Parallel()
	insts := []Installment{{Seq: 2, Due: d("2026-08-10"), Open: true}, {Seq: 1, Due: d("2026-08-10"), Open: true}, {Seq: 3, Due: d("2026-09-10"), Open: true}}
	if p := Next(Facts{Today: d("2026-08-20"), Installments: insts}); p.Seq != 1 || !p.OldestOverdue.Equal(d("2026-08-10")) || !p.Payable.Equal(d("2026-08-10")) {
		t.Errorf("delinquent: seq %d oldest %s payable %s, want 1 2026-08-10 2026-08-10", p.Seq, p.OldestOverdue, p.Payable)
	}
	if p := Next(Facts{Today: d("2026-08-01"), Installments: insts}); p.Seq != 1 || p.Action != policy.DueCheck {
		t.Errorf("current: %s seq %d, want DUE_CHECK seq 1", p.Action, p.Seq)
	}
	sat := []Installment{{Seq: 7, Due: d("2026-08-15"), Open: true}}
	if p := Next(Facts{Today: d("2026-08-18"), Installments: sat}); !p.Payable.Equal(d("2026-08-17")) || p.DaysPastDue != 1 {
		t.Errorf("due Saturday: payable %s D%d, want 2026-08-17 D1", p.Payable, p.DaysPastDue)
	}
}

func TestBucket(t *testing.T) {
	t.Parallel()
	for dpd, want := range map[int]string{-3: "", 0: "", 1: BucketD001_030, 30: BucketD001_030, 31: BucketD031_060,
		60: BucketD031_060, 61: BucketD061_090, 90: BucketD061_090, 91: BucketD091_PLUS, 400: BucketD091_PLUS} {
		if got := Bucket(dpd); got != want {
			t.Errorf("Bucket(%d) = %q, want %q", dpd, got, want)
		}
	}
}

func TestContactDays(t *testing.T) {
	t.Parallel()
	p := policy.DefaultDunning()
	sundays := policy.DefaultDunning()
	sundays.ContactWindow.Sunday = &policy.Window{From: "10:00", To: "12:00"}
	tests := []struct {
		day  string
		p    *policy.Dunning
		want bool
		next string
	}{
		{"2026-08-10", p, true, "2026-08-10"},       // Monday
		{"2026-08-15", p, true, "2026-08-15"},       // Saturday window
		{"2026-08-16", p, false, "2026-08-17"},      // Sunday
		{"2026-09-07", p, false, "2026-09-08"},      // Independence, a Monday
		{"2027-01-01", p, false, "2027-01-02"},      // Jan 1, then Saturday
		{"2027-02-06", p, true, "2027-02-06"},       // Saturday before Carnival
		{"2027-02-07", p, false, "2027-02-10"},      // Sunday, Carnival Monday and Tuesday
		{"2027-02-08", sundays, true, "2027-02-08"}, // holidays follow Sunday's window
		{"2026-08-16", nil, false, "2026-08-17"},    // nil policy is the default
	}
	for _, tt := range tests {
		if got := IsContactDay(tt.p, nil, d(tt.day)); got != tt.want {
			t.Errorf("IsContactDay(%s) = %v, want %v", tt.day, got, tt.want)
		}
		if got, ok := NextContactDay(tt.p, nil, d(tt.day)); !ok || got.String() != tt.next {
			t.Errorf("NextContactDay(%s) = %s %v, want %s", tt.day, got, ok, tt.next)
		}
	}
	never := policy.DefaultDunning()
	never.ContactWindow = policy.ContactWindow{}
	if got, ok := NextContactDay(never, calendar.National, d("2026-08-10")); ok || !got.IsZero() {
		t.Errorf("NextContactDay with no window = %s %v, want none", got, ok)
	}
}

func TestRecord(t *testing.T) {
	t.Parallel()
	e := Executed{LastStep: 60, LastAt: d("2026-10-09")}
	notice := policy.Step{DaysPastDue: 60, Action: policy.BureauNotice}
	got := e.Record(Plan{Action: policy.BureauNotice, Step: &notice}, d("2026-10-24"))
	if got.LastStep != 60 || !got.LastAt.Equal(d("2026-10-24")) || !got.NoticeAt.IsZero() {
		t.Errorf("re-sent notice: %+v, want LastStep 60, LastAt 10-24, no NoticeAt", got)
	}
	if got := e.Record(Plan{Action: policy.BucketMove}, d("2026-11-09")); got != e {
		t.Errorf("BUCKET_MOVE changed Executed: %+v", got)
	}
}
