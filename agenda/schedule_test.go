package agenda_test

import (
	"testing"

	"lastro/agenda"
	"lastro/policy"
)

// TestLateOnboardingRunsTheLatestPassedStep: the contract of the régua's
// example (oldest overdue 2026-08-10) signed on Sunday 09-20, already 41
// days late, gets the latest passed step, CALL_D15, on Monday 09-21 —
// not the five older ones — and then SMS_D45 on 09-24.
func TestLateOnboardingRunsTheLatestPassedStep(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-09-20", 11, 0))
	dk := f.sign(t, "C-1", "2026-08-10", 6)
	if h := f.header(t, dk, "C-1"); h.NextAction != "CALL_D15" || h.NextActionDate != "2026-09-21" || h.Bucket != "D031_060" {
		t.Fatalf("signed: %+v", h)
	}
	if got := f.runAt(t, at("2026-09-20", 12, 0)); len(got) != 0 {
		t.Fatalf("Sunday: %v", got)
	}
	if got := f.runAt(t, at("2026-09-21", 8, 0)); got["CALL_D15"] != 1 || len(got) != 1 {
		t.Fatalf("Monday: %v", got)
	}
	if h := f.header(t, dk, "C-1"); h.LastStep != 15 || h.NextAction != "SMS_D45" || h.NextActionDate != "2026-09-24" {
		t.Fatalf("after CALL_D15: %+v", h)
	}
	if got := f.runAt(t, at("2026-09-24", 8, 0)); got["SMS_D45"] != 1 {
		t.Fatalf("09-24: %v", got)
	}
}

// TestBureauNoticeThenReportThenRemoval: under a policy with the notice at
// 30 days and the report at 45 (15 days apart), a contract signed 35 days
// late gets the notice first (never skipped), the report only 15 days
// after the notice's delivery evidence, and once paid, the removal of its
// bureau record.
func TestBureauNoticeThenReportThenRemoval(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-09-14", 9, 0))
	f.noticeReportPolicy(t)
	// Due Mon 2026-08-10: 35 days late on Mon 09-14.
	dk := f.sign(t, "C-b", "2026-08-10", 3)
	if h := f.header(t, dk, "C-b"); h.NextAction != policy.BureauNotice || h.NextActionDate != "2026-09-14" {
		t.Fatalf("signed: %+v", h)
	}
	if got := f.runAt(t, at("2026-09-14", 9, 30)); got[policy.BureauNotice] != 1 {
		t.Fatalf("notice: %v", got)
	}
	h := f.header(t, dk, "C-b")
	if h.NoticeAt != "2026-09-14" || h.NextAction != policy.BureauReport || h.NextActionDate != "2026-09-29" {
		t.Fatalf("after the notice: %+v", h)
	}
	if msgs := f.outbox(t); len(msgs) != 1 || msgs[0]["channel"] != "EMAIL" {
		t.Fatalf("the notice is written (e-mail): %v", msgs)
	}
	// Day 45 is 09-24: too early, the notice is 10 days old.
	if got := f.runAt(t, at("2026-09-24", 9, 0)); len(got) != 0 {
		t.Fatalf("09-24: %v", got)
	}
	if got := f.runAt(t, at("2026-09-29", 9, 0)); got[policy.BureauReport] != 1 {
		t.Fatalf("report: %v", got)
	}
	recs := jsonLines(t, f.BureauPath)
	if len(recs) != 1 || recs[0]["kind"] != agenda.Inclusion || recs[0]["contractId"] != "C-b" || recs[0]["noticeAt"] != "2026-09-14" {
		t.Fatalf("bureau: %v", recs)
	}
	if h := f.header(t, dk, "C-b"); h.ReportedAt != "2026-09-29" {
		t.Fatalf("reported: %+v", h)
	}
	// Paid: the removal is owed at once and runs on the next run.
	for seq := 1; seq <= 2; seq++ {
		f.pay(t, dk, "C-b", seq, at("2026-10-13", 10, 0))
	}
	h = f.header(t, dk, "C-b")
	if h.Bucket != "" || h.NextAction != policy.BureauRemoval || h.NextActionDate != "2026-10-13" {
		t.Fatalf("cured: %+v", h)
	}
	if got := f.runAt(t, at("2026-10-13", 11, 0)); got[policy.BureauRemoval] != 1 {
		t.Fatalf("removal: %v", got)
	}
	recs = jsonLines(t, f.BureauPath)
	if len(recs) != 2 || recs[1]["kind"] != agenda.Removal || recs[1]["reportedAt"] != "2026-09-29" || recs[1]["reason"] != "CURED" {
		t.Fatalf("bureau after the cure: %v", recs)
	}
	if h := f.header(t, dk, "C-b"); h.ReportedAt != "" || h.NextAction != policy.DueCheck {
		t.Fatalf("after the removal: %+v", h)
	}
}

// TestClosedWindowWaitsForTheNextContactDay: a run after the contact
// window has closed does not contact; the step moves to the next contact
// day, with the blocked attempt on record.
func TestClosedWindowWaitsForTheNextContactDay(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0))
	dk := f.sign(t, "C-w", "2026-08-07", 2)
	got := f.runAt(t, at("2026-08-10", 20, 30)) // Monday, after 20:00
	if got["DUE_CHECK"] != 1 || got["SMS_D1"] != 0 {
		t.Fatalf("late run: %v", got)
	}
	if h := f.header(t, dk, "C-w"); h.NextAction != "SMS_D1" || h.NextActionDate != "2026-08-11" || h.LastStep != 0 {
		t.Fatalf("rescheduled: %+v", h)
	}
	day, err := f.Contacts.Day(bg, f.t, dk, "2026-08-10", 10, "")
	if err != nil || len(day.Items) != 1 || day.Items[0].Allowed || day.Items[0].Reason != "WINDOW" {
		t.Fatalf("evidence: %+v %v", day, err)
	}
	if got := f.runAt(t, at("2026-08-11", 8, 0)); got["SMS_D1"] != 1 {
		t.Fatalf("next day: %v", got)
	}
}
