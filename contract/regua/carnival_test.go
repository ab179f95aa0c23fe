package regua

import "testing"

// TestTheFridayBeforeCarnivalKeepsItsFirstStep: due Friday 2026-02-13,
// the instalment is first late on Ash Wednesday 02-18, already 5 days
// past due. SMS_D1 and SMS_D5 both came due while no one could see the
// delinquency: they run in order, SMS_D1 that Wednesday and SMS_D5 on
// the next contact day, none collapsed. A contract onboarded later is
// still a late arrival: only the latest owed step runs.
func TestTheFridayBeforeCarnivalKeepsItsFirstStep(t *testing.T) {
	t.Parallel()
	carnival := open("2026-02-13", "2026-03-13")
	ordinary := open("2026-02-06", "2026-03-06") // a Friday with no holiday after it
	tests := []struct {
		name              string
		f                 Facts
		action, date, why string
		stepDays, dpd     int
		skipped           int
	}{
		{"Ash Wednesday: SMS_D1 first", Facts{Today: d("2026-02-18"), Installments: carnival},
			"SMS_D1", "2026-02-18", WhyOwedInOrder, 1, 5, 0},
		{"after SMS_D1 ran: SMS_D5 the next contact day", Facts{Today: d("2026-02-18"), Installments: carnival,
			Executed: Executed{LastStep: 1, LastAt: d("2026-02-18")}}, "SMS_D5", "2026-02-19", WhyLatestPassedStep, 5, 5, 0},
		{"SMS_D1 blocked on Wednesday: still first on Thursday", Facts{Today: d("2026-02-19"), Installments: carnival},
			"SMS_D1", "2026-02-19", WhyOwedInOrder, 1, 6, 0},
		{"onboarded ten days late: only the latest owed step", Facts{Today: d("2026-03-02"), Installments: carnival},
			"CALL_D15", "2026-03-02", WhyLatestPassedStep, 15, 17, 2},
		{"an ordinary Friday: SMS_D1 on Monday", Facts{Today: d("2026-02-09"), Installments: ordinary},
			"SMS_D1", "2026-02-09", WhyLatestPassedStep, 1, 3, 0},
	}
	for _, tt := range tests {
		tt.f.Policy = noticeAt30()
		p := Next(tt.f)
		if p.Action != tt.action || p.Date.String() != tt.date || p.Why != tt.why || p.Step == nil ||
			p.Step.DaysPastDue != tt.stepDays || p.DaysPastDue != tt.dpd || len(p.Skipped) != tt.skipped {
			t.Errorf("%s: %s on %s (%s), step %v, dpd %d, skipped %v", tt.name, p.Action, p.Date, p.Why, p.Step, p.DaysPastDue, p.Skipped)
		}
	}
}
