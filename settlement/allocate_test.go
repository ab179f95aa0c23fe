package settlement

import (
	"testing"

	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/policy"
)

var d = calendar.MustParse

// three instalments of R$ 1,000.00 (900 principal + 100 interest), due
// 2026-07-10, 2026-08-10 and 2026-09-10; paid on 2026-09-24 they are 76,
// 45 and 14 days late.
func three() []charges.State {
	out := []charges.State{}
	for i, due := range []string{"2026-07-10", "2026-08-10", "2026-09-10"} {
		out = append(out, charges.State{Seq: i + 1, DueDate: d(due), PrincipalCents: 90000, InterestCents: 10000})
	}
	return out
}

type want struct {
	seq     int
	days    int
	owed    charges.Components
	paid    charges.Components
	settled bool
}

func TestAllocate(t *testing.T) {
	t.Parallel()
	def := policy.DefaultCharges()
	principalFirst := policy.DefaultCharges()
	principalFirst.ImputationOrder = []string{policy.Principal, policy.Interest, policy.Fine, policy.LateInterest}
	owed1 := charges.Components{Fine: 2000, LateInterest: 2533, Interest: 10000, Principal: 90000} // 76 days: 2533.33
	owed2 := charges.Components{Fine: 2000, LateInterest: 1500, Interest: 10000, Principal: 90000} // 45 days
	owed3 := charges.Components{Fine: 2000, LateInterest: 467, Interest: 10000, Principal: 90000}  // 14 days: 466.67
	tests := []struct {
		name     string
		p        *policy.Charges
		open     []charges.State
		target   int
		pay      string
		amount   int64
		maxLines int
		lines    []want
		credit   int64
	}{
		{"exact amount due of the oldest", def, three(), 1, "2026-09-24", owed1.Total(), 0,
			[]want{{1, 76, owed1, owed1, true}}, 0},
		{"partial: charges first", def, three(), 1, "2026-09-24", 5000, 0,
			[]want{{1, 76, owed1, charges.Components{Fine: 2000, LateInterest: 2533, Interest: 467}, false}}, 0},
		{"partial: principal first", principalFirst, three(), 1, "2026-09-24", 95000, 0,
			[]want{{1, 76, owed1, charges.Components{Principal: 90000, Interest: 5000}, false}}, 0},
		{"overpayment flows to the next open instalment", def, three(), 1, "2026-09-24", owed1.Total() + 50000, 0,
			[]want{{1, 76, owed1, owed1, true}, {2, 45, owed2, charges.Components{Fine: 2000, LateInterest: 1500, Interest: 10000, Principal: 36500}, false}}, 0},
		{"overpayment of a later instalment goes to the oldest first", def, three(), 3, "2026-09-24", owed3.Total() + 1000, 0,
			[]want{{3, 14, owed3, owed3, true}, {1, 76, owed1, charges.Components{Fine: 1000}, false}}, 0},
		{"everything paid, the rest is credit", def, three(), 2, "2026-09-24", owed1.Total() + owed2.Total() + owed3.Total() + 777, 0,
			[]want{{2, 45, owed2, owed2, true}, {1, 76, owed1, owed1, true}, {3, 14, owed3, owed3, true}}, 777},
		{"charged instalment already paid: to the oldest open", def, three()[1:], 1, "2026-09-24", 1000, 0,
			[]want{{2, 45, owed2, charges.Components{Fine: 1000}, false}}, 0},
		{"on time: no charges", def, three(), 3, "2026-09-10", 100000, 0,
			[]want{{3, 0, charges.Components{Interest: 10000, Principal: 90000}, charges.Components{Interest: 10000, Principal: 90000}, true}}, 0},
		{"a line limit sends the rest to credit", def, three(), 1, "2026-09-24", owed1.Total() + 10, 1,
			[]want{{1, 76, owed1, owed1, true}}, 10},
		{"nothing open: all credit", def, nil, 1, "2026-09-24", 1234, 0, nil, 1234},
	}
	for _, tt := range tests {
		got := Allocate(Request{Policy: tt.p, Calendar: calendar.National, PayDate: d(tt.pay), AmountCents: tt.amount,
			TargetSeq: tt.target, Open: tt.open, MaxLines: tt.maxLines})
		if len(got.Lines) != len(tt.lines) || got.CreditCents != tt.credit || got.AppliedCents+got.CreditCents != tt.amount {
			t.Errorf("%s: %d lines, applied %d, credit %d; want %d lines, credit %d", tt.name, len(got.Lines), got.AppliedCents, got.CreditCents, len(tt.lines), tt.credit)
			continue
		}
		var sum int64
		for i, w := range tt.lines {
			l := got.Lines[i]
			sum += l.Paid.Total()
			if l.Seq != w.seq || l.Assessment.DaysLate != w.days || l.Owed != w.owed || l.Paid != w.paid || l.Settled != w.settled {
				t.Errorf("%s line %d: seq %d days %d owed %+v paid %+v settled %t; want %+v", tt.name, i, l.Seq, l.Assessment.DaysLate, l.Owed, l.Paid, l.Settled, w)
			}
			// What is left is what was owed less what was paid.
			if _, left := charges.AmountDue(tt.p, calendar.National, l.After, d(tt.pay)); left.Total() != w.owed.Total()-w.paid.Total() {
				t.Errorf("%s line %d: %d left, want %d", tt.name, i, left.Total(), w.owed.Total()-w.paid.Total())
			}
		}
		if sum != got.AppliedCents {
			t.Errorf("%s: lines sum to %d, applied %d", tt.name, sum, got.AppliedCents)
		}
	}
}

// TestAllocateTwoPartialPayments: the fine is charged once and late
// interest accrues only for the days after the last assessment, on what
// is left of principal and interest.
func TestAllocateTwoPartialPayments(t *testing.T) {
	t.Parallel()
	p := policy.DefaultCharges()
	first := Allocate(Request{Policy: p, Calendar: calendar.National, PayDate: d("2026-09-24"), AmountCents: 54533, TargetSeq: 1, Open: three()[:1]})
	s := first.Lines[0].After
	// 2000 fine + 2533 late interest + 10000 interest + 40000 principal.
	if s.PaidCents != 50000 || s.FineCents != 2000 || s.LateInterestCents != 2533 || s.ChargedThrough != d("2026-09-24") {
		t.Fatalf("after the first payment: %+v", s)
	}
	second := Allocate(Request{Policy: p, Calendar: calendar.National, PayDate: d("2026-10-24"), AmountCents: 1_000_000, TargetSeq: 1, Open: []charges.State{s}})
	l := second.Lines[0]
	// 30 more days on the 50000 left: 500; no second fine.
	if l.Assessment.AccrualDays != 30 || l.Assessment.FineCents != 0 || l.Assessment.LateInterest != 500 ||
		l.Owed != (charges.Components{LateInterest: 500, Principal: 50000}) || !l.Settled || second.CreditCents != 1_000_000-50500 {
		t.Fatalf("second payment: %+v credit %d", l, second.CreditCents)
	}
}
