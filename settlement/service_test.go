package settlement_test

import (
	"fmt"
	"lastro/contract"
	"lastro/contract/regua"
	"reflect"
	"slices"
	"testing"
	"time"

	"lastro/charges"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/policy"
	"lastro/settlement"
)

// paidAt: 09:00 in São Paulo on the test's day, as the charges are issued
// (the clock is frozen).
var paidAt = testNow

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
	if before.Status != contract.StatusInCollection || before.Bucket != regua.BucketD001_030 || before.NextAction != "SMS_D5" || before.NextActionDate != "2026-09-24" {
		t.Fatalf("before: %+v", before)
	}
	if ids := f.portfolio(t, regua.BucketD001_030); len(ids) != 1 {
		t.Fatalf("portfolio before: %v", ids)
	}

	ctx, usage := kit.Operation(bg, "test.settlement")
	out, err := f.Settlement.Apply(ctx, f.t, pay("stl-1", ch.ChargeID, ch.AmountCents, paidAt))
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != settlement.StatusApplied || out.Outcome != settlement.OutcomeApplied || out.AppliedCents != 102467 || out.CreditCents != 0 ||
		out.ContractStatus != contract.StatusActive || !reflect.DeepEqual(out.AppliedTo, []settlement.Applied{{Seq: 1, Cents: 102467, Settled: true}}) || !out.QuoteHonoured {
		t.Fatalf("outcome: %+v", out)
	}
	// AP06 GetItem, one Query for the contract, one transaction.
	if usage.Calls("GetItem") != 1 || usage.Calls("Query") != 1 || usage.Calls("TransactWriteItems") != 1 {
		t.Fatalf("calls: get %d query %d tx %d", usage.Calls("GetItem"), usage.Calls("Query"), usage.Calls("TransactWriteItems"))
	}

	c := f.load(t, dk, "C-1")
	in := c.Installment(1)
	if in.Status != contract.InstPaid || in.PaidCents != 100000 || in.FineCents != 2000 || in.FinePaidCents != 2000 ||
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
	if h.Status != contract.StatusActive || h.StatusReason != contract.ReasonCured || h.OldestOverdueDueDate != "" || h.Bucket != "" || h.GSI2PK != "" ||
		h.NextAction != policy.DueCheck || h.NextActionDate != "2026-10-14" || h.GSI1PK != keys.Agenda("t-pay", "2026-10-14", shard) ||
		h.GSI1SK != keys.AgendaEntry(policy.DueCheck, "C-1") || h.OutstandingCents != 200000 || h.Version != 2 || h.LastPaymentAt == "" {
		t.Fatalf("header: %+v", h)
	}
	if ids := f.portfolio(t, regua.BucketD001_030); len(ids) != 0 {
		t.Fatalf("still in the portfolio: %v", ids)
	}
	if ids := f.agenda(t, "2026-09-24", shard); len(ids) != 0 {
		t.Fatalf("still on the régua: %v", ids)
	}
	if ids := f.agenda(t, "2026-10-14", shard); !reflect.DeepEqual(ids, []string{"C-1"}) {
		t.Fatalf("next DUE_CHECK: %v", ids)
	}

	// The STL record and the event with the whole computation (AP09).
	stl := f.stl(t, "stl-1")
	if stl == nil || stl.Outcome != settlement.OutcomeApplied || stl.AmountCents != 102467 || stl.ContractID != "C-1" || stl.Seq != 1 || stl.DebtorKey != dk {
		t.Fatalf("stl: %+v", stl)
	}
	evs, err := f.Contracts.Events(bg, f.t, dk, "C-1", "1", 100, "")
	if err != nil || len(evs.Items) != 1 || evs.Items[0].EventType != settlement.EvSettlementApplied {
		t.Fatalf("AP09: %+v %v", evs, err)
	}
	det := evs.Items[0].Details
	l0 := det["line"].(map[string]any)
	if det["chargesPolicy"] != "CP#v0000" || det["finePercent"] != "2.00" || det["lateInterestMonthlyPercent"] != "1.00" ||
		det["payDate"] != "2026-09-24" || l0["daysLate"] != float64(14) || l0["fineCents"] != float64(2000) ||
		l0["lateInterestCents"] != float64(467) || l0["baseCents"] != float64(100000) || l0["settled"] != true ||
		!reflect.DeepEqual(l0["paid"], map[string]any{"fine": float64(2000), "lateInterest": float64(467), "interest": float64(10000), "principal": float64(90000)}) {
		t.Fatalf("event details: %#v", det)
	}
	// The 360 shows the cured contract.
	v, err := f.Debtors.View(bg, f.t, dk, 100, "")
	if err != nil || v.Contracts[0].Status != contract.StatusActive || v.Contracts[0].DaysPastDue != 0 || v.Contracts[0].Installments[0].OutstandingCents != 0 {
		t.Fatalf("360: %+v %v", v, err)
	}
}

func TestDuplicateChangesNothingAndAnswersTheFirstOutcome(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk, ch := lateContract(t, f, "C-1")
	p := pay("stl-dup", ch.ChargeID, 50000, paidAt)
	first, err := f.Settlement.Apply(bg, f.t, p)
	if err != nil || first.Status != settlement.StatusApplied {
		t.Fatalf("first: %+v %v", first, err)
	}
	snapshot := f.partition(t, dk)
	f.Clock.Advance(time.Hour) // the provider replays an hour later
	again, err := f.Settlement.Apply(bg, f.t, p)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != settlement.StatusAlreadyApplied || again.Outcome != settlement.OutcomeApplied || again.AppliedCents != first.AppliedCents ||
		again.ReceivedAt != first.ReceivedAt || again.ContractStatus != first.ContractStatus {
		t.Fatalf("again: %+v, first %+v", again, first)
	}
	if after := f.partition(t, dk); !reflect.DeepEqual(after, snapshot) {
		t.Fatal("a duplicate changed the debtor's items")
	}
	// The same id with other facts is refused, and changes nothing either.
	for _, other := range []settlement.Payload{pay("stl-dup", ch.ChargeID, 50001, paidAt), pay("stl-dup", "other", 50000, paidAt), pay("stl-dup", ch.ChargeID, 50000, paidAt.Add(time.Second))} {
		_, err := f.Settlement.Apply(bg, f.t, other)
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
	out, err := f.Settlement.Apply(bg, f.t, pay("stl-p", ch.ChargeID, 10000, paidAt))
	if err != nil || out.AppliedCents != 10000 || out.ContractStatus != contract.StatusInCollection {
		t.Fatalf("partial: %+v %v", out, err)
	}
	c := f.load(t, dk, "C-1")
	in, h := c.Installment(1), c.Header
	// Charges first: 20.00 fine, 4.67 late interest, 75.33 of interest.
	if in.Status != contract.InstOpen || in.FinePaidCents != 2000 || in.LateInterestPaidCents != 467 || in.PaidCents != 7533 {
		t.Fatalf("instalment: %+v", in)
	}
	if h.Status != contract.StatusInCollection || h.OldestOverdueDueDate != "2026-09-10" || h.Bucket != regua.BucketD001_030 ||
		h.NextAction != "SMS_D5" || h.NextActionDate != "2026-09-24" || h.OutstandingCents != 300000-7533 {
		t.Fatalf("header: %+v", h)
	}
	if ids := f.portfolio(t, regua.BucketD001_030); !reflect.DeepEqual(ids, []string{"C-1"}) {
		t.Fatalf("portfolio: %v", ids)
	}
	// A second charge the next day: no second fine; one more day of late
	// interest on what is left of principal and interest (92467 → 30.82).
	f.Clock.Advance(24 * time.Hour)
	ch2 := f.charge(t, dk, "C-1", 1)
	if ch2.Breakdown != (charges.Components{LateInterest: 31, Interest: 10000 - 7533, Principal: 90000}) || ch2.DaysLate != 15 {
		t.Fatalf("second charge: %+v", ch2)
	}
}

func TestOverpaymentBecomesCreditNotPrepayment(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// 12 instalments from 2026-09-10: only the first is overdue on 09-24.
	dk := f.contract(t, "C-12", "2026-09-10", 12)
	ch := f.charge(t, dk, "C-12", 1)
	out, err := f.Settlement.Apply(bg, f.t, pay("stl-over", ch.ChargeID, ch.AmountCents+50000, paidAt))
	if err != nil || out.AppliedCents != ch.AmountCents || out.CreditCents != 50000 || out.ContractStatus != contract.StatusActive ||
		len(out.AppliedTo) != 1 {
		t.Fatalf("overpayment: %+v %v", out, err)
	}
	c := f.load(t, dk, "C-12")
	if h := c.Header; h.CreditCents != 50000 || h.OutstandingCents != 11*100000 || h.Bucket != "" || h.NextAction != policy.DueCheck {
		t.Fatalf("header: %+v", h)
	}
	for _, in := range c.Installments[1:] {
		if in.Version != 1 || in.PaidCents != 0 || in.Status != contract.InstOpen {
			t.Fatalf("future instalment %d changed: %+v", in.Seq, in)
		}
	}
	// The 360 shows the credit and what was paid by component.
	v, err := f.Debtors.View(bg, f.t, dk, 100, "")
	if err != nil || v.Contracts[0].CreditCents != 50000 {
		t.Fatalf("360 credit: %+v %v", v, err)
	}
	if in := v.Contracts[0].Installments[0]; in.PrincipalPaidCents != 90000 || in.InterestPaidCents != 10000 || in.FinePaidCents != 2000 ||
		in.LateInterestPaidCents != 467 || in.Status != contract.InstPaid {
		t.Fatalf("360 instalment 1: %+v", in)
	}
	if len(v.Contracts[0].Charges) != 1 || v.Contracts[0].Charges[0]["chargeId"] != ch.ChargeID {
		t.Fatalf("360 charges: %+v", v.Contracts[0].Charges)
	}
}

func TestSettledContractKeepsLaterMoneyAsCredit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk := f.contract(t, "C-3", "2026-06-10", 3) // all three overdue on 09-24
	var total int64
	var first *charges.Issued
	for seq := 1; seq <= 3; seq++ {
		ch := f.charge(t, dk, "C-3", seq)
		total += ch.AmountCents
		if seq == 1 {
			first = ch
		}
	}
	out, err := f.Settlement.Apply(bg, f.t, pay("stl-all", first.ChargeID, total+555, paidAt))
	if err != nil || out.AppliedCents != total || out.CreditCents != 555 || out.ContractStatus != contract.StatusSettled || len(out.AppliedTo) != 3 {
		t.Fatalf("everything: %+v %v", out, err)
	}
	h := f.load(t, dk, "C-3").Header
	if h.Status != contract.StatusSettled || h.StatusReason != contract.ReasonPaidInFull || h.CreditCents != 555 || h.OutstandingCents != 0 ||
		h.NextAction != "" || h.GSI1PK != "" || h.GSI2PK != "" || h.Bucket != "" || h.OldestOverdueDueDate != "" {
		t.Fatalf("settled header: %+v", h)
	}
	if _, err := f.Charges.Issue(bg, f.t, charges.Input{DebtorKey: dk, ContractID: "C-3", Seq: 2, Method: charges.PIX}); !errs.Is(err, errs.Rule) {
		t.Fatalf("charge on a settled contract: %v", err)
	}
	out, err = f.Settlement.Apply(bg, f.t, pay("stl-late", first.ChargeID, 100, paidAt))
	if err != nil || out.AppliedCents != 0 || out.CreditCents != 100 || f.load(t, dk, "C-3").Header.CreditCents != 655 {
		t.Fatalf("payment after settlement: %+v %v", out, err)
	}
	// The money that moved nothing owed is on the contract's own trail.
	evs, err := f.Contracts.Events(bg, f.t, dk, "C-3", "0", 100, "")
	if err != nil || len(evs.Items) != 2 || evs.Items[0].EventType == evs.Items[1].EventType {
		t.Fatalf("contract trail: creation and the payment to credit: %+v %v", evs, err)
	}
}

func TestQuotePaidNextDayPaysInFull(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk, ch := lateContract(t, f, "C-q")    // quoted for 09-24
	dk2, ch2 := lateContract(t, f, "C-q2") // quoted for 09-24 too
	next := paidAt.Add(20 * time.Hour)     // 09-25 05:00 in São Paulo, within 24 h
	f.Clock.Set(next)
	out, err := f.Settlement.Apply(bg, f.t, pay("stl-q", ch.ChargeID, ch.AmountCents, next))
	if err != nil || !out.QuoteHonoured || out.ContractStatus != contract.StatusActive {
		t.Fatalf("quote: %+v %v", out, err)
	}
	c := f.load(t, dk, "C-q")
	if in := c.Installment(1); in.Status != contract.InstPaid || in.LateInterestCents != 467 {
		t.Fatalf("instalment 1 is paid for what the quote covered: %+v", in)
	}
	if c.Header.Bucket != "" || c.Header.GSI2PK != "" || slices.Contains(f.portfolio(t, regua.BucketD001_030), "C-q") {
		t.Fatalf("still in the portfolio: %+v", c.Header)
	}
	// After the validity, the same amount is a partial payment on its day.
	late := ch2.AmountCents
	f.Clock.Set(paidAt.Add(25 * time.Hour))
	out, err = f.Settlement.Apply(bg, f.t, pay("stl-q2", ch2.ChargeID, late, paidAt.Add(25*time.Hour)))
	if err != nil || out.QuoteHonoured || out.ContractStatus != contract.StatusInCollection {
		t.Fatalf("expired quote: %+v %v", out, err)
	}
	if in := f.load(t, dk2, "C-q2").Installment(1); in.Status != contract.InstOpen {
		t.Fatalf("expired quote left the instalment owing a day of interest: %+v", in)
	}
}

func TestOverflowIsOnEveryTouchedInstalmentsTrail(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk := f.contract(t, "C-o", "2026-06-10", 3)
	var total int64
	var second *charges.Issued
	for seq := 1; seq <= 3; seq++ {
		ch := f.charge(t, dk, "C-o", seq)
		total += ch.AmountCents
		if seq == 2 {
			second = ch
		}
	}
	out, err := f.Settlement.Apply(bg, f.t, pay("stl-o", second.ChargeID, total, paidAt))
	if err != nil || len(out.AppliedTo) != 3 || out.AppliedTo[0].Seq != 2 || out.AppliedTo[1].Seq != 1 || out.AppliedTo[2].Seq != 3 {
		t.Fatalf("overflow: %+v %v", out, err)
	}
	for _, seq := range []string{"1", "2", "3"} {
		evs, err := f.Contracts.Events(bg, f.t, dk, "C-o", seq, 100, "")
		if err != nil || len(evs.Items) != 1 || evs.Items[0].EventType != settlement.EvSettlementApplied || evs.Items[0].Details["settlementId"] != "stl-o" {
			t.Fatalf("AP09 of instalment %s: %+v %v", seq, evs, err)
		}
		line := evs.Items[0].Details["line"].(map[string]any)
		if fmt.Sprint(line["seq"]) != seq || line["settled"] != true {
			t.Fatalf("AP09 of instalment %s shows another line: %+v", seq, line)
		}
	}
}

func TestPaymentKeepsAStatusItDoesNotOwn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk, ch := lateContract(t, f, "C-ag")
	// Agreements come later: set the status directly, as an agreement would.
	c := f.load(t, dk, "C-ag")
	c.Header.Status, c.Header.StatusReason = contract.StatusInAgreement, "AGREEMENT_SIGNED"
	c.Header.Bucket, c.Header.OldestOverdueDueDate, c.Header.NextAction, c.Header.NextActionDate = "", "", "", ""
	writes, err := c.Save(testNow)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db().Transact(bg, writes...); err != nil {
		t.Fatal(err)
	}
	out, err := f.Settlement.Apply(bg, f.t, pay("stl-ag", ch.ChargeID, 10000, paidAt))
	if err != nil || out.ContractStatus != contract.StatusInAgreement {
		t.Fatalf("payment on an agreement: %+v %v", out, err)
	}
	h := f.load(t, dk, "C-ag").Header
	if h.Status != contract.StatusInAgreement || h.StatusReason != "AGREEMENT_SIGNED" || h.GSI2PK != "" || h.Bucket != "" {
		t.Fatalf("the agreement's status was overwritten or the contract went back to the portfolio: %+v", h)
	}
}

func TestImplausiblePaymentInstantGoesToSuspense(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk, ch := lateContract(t, f, "C-t")
	for id, at := range map[string]time.Time{"stl-early": paidAt.Add(-time.Hour), "stl-future": paidAt.Add(48 * time.Hour)} {
		out, err := f.Settlement.Apply(bg, f.t, pay(id, ch.ChargeID, ch.AmountCents, at))
		want := settlement.ReasonPaidBeforeCharge
		if id == "stl-future" {
			want = settlement.ReasonPaidInFuture
		}
		if err != nil || out.Status != settlement.StatusUnmatched || out.Reason != want {
			t.Fatalf("%s: %+v %v", id, out, err)
		}
	}
	if h := f.load(t, dk, "C-t").Header; h.Version != 1 {
		t.Fatalf("the contract changed: %+v", h)
	}
	page, err := f.Settlement.ListUnmatched(bg, f.t, 10, "")
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("suspense: %+v %v", page, err)
	}
}

func TestUnknownChargeIsRecordedAsUnmatched(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var ids []string
	for i, id := range []string{"stl-u1", "stl-u2", "stl-u3"} {
		f.Clock.Advance(time.Second)
		out, err := f.Settlement.Apply(bg, f.t, pay(id, "NOPE"+id, int64(1000+i), paidAt))
		if err != nil || out.Status != settlement.StatusUnmatched || out.Outcome != settlement.OutcomeUnmatched || out.Reason != settlement.ReasonChargeNotFound {
			t.Fatalf("unmatched: %+v %v", out, err)
		}
		ids = append(ids, id)
	}
	again, err := f.Settlement.Apply(bg, f.t, pay("stl-u1", "NOPEstl-u1", 1000, paidAt))
	if err != nil || again.Status != settlement.StatusAlreadyApplied || again.Outcome != settlement.OutcomeUnmatched {
		t.Fatalf("unmatched again: %+v %v", again, err)
	}
	// Listed oldest first, one page at a time, with one Query each.
	var got []string
	cursor := ""
	for {
		ctx, usage := kit.Operation(bg, "test.unmatched")
		page, err := f.Settlement.ListUnmatched(ctx, f.t, 2, cursor)
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
	if stl := f.stl(t, "stl-u2"); stl == nil || stl.Outcome != settlement.OutcomeUnmatched || stl.AmountCents != 1001 {
		t.Fatalf("stl: %+v", stl)
	}
}

// TestApplyingAPaymentCapacity pins the budget of docs/design.md#capacity-budgets: a payment
// touching k instalments costs exactly 2 × (2 + 2k) table WRU — the STL
// item, the header, k instalments and k events, each within 1 KB and
// doubled inside a transaction — plus at most 4 WRU of index writes (the
// header's agenda and portfolio entries, each of which may move: a
// payment re-derives the next action at once, ADR 0068). ADR 0010.
func TestApplyingAPaymentCapacity(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for k := 1; k <= 3; k++ {
		id := fmt.Sprintf("C-k%d", k)
		dk := f.contract(t, id, "2026-06-10", 3) // three overdue instalments
		var amount int64
		var first *charges.Issued
		for seq := 1; seq <= k; seq++ {
			ch := f.charge(t, dk, id, seq)
			amount += ch.AmountCents
			if seq == 1 {
				first = ch
			}
		}
		ctx, usage := kit.Operation(bg, "test.capacity")
		out, err := f.Settlement.Apply(ctx, f.t, pay("stl-"+id, first.ChargeID, amount, paidAt))
		if err != nil || len(out.AppliedTo) != k {
			t.Fatalf("k=%d: %+v %v", k, out, err)
		}
		agenda, portfolio := usage.Index("agenda"), usage.Index("portfolio")
		table := usage.WRU() - agenda - portfolio - usage.Index("tenant-debtors")
		t.Logf("k=%d: %.0f WRU (table %.0f, agenda %.0f, portfolio %.0f), %.1f RRU", k, usage.WRU(), table, agenda, portfolio, usage.RRU())
		if want := float64(2 * (2 + 2*k)); table != want || agenda+portfolio > 4 {
			t.Errorf("k=%d: table %.0f WRU (want exactly %.0f), index %.0f WRU (want at most 4)", k, table, want, agenda+portfolio)
		}
	}
	// The typical payment: one instalment, cured, 11 WRU in all.
	_, ch := lateContract(t, f, "C-typ")
	ctx, usage := kit.Operation(bg, "test.capacity")
	if _, err := f.Settlement.Apply(ctx, f.t, pay("stl-typ", ch.ChargeID, ch.AmountCents, paidAt)); err != nil {
		t.Fatal(err)
	}
	if usage.WRU() != 11 {
		t.Errorf("typical payment: %.0f WRU, want 11", usage.WRU())
	}
}
