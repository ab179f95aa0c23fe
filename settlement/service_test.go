package settlement

import (
	"reflect"
	"testing"
	"time"

	"lastro/charges"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/debtor"
	"lastro/policy"
)

// paidAt: 08:15 in São Paulo on the test's day.
var paidAt = time.Date(2026, 9, 24, 11, 15, 0, 0, time.UTC)

// A contract with instalments due 2026-09-10, 2026-10-10 (a Saturday) and
// 2026-11-10, the first 14 days late on 2026-09-24: bucket D001_030, next
// action CALL_D15 on 2026-09-25. Its charge for seq 1 is 1000.00 + 2 %
// fine + 14 days at 1 % a month (4.6667 → 4.67) = 1024.67.
func lateContract(t *testing.T, f *fixture, id string) (string, *charges.Issued) {
	t.Helper()
	dk := f.contract(t, id, "2026-09-10", 3)
	ch := f.charge(t, dk, id, 1)
	if ch.AmountCents != 102467 || ch.DaysLate != 14 || ch.Breakdown != (charges.Components{Fine: 2000, LateInterest: 467, Interest: 10000, Principal: 90000}) {
		t.Fatalf("charge: %+v", ch)
	}
	return dk, ch
}

func TestPaymentCuresTheContractInOneCommit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk, ch := lateContract(t, f, "C-1")
	before := f.load(t, dk, "C-1").Header
	shard := before.Shard
	if before.Status != debtor.StatusInCollection || before.Bucket != debtor.B001_030 || before.NextAction != "CALL_D15" || before.NextActionDate != "2026-09-25" {
		t.Fatalf("before: %+v", before)
	}
	if ids := f.portfolio(t, debtor.B001_030); len(ids) != 1 {
		t.Fatalf("portfolio before: %v", ids)
	}

	ctx, usage := kit.Operation(bg, "test.settlement")
	out, err := f.s.Apply(ctx, f.t, pay("stl-1", ch.ChargeID, ch.AmountCents, paidAt))
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusApplied || out.Outcome != OutcomeApplied || out.AppliedCents != 102467 || out.CreditCents != 0 ||
		out.ContractStatus != debtor.StatusActive || !reflect.DeepEqual(out.AppliedTo, []string{keys.Installment("C-1", 1)}) {
		t.Fatalf("outcome: %+v", out)
	}
	// AP06 GetItem, one Query for the contract, one transaction.
	if usage.Calls("GetItem") != 1 || usage.Calls("Query") != 1 || usage.Calls("TransactWriteItems") != 1 {
		t.Fatalf("calls: get %d query %d tx %d", usage.Calls("GetItem"), usage.Calls("Query"), usage.Calls("TransactWriteItems"))
	}

	c := f.load(t, dk, "C-1")
	in := c.Installment(1)
	if in.Status != debtor.InstPaid || in.PaidCents != 100000 || in.FineCents != 2000 || in.FinePaidCents != 2000 ||
		in.LateInterestCents != 467 || in.LateInterestPaidCents != 467 || in.ChargedThrough != "2026-09-24" || in.Version != 2 {
		t.Fatalf("instalment 1: %+v", in)
	}
	if c.Installment(2).Version != 1 || c.Installment(2).PaidCents != 0 {
		t.Fatalf("instalment 2 touched: %+v", c.Installment(2))
	}
	h := c.Header
	// Cured: out of the portfolio, and the agenda waits for the next due
	// date (Saturday 10-10 → payable Tuesday 10-13 after the 10-12
	// holiday → late on Wednesday 10-14).
	if h.Status != debtor.StatusActive || h.StatusReason != ReasonCured || h.OldestOverdueDueDate != "" || h.Bucket != "" || h.GSI2PK != "" ||
		h.NextAction != policy.DueCheck || h.NextActionDate != "2026-10-14" || h.GSI1PK != keys.Agenda("t-pay", "2026-10-14", shard) ||
		h.GSI1SK != keys.AgendaEntry(policy.DueCheck, "C-1") || h.OutstandingCents != 200000 || h.Version != 2 || h.LastPaymentAt == "" {
		t.Fatalf("header: %+v", h)
	}
	if ids := f.portfolio(t, debtor.B001_030); len(ids) != 0 {
		t.Fatalf("still in the portfolio: %v", ids)
	}
	if ids := f.agenda(t, "2026-09-25", shard); len(ids) != 0 {
		t.Fatalf("still on the régua: %v", ids)
	}
	if ids := f.agenda(t, "2026-10-14", shard); !reflect.DeepEqual(ids, []string{"C-1"}) {
		t.Fatalf("next DUE_CHECK: %v", ids)
	}

	// The STL record and the event with the whole computation (AP09).
	stl := f.stl(t, "stl-1")
	if stl == nil || stl.Outcome != OutcomeApplied || stl.AmountCents != 102467 || stl.ContractID != "C-1" || stl.Seq != 1 || stl.DebtorKey != dk {
		t.Fatalf("stl: %+v", stl)
	}
	evs, err := f.debtors.Events(bg, f.t, dk, "C-1", "1", 100, "")
	if err != nil || len(evs.Items) != 1 || evs.Items[0].EventType != EvSettlementApplied {
		t.Fatalf("AP09: %+v %v", evs, err)
	}
	det := evs.Items[0].Details
	lines := det["lines"].([]any)
	l0 := lines[0].(map[string]any)
	if det["chargesPolicy"] != "CP#v0000" || det["finePercent"] != "2.00" || det["lateInterestMonthlyPercent"] != "1.00" ||
		det["payDate"] != "2026-09-24" || len(lines) != 1 || l0["daysLate"] != float64(14) || l0["fineCents"] != float64(2000) ||
		l0["lateInterestCents"] != float64(467) || l0["baseCents"] != float64(100000) || l0["settled"] != true ||
		!reflect.DeepEqual(l0["paid"], map[string]any{"fine": float64(2000), "lateInterest": float64(467), "interest": float64(10000), "principal": float64(90000)}) {
		t.Fatalf("event details: %#v", det)
	}
	// The 360 shows the cured contract.
	v, err := f.debtors.View(bg, f.t, dk, 100, "")
	if err != nil || v.Contracts[0].Status != debtor.StatusActive || v.Contracts[0].DaysPastDue != 0 || v.Contracts[0].Installments[0].OutstandingCents != 0 {
		t.Fatalf("360: %+v %v", v, err)
	}
}

func TestDuplicateChangesNothingAndAnswersTheFirstOutcome(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk, ch := lateContract(t, f, "C-1")
	p := pay("stl-dup", ch.ChargeID, 50000, paidAt)
	first, err := f.s.Apply(bg, f.t, p)
	if err != nil || first.Status != StatusApplied {
		t.Fatalf("first: %+v %v", first, err)
	}
	snapshot := f.partition(t, dk)
	f.clock.Advance(time.Hour) // the provider replays an hour later
	again, err := f.s.Apply(bg, f.t, p)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != StatusAlreadyApplied || again.Outcome != OutcomeApplied || again.AppliedCents != first.AppliedCents ||
		again.ReceivedAt != first.ReceivedAt || again.ContractStatus != first.ContractStatus {
		t.Fatalf("again: %+v, first %+v", again, first)
	}
	if after := f.partition(t, dk); !reflect.DeepEqual(after, snapshot) {
		t.Fatal("a duplicate changed the debtor's items")
	}
	// The same id with other facts is refused, and changes nothing either.
	for _, other := range []Payload{pay("stl-dup", ch.ChargeID, 50001, paidAt), pay("stl-dup", "other", 50000, paidAt), pay("stl-dup", ch.ChargeID, 50000, paidAt.Add(time.Second))} {
		_, err := f.s.Apply(bg, f.t, other)
		if status, code, _ := errs.Public(err); status != 409 || code != "settlement_id_reused" {
			t.Fatalf("reused id %+v: %v", other, err)
		}
	}
	if after := f.partition(t, dk); !reflect.DeepEqual(after, snapshot) {
		t.Fatal("a reused id changed the debtor's items")
	}
}

func TestPartialPaymentKeepsTheRégua(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk, ch := lateContract(t, f, "C-1")
	out, err := f.s.Apply(bg, f.t, pay("stl-p", ch.ChargeID, 10000, paidAt))
	if err != nil || out.AppliedCents != 10000 || out.ContractStatus != debtor.StatusInCollection {
		t.Fatalf("partial: %+v %v", out, err)
	}
	c := f.load(t, dk, "C-1")
	in, h := c.Installment(1), c.Header
	// Charges first: 20.00 fine, 4.67 late interest, 75.33 of interest.
	if in.Status != debtor.InstOverdue || in.FinePaidCents != 2000 || in.LateInterestPaidCents != 467 || in.PaidCents != 7533 {
		t.Fatalf("instalment: %+v", in)
	}
	if h.Status != debtor.StatusInCollection || h.OldestOverdueDueDate != "2026-09-10" || h.Bucket != debtor.B001_030 ||
		h.NextAction != "CALL_D15" || h.NextActionDate != "2026-09-25" || h.OutstandingCents != 300000-7533 {
		t.Fatalf("header: %+v", h)
	}
	if ids := f.portfolio(t, debtor.B001_030); !reflect.DeepEqual(ids, []string{"C-1"}) {
		t.Fatalf("portfolio: %v", ids)
	}
	// A second charge the next day: no second fine; one more day of late
	// interest on what is left of principal and interest (92467 → 30.82).
	f.clock.Advance(24 * time.Hour)
	ch2 := f.charge(t, dk, "C-1", 1)
	if ch2.Breakdown != (charges.Components{LateInterest: 31, Interest: 10000 - 7533, Principal: 90000}) || ch2.DaysLate != 15 {
		t.Fatalf("second charge: %+v", ch2)
	}
}

func TestOverpaymentAndSettlement(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk, ch := lateContract(t, f, "C-1")
	// Everything: 1024.67 for seq 1, and seq 2 and 3 are not due yet.
	out, err := f.s.Apply(bg, f.t, pay("stl-all", ch.ChargeID, 102467+200000+555, paidAt))
	if err != nil || out.AppliedCents != 302467 || out.CreditCents != 555 || out.ContractStatus != debtor.StatusSettled || len(out.AppliedTo) != 3 {
		t.Fatalf("everything: %+v %v", out, err)
	}
	c := f.load(t, dk, "C-1")
	h := c.Header
	if h.Status != debtor.StatusSettled || h.StatusReason != ReasonPaidInFull || h.CreditCents != 555 || h.OutstandingCents != 0 ||
		h.NextAction != "" || h.NextActionDate != "" || h.GSI1PK != "" || h.GSI1SK != "" || h.GSI2PK != "" || h.Bucket != "" || h.OldestOverdueDueDate != "" {
		t.Fatalf("settled header: %+v", h)
	}
	for _, in := range c.Installments {
		if in.Status != debtor.InstPaid || in.PaidCents != 100000 {
			t.Fatalf("instalment %d: %+v", in.Seq, in)
		}
	}
	if ids := f.agenda(t, "2026-09-25", h.Shard); len(ids) != 0 {
		t.Fatalf("on the agenda: %v", ids)
	}
	// No more charges; a later payment on the settled contract is credit.
	if _, err := f.charges.Issue(bg, f.t, charges.Input{DebtorKey: dk, ContractID: "C-1", Seq: 2, Method: charges.PIX}); !errs.Is(err, errs.Rule) {
		t.Fatalf("charge on a settled contract: %v", err)
	}
	out, err = f.s.Apply(bg, f.t, pay("stl-late", ch.ChargeID, 100, paidAt))
	if err != nil || out.AppliedCents != 0 || out.CreditCents != 100 || f.load(t, dk, "C-1").Header.CreditCents != 655 {
		t.Fatalf("payment after settlement: %+v %v", out, err)
	}
}

func TestUnknownChargeIsRecordedAsUnmatched(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var ids []string
	for i, id := range []string{"stl-u1", "stl-u2", "stl-u3"} {
		f.clock.Advance(time.Second)
		out, err := f.s.Apply(bg, f.t, pay(id, "NOPE"+id, int64(1000+i), paidAt))
		if err != nil || out.Status != StatusUnmatched || out.Outcome != OutcomeUnmatched || out.Reason != ReasonChargeNotFound {
			t.Fatalf("unmatched: %+v %v", out, err)
		}
		ids = append(ids, id)
	}
	again, err := f.s.Apply(bg, f.t, pay("stl-u1", "NOPEstl-u1", 1000, paidAt))
	if err != nil || again.Status != StatusAlreadyApplied || again.Outcome != OutcomeUnmatched {
		t.Fatalf("unmatched again: %+v %v", again, err)
	}
	// Listed oldest first, one page at a time, with one Query each.
	var got []string
	cursor := ""
	for {
		ctx, usage := kit.Operation(bg, "test.unmatched")
		page, err := f.s.ListUnmatched(ctx, f.t, 2, cursor)
		if err != nil || usage.Calls("Query") != 1 || usage.Calls("") != 1 {
			t.Fatalf("list: %v, %d calls", err, usage.Calls(""))
		}
		for _, u := range page.Items {
			got = append(got, u.SettlementID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if !reflect.DeepEqual(got, ids) {
		t.Fatalf("suspense list: %v, want %v", got, ids)
	}
	if stl := f.stl(t, "stl-u2"); stl == nil || stl.Outcome != OutcomeUnmatched || stl.AmountCents != 1001 {
		t.Fatalf("stl: %+v", stl)
	}
}

// TestApplyingAPaymentCapacity measures the write units of applying a
// payment, index writes included, as the store reports them
// (ReturnConsumedCapacity INDEXES). SPEC section 9 budgets 8 WRU; the
// transaction SPEC section 5 requires cannot fit it: its four items (STL,
// instalment, header, event) cost 2 WRU each inside a transaction — 8
// before any index write — and a payment always changes a contract's
// entry in the agenda (outstandingCents is projected there, or the next
// action moves) and in the portfolio (sorted by outstandingCents, or
// left). So this test pins the real figures — the table arm at exactly 8
// (every item within 1 KB) and the index writes at 3 for a one-instalment
// payment, 11 WRU — and fails if anything grows (ADR 0010 discusses the
// budget).
func TestApplyingAPaymentCapacity(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name                   string
		amount                 func(ch *charges.Issued) int64
		table, agenda, portfol float64
	}{
		{"cure: leaves the portfolio, DUE_CHECK rescheduled", func(ch *charges.Issued) int64 { return ch.AmountCents }, 8, 2, 1},
		{"partial: stays in its bucket, régua kept", func(*charges.Issued) int64 { return 10000 }, 8, 1, 2},
		// Three instalments and an event over 1 KB: 2 + 3×2 + 2 + 4.
		{"pays off three instalments: leaves both indexes", func(ch *charges.Issued) int64 { return ch.AmountCents + 200000 }, 14, 1, 1},
	}
	for i, tt := range tests {
		id := "C-w" + string(rune('a'+i))
		_, ch := lateContract(t, f, id)
		ctx, usage := kit.Operation(bg, "test.capacity")
		if _, err := f.s.Apply(ctx, f.t, pay("stl-w"+id, ch.ChargeID, tt.amount(ch), paidAt)); err != nil {
			t.Fatal(err)
		}
		agenda, portfolio := usage.Index("agenda"), usage.Index("portfolio")
		table := usage.WRU() - agenda - portfolio - usage.Index("tenant-debtors")
		t.Logf("%s: %.0f WRU (table %.0f, agenda %.0f, portfolio %.0f), %.0f RRU", tt.name, usage.WRU(), table, agenda, portfolio, usage.RRU())
		if table != tt.table || agenda != tt.agenda || portfolio != tt.portfol {
			t.Errorf("%s: table %.0f agenda %.0f portfolio %.0f WRU, want %.0f %.0f %.0f", tt.name, table, agenda, portfolio, tt.table, tt.agenda, tt.portfol)
		}
		if i < 2 && usage.WRU() > 11 {
			t.Errorf("%s: %.0f WRU for a one-instalment payment", tt.name, usage.WRU())
		}
	}
}
