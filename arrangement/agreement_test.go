package arrangement_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/arrangement"
	"lastro/charges"
	"lastro/collections/keys"
	"lastro/contract"
	"lastro/debtor"
	"lastro/engine/enginetest"
)

// signN registers a debtor and signs a contract of n monthly instalments
// of R$ 1,000.00 due from first.
func (f *fixture) signN(t *testing.T, id, first string, n int) string {
	t.Helper()
	r, err := f.Debtors.Register(bg, f.t, debtor.RegisterInput{Document: f.CPF(), Name: "Pessoa Sintética", Phone: "+55 11 90000-0001",
		Email: "p@example.invalid"}, debtor.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Contracts.Create(bg, f.t, r.DebtorKey, contract.Input{ContractID: id, ProductCode: "CREDIARIO",
		Installments: enginetest.Monthly(first, n, 90000, 10000)}, contract.Actor{Role: "operator"}); err != nil {
		t.Fatal(err)
	}
	return r.DebtorKey
}

func (f *fixture) load(t *testing.T, dk, id string) *contract.Contract {
	t.Helper()
	c, err := contract.Load(bg, f.db(), f.t.ID, dk, id)
	if err != nil || c == nil {
		t.Fatalf("load %s: %v", id, err)
	}
	return c
}

func agreementBody(down int64, n int, first string) string {
	return fmt.Sprintf(`{"downPaymentCents":%d,"installments":%d,"firstDueDate":%q}`, down, n, first)
}

// agree signs an agreement over HTTP and returns its answer.
func (f *fixture) agree(t *testing.T, dk, id, body string) map[string]any {
	t.Helper()
	status, out := f.post(t, "operator", contractPath(dk, id)+"/agreements", body)
	if status != http.StatusCreated {
		t.Fatalf("agreement: %d %v", status, out)
	}
	return out
}

func (f *fixture) getAgreement(t *testing.T, dk, id, agID string) map[string]any {
	t.Helper()
	status, out := f.Do(t, http.MethodGet, contractPath(dk, id)+"/agreements/"+agID, f.keys["operator"], "")
	if status != http.StatusOK {
		t.Fatalf("get agreement: %d %v", status, out)
	}
	return out
}

// payCharge delivers the settlement of the charge an agreement answered.
func (f *fixture) payCharge(t *testing.T, out map[string]any, paidAt time.Time) {
	t.Helper()
	f.Clock.Set(paidAt)
	ch := out["downPaymentCharge"].(map[string]any)
	f.deliver(t, "stl-down-"+out["agreementId"].(string), &charges.Issued{ChargeID: ch["chargeId"].(string), AmountCents: int64(ch["amountCents"].(float64))}, paidAt)
}

func TestAgreementEffectiveWhenDownPaymentPaid(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name             string
		first            string // first due date: overdue instalments up to 2026-08-10
		overdue, total   int
		newInstallments  int
		wantTransactions int
	}{
		// 20 renegotiated: 43 actions in the commit, 49 new instalments: 92, one transaction.
		{"20 into 48", "2025-01-10", 20, 23, 48, 1},
		// 45 renegotiated: 93 in the commit; 97 new instalments go ahead in a chunk.
		{"45 into 96", "2022-12-10", 45, 46, 96, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, at("2026-09-01", 10, 0))
			dk := f.signN(t, "C-1", tc.first, tc.total)
			before := f.load(t, dk, "C-1")
			out := f.agree(t, dk, "C-1", agreementBody(150000, tc.newInstallments, "2026-10-10"))
			if got := int(out["transactions"].(float64)); got != tc.wantTransactions {
				t.Fatalf("transactions %d, want %d", got, tc.wantTransactions)
			}
			agID := out["agreementId"].(string)
			c := f.load(t, dk, "C-1")
			h := c.Header
			if h.Status != contract.StatusInAgreement || h.StatusReason != arrangement.ReasonAgreementSigned || h.Hold != "AGREEMENT" || h.HoldID != agID ||
				h.Bucket != "" || h.NextAction != "DUE_CHECK" || h.NextActionDate != "2026-09-02" {
				t.Fatalf("header: %+v", h)
			}
			if len(c.Installments) != tc.total+1+tc.newInstallments || h.InstallmentCount != len(c.Installments) {
				t.Fatalf("%d instalments, count %d", len(c.Installments), h.InstallmentCount)
			}
			// The computation: per renegotiated instalment base + fine +
			// late interest, and a schedule that adds up to the total.
			ag := f.getAgreement(t, dk, "C-1", agID)
			reneg := ag["renegotiated"].([]any)
			if len(reneg) != tc.overdue || ag["status"] != arrangement.AgreementSigned {
				t.Fatalf("agreement: %d renegotiated, %v", len(reneg), ag["status"])
			}
			var total int64
			for _, r := range reneg {
				m := r.(map[string]any)
				base, fine, late := int64(m["baseCents"].(float64)), int64(m["fineCents"].(float64)), int64(m["lateInterestCents"].(float64))
				if base != 100000 || fine != 2000 || late <= 0 || int64(m["totalCents"].(float64)) != base+fine+late {
					t.Fatalf("renegotiated line: %v", m)
				}
				total += base + fine + late
			}
			if int64(ag["totalCents"].(float64)) != total {
				t.Fatalf("total %v, lines %d", ag["totalCents"], total)
			}
			sched := ag["schedule"].([]any)
			var sum int64
			for i, l := range sched {
				m := l.(map[string]any)
				sum += int64(m["amountCents"].(float64))
				if int(m["seq"].(float64)) != tc.total+1+i {
					t.Fatalf("schedule[%d]: %v", i, m)
				}
			}
			if len(sched) != tc.newInstallments+1 || sum != total {
				t.Fatalf("schedule of %d adds to %d, total %d", len(sched), sum, total)
			}
			// Nothing of the original overdue instalments changed but their
			// status and the charges made fact.
			for _, in := range before.Installments[:tc.overdue] {
				got := c.Installment(in.Seq)
				if got.Status != contract.InstRenegotiated || got.FineCents != 2000 || got.ChargedThrough != "2026-09-01" {
					t.Fatalf("seq %d: %+v", in.Seq, got)
				}
			}
			if c.Installment(tc.overdue+1).Status != contract.InstOpen {
				t.Fatalf("a current instalment was renegotiated")
			}

			f.payCharge(t, out, at("2026-09-01", 15, 0))
			ag = f.getAgreement(t, dk, "C-1", agID)
			if ag["status"] != arrangement.AgreementEffective || ag["resolvedBy"] != "settlement" {
				t.Fatalf("after the down payment: %v %v", ag["status"], ag["resolvedBy"])
			}
			if h := f.header(t, dk, "C-1"); h.Status != contract.StatusInAgreement || h.Hold != "AGREEMENT" {
				t.Fatalf("header after the down payment: %+v", h)
			}
			// AP09 of every renegotiated instalment says why.
			for _, in := range before.Installments[:tc.overdue] {
				p, err := f.Contracts.Events(bg, f.t, dk, "C-1", fmt.Sprintf("%03d", in.Seq), 100, "")
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, e := range p.Items {
					found = found || (e.EventType == arrangement.EvInstallmentRenegotiated && e.Details["agreementId"] == agID)
				}
				if !found {
					t.Fatalf("seq %d: no InstallmentRenegotiated event: %+v", in.Seq, p.Items)
				}
			}
			if f.events(t, dk, "C-1", arrangement.EvAgreementSigned) != 1 || f.events(t, dk, "C-1", arrangement.EvAgreementEffective) != 1 {
				t.Fatal("contract-level agreement events")
			}
		})
	}
}

func TestAgreementLapsesWithoutDownPayment(t *testing.T) {
	t.Parallel()
	f, dk := delinquent(t)
	f.Clock.Set(at("2026-08-11", 10, 0))
	out := f.agree(t, dk, "C-1", agreementBody(30000, 3, "2026-09-10"))
	agID := out["agreementId"].(string)
	f.runAt(t, at("2026-08-12", 8, 0))
	ag := f.getAgreement(t, dk, "C-1", agID)
	if ag["status"] != arrangement.AgreementLapsed {
		t.Fatalf("agreement: %v", ag["status"])
	}
	c := f.load(t, dk, "C-1")
	if in := c.Installment(1); in.Status != contract.InstOpen || in.FineCents != 0 || in.ChargedThrough != "" {
		t.Fatalf("seq 1 not restored: %+v", in)
	}
	for seq := 4; seq <= 7; seq++ {
		if st := c.Installment(seq).Status; st != contract.InstCancelled {
			t.Fatalf("seq %d: %s", seq, st)
		}
	}
	h := c.Header
	if h.Status != contract.StatusInCollection || h.Hold != "" || h.OldestOverdueDueDate != "2026-08-07" || h.Bucket == "" ||
		h.OutstandingCents != 300000 {
		t.Fatalf("header: %+v", h)
	}
	// The régua resumes where the agreement interrupted it: SMS_D5 runs in
	// the run that lapsed it, the call is next.
	if h.LastStep != 5 || h.LastStepAt != "2026-08-12" || h.NextAction != "CALL_D15" {
		t.Fatalf("régua did not resume: %+v", h)
	}
	if f.events(t, dk, "C-1", arrangement.EvAgreementLapsed) != 1 {
		t.Fatal("no AgreementLapsed event")
	}
	// Exactly once: another run changes nothing.
	f.runAt(t, at("2026-08-13", 8, 0))
	if f.events(t, dk, "C-1", arrangement.EvAgreementLapsed) != 1 {
		t.Fatal("lapsed twice")
	}
}

// TestAgreementBrokenThirtyOneDaysLate is also issue 22 finding 10
// (ADR 0068): the original instalment that falls due during the agreement
// (seq 3, 10-07) is dunned (SMS_D1 on 10-10, not "0 days past due" for a
// month); the break is measured on the agreement's own first instalment
// (09-10, 31 days late on 10-11); after it the delinquency resumes from
// the original oldest due date (08-07: D061_090, not D031_060) and the
// step already sent before the agreement (SMS_D1) is not replayed — the
// notice, never skipped, is next.
func TestAgreementBrokenThirtyOneDaysLate(t *testing.T) {
	t.Parallel()
	f, dk := delinquent(t)
	f.Clock.Set(at("2026-08-11", 10, 0))
	out := f.agree(t, dk, "C-1", agreementBody(30000, 3, "2026-09-10"))
	agID := out["agreementId"].(string)
	f.payCharge(t, out, at("2026-08-11", 12, 0))
	// The instalment not yet due when the agreement was signed is paid on
	// time; the agreement's first one never is.
	f.payPix(t, dk, "C-1", 2, at("2026-09-08", 12, 0))
	for _, d := range []string{"2026-08-12", "2026-09-11", "2026-10-10"} {
		f.runAt(t, at(d, 8, 0))
		if ag := f.getAgreement(t, dk, "C-1", agID); ag["status"] != arrangement.AgreementEffective {
			t.Fatalf("%s: %v", d, ag["status"])
		}
	}
	h0 := f.header(t, dk, "C-1")
	if h0.NextActionDate != "2026-10-11" { // the break check (with the bucket move)
		t.Fatalf("break check not planned: %+v", h0)
	}
	if h0.Status != contract.StatusInAgreement || h0.OldestOverdueDueDate != "2026-10-07" || h0.LastStep != 1 || h0.LastStepAt != "2026-10-10" {
		t.Fatalf("the instalment due during the agreement was not dunned: %+v", h0)
	}
	f.runAt(t, at("2026-10-11", 8, 0)) // 2026-09-10 is 31 days late
	if ag := f.getAgreement(t, dk, "C-1", agID); ag["status"] != arrangement.AgreementBroken {
		t.Fatalf("agreement: %v", ag["status"])
	}
	c := f.load(t, dk, "C-1")
	h := c.Header
	if h.Status != contract.StatusInCollection || h.Hold != "" || h.OldestOverdueDueDate != "2026-08-07" || h.Bucket != "D091_PLUS" && h.Bucket != "D061_090" {
		t.Fatalf("header: %+v", h)
	}
	if h.Bucket != "D061_090" || h.LastStep != 1 || h.NextAction != "BUREAU_NOTICE" {
		t.Fatalf("delinquency did not resume from 08-07 with its steps: %+v", h)
	}
	if c.Installment(1).Status != contract.InstRenegotiated || c.Installment(4).Status != contract.InstPaid || c.Installment(2).Status != contract.InstPaid {
		t.Fatal("the agreement's history changed")
	}
	if want := c.Installment(5).PrincipalCents + c.Installment(6).PrincipalCents + c.Installment(7).PrincipalCents + 100000; h.OutstandingCents != want {
		t.Fatalf("outstanding %d, want %d", h.OutstandingCents, want)
	}
	if h.NextAction == "DUE_CHECK" || h.NextAction == "" {
		t.Fatalf("régua did not resume: %+v", h)
	}
	if f.events(t, dk, "C-1", arrangement.EvAgreementBroken) != 1 {
		t.Fatal("no AgreementBroken event")
	}
}

func TestAgreementBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	f, dk := delinquent(t)
	f.Clock.Set(at("2026-08-11", 10, 0))
	current := f.signN(t, "C-2", "2026-09-10", 3)
	otherEnv, other := f.Env, f.CreateTenant(t, "t-other")
	cases := []struct {
		name, dk, id, body, token string
		status                    int
	}{
		{"does not cover the debt", dk, "C-1", agreementBody(50000, 0, "2026-09-10"), "", http.StatusUnprocessableEntity},
		{"down payment larger than the debt", dk, "C-1", agreementBody(500000, 2, "2026-09-10"), "", http.StatusUnprocessableEntity},
		{"no overdue instalment", current, "C-2", agreementBody(50000, 2, "2026-09-10"), "", http.StatusUnprocessableEntity},
		{"first due date not ahead", dk, "C-1", agreementBody(50000, 2, "2026-08-11"), "", http.StatusUnprocessableEntity},
		{"no down payment", dk, "C-1", agreementBody(0, 2, "2026-09-10"), "", http.StatusBadRequest},
		{"bad date", dk, "C-1", agreementBody(50000, 2, "10/09/2026"), "", http.StatusBadRequest},
		{"another tenant's contract", dk, "C-1", agreementBody(50000, 2, "2026-09-10"), other["operator"], http.StatusNotFound},
	}
	before := len(f.Partition(t, f.t, dk)) + len(f.Partition(t, f.t, current))
	for _, tc := range cases {
		token := tc.token
		if token == "" {
			token = f.keys["operator"]
		}
		status, out := otherEnv.Do(t, http.MethodPost, contractPath(tc.dk, tc.id)+"/agreements", token, tc.body)
		if status != tc.status || enginetest.ErrorCode(out) == "" {
			t.Errorf("%s: %d %v", tc.name, status, out)
		}
	}
	if after := len(f.Partition(t, f.t, dk)) + len(f.Partition(t, f.t, current)); after != before {
		t.Fatalf("items %d → %d", before, after)
	}
}

// TestAgreementVersusSettlement races an agreement against the payment of
// the overdue instalment's charge: the money lands on exactly one of the
// two schedules.
func TestAgreementVersusSettlement(t *testing.T) {
	t.Parallel()
	for i := range 4 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			f, dk := delinquent(t)
			now := at("2026-08-11", 10, 0)
			f.Clock.Set(now)
			ch, err := f.Charges.Issue(bg, f.t, charges.Input{DebtorKey: dk, ContractID: "C-1", Seq: 1, Method: charges.PIX})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var agStatus int
			wg.Add(2)
			go func() {
				defer wg.Done()
				agStatus, _ = f.Do(t, http.MethodPost, contractPath(dk, "C-1")+"/agreements", f.keys["operator"], agreementBody(30000, 3, "2026-09-10"))
			}()
			go func() {
				defer wg.Done()
				body := enginetest.WebhookBody("stl-race", ch.ChargeID, ch.AmountCents, now.UTC().Format(time.RFC3339))
				if status, out, err := f.Deliver(f.t.ID, f.keys["webhook"], body, now, nil); err != nil || status != http.StatusOK {
					t.Errorf("webhook: %d %s %v", status, out, err)
				}
			}()
			wg.Wait()
			c := f.load(t, dk, "C-1")
			one := c.Installment(1)
			switch agStatus {
			case http.StatusCreated: // the agreement first: the payment went to its down payment
				if one.Status != contract.InstRenegotiated || one.PaidCents != 0 || c.Installment(4).Status != contract.InstPaid {
					t.Fatalf("agreement first: seq1 %+v, seq4 %+v", one, c.Installment(4))
				}
			case http.StatusUnprocessableEntity: // the payment first: nothing left overdue to renegotiate
				if one.Status != contract.InstPaid || len(c.Installments) != 3 || c.Header.Status == contract.StatusInAgreement {
					t.Fatalf("payment first: %+v, %d instalments", one, len(c.Installments))
				}
			default:
				t.Fatalf("agreement: %d", agStatus)
			}
		})
	}
}

func TestAgreementIdempotencyKey(t *testing.T) {
	t.Parallel()
	f, dk := delinquent(t)
	f.Clock.Set(at("2026-08-11", 10, 0))
	body := agreementBody(30000, 3, "2026-09-10")
	path := contractPath(dk, "C-1") + "/agreements"
	s1, first := f.Do(t, http.MethodPost, path, f.keys["operator"], body, "Idempotency-Key", "ag-1")
	s2, again := f.Do(t, http.MethodPost, path, f.keys["operator"], body, "Idempotency-Key", "ag-1")
	if s1 != http.StatusCreated || s2 != http.StatusCreated || first["agreementId"] != again["agreementId"] {
		t.Fatalf("retry: %d %v / %d %v", s1, first["agreementId"], s2, again["agreementId"])
	}
	if n := f.events(t, dk, "C-1", arrangement.EvAgreementSigned); n != 1 || len(f.load(t, dk, "C-1").Installments) != 7 {
		t.Fatalf("%d agreements signed", n)
	}
}

// TestUncommittedChunkIsInvisible: an instalment written by an agreement's
// chunk whose header never committed (past the header's instalment count)
// is not part of the contract, and the agreement signed afterwards
// overwrites it.
func TestUncommittedChunkIsInvisible(t *testing.T) {
	t.Parallel()
	f, dk := delinquent(t)
	f.Clock.Set(at("2026-08-11", 10, 0))
	orphan, err := attributevalue.MarshalMap(contract.Installment{PK: keys.Debtor(f.t.ID, dk), SK: keys.Installment("C-1", 4),
		Type: contract.TypeInstallment, Seq: 4, OriginalDueDate: "2026-08-11", DueDate: "2026-08-11", PrincipalCents: 777, Status: contract.InstOpen, Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db().Put(bg, orphan, nil); err != nil {
		t.Fatal(err)
	}
	if c := f.load(t, dk, "C-1"); len(c.Installments) != 3 || c.Header.OutstandingCents != 300000 {
		t.Fatalf("orphan visible: %d instalments, %d", len(c.Installments), c.Header.OutstandingCents)
	}
	f.agree(t, dk, "C-1", agreementBody(30000, 3, "2026-09-10"))
	if in := f.load(t, dk, "C-1").Installment(4); in == nil || in.PrincipalCents != 30000 {
		t.Fatalf("down payment: %+v", in)
	}
}
