package settlement_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/engine/enginetest"
	"lastro/psp/psptest"
	"lastro/psp/sandbox"
	"lastro/settlement"
)

// strictPSPEnv is pspEnv with the sandbox behind the recording PSP, so
// every call the engine makes is checked against the Pix API document.
func strictPSPEnv(t *testing.T) (*pspEnv, *psptest.Recorder) {
	t.Helper()
	spec := psptest.Load(t)
	var rec *psptest.Recorder
	e := newPSPEnv(t, enginetest.SandboxWrap(func(h http.Handler) http.Handler { rec = spec.Strict(t, "", h); return rec }))
	return e, rec
}

func (e *pspEnv) refund(t *testing.T, e2e, body string) (int, map[string]any) {
	t.Helper()
	return e.Do(t, http.MethodPost, "/v1/settlements/"+e2e+"/refunds", e.keys["supervisor"], body)
}

// reversals counts the REV items (reversals recorded) of a payment.
func (e *pspEnv) reversals(t *testing.T, e2e string) int {
	t.Helper()
	page, err := e.db().QueryPage(bg, kit.Query{Partition: keys.Settlement(e.t.ID, e2e), Sort: kit.BeginsWith("REV#"), Consistent: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Items)
}

// TestARefundIsAskedOnceAndReversedOnce: a refund of a Pix payment goes to
// the PSP as one devolução under the caller's refund id; asking again with
// the id asks nothing more; the PSP's DEVOLVIDO notice reopens the
// instalment through the reversal path, once, however often it comes.
func TestARefundIsAskedOnceAndReversedOnce(t *testing.T) {
	t.Parallel()
	e, rec := strictPSPEnv(t)
	id, _ := e.issue(t, 1)
	status, paid := e.pay(t, id, true)
	if status != http.StatusOK || paid.WebhookStatus != http.StatusOK {
		t.Fatalf("pay: %d %+v", status, paid)
	}
	e2e := paid.Payment.EndToEndID
	if c := e.load(t, e.dk, "C-1"); c.Installment(1).Status != contract.InstPaid {
		t.Fatalf("paid: %v", c.Installment(1).Status)
	}
	status, first := e.refund(t, e2e, `{"refundId":"rf1","amountCents":40000,"description":"estorno"}`)
	if status != http.StatusOK || first["status"] != settlement.RefundProcessing || first["alreadyRequested"] != false || len(first["rtrId"].(string)) != 32 {
		t.Fatalf("refund: %d %v", status, first)
	}
	status, again := e.refund(t, e2e, `{"refundId":"rf1","amountCents":40000,"description":"estorno"}`)
	if status != http.StatusOK || again["alreadyRequested"] != true || again["rtrId"] != first["rtrId"] {
		t.Fatalf("again: %d %v", status, again)
	}
	for _, tt := range []struct{ body, code string }{
		{`{"refundId":"rf1","amountCents":40001,"description":"estorno"}`, "refund_id_reused"},
		{`{"refundId":"rf2","amountCents":60001}`, "refund_exceeds_payment"},
		{`{"refundId":"rf-3","amountCents":100}`, "invalid_refund_id"},
		{`{"refundId":"rf3","amountCents":0}`, "invalid_amount"},
	} {
		if status, out := e.refund(t, e2e, tt.body); enginetest.ErrorCode(out) != tt.code || status < 400 {
			t.Errorf("%s: %d %v", tt.code, status, out)
		}
	}
	if status, out := e.Do(t, http.MethodPost, "/v1/settlements/"+e2e+"/refunds", e.keys["operator"], `{"refundId":"rf9","amountCents":1}`); status != http.StatusForbidden {
		t.Errorf("an operator: %d %v", status, out)
	}
	if n := rec.Count(http.MethodPut, "/pix/"+e2e+"/devolucao/"); n != 1 {
		t.Fatalf("%d devoluções asked, want 1", n)
	}
	if e.reversals(t, e2e) != 0 || e.load(t, e.dk, "C-1").Installment(1).Status != contract.InstPaid {
		t.Fatal("reversed before the PSP returned the money")
	}
	// The PSP returns it and notifies, twice: one reversal.
	for range 2 {
		resp, err := e.SandboxPost("/sandbox/settle-refund", fmt.Sprintf(`{"endToEndId":%q,"id":"rf1"}`, e2e))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("settle: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	if n := e.reversals(t, e2e); n != 1 {
		t.Fatalf("%d reversals, want 1", n)
	}
	c := e.load(t, e.dk, "C-1")
	if c.Installment(1).Status == contract.InstPaid || c.Header.OutstandingCents != 100000+40000 {
		t.Fatalf("after the refund: %s, outstanding %d", c.Installment(1).Status, c.Header.OutstandingCents)
	}
	status, done := e.refund(t, e2e, `{"refundId":"rf1","amountCents":40000,"description":"estorno"}`)
	rev, _ := done["reversal"].(map[string]any)
	if status != http.StatusOK || done["status"] != settlement.RefundDone || rev["status"] != "already_reversed" || rev["reopenedCents"] != float64(40000) {
		t.Fatalf("after DEVOLVIDO: %d %v", status, done)
	}
	if n := rec.Count(http.MethodPut, "/pix/"+e2e+"/devolucao/"); n != 1 || e.reversals(t, e2e) != 1 {
		t.Fatalf("%d devoluções, %d reversals", n, e.reversals(t, e2e))
	}
	if refused := rec.Refused(); len(refused) > 0 {
		t.Fatalf("the document refused %s %s: %s", refused[0].Method, refused[0].Path, refused[0].Refused)
	}
	page, err := e.Contracts.Events(bg, e.t, e.dk, "C-1", "1", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	reversed := 0
	for _, ev := range page.Items {
		if ev.EventType == settlement.EvSettlementReversed {
			reversed++
		}
	}
	if reversed != 1 {
		t.Fatalf("%d SettlementReversed events, want 1", reversed)
	}
}

// TestARefundTheSandboxSettlesAtOnce: with the PSP returning the money
// at once (the in-process sandbox of serve), its DEVOLVIDO notice may
// outrun the answer to the PUT; the ask still answers, and the balance is
// reversed once.
func TestARefundTheSandboxSettlesAtOnce(t *testing.T) {
	t.Parallel()
	e := newPSPEnv(t, enginetest.SandboxOptions(func(o *sandbox.Options) { o.AutoSettleRefunds = true }))
	id, _ := e.issue(t, 1)
	_, paid := e.pay(t, id, true)
	e2e := paid.Payment.EndToEndID
	status, out := e.refund(t, e2e, `{"refundId":"rf1","amountCents":100000}`)
	if status != http.StatusOK || (out["status"] != settlement.RefundProcessing && out["status"] != settlement.RefundDone) {
		t.Fatalf("refund: %d %v", status, out)
	}
	for range 500 {
		if e.reversals(t, e2e) == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond) // the sandbox settles on its own goroutine
	}
	if n := e.reversals(t, e2e); n != 1 {
		t.Fatalf("%d reversals, want 1", n)
	}
	status, out = e.refund(t, e2e, `{"refundId":"rf1","amountCents":100000}`)
	if status != http.StatusOK || out["status"] != settlement.RefundDone || out["alreadyRequested"] != true || e.reversals(t, e2e) != 1 {
		t.Fatalf("again: %d %v", status, out)
	}
}
