package settlement_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"lastro/engine/enginetest"
	"lastro/psp"
	"lastro/psp/sandbox"
	"lastro/settlement"
)

// pspEnv is an engine with the sandbox PSP posting its webhooks straight
// to the engine, a tenant and a debtor with contract C-1 of two
// instalments (1000.00 each, due 2026-09-10 and 2026-10-10), on
// 2026-09-01: a Pix charge is a cobv for 1000.00.
type pspEnv struct {
	*fixture
	keys enginetest.Keys
	dk   string
}

const pspTenant = "t-recon"

func newPSPEnv(t *testing.T, opts ...enginetest.Option) *pspEnv {
	t.Helper()
	env := enginetest.New(t, append([]enginetest.Option{enginetest.At(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)), enginetest.PixSandbox()}, opts...)...)
	e := &pspEnv{keys: env.CreateTenant(t, pspTenant)}
	tn, err := env.Tenants.Get(t.Context(), pspTenant)
	if err != nil {
		t.Fatal(err)
	}
	e.fixture = &fixture{Env: env, t: tn}
	status, reg := env.Do(t, http.MethodPost, "/v1/debtors", e.keys["operator"], fmt.Sprintf(`{"document":%q,"name":"Pessoa Sintética"}`, env.CPF()))
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, reg)
	}
	e.dk = reg["debtorKey"].(string)
	insts := `{"seq":1,"dueDate":"2026-09-10","principalCents":90000,"interestCents":10000},` +
		`{"seq":2,"dueDate":"2026-10-10","principalCents":90000,"interestCents":10000}`
	if status, out := env.Do(t, http.MethodPost, "/v1/debtors/"+e.dk+"/contracts", e.keys["operator"],
		`{"contractId":"C-1","productCode":"CREDIARIO_12X","installments":[`+insts+`]}`); status != http.StatusCreated {
		t.Fatalf("sign: %d %v", status, out)
	}
	return e
}

// issue creates a Pix charge for instalment seq and answers its id and location.
func (e *pspEnv) issue(t *testing.T, seq int) (id, location string) {
	t.Helper()
	status, ch := e.Do(t, http.MethodPost, "/v1/charges", e.keys["operator"], fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":%d,"method":"PIX"}`, e.dk, seq))
	if status != http.StatusCreated || ch["pixType"] == "" {
		t.Fatalf("issue: %d %v", status, ch)
	}
	return ch["chargeId"].(string), ch["location"].(string)
}

// pay pays txid at the sandbox (notifying or not) and answers its status and answer.
func (e *pspEnv) pay(t *testing.T, txid string, notify bool) (int, sandbox.Paid) {
	t.Helper()
	resp, err := e.SandboxPost("/sandbox/pay", fmt.Sprintf(`{"txid":%q,"notify":%t}`, txid, notify))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out sandbox.Paid
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, out
}

// atPSP is the charge as the sandbox serves it at its location.
func atPSP(t *testing.T, location string) psp.CobPayload {
	t.Helper()
	resp, err := http.Get("http://" + location)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p psp.CobPayload
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&p) != nil {
		t.Fatalf("location %s: %d", location, resp.StatusCode)
	}
	return p
}

func (e *pspEnv) reconcile(t *testing.T, chargeID string) (int, map[string]any) {
	t.Helper()
	return e.Do(t, http.MethodPost, "/v1/charges/"+chargeID+"/reconcile", e.keys["supervisor"], "")
}

// payments are reconcile's per-payment outcomes.
func payments(t *testing.T, out map[string]any) []map[string]any {
	t.Helper()
	list, _ := out["payments"].([]any)
	var ps []map[string]any
	for _, p := range list {
		ps = append(ps, p.(map[string]any))
	}
	return ps
}

// TestReconcileAppliesAPaymentWhoseWebhookWasLost: a payment made at the
// PSP whose webhook never came is applied by reconcile, once: reconciling
// again, and the webhook arriving late, answer already_applied.
func TestReconcileAppliesAPaymentWhoseWebhookWasLost(t *testing.T) {
	t.Parallel()
	e := newPSPEnv(t)
	id, _ := e.issue(t, 1)
	if status, out := e.reconcile(t, id); status != http.StatusOK || out["pspStatus"] != psp.StatusActive || len(payments(t, out)) != 0 {
		t.Fatalf("unpaid: %d %v", status, out)
	}
	status, paid := e.pay(t, id, false)
	if status != http.StatusOK || paid.WebhookStatus != 0 {
		t.Fatalf("pay: %d %+v", status, paid)
	}
	status, out := e.reconcile(t, id)
	ps := payments(t, out)
	if status != http.StatusOK || out["chargeId"] != id || out["pspStatus"] != psp.StatusPaid || len(ps) != 1 || ps[0]["status"] != "applied" ||
		ps[0]["endToEndId"] != paid.Payment.EndToEndID {
		t.Fatalf("reconcile: %d %v", status, out)
	}
	stl := ps[0]["settlement"].(map[string]any)
	if stl["settlementId"] != paid.Payment.EndToEndID || stl["appliedCents"] != float64(100000) || stl["quoteHonoured"] != true {
		t.Fatalf("settlement: %v", stl)
	}
	if got := e.stl(t, paid.Payment.EndToEndID); got == nil || got.Outcome != settlement.OutcomeApplied || got.ChargeID != id || got.AmountCents != 100000 {
		t.Fatalf("STL: %+v", got)
	}
	status, out = e.reconcile(t, id)
	if ps = payments(t, out); status != http.StatusOK || len(ps) != 1 || ps[0]["status"] != "already_applied" {
		t.Fatalf("again: %d %v", status, out)
	}
	// The lost notice redelivered at last: the same payment, once.
	resp, err := e.SandboxPost("/sandbox/redeliver", `{"endToEndId":"`+paid.Payment.EndToEndID+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	var late sandbox.Paid
	err = json.NewDecoder(resp.Body).Decode(&late)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if late.WebhookStatus != http.StatusOK || !strings.Contains(late.WebhookBody, `"status":"already_applied"`) {
		t.Fatalf("redelivered: %+v", late)
	}
}

// TestReconcileAnswersInTheErrorShape: who may reconcile, and what.
func TestReconcileAnswersInTheErrorShape(t *testing.T) {
	t.Parallel()
	e := newPSPEnv(t)
	id, _ := e.issue(t, 1)
	for _, tt := range []struct {
		name, method, path, key string
		status                  int
		code                    string
	}{
		{"reconcile as an operator", http.MethodPost, "/v1/charges/" + id + "/reconcile", e.keys["operator"], http.StatusForbidden, ""},
		{"cancel as an operator", http.MethodDelete, "/v1/charges/" + id, e.keys["operator"], http.StatusForbidden, ""},
		{"reconcile an unknown charge", http.MethodPost, "/v1/charges/Zz3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF/reconcile", e.keys["supervisor"], http.StatusNotFound, "charge_not_found"},
		{"cancel an unknown charge", http.MethodDelete, "/v1/charges/Zz3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF", e.keys["supervisor"], http.StatusNotFound, "charge_not_found"},
		{"a malformed charge id", http.MethodDelete, "/v1/charges/a%2Cb", e.keys["supervisor"], http.StatusBadRequest, "invalid_charge_id"},
	} {
		status, out := e.Do(t, tt.method, tt.path, tt.key, "")
		if status != tt.status || enginetest.ErrorCode(out) == "" || (tt.code != "" && enginetest.ErrorCode(out) != tt.code) {
			t.Errorf("%s: %d %v", tt.name, status, out)
		}
	}
}

// TestCancelRemovesTheChargeAtThePSP: DELETE removes the PSP charge
// (the sandbox shows it REMOVIDA and refuses to pay it), idempotently;
// a payment the PSP had accepted anyway (a race with the removal) is
// still applied: cancelling never refuses money.
func TestCancelRemovesTheChargeAtThePSP(t *testing.T) {
	t.Parallel()
	e := newPSPEnv(t)
	id, loc := e.issue(t, 1)
	status, out := e.Do(t, http.MethodDelete, "/v1/charges/"+id, e.keys["supervisor"], "")
	if status != http.StatusOK || out["status"] != "CANCELLED" || out["alreadyCancelled"] != false || out["pspStatus"] != psp.StatusRemoved ||
		out["reason"] != "REQUESTED" || out["cancelledAt"] == "" {
		t.Fatalf("cancel: %d %v", status, out)
	}
	if p := atPSP(t, loc); p.Status != psp.StatusRemoved {
		t.Fatalf("at the PSP: %s", p.Status)
	}
	if status, _ := e.pay(t, id, true); status != http.StatusBadRequest {
		t.Fatalf("the sandbox paid a removed charge: %d", status)
	}
	if status, out := e.Do(t, http.MethodDelete, "/v1/charges/"+id, e.keys["supervisor"], ""); status != http.StatusOK || out["alreadyCancelled"] != true ||
		out["reason"] != "REQUESTED" {
		t.Fatalf("again: %d %v", status, out)
	}
	if status, out := e.reconcile(t, id); status != http.StatusOK || out["pspStatus"] != psp.StatusRemoved || len(payments(t, out)) != 0 {
		t.Fatalf("reconcile a removed charge: %d %v", status, out)
	}
	// The PSP's notice of a payment it took as the removal went through.
	body := fmt.Sprintf(`{"pix":[{"endToEndId":%q,"txid":%q,"valor":"1000.00","horario":"2026-09-01T12:00:00Z"}]}`, e2e(7), id)
	status, out = e.Do(t, http.MethodPost, "/v1/webhooks/"+pspTenant+"/pix", "", body, enginetest.WebhookHeaders(e.keys["webhook"], body, e.Clock.Now())...)
	if status != http.StatusOK || strings.Join(statuses(t, out), ",") != "applied" {
		t.Fatalf("a payment of the cancelled charge: %d %v", status, out)
	}
	if got := e.stl(t, e2e(7)); got == nil || got.Outcome != settlement.OutcomeApplied || got.AppliedCents != 100000 {
		t.Fatalf("STL: %+v", got)
	}
}

// TestCancelAPaidChargeIsRefused: a charge paid at the PSP (its notice
// lost) is not cancelled (409): reconcile applies its payment.
func TestCancelAPaidChargeIsRefused(t *testing.T) {
	t.Parallel()
	e := newPSPEnv(t)
	id, loc := e.issue(t, 1)
	if status, _ := e.pay(t, id, false); status != http.StatusOK {
		t.Fatalf("pay: %d", status)
	}
	status, out := e.Do(t, http.MethodDelete, "/v1/charges/"+id, e.keys["supervisor"], "")
	if status != http.StatusConflict || enginetest.ErrorCode(out) != "charge_paid_at_psp" {
		t.Fatalf("cancel a paid charge: %d %v", status, out)
	}
	if p := atPSP(t, loc); p.Status != psp.StatusPaid {
		t.Fatalf("at the PSP: %s", p.Status)
	}
	if status, out := e.reconcile(t, id); status != http.StatusOK || payments(t, out)[0]["status"] != "applied" {
		t.Fatalf("reconcile: %d %v", status, out)
	}
}

// TestASettlementCancelsTheOtherChargesOfItsInstalment: once a payment
// of one charge pays an instalment off, the instalment's other open Pix
// charge is removed at the PSP (it would overpay); a charge of another
// instalment is left payable.
func TestASettlementCancelsTheOtherChargesOfItsInstalment(t *testing.T) {
	t.Parallel()
	e := newPSPEnv(t)
	paidID, _ := e.issue(t, 1)
	otherID, otherLoc := e.issue(t, 1)
	_, nextLoc := e.issue(t, 2)
	status, paid := e.pay(t, paidID, true)
	if status != http.StatusOK || paid.WebhookStatus != http.StatusOK || !strings.Contains(paid.WebhookBody, `"settled":true`) {
		t.Fatalf("pay: %d %+v", status, paid)
	}
	if p := atPSP(t, otherLoc); p.Status != psp.StatusRemoved {
		t.Fatalf("the instalment's other charge: %s", p.Status)
	}
	if p := atPSP(t, nextLoc); p.Status != psp.StatusActive {
		t.Fatalf("the next instalment's charge: %s", p.Status)
	}
	status, out := e.Do(t, http.MethodDelete, "/v1/charges/"+otherID, e.keys["supervisor"], "")
	if status != http.StatusOK || out["alreadyCancelled"] != true || out["reason"] != "SUPERSEDED" {
		t.Fatalf("the superseded charge: %d %v", status, out)
	}
}

// TestAWriteOffAndAnAgreementCancelTheirCharges: a write-off removes all
// the contract's open Pix charges at the PSP; an agreement those of the
// instalments it renegotiated, not the others, nor its down payment's.
func TestAWriteOffAndAnAgreementCancelTheirCharges(t *testing.T) {
	t.Parallel()
	t.Run("write-off", func(t *testing.T) {
		t.Parallel()
		e := newPSPEnv(t)
		_, first := e.issue(t, 1)
		_, second := e.issue(t, 2)
		status, out := e.Do(t, http.MethodPost, "/v1/debtors/"+e.dk+"/contracts/C-1/write-off", e.keys["supervisor"], `{"reason":"UNCOLLECTIBLE"}`)
		if status != http.StatusOK {
			t.Fatalf("write-off: %d %v", status, out)
		}
		for _, loc := range []string{first, second} {
			if p := atPSP(t, loc); p.Status != psp.StatusRemoved {
				t.Fatalf("after the write-off, a charge is %s", p.Status)
			}
		}
	})
	t.Run("agreement", func(t *testing.T) {
		t.Parallel()
		e := newPSPEnv(t)
		e.Clock.Set(enginetest.SaoPaulo("2026-09-24", 9, 0))
		_, overdue := e.issue(t, 1)
		_, notDue := e.issue(t, 2)
		status, out := e.Do(t, http.MethodPost, "/v1/debtors/"+e.dk+"/contracts/C-1/agreements", e.keys["operator"],
			`{"downPaymentCents":20000,"installments":2,"firstDueDate":"2026-10-24"}`)
		if status != http.StatusCreated {
			t.Fatalf("agreement: %d %v", status, out)
		}
		down, _ := out["downPaymentCharge"].(map[string]any)
		if down == nil {
			t.Fatalf("no down payment charge: %v", out)
		}
		for loc, want := range map[string]string{overdue: psp.StatusRemoved, notDue: psp.StatusActive, down["location"].(string): psp.StatusActive} {
			if p := atPSP(t, loc); p.Status != want {
				t.Errorf("charge at %s: %s, want %s", loc, p.Status, want)
			}
		}
	})
}

// TestConcurrentCancelsCancelOnce: two DELETEs racing both answer 200,
// exactly one of them the cancellation (the mark is conditioned on the
// version read; the loser finds it cancelled).
func TestConcurrentCancelsCancelOnce(t *testing.T) {
	t.Parallel()
	e := newPSPEnv(t)
	id, loc := e.issue(t, 1)
	type answer struct {
		status int
		body   string
	}
	answers := make(chan answer, 2)
	for range 2 {
		go func() {
			req, err := http.NewRequest(http.MethodDelete, e.URL+"/v1/charges/"+id, nil)
			if err != nil {
				answers <- answer{}
				return
			}
			req.Header.Set("Authorization", "Bearer "+e.keys["supervisor"])
			resp, err := e.HTTP.Do(req)
			if err != nil {
				answers <- answer{}
				return
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- answer{resp.StatusCode, string(raw)}
		}()
	}
	first := 0
	for range 2 {
		a := <-answers
		if a.status != http.StatusOK {
			t.Fatalf("cancel: %d %s", a.status, a.body)
		}
		if strings.Contains(a.body, `"alreadyCancelled":false`) {
			first++
		}
	}
	if first != 1 {
		t.Fatalf("%d answers cancelled the charge, want 1", first)
	}
	if p := atPSP(t, loc); p.Status != psp.StatusRemoved {
		t.Fatalf("at the PSP: %s", p.Status)
	}
}
