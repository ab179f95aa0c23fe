package agenda_test

import (
	"errors"
	"os"
	"sync"
	"testing"

	"lastro/agenda"
	"lastro/collections/calendar"
	"lastro/contract"
	"lastro/engine/enginetest"
	"lastro/policy"
)

// noticeReportPolicy is the policy of TestBureauNoticeThenReportThenRemoval.
func (f *fixture) noticeReportPolicy(t *testing.T) {
	t.Helper()
	win := &policy.Window{From: "08:00", To: "20:00"}
	if _, _, err := f.Policies.PutDunning(bg, f.t, policy.DunningInput{
		Steps:                    []policy.Step{{DaysPastDue: 5, Action: "SMS_D5"}, {DaysPastDue: 30, Action: policy.BureauNotice}, {DaysPastDue: 45, Action: policy.BureauReport}},
		ContactWindow:            policy.ContactWindow{Weekdays: win, Saturday: &policy.Window{From: "08:00", To: "14:00"}},
		MaxDailyContacts:         3,
		BureauNoticeToReportDays: 15,
	}); err != nil {
		t.Fatal(err)
	}
	f.Tenants.Invalidate(f.t.ID)
	tn, err := f.Tenants.Get(bg, f.t.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.t = tn
}

// TestReviewPaymentDuringBureauReportReachesNoBureau: a payment that cures
// the contract between the report's read and its write fails the write;
// since the report is recorded before it is submitted, the bureau never
// receives an inclusion for a contract that was paid (found in review:
// it used to be submitted first, leaving an inclusion no removal undid).
func TestReviewPaymentDuringBureauReportReachesNoBureau(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-09-14", 9, 0))
	f.noticeReportPolicy(t)
	dk := f.sign(t, "C-b", "2026-08-10", 3)
	if got := f.runAt(t, at("2026-09-14", 9, 30)); got[policy.BureauNotice] != 1 {
		t.Fatalf("notice: %v", got)
	}
	run := at("2026-09-29", 9, 0)
	var once sync.Once
	f.Agenda.SetBeforeSave(func(string) {
		once.Do(func() {
			for seq := 1; seq <= 2; seq++ {
				f.pay(t, dk, "C-b", seq, at("2026-09-29", 8, 59))
			}
			f.Clock.Set(run)
		})
	})
	f.runAt(t, run)
	// The report is recorded before it is submitted: the payment that
	// landed in between failed the write, so nothing reached the bureau
	// and nothing is owed to it.
	for _, r := range jsonLines(t, f.BureauPath) {
		if r["kind"] == agenda.Inclusion {
			t.Fatalf("a contract paid before its report was recorded reached the bureau: %v", r)
		}
	}
	h := f.header(t, dk, "C-b")
	if h.ReportedAt != "" || h.Bucket != "" || h.NextAction != policy.DueCheck {
		t.Fatalf("cured contract: reportedAt=%q bucket=%q next=%s@%s", h.ReportedAt, h.Bucket, h.NextAction, h.NextActionDate)
	}
}

// TestReviewSameOwnerCannotRunAShardTwice: the scheduler inside serve and
// POST /v1/agenda/run share one Runner (one Owner); acquire grants the
// lease to "already ours", so a second concurrent run of the same shard
// and date is not refused.
func TestReviewSameOwnerCannotRunAShardTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0), enginetest.Shards(1))
	f.sign(t, "C-1", "2026-08-07", 2)
	run := at("2026-08-10", 8, 0)
	f.Clock.Set(run)
	date := calendar.Of(run, f.t.Location)
	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := f.Agenda.RunShard(bg, f.t, date, 0, func(agenda.Progress) {
			close(inside)
			<-release
		})
		done <- err
	}()
	<-inside
	_, err := f.Agenda.RunShard(bg, f.t, date, 0, nil)
	close(release)
	<-done
	if !errors.Is(err, agenda.ErrBusy) {
		t.Fatalf("a second run of a shard this runner is running was not refused: %v", err)
	}
}

// TestReviewRunAheadOfTodayDoesNotDunEarly: POST /v1/agenda/run accepts a
// date up to k days after today; Run then derives the contract on that
// future date, so an instalment not yet due makes the contract
// IN_COLLECTION today and its SMS_D1 is sent today.
func TestReviewRunAheadOfTodayDoesNotDunEarly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-08-01", 10, 0))
	dk := f.sign(t, "C-1", "2026-08-07", 3) // due Friday 08-07
	f.Clock.Set(at("2026-08-05", 9, 0))     // Wednesday: nothing is due yet
	_, err := f.Agenda.Run(bg, f.t, calendar.MustParse("2026-08-10"), agenda.Options{})
	if !errors.Is(err, agenda.ErrFutureDate) {
		t.Fatalf("a run dated after today: %v", err)
	}
	h := f.header(t, dk, "C-1")
	if h.Status != contract.StatusActive || len(f.outbox(t)) != 0 {
		t.Fatalf("on 08-05, two days before the due date: status %s bucket %q, %d message(s) sent",
			h.Status, h.Bucket, len(f.outbox(t)))
	}
}

// TestReviewOneBureauFailureDoesNotStopTheShard: a BUREAU_REPORT whose
// bureau submission fails aborts RunShard; its entry sorts first in the
// partition ("BUREAU_REPORT#" < "DUE_CHECK#" < "SMS_…"), so every run of
// the shard stops on it and the other contracts' actions of that day never
// run (and fall out of the catch-up window after k days).
func TestReviewOneBureauFailureDoesNotStopTheShard(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-09-14", 9, 0), enginetest.Shards(1))
	f.noticeReportPolicy(t)
	f.sign(t, "C-b", "2026-08-10", 3)
	if got := f.runAt(t, at("2026-09-14", 9, 30)); got[policy.BureauNotice] != 1 {
		t.Fatalf("notice: %v", got)
	}
	dk := f.sign(t, "C-x", "2026-09-28", 3)               // due Mon 09-28: DUE_CHECK Tue 09-29
	if err := os.Mkdir(f.BureauPath, 0o700); err != nil { // the bureau is down
		t.Fatal(err)
	}
	run := at("2026-09-29", 9, 0)
	f.Clock.Set(run)
	for range 2 {
		_, _ = f.Agenda.Run(bg, f.t, calendar.Of(run, f.t.Location), agenda.Options{})
	}
	if h := f.header(t, dk, "C-x"); h.Status != contract.StatusInCollection {
		t.Fatalf("C-x's DUE_CHECK never ran behind the failing report: %s %s@%s", h.Status, h.NextAction, h.NextActionDate)
	}
}
