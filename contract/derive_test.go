package contract_test

import (
	"testing"

	"lastro/collections/calendar"
	"lastro/contract"
	"lastro/contract/regua"
	"lastro/policy"
)

// inst is an instalment of 1000.00 + 100.00 due on due, with status.
func inst(seq int, due, status string) contract.Installment {
	return contract.Installment{Seq: seq, OriginalDueDate: due, DueDate: due, PrincipalCents: 100000, InterestCents: 10000, Status: status}
}

// TestRefresh re-derives headers on Thursday 2026-09-24 under the default
// régua: what the instalments say, where this package owns the status.
func TestRefresh(t *testing.T) {
	t.Parallel()
	today, cal, dunning := calendar.MustParse("2026-09-24"), calendar.New(), policy.DefaultDunning()
	paid, open := contract.InstPaid, contract.InstOpen
	// late is the header of a contract in its delinquency since 08-10,
	// with régua steps executed and on the agenda and in the portfolio.
	late := contract.Header{TenantID: "t-a", ContractID: "C-1", Shard: 3, Status: contract.StatusInCollection, StatusReason: contract.ReasonOldestOverdue,
		OldestOverdueDueDate: "2026-08-10", Bucket: regua.BucketD031_060, NextAction: "SMS_D45", NextActionDate: "2026-09-24",
		LastStep: 45, LastStepAt: "2026-09-24", NoticeAt: "2026-09-20", GSI1PK: "stale", GSI1SK: "stale", GSI2PK: "stale"}
	tests := []struct {
		name   string
		header contract.Header
		insts  []contract.Installment
		want   contract.Header // the facts Refresh derives (indexes excluded)
		plan   bool            // Refresh answers a plan with an action
	}{
		{
			name:   "current: waits for the next due date",
			header: contract.Header{TenantID: "t-a", ContractID: "C-1", Shard: 3},
			// Saturday 10-10 is payable Tuesday 10-13 (10-12 is a holiday).
			insts: []contract.Installment{inst(1, "2026-10-10", open), inst(2, "2026-11-10", open)},
			want: contract.Header{Status: contract.StatusActive, StatusReason: contract.ReasonSigned, OutstandingCents: 220000,
				NextAction: policy.DueCheck, NextActionDate: "2026-10-14"},
			plan: true,
		},
		{
			name:   "delinquent: status, bucket and oldest overdue",
			header: contract.Header{TenantID: "t-a", ContractID: "C-1", Shard: 3, Status: contract.StatusActive, StatusReason: contract.ReasonSigned},
			insts:  []contract.Installment{inst(1, "2026-08-10", open), inst(2, "2026-09-10", open), inst(3, "2026-10-10", open)},
			want: contract.Header{Status: contract.StatusInCollection, StatusReason: contract.ReasonOldestOverdue, OutstandingCents: 330000,
				OldestOverdueDueDate: "2026-08-10", Bucket: regua.BucketD031_060, NextAction: "SMS_D45", NextActionDate: "2026-09-24"},
			plan: true,
		},
		{
			name:   "cured: active again, executed steps forgotten",
			header: late,
			insts:  []contract.Installment{inst(1, "2026-08-10", paid), inst(2, "2026-09-10", paid), inst(3, "2026-10-10", open)},
			want: contract.Header{Status: contract.StatusActive, StatusReason: contract.ReasonCured, OutstandingCents: 110000,
				NextAction: policy.DueCheck, NextActionDate: "2026-10-14"},
			plan: true,
		},
		{
			name:   "all paid: settled, off the agenda and the portfolio",
			header: late,
			insts:  []contract.Installment{inst(1, "2026-08-10", paid), inst(2, "2026-09-10", paid), inst(3, "2026-10-10", paid)},
			want:   contract.Header{Status: contract.StatusSettled, StatusReason: contract.ReasonPaidInFull},
		},
		{
			name: "in agreement: the agreement keeps its status and facts; the agenda still watches it",
			header: contract.Header{TenantID: "t-a", ContractID: "C-1", Shard: 3, Status: contract.StatusInAgreement, StatusReason: "AGREEMENT_SIGNED",
				LastStep: 45, LastStepAt: "2026-09-01"},
			insts: []contract.Installment{inst(1, "2026-08-10", open), inst(2, "2026-09-10", open)},
			want: contract.Header{Status: contract.StatusInAgreement, StatusReason: "AGREEMENT_SIGNED", OutstandingCents: 220000,
				LastStep: 45, LastStepAt: "2026-09-01", NextAction: "BUCKET_MOVE", NextActionDate: "2026-10-10"},
			plan: true,
		},
		{
			name: "written off: keeps its status, leaves the agenda and the portfolio",
			header: func() contract.Header {
				h := late
				h.Status, h.StatusReason = contract.StatusWrittenOff, "WRITE_OFF"
				return h
			}(),
			insts: []contract.Installment{inst(1, "2026-08-10", open), inst(2, "2026-09-10", paid)},
			want: contract.Header{Status: contract.StatusWrittenOff, StatusReason: "WRITE_OFF", OutstandingCents: 110000,
				LastStep: 45, LastStepAt: "2026-09-24", NoticeAt: "2026-09-20"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &contract.Contract{Header: tt.header, Installments: tt.insts}
			p := c.Refresh(today, cal, dunning)
			h := c.Header
			got := contract.Header{Status: h.Status, StatusReason: h.StatusReason, OutstandingCents: h.OutstandingCents,
				OldestOverdueDueDate: h.OldestOverdueDueDate, Bucket: h.Bucket, NextAction: h.NextAction, NextActionDate: h.NextActionDate,
				LastStep: h.LastStep, LastStepAt: h.LastStepAt, NoticeAt: h.NoticeAt}
			if got != tt.want {
				t.Errorf("header\n got %+v\nwant %+v", got, tt.want)
			}
			if (p.Action != "") != tt.plan {
				t.Errorf("plan %+v", p)
			}
			// The index attributes follow the facts: on the agenda exactly
			// while there is a next action, in the portfolio while in a bucket.
			h.Index()
			if (h.GSI1PK != "") != (tt.want.NextAction != "") || (h.GSI2PK != "") != (tt.want.Bucket != "") {
				t.Errorf("indexes: agenda %q, portfolio %q", h.GSI1PK, h.GSI2PK)
			}
		})
	}
}
