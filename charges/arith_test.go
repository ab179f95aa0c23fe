package charges

import (
	"testing"

	"github.com/shopspring/decimal"

	"lastro/collections/calendar"
	"lastro/policy"
)

func pct(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func pol(fine, late string, order ...string) *policy.Charges {
	p := policy.DefaultCharges()
	p.FinePercent, p.LateInterestMonthlyPercent = pct(fine), pct(late)
	if order != nil {
		p.ImputationOrder = order
	}
	return p
}

var d = calendar.MustParse

func TestRoundingHalfUpPerComponent(t *testing.T) {
	t.Parallel()
	fines := []struct {
		name    string
		percent string
		base    int64
		want    int64
	}{
		{"exact", "2.00", 100000, 2000},
		{"half rounds up", "2.00", 125, 3}, // 2.5 cents
		{"just under half rounds down", "2.00", 124, 2},
		{"just over half rounds up", "2.00", 126, 3},
		{"four decimal rate", "0.0333", 1_000_000, 333},
		{"zero rate", "0", 100000, 0},
		{"zero base", "2.00", 0, 0},
		{"large base stays exact", "2.00", 1_000_000_000_000, 20_000_000_000},
	}
	for _, tt := range fines {
		if got := Fine(pct(tt.percent), tt.base); got != tt.want {
			t.Errorf("fine %s: Fine(%s, %d) = %d, want %d", tt.name, tt.percent, tt.base, got, tt.want)
		}
	}
	late := []struct {
		name    string
		monthly string
		base    int64
		days    int
		want    int64
	}{
		{"a month at 1 %", "1.00", 100000, 30, 1000},
		{"half a cent rounds up", "1.00", 1500, 1, 1},        // 0.5
		{"under half rounds down", "1.00", 1499, 1, 0},       // 0.4997
		{"one and a half rounds up", "1.00", 4500, 1, 2},     // 1.5
		{"a third rounds down", "1.00", 100000, 10, 333},     // 333.33
		{"two thirds round up", "1.00", 200000, 10, 667},     // 666.67
		{"four decimal rate", "0.0333", 1_000_000, 1, 11},    // 11.1
		{"simple, not compound", "1.00", 100000, 360, 12000}, // 12 months at 1 %
		{"zero days", "1.00", 100000, 0, 0},
		{"zero rate", "0", 100000, 45, 0},
		{"large base stays exact", "1.00", 1_000_000_000_000, 999, 333_000_000_000},
	}
	for _, tt := range late {
		if got := LateInterest(pct(tt.monthly), tt.base, tt.days); got != tt.want {
			t.Errorf("late interest %s: LateInterest(%s, %d, %d) = %d, want %d", tt.name, tt.monthly, tt.base, tt.days, got, tt.want)
		}
	}
}

func TestAssess(t *testing.T) {
	t.Parallel()
	cal := calendar.National
	p := pol("2.00", "1.00")
	inst := State{Seq: 1, DueDate: d("2026-09-09"), PrincipalCents: 90000, InterestCents: 10000} // Wednesday
	tests := []struct {
		name        string
		s           State
		pay         string
		daysLate    int
		accrual     int
		fine, late  int64
		payableWant string
	}{
		{"paid on the due date", inst, "2026-09-09", 0, 0, 0, 0, "2026-09-09"},
		{"paid early", inst, "2026-09-01", 0, 0, 0, 0, "2026-09-09"},
		{"one day late", inst, "2026-09-10", 1, 1, 2000, 33, "2026-09-09"},
		{"fifteen days late", inst, "2026-09-24", 15, 15, 2000, 500, "2026-09-09"},
		{"due on Saturday paid Monday: free", State{DueDate: d("2026-10-10"), PrincipalCents: 100000}, "2026-10-12", 0, 0, 0, 0, "2026-10-13"},
		// 2026-10-12 is a national holiday (Nossa Senhora Aparecida): payable Tuesday the 13th.
		{"due on Saturday before a holiday Monday paid Tuesday: free", State{DueDate: d("2026-10-10"), PrincipalCents: 100000}, "2026-10-13", 0, 0, 0, 0, "2026-10-13"},
		{"due on Saturday paid Wednesday: one day", State{DueDate: d("2026-10-10"), PrincipalCents: 100000}, "2026-10-14", 1, 1, 2000, 33, "2026-10-13"},
		{"due on a holiday paid the next day: free", State{DueDate: d("2026-09-07"), PrincipalCents: 100000}, "2026-09-08", 0, 0, 0, 0, "2026-09-08"},
		// Dec 31 has no banking to the public; Jan 1 is a holiday and Jan 2-3 a weekend.
		{"due Thursday Dec 31 paid Monday Jan 4: free", State{DueDate: d("2026-12-31"), PrincipalCents: 100000}, "2027-01-04", 0, 0, 0, 0, "2027-01-04"},
		{"due Thursday Dec 31 paid Tuesday Jan 5: one day", State{DueDate: d("2026-12-31"), PrincipalCents: 100000}, "2027-01-05", 1, 1, 2000, 33, "2027-01-04"},
		{"due before Carnival paid on Ash Wednesday: free", State{DueDate: d("2027-02-06"), PrincipalCents: 100000}, "2027-02-10", 0, 0, 0, 0, "2027-02-10"},
		{"partially paid: base is principal + interest − paid", State{DueDate: d("2026-09-09"), PrincipalCents: 90000, InterestCents: 10000, PaidCents: 40000}, "2026-09-24", 15, 15, 1200, 300, "2026-09-09"},
		{"fine charged once, interest only after the last assessment",
			State{DueDate: d("2026-09-09"), PrincipalCents: 90000, InterestCents: 10000, PaidCents: 40000, FineCents: 2000, LateInterestCents: 166, ChargedThrough: d("2026-09-14")},
			"2026-09-24", 15, 10, 0, 200, "2026-09-09"},
		{"a payment dated before the last assessment adds nothing",
			State{DueDate: d("2026-09-09"), PrincipalCents: 90000, ChargedThrough: d("2026-09-20")}, "2026-09-15", 6, 0, 0, 0, "2026-09-09"},
		{"nothing left to charge on", State{DueDate: d("2026-09-09"), PrincipalCents: 90000, PaidCents: 90000}, "2026-09-24", 15, 0, 0, 0, "2026-09-09"},
	}
	for _, tt := range tests {
		a := Assess(p, cal, tt.s, d(tt.pay))
		if a.DaysLate != tt.daysLate || a.AccrualDays != tt.accrual || a.FineCents != tt.fine || a.LateInterest != tt.late || a.PayableUntil.String() != tt.payableWant {
			t.Errorf("%s: got days %d accrual %d fine %d late %d payable %s; want %d %d %d %d %s", tt.name,
				a.DaysLate, a.AccrualDays, a.FineCents, a.LateInterest, a.PayableUntil, tt.daysLate, tt.accrual, tt.fine, tt.late, tt.payableWant)
		}
	}
}

func TestTenantExtraHolidayMovesTheDueDate(t *testing.T) {
	t.Parallel()
	cal := calendar.New(d("2026-09-09")) // a municipal holiday on the due date
	a := Assess(pol("2.00", "1.00"), cal, State{DueDate: d("2026-09-09"), PrincipalCents: 100000}, d("2026-09-10"))
	if a.DaysLate != 0 || a.FineCents != 0 {
		t.Fatalf("paid on the next business day after a tenant holiday: %+v", a)
	}
}

func TestOwedImputeApply(t *testing.T) {
	t.Parallel()
	cal := calendar.National
	def := pol("2.00", "1.00")
	principalFirst := pol("2.00", "1.00", policy.Principal, policy.Interest, policy.LateInterest, policy.Fine)
	s := State{DueDate: d("2026-09-09"), PrincipalCents: 90000, InterestCents: 10000}
	tests := []struct {
		name   string
		p      *policy.Charges
		s      State
		pay    string
		amount int64
		owed   Components
		got    Components
		rest   int64
		after  State
	}{
		{"on time, exact", def, s, "2026-09-09", 100000,
			Components{0, 0, 10000, 90000}, Components{0, 0, 10000, 90000}, 0,
			State{DueDate: d("2026-09-09"), PrincipalCents: 90000, InterestCents: 10000, PaidCents: 100000}},
		{"late, exact amount due", def, s, "2026-09-24", 102500,
			Components{2000, 500, 10000, 90000}, Components{2000, 500, 10000, 90000}, 0,
			State{DueDate: d("2026-09-09"), PrincipalCents: 90000, InterestCents: 10000, PaidCents: 100000, FineCents: 2000, LateInterestCents: 500,
				FinePaidCents: 2000, LateInterestPaidCents: 500, ChargedThrough: d("2026-09-24")}},
		{"late, partial: charges first (default order)", def, s, "2026-09-24", 3000,
			Components{2000, 500, 10000, 90000}, Components{2000, 500, 500, 0}, 0,
			State{DueDate: d("2026-09-09"), PrincipalCents: 90000, InterestCents: 10000, PaidCents: 500, FineCents: 2000, LateInterestCents: 500,
				FinePaidCents: 2000, LateInterestPaidCents: 500, ChargedThrough: d("2026-09-24")}},
		{"late, partial: principal first", principalFirst, s, "2026-09-24", 95000,
			Components{2000, 500, 10000, 90000}, Components{0, 0, 5000, 90000}, 0,
			State{DueDate: d("2026-09-09"), PrincipalCents: 90000, InterestCents: 10000, PaidCents: 95000, FineCents: 2000, LateInterestCents: 500,
				ChargedThrough: d("2026-09-24")}},
		{"overpayment leaves a rest", def, s, "2026-09-09", 100050,
			Components{0, 0, 10000, 90000}, Components{0, 0, 10000, 90000}, 50,
			State{DueDate: d("2026-09-09"), PrincipalCents: 90000, InterestCents: 10000, PaidCents: 100000}},
	}
	for _, tt := range tests {
		a, owed := AmountDue(tt.p, cal, tt.s, d(tt.pay))
		if owed != tt.owed {
			t.Errorf("%s: owed %+v, want %+v", tt.name, owed, tt.owed)
		}
		got, rest := Impute(tt.p.ImputationOrder, owed, tt.amount)
		if got != tt.got || rest != tt.rest {
			t.Errorf("%s: imputed %+v rest %d, want %+v %d", tt.name, got, rest, tt.got, tt.rest)
		}
		if after := Apply(tt.s, a, got); after != tt.after {
			t.Errorf("%s: after %+v, want %+v", tt.name, after, tt.after)
		}
	}
	// Principal first: what PaidCents covered is principal, so interest is still owed.
	after := State{DueDate: d("2026-09-09"), PrincipalCents: 90000, InterestCents: 10000, PaidCents: 95000, FineCents: 2000, LateInterestCents: 500, ChargedThrough: d("2026-09-24")}
	if _, owed := AmountDue(principalFirst, cal, after, d("2026-09-24")); owed != (Components{2000, 500, 5000, 0}) {
		t.Errorf("principal first, second payment owes %+v", owed)
	}
}
