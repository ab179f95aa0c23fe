package settlement_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"lastro/collections/errs"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/ddblocal"
	"lastro/engine/enginetest"
	"lastro/settlement"
)

// pixFixture is the settlement fixture with the tenant's webhook secret,
// for calls through HTTP as a PSP makes them.
type pixFixture struct {
	*fixture
	secret, supervisor string
}

func newPixFixture(t *testing.T) *pixFixture {
	t.Helper()
	env := enginetest.New(t, enginetest.At(testNow))
	tn, k := env.Tenant(t, "t-pay")
	return &pixFixture{fixture: &fixture{Env: env, t: tn}, secret: k["webhook"], supervisor: k["supervisor"]}
}

// Both places a PSP may post: the URL registered as .../{tenantId} or as
// .../{tenantId}/pix, with "/pix" appended.
var pixPaths = []string{"/v1/webhooks/t-pay/pix", "/v1/webhooks/t-pay/pix/pix"}

// post delivers a Pix webhook body signed now with the tenant's secret.
func (f *pixFixture) post(t *testing.T, path, body string) (int, map[string]any) {
	t.Helper()
	return f.Do(t, http.MethodPost, path, "", body, enginetest.WebhookHeaders(f.secret, body, f.Clock.Now())...)
}

// End-to-end ids: E + ISPB + yyyyMMddHHmm + 11 of sequence.
func e2e(n int) string { return fmt.Sprintf("E00000000202609241200%011d", n) }
func rtr(n int) string { return fmt.Sprintf("D00000000202609251000%011d", n) }

type pixPay struct {
	e2e, txid, valor string
	refunds          []pixRefund
}

type pixRefund struct{ id, rtr, valor, status string }

// pixBody is a Pix API webhook body, with the payer's details a PSP sends
// (infoPagador, an extension carrying a name and a CPF) that the engine
// must never keep.
func pixBody(ps ...pixPay) string {
	var entries []string
	for _, p := range ps {
		e := fmt.Sprintf(`{"endToEndId":%q,"txid":%q,"valor":%q,"horario":"2026-09-24T12:00:00.000Z","chave":"4004e8a5-5c1b-4c5e-9a5a-2b6e1f4f0c11",`+
			`"infoPagador":"Maria Sintética, CPF 529.982.247-25","gnExtras":{"pagador":{"nome":"Maria Sintética","cpf":"52998224725"}}`, p.e2e, p.txid, p.valor)
		if len(p.refunds) > 0 {
			var rs []string
			for _, r := range p.refunds {
				rs = append(rs, fmt.Sprintf(`{"id":%q,"rtrId":%q,"valor":%q,"horario":{"solicitacao":"2026-09-24T12:30:00Z","liquidacao":"2026-09-24T12:30:02Z"},"status":%q,"motivo":"Devolução a Maria"}`,
					r.id, r.rtr, r.valor, r.status))
			}
			e += `,"devolucoes":[` + strings.Join(rs, ",") + `]`
		}
		entries = append(entries, e+"}")
	}
	return `{"pix":[` + strings.Join(entries, ",") + `]}`
}

func results(t *testing.T, out map[string]any) []map[string]any {
	t.Helper()
	raw, _ := out["pix"].([]any)
	var rs []map[string]any
	for _, r := range raw {
		rs = append(rs, r.(map[string]any))
	}
	return rs
}

func statuses(t *testing.T, out map[string]any) []string {
	t.Helper()
	var s []string
	for _, r := range results(t, out) {
		s = append(s, r["status"].(string))
	}
	return s
}

func TestPixWebhookAppliesEveryPaymentExactlyOnce(t *testing.T) {
	t.Parallel()
	f := newPixFixture(t)
	dk1, ch1 := lateContract(t, f.fixture, "C-1")
	dk2, ch2 := lateContract(t, f.fixture, "C-2")
	body := pixBody(pixPay{e2e: e2e(1), txid: ch1.ChargeID, valor: "1024.67"}, pixPay{e2e: e2e(2), txid: ch2.ChargeID, valor: "100.00"})
	status, out := f.post(t, pixPaths[0], body)
	if status != http.StatusOK || !reflect.DeepEqual(statuses(t, out), []string{"applied", "applied"}) {
		t.Fatalf("first delivery: %d %v", status, out)
	}
	rs := results(t, out)
	if s := rs[0]["settlement"].(map[string]any); s["settlementId"] != e2e(1) || s["chargeId"] != ch1.ChargeID || s["appliedCents"] != float64(102467) {
		t.Fatalf("payment 1: %v", s)
	}
	if in := f.load(t, dk1, "C-1").Installment(1); in.Status != contract.InstPaid {
		t.Fatalf("C-1 instalment 1: %+v", in)
	}
	if in := f.load(t, dk2, "C-2").Installment(1); in.Status != contract.InstOpen || in.FinePaidCents != 2000 || in.LateInterestPaidCents != 467 || in.PaidCents != 7533 {
		t.Fatalf("C-2 instalment 1: %+v", in)
	}
	if stl := f.stl(t, e2e(2)); stl == nil || stl.ChargeID != ch2.ChargeID || stl.AmountCents != 10000 || stl.Outcome != settlement.OutcomeApplied {
		t.Fatalf("stl 2: %+v", stl)
	}
	snap1, snap2 := f.partition(t, dk1), f.partition(t, dk2)
	// The PSP delivers the same call three more times, on either path.
	for i := range 3 {
		status, out := f.post(t, pixPaths[(i+1)%2], body)
		if status != http.StatusOK || !reflect.DeepEqual(statuses(t, out), []string{"already_applied", "already_applied"}) {
			t.Fatalf("redelivery %d: %d %v", i, status, out)
		}
	}
	if !reflect.DeepEqual(f.partition(t, dk1), snap1) || !reflect.DeepEqual(f.partition(t, dk2), snap2) {
		t.Fatal("a redelivery changed a debtor's items")
	}
}

func TestPixValorOverHTTP(t *testing.T) {
	t.Parallel()
	f := newPixFixture(t)
	_, ch := lateContract(t, f.fixture, "C-1")
	tests := []struct {
		valor string
		cents int64 // 0: 400 invalid_valor
	}{
		{"0.10", 10},
		{"1234.5", 123450},
		{"1e3", 0},
		{"-1.00", 0},
		{"1.234", 0},
		{"1234", 0},
		{"01.00", 100},
	}
	for i, tt := range tests {
		id := e2e(100 + i)
		status, out := f.post(t, pixPaths[0], pixBody(pixPay{e2e: id, txid: ch.ChargeID, valor: tt.valor}))
		if tt.cents == 0 {
			if status != http.StatusBadRequest || enginetest.ErrorCode(out) != "invalid_valor" || f.stl(t, id) != nil {
				t.Errorf("valor %q: %d %v", tt.valor, status, out)
			}
			continue
		}
		if status != http.StatusOK {
			t.Errorf("valor %q: %d %v", tt.valor, status, out)
			continue
		}
		if stl := f.stl(t, id); stl == nil || stl.AmountCents != tt.cents {
			t.Errorf("valor %q: recorded %+v, want %d cents", tt.valor, stl, tt.cents)
		}
	}
}

func TestPixBadPaymentAmongGoodOnesAppliesNothing(t *testing.T) {
	t.Parallel()
	f := newPixFixture(t)
	dk, ch := lateContract(t, f.fixture, "C-1")
	snap := f.partition(t, dk)
	bad := []struct{ name, body, code, where string }{
		{"bad valor", pixBody(pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "10.00"}, pixPay{e2e: e2e(2), txid: ch.ChargeID, valor: "1e3"},
			pixPay{e2e: e2e(3), txid: ch.ChargeID, valor: "10.00"}), "invalid_valor", "pix[1]"},
		{"bad endToEndId", pixBody(pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "10.00"}, pixPay{e2e: "E123", txid: ch.ChargeID, valor: "10.00"}),
			"invalid_end_to_end_id", "pix[1]"},
		{"bad refund", pixBody(pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "10.00"},
			pixPay{e2e: e2e(2), txid: ch.ChargeID, valor: "10.00", refunds: []pixRefund{{"d1", rtr(1), "1.00", "FEITO"}}}),
			"invalid_refund_status", "pix[1].devolucoes[0]"},
		{"duplicate endToEndId", pixBody(pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "10.00"}, pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "10.00"}),
			"duplicate_end_to_end_id", "pix[1]"},
	}
	for _, tt := range bad {
		status, out := f.post(t, pixPaths[0], tt.body)
		msg, _ := out["error"].(map[string]any)["message"].(string)
		if status != http.StatusBadRequest || enginetest.ErrorCode(out) != tt.code || !strings.HasPrefix(msg, tt.where+":") {
			t.Errorf("%s: %d %v", tt.name, status, out)
		}
		if strings.Contains(msg, "Maria") || strings.Contains(msg, "529") {
			t.Errorf("%s: the error echoes the payer: %s", tt.name, msg)
		}
		for _, n := range []int{1, 2, 3} {
			if stl := f.stl(t, e2e(n)); stl != nil {
				t.Errorf("%s: payment %d recorded: %+v", tt.name, n, stl)
			}
		}
	}
	if !reflect.DeepEqual(f.partition(t, dk), snap) {
		t.Fatal("a refused call changed the debtor's items")
	}
	// Unsigned, or signed with another secret: 401, nothing read.
	body := pixBody(pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "10.00"})
	if status, out := f.Do(t, http.MethodPost, pixPaths[1], "", body); status != http.StatusUnauthorized || enginetest.ErrorCode(out) != "signature_missing" {
		t.Fatalf("unsigned: %d %v", status, out)
	}
	if status, out := f.Do(t, http.MethodPost, pixPaths[1], "", body, enginetest.WebhookHeaders("whsec_other", body, f.Clock.Now())...); status != http.StatusUnauthorized || enginetest.ErrorCode(out) != "invalid_signature" {
		t.Fatalf("wrong secret: %d %v", status, out)
	}
	if f.stl(t, e2e(1)) != nil {
		t.Fatal("an unauthenticated call was applied")
	}
}

// A transient failure of one payment answers 503 so the PSP delivers the
// call again; the redelivery applies the rest and answers the first
// already_applied.
func TestPixTransientFailureIsRedelivered(t *testing.T) {
	t.Parallel()
	f := newPixFixture(t)
	dk1, ch1 := lateContract(t, f.fixture, "C-1")
	_, ch2 := lateContract(t, f.fixture, "C-2")
	var writes atomic.Int32
	f.Settlement.SetBeforeWrite(func(attempt int) {
		// The second payment's transaction meets a store shedding load.
		if attempt == 1 && writes.Add(1) == 2 {
			if err := f.Store.SetFault(ddblocal.FaultRule{Kind: ddblocal.FaultThrottling, Operations: []string{"TransactWriteItems"}, Rate: 1}); err != nil {
				t.Error(err)
			}
		}
	})
	body := pixBody(pixPay{e2e: e2e(1), txid: ch1.ChargeID, valor: "1024.67"}, pixPay{e2e: e2e(2), txid: ch2.ChargeID, valor: "1024.67"})
	status, out := f.post(t, pixPaths[0], body)
	if status != http.StatusServiceUnavailable || enginetest.ErrorCode(out) != "pix_partially_applied" || !reflect.DeepEqual(statuses(t, out), []string{"applied", "failed"}) {
		t.Fatalf("first delivery: %d %v", status, out)
	}
	if f.stl(t, e2e(2)) != nil || f.load(t, dk1, "C-1").Installment(1).Status != contract.InstPaid {
		t.Fatal("the failure was not confined to the second payment")
	}
	f.Store.ClearFaults()
	status, out = f.post(t, pixPaths[0], body)
	if status != http.StatusOK || !reflect.DeepEqual(statuses(t, out), []string{"already_applied", "applied"}) {
		t.Fatalf("redelivery: %d %v", status, out)
	}
	// The same endToEndId with another amount contradicts the record: 409.
	status, out = f.post(t, pixPaths[0], pixBody(pixPay{e2e: e2e(1), txid: ch1.ChargeID, valor: "1024.68"}))
	if status != http.StatusConflict || enginetest.ErrorCode(out) != "pix_conflict" || results(t, out)[0]["error"].(map[string]any)["code"] != "settlement_id_reused" {
		t.Fatalf("reused id: %d %v", status, out)
	}
}

// events returns the events of one instalment's trail by type.
func (f *pixFixture) events(t *testing.T, dk, contractID, seq, eventType string) []contract.EventView {
	t.Helper()
	page, err := f.Contracts.Events(bg, f.t, dk, contractID, seq, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []contract.EventView
	for _, e := range page.Items {
		if e.EventType == eventType {
			out = append(out, e)
		}
	}
	return out
}

func TestPixRefundReopensWhatThePaymentPaidOnce(t *testing.T) {
	t.Parallel()
	f := newPixFixture(t)
	dk, ch := lateContract(t, f.fixture, "C-1")
	pay := pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "1024.67"}
	if status, out := f.post(t, pixPaths[0], pixBody(pay)); status != http.StatusOK {
		t.Fatalf("payment: %d %v", status, out)
	}
	if h := f.load(t, dk, "C-1").Header; h.Status != contract.StatusActive || h.OutstandingCents != 200000 {
		t.Fatalf("after the payment: %+v", h)
	}
	// The PSP notifies a partial refund (DEVOLVIDO) and one in process.
	pay.refunds = []pixRefund{{"dev1", rtr(1), "100.00", settlement.RefundReturned}, {"dev2", rtr(2), "924.67", settlement.RefundInProcess}}
	status, out := f.post(t, pixPaths[1], pixBody(pay))
	if status != http.StatusOK || !reflect.DeepEqual(statuses(t, out), []string{"already_applied"}) {
		t.Fatalf("refund: %d %v", status, out)
	}
	refunds := results(t, out)[0]["devolucoes"].([]any)
	r1, r2 := refunds[0].(map[string]any), refunds[1].(map[string]any)
	if r1["status"] != "reversed" || r1["reopenedCents"] != float64(10000) || r1["unreversedCents"] != float64(0) || r2["status"] != "pending" {
		t.Fatalf("refund outcomes: %v", refunds)
	}
	// The payment is undone from its end: principal first. The instalment
	// owes again, so the contract is delinquent again (due 09-10).
	c := f.load(t, dk, "C-1")
	in, h := c.Installment(1), c.Header
	if in.Status != contract.InstOpen || in.PaidCents != 90000 || in.InterestPaidCents != 10000 || in.FinePaidCents != 2000 || in.LateInterestPaidCents != 467 {
		t.Fatalf("instalment after a partial refund: %+v", in)
	}
	if h.Status != contract.StatusInCollection || h.OldestOverdueDueDate != "2026-09-10" || h.OutstandingCents != 210000 || h.Bucket == "" {
		t.Fatalf("header after a partial refund: %+v", h)
	}
	evs := f.events(t, dk, "C-1", "1", settlement.EvSettlementReversed)
	if len(evs) != 1 || evs[0].Details["rtrId"] != rtr(1) || evs[0].Details["reopenedCents"] != float64(10000) || evs[0].Details["statusAfter"] != contract.StatusInCollection {
		t.Fatalf("reversal events: %+v", evs)
	}
	// The second refund completes; the PSP redelivers the whole entry.
	pay.refunds[1].status = settlement.RefundReturned
	snapshot := []kit.Item(nil)
	for i := range 3 {
		status, out := f.post(t, pixPaths[i%2], pixBody(pay))
		refunds := results(t, out)[0]["devolucoes"].([]any)
		want := []string{"already_reversed", "reversed"}
		if i > 0 {
			want[1] = "already_reversed"
		}
		if status != http.StatusOK || refunds[0].(map[string]any)["status"] != want[0] || refunds[1].(map[string]any)["status"] != want[1] {
			t.Fatalf("delivery %d: %d %v", i, status, out)
		}
		if i == 0 {
			snapshot = f.partition(t, dk)
		} else if !reflect.DeepEqual(f.partition(t, dk), snapshot) {
			t.Fatalf("redelivery %d changed the debtor's items", i)
		}
	}
	in = f.load(t, dk, "C-1").Installment(1)
	if in.Status != contract.InstOpen || in.PaidCents != 0 || in.InterestPaidCents != 0 || in.FinePaidCents != 0 || in.LateInterestPaidCents != 0 ||
		in.FineCents != 2000 || in.LateInterestCents != 467 {
		t.Fatalf("instalment after the whole payment went back: %+v", in)
	}
	if evs := f.events(t, dk, "C-1", "1", settlement.EvSettlementReversed); len(evs) != 2 {
		t.Fatalf("one event per refund: %d", len(evs))
	}
	stl := f.stl(t, e2e(1))
	if stl.ReversedCents != 102467 || !reflect.DeepEqual(stl.Reversed, []contract.PaidLine{{Seq: 1, Fine: 2000, LateInterest: 467, Interest: 10000, Principal: 90000}}) {
		t.Fatalf("stl totals: %+v", stl)
	}
}

func TestPixRefundTakesThePaymentsCreditFirst(t *testing.T) {
	t.Parallel()
	f := newPixFixture(t)
	dk := f.contract(t, "C-12", "2026-09-10", 12)
	ch := f.charge(t, dk, "C-12", 1)
	pay := pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "1524.67"} // 500.00 over the charge
	if status, out := f.post(t, pixPaths[0], pixBody(pay)); status != http.StatusOK {
		t.Fatalf("payment: %d %v", status, out)
	}
	pay.refunds = []pixRefund{{"dev1", rtr(1), "600.00", settlement.RefundReturned}}
	status, out := f.post(t, pixPaths[0], pixBody(pay))
	r := results(t, out)[0]["devolucoes"].([]any)[0].(map[string]any)
	if status != http.StatusOK || r["fromCreditCents"] != float64(50000) || r["reopenedCents"] != float64(10000) {
		t.Fatalf("refund: %d %v", status, out)
	}
	c := f.load(t, dk, "C-12")
	if c.Header.CreditCents != 0 || c.Installment(1).PaidCents != 90000 || c.Installment(1).Status != contract.InstOpen {
		t.Fatalf("after the refund: %+v %+v", c.Header, c.Installment(1))
	}
}

// A refund of money in suspense (a Pix with no txid) changes no balance:
// it is recorded, with a review entry beside the suspended payment.
func TestPixRefundOfASuspendedPaymentGoesToReview(t *testing.T) {
	t.Parallel()
	f := newPixFixture(t)
	pay := pixPay{e2e: e2e(1), valor: "50.00", refunds: []pixRefund{{"dev1", rtr(1), "50.00", settlement.RefundReturned}}}
	for i, want := range []string{"review", "already_reversed"} {
		status, out := f.post(t, pixPaths[0], pixBody(pay))
		res := results(t, out)
		r := res[0]["devolucoes"].([]any)[0].(map[string]any)
		wantPay := []string{"unmatched", "already_applied"}[i]
		if status != http.StatusOK || res[0]["status"] != wantPay || r["status"] != want || r["outcome"] != settlement.ReversalReview {
			t.Fatalf("delivery %d: %d %v", i, status, out)
		}
	}
	status, out := f.Do(t, http.MethodGet, "/v1/settlements/reversals", f.supervisor, "")
	items, _ := out["items"].([]any)
	if status != http.StatusOK || len(items) != 1 {
		t.Fatalf("reversals to review: %d %v", status, out)
	}
	if rv := items[0].(map[string]any); rv["rtrId"] != rtr(1) || rv["settlementId"] != e2e(1) || rv["reason"] != settlement.ReviewSettlementUnmatched ||
		rv["unreversedCents"] != float64(5000) {
		t.Fatalf("review entry: %v", rv)
	}
	// Not on the unmatched list, which is the payments'.
	u, err := f.Settlement.ListUnmatched(bg, f.t, 10, "")
	if err != nil || len(u.Items) != 1 || u.Items[0].Reason != settlement.ReasonNoTxID {
		t.Fatalf("suspense: %+v %v", u, err)
	}
	// Money that went back to the payer is not applied by a resolve.
	dk, ch := lateContract(t, f.fixture, "C-1")
	snap := f.partition(t, dk)
	_, err = f.Settlement.Resolve(bg, f.t, e2e(1), ch.ChargeID, settlement.Resolver{Role: "supervisor"})
	if status, code, _ := errs.Public(err); status != http.StatusUnprocessableEntity || code != "settlement_reversed" {
		t.Fatalf("resolve of a refunded payment: %v", err)
	}
	if !reflect.DeepEqual(f.partition(t, dk), snap) {
		t.Fatal("the refused resolve changed the debtor's items")
	}
}

// The payer's details a PSP sends (infoPagador, a name and a CPF in an
// extension, the refund's reason) reach no item, log line or answer.
func TestPixWebhookKeepsNoPersonalData(t *testing.T) {
	t.Parallel()
	f := newPixFixture(t)
	_, ch := lateContract(t, f.fixture, "C-1")
	pay := pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "1024.67", refunds: []pixRefund{{"dev1", rtr(1), "10.00", settlement.RefundReturned}}}
	var answers []string
	for _, body := range []string{pixBody(pay), pixBody(pay), pixBody(pay, pixPay{e2e: e2e(2), txid: ch.ChargeID, valor: "1e3"})} {
		_, raw := f.Raw(t, http.MethodPost, pixPaths[0], "", body, enginetest.WebhookHeaders(f.secret, body, f.Clock.Now())...)
		answers = append(answers, raw)
	}
	items, err := json.Marshal(f.ScanAll(t))
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"items": string(items), "logs": f.Logs.String(), "answers": strings.Join(answers, "\n")} {
		for _, pii := range []string{"Maria", "529.982.247-25", "52998224725", "Sintética", "4004e8a5"} {
			if strings.Contains(text, pii) {
				t.Errorf("%s contain %q", what, pii)
			}
		}
	}
}

// Deliveries of the same refund racing each other (a PSP retrying while
// the first call is still in flight) reverse it once: the REV record's
// condition lets one transaction commit, the others answer
// already_reversed.
func TestPixConcurrentRefundDeliveriesReverseOnce(t *testing.T) {
	t.Parallel()
	f := newPixFixture(t)
	dk, ch := lateContract(t, f.fixture, "C-1")
	pay := pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "1024.67", refunds: []pixRefund{{"dev1", rtr(1), "1024.67", settlement.RefundReturned}}}
	body := pixBody(pay)
	const n = 6
	type answer struct {
		status int
		raw    string
		err    error
	}
	answers := make(chan answer, n)
	for range n {
		go func() {
			status, raw, err := f.deliverPix(body)
			answers <- answer{status, raw, err}
		}()
	}
	reversed := 0
	for range n {
		a := <-answers
		if a.err != nil || a.status != http.StatusOK {
			t.Fatalf("delivery: %d %s %v", a.status, a.raw, a.err)
		}
		if strings.Contains(a.raw, `"status":"reversed"`) {
			reversed++
		}
	}
	if reversed != 1 {
		t.Fatalf("%d deliveries reversed the refund, want 1", reversed)
	}
	if evs := f.events(t, dk, "C-1", "1", settlement.EvSettlementReversed); len(evs) != 1 {
		t.Fatalf("%d reversal events, want 1", len(evs))
	}
	if evs := f.events(t, dk, "C-1", "1", settlement.EvSettlementApplied); len(evs) != 1 {
		t.Fatalf("%d payment events, want 1", len(evs))
	}
	if in := f.load(t, dk, "C-1").Installment(1); in.Status != contract.InstOpen || in.PaidCents != 0 {
		t.Fatalf("instalment: %+v", in)
	}
}

// deliverPix posts a signed Pix webhook from any goroutine.
func (f *pixFixture) deliverPix(body string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, f.URL+pixPaths[0], strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	h := enginetest.WebhookHeaders(f.secret, body, f.Clock.Now())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(h[0], h[1])
	req.Header.Set(h[2], h[3])
	resp, err := f.HTTP.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// A refund of the payment that settled a contract reopens it: ACTIVE,
// PAYMENT_REVERSED while nothing is overdue, back on the agenda.
func TestPixRefundReopensASettledContract(t *testing.T) {
	t.Parallel()
	f := newPixFixture(t)
	dk := f.contract(t, "C-1x", "2026-10-13", 1) // due in the future
	ch := f.charge(t, dk, "C-1x", 1)
	pay := pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: fmt.Sprintf("%d.%02d", ch.AmountCents/100, ch.AmountCents%100)}
	if status, out := f.post(t, pixPaths[0], pixBody(pay)); status != http.StatusOK {
		t.Fatalf("payment: %d %v", status, out)
	}
	if h := f.load(t, dk, "C-1x").Header; h.Status != contract.StatusSettled || h.NextAction != "" {
		t.Fatalf("after the payment: %+v", h)
	}
	pay.refunds = []pixRefund{{"dev1", rtr(1), "1.00", settlement.RefundReturned}}
	if status, out := f.post(t, pixPaths[0], pixBody(pay)); status != http.StatusOK {
		t.Fatalf("refund: %d %v", status, out)
	}
	h := f.load(t, dk, "C-1x").Header
	if h.Status != contract.StatusActive || h.StatusReason != contract.ReasonPaymentReversed || h.OutstandingCents != 100 || h.NextAction == "" || h.GSI1PK == "" {
		t.Fatalf("after the refund: %+v", h)
	}
}
