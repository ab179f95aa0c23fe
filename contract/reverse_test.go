package contract_test

import (
	"reflect"
	"testing"

	"lastro/contract"
)

// paidInst is inst fully paid by a payment of fine 20.00, late interest
// 4.67, interest 100.00 and principal 1000.00.
func paidInst(seq int) contract.Installment {
	in := inst(seq, "2026-09-10", contract.InstPaid)
	in.FineCents, in.LateInterestCents = 2000, 467
	in.FinePaidCents, in.LateInterestPaidCents, in.InterestPaidCents, in.PaidCents = 2000, 467, 10000, 110000
	return in
}

var fullLine = func(seq int) contract.PaidLine {
	return contract.PaidLine{Seq: seq, Fine: 2000, LateInterest: 467, Interest: 10000, Principal: 100000}
}

func TestReverse(t *testing.T) {
	t.Parallel()
	renegotiated := paidInst(2)
	renegotiated.Status = contract.InstRenegotiated
	tests := []struct {
		name   string
		insts  []contract.Installment
		amount int64
		paid   []contract.PaidLine
		taken  []contract.PaidLine
		left   int64
		status []string // the instalments' statuses after
	}{
		{"a partial refund takes principal first", []contract.Installment{paidInst(1)}, 5000, []contract.PaidLine{fullLine(1)},
			[]contract.PaidLine{{Seq: 1, Principal: 5000}}, 0, []string{contract.InstOpen}},
		{"then interest, late interest and fine", []contract.Installment{paidInst(1)}, 111000, []contract.PaidLine{fullLine(1)},
			[]contract.PaidLine{{Seq: 1, Principal: 100000, Interest: 10000, LateInterest: 467, Fine: 533}}, 0, []string{contract.InstOpen}},
		{"the last line first", []contract.Installment{paidInst(1), paidInst(2)}, 120000, []contract.PaidLine{fullLine(1), fullLine(2)},
			[]contract.PaidLine{{Seq: 2, Principal: 100000, Interest: 10000, LateInterest: 467, Fine: 2000}, {Seq: 1, Principal: 7533}}, 0,
			[]string{contract.InstOpen, contract.InstOpen}},
		{"never more than the payment paid", []contract.Installment{paidInst(1)}, 200000, []contract.PaidLine{{Seq: 1, Principal: 100}},
			[]contract.PaidLine{{Seq: 1, Principal: 100}}, 199900, []string{contract.InstOpen}},
		{"a renegotiated instalment is left alone", []contract.Installment{paidInst(1), renegotiated}, 1000, []contract.PaidLine{fullLine(1), fullLine(2)},
			[]contract.PaidLine{{Seq: 1, Principal: 1000}}, 0, []string{contract.InstOpen, contract.InstRenegotiated}},
		{"nothing paid: all left", []contract.Installment{inst(1, "2026-09-10", contract.InstOpen)}, 1000, []contract.PaidLine{fullLine(1)},
			nil, 1000, []string{contract.InstOpen}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &contract.Contract{Installments: append([]contract.Installment(nil), tt.insts...)}
			taken, left := c.Reverse(tt.amount, tt.paid)
			if !reflect.DeepEqual(taken, tt.taken) || left != tt.left {
				t.Fatalf("Reverse = %+v, %d; want %+v, %d", taken, left, tt.taken, tt.left)
			}
			var total int64
			for i, in := range c.Installments {
				if in.Status != tt.status[i] {
					t.Errorf("instalment %d: %s, want %s", in.Seq, in.Status, tt.status[i])
				}
				before := tt.insts[i]
				total += (before.PaidCents - in.PaidCents) + (before.FinePaidCents - in.FinePaidCents) + (before.LateInterestPaidCents - in.LateInterestPaidCents)
				if in.PaidCents < 0 || in.InterestPaidCents < 0 || in.FinePaidCents < 0 || in.LateInterestPaidCents < 0 || in.InterestPaidCents > in.PaidCents {
					t.Errorf("instalment %d below zero: %+v", in.Seq, in)
				}
			}
			if total != tt.amount-tt.left {
				t.Errorf("took %d cents off the instalments, want %d", total, tt.amount-tt.left)
			}
		})
	}
}
