package charges_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/egress"
	"lastro/contract"
	"lastro/engine/enginetest"
	"lastro/pix/brcode"
	"lastro/psp"
	"lastro/psp/sandbox"
	"lastro/psp/tenantpsp"
	"lastro/settlement"
)

// pixEnv is an engine with the sandbox PSP, a tenant and a debtor with
// a contract of two instalments (due 2026-09-10 and 2026-10-10, 1000.00
// each), signed on 2026-09-01 under the charges policy fine/interest
// (published first when not empty).
type pixEnv struct {
	*enginetest.Env
	keys enginetest.Keys
	dk   string
	// relay sits between the sandbox and the engine's Pix API receiver
	// (POST /v1/webhooks/{tenantId}/pix): it forwards each notice as sent
	// and records the outcome the engine answered for every payment.
	relay    *httptest.Server
	mu       sync.Mutex
	outcomes []map[string]any
}

const tenantID = "t-pix"

func newPixEnv(t *testing.T, fine, interest string) *pixEnv {
	t.Helper()
	// Loopback allowed explicitly: TestTenantPSPConfiguration sets the
	// tenant's own PSP to the sandbox's httptest server.
	env := enginetest.New(t, enginetest.At(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)), enginetest.PixSandbox(),
		enginetest.Egress(egress.New(egress.AllowLoopback())))
	e := &pixEnv{Env: env, keys: env.CreateTenant(t, tenantID)}
	if fine != "" {
		body := fmt.Sprintf(`{"finePercent":%q,"lateInterestMonthlyPercent":%q}`, fine, interest)
		if status, out := env.Do(t, http.MethodPut, "/v1/policies/charges", e.keys["supervisor"], body); status != http.StatusCreated {
			t.Fatalf("policy: %d %v", status, out)
		}
	}
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
	e.relay = httptest.NewServer(http.HandlerFunc(e.receive(t)))
	t.Cleanup(e.relay.Close)
	env.PSPs.UseSandbox(tenantpsp.Sandbox{URL: env.SandboxURL, ClientID: sandbox.DefaultClientID, ClientSecret: env.Sandbox.ClientSecret(),
		WebhookBase: e.relay.URL})
	return e
}

func (e *pixEnv) receive(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/webhooks/"+tenantID+"/pix" {
			http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
			return
		}
		// Forwarded as sent: the engine's own receiver authenticates the
		// signature and applies the notice.
		req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, e.URL+r.URL.Path, bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := e.HTTP.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var ans settlement.PixAnswer
		if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &ans) != nil {
			t.Errorf("receiver: %d %s", resp.StatusCode, raw)
			http.Error(w, string(raw), resp.StatusCode)
			return
		}
		for _, p := range ans.Pix {
			var out map[string]any
			enc, _ := json.Marshal(p.Settlement)
			_ = json.Unmarshal(enc, &out)
			e.mu.Lock()
			e.outcomes = append(e.outcomes, out)
			e.mu.Unlock()
		}
		w.WriteHeader(http.StatusOK)
	}
}

func (e *pixEnv) issue(t *testing.T, at time.Time, extra string) (int, map[string]any) {
	t.Helper()
	e.Clock.Set(at)
	return e.Do(t, http.MethodPost, "/v1/charges", e.keys["operator"],
		fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":1,"method":"PIX"%s}`, e.dk, extra))
}

// fetch reads what a banking app reads at a dynamic code's location.
func fetch(t *testing.T, location string) psp.CobPayload {
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

func (e *pixEnv) pay(t *testing.T, body string) sandbox.Paid {
	t.Helper()
	resp, err := e.SandboxPost("/sandbox/pay", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out sandbox.Paid
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil || out.WebhookStatus != http.StatusOK {
		t.Fatalf("pay: %d %s", resp.StatusCode, raw)
	}
	return out
}

// TestPixChargeForAnOverdueInstalmentAnswersItsBRCode: 14 days late, the
// charge is a cob for today's quote; its BR Code verifies and decodes to
// the charge (amount in the code, txid and amount at its location), and
// paying it in the sandbox settles the instalment once.
func TestPixChargeForAnOverdueInstalmentAnswersItsBRCode(t *testing.T) {
	t.Parallel()
	e := newPixEnv(t, "", "")
	status, ch := e.issue(t, enginetest.SaoPaulo("2026-09-24", 9, 0), "")
	if status != http.StatusCreated {
		t.Fatalf("issue: %d %v", status, ch)
	}
	// 1000.00 + 2 % fine + 14 days of 1 % a month (4.67) = 1024.67.
	if ch["amountCents"] != float64(102467) || ch["pixType"] != "cob" || ch["validity"].(map[string]any)["rule"] != charges.RulePixExpiration {
		t.Fatalf("charge: %v", ch)
	}
	code, err := brcode.Parse(ch["pixCopiaECola"].(string))
	if err != nil {
		t.Fatalf("BR Code: %v", err)
	}
	if !code.Dynamic || code.URL != ch["location"] || code.AmountCents != 102467 || code.TxID != brcode.DynamicTxID {
		t.Fatalf("code %+v for %v", code, ch)
	}
	at := fetch(t, code.URL)
	if at.TxID != ch["chargeId"] || at.Valor.Original != "1024.67" || at.Status != psp.StatusActive || at.Calendario.Expiracao != 86400 ||
		at.Chave != tenantpsp.SandboxKey(tenantID) {
		t.Fatalf("at the location: %+v", at)
	}
	paid := e.pay(t, fmt.Sprintf(`{"txid":%q,"horario":"2026-09-24T12:30:00Z"}`, ch["chargeId"]))
	if paid.Payment.Valor != "1024.67" {
		t.Fatalf("paid %+v", paid.Payment)
	}
	// The sandbox redelivers three times: the same payment, already applied.
	for range 3 {
		resp, err := e.SandboxPost("/sandbox/redeliver", `{"endToEndId":"`+paid.Payment.EndToEndID+`"}`)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("redeliver: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.outcomes) != 4 || e.outcomes[0]["status"] != "applied" || e.outcomes[0]["settlementId"] != paid.Payment.EndToEndID ||
		e.outcomes[0]["creditCents"] != float64(0) || e.outcomes[0]["appliedCents"] != float64(102467) {
		t.Fatalf("outcomes: %v", e.outcomes)
	}
	for _, o := range e.outcomes[1:] {
		if o["status"] != "already_applied" || o["settlementId"] != paid.Payment.EndToEndID {
			t.Fatalf("redelivered: %v", o)
		}
	}
}

// TestCobVCarriesThePolicyAndPaysLateWithoutResidue: issued before the
// due date, the charge is a cobv whose fine and interest are the
// contract's policy; paid two days after the due date for the amount the
// PSP computes, it settles the instalment with nothing left and no credit.
func TestCobVCarriesThePolicyAndPaysLateWithoutResidue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, fine, interest string
		wantFine, wantJuros  string
		late                 int64 // fine + 2 days of interest on 1000.00
	}{
		{"default policy", "", "", "2.00", "1.00", 2000 + 67},
		{"published policy", "1.50", "0.90", "1.50", "0.90", 1500 + 60},
		{"no fine", "0", "1.00", "", "1.00", 67},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newPixEnv(t, tt.fine, tt.interest)
			status, ch := e.issue(t, enginetest.SaoPaulo("2026-09-01", 9, 0), "")
			if status != http.StatusCreated {
				t.Fatalf("issue: %d %v", status, ch)
			}
			v := ch["validity"].(map[string]any)
			if ch["pixType"] != "cobv" || ch["amountCents"] != float64(100000) || v["rule"] != charges.RulePixDueDate || v["dueDate"] != "2026-09-10" ||
				v["daysAfterDue"] != float64(charges.PixDaysAfterDue) || ch["expiresAt"] != "2026-09-10T23:59:59-03:00" {
				t.Fatalf("charge: %v", ch)
			}
			code, err := brcode.Parse(ch["pixCopiaECola"].(string))
			if err != nil || code.URL != ch["location"] || code.AmountCents != 0 {
				t.Fatalf("code %+v %v", code, err)
			}
			at := fetch(t, code.URL)
			// What the PSP holds is the contract's policy, as the engine reads it.
			tn, err := e.Tenants.Get(t.Context(), tenantID)
			if err != nil {
				t.Fatal(err)
			}
			pol, err := e.Policies.Charges(t.Context(), tn, tn.ChargesPolicy)
			if err != nil {
				t.Fatal(err)
			}
			if at.TxID != ch["chargeId"] || at.Valor.Original != "1000.00" || at.Calendario.DataDeVencimento != "2026-09-10" ||
				at.Calendario.ValidadeAposVencimento != charges.PixDaysAfterDue {
				t.Fatalf("cobv: %+v", at)
			}
			if at.Valor.Juros == nil || at.Valor.Juros.Modalidade != psp.InterestMonthlyCalendarDays ||
				!decimal.RequireFromString(at.Valor.Juros.ValorPerc).Equal(pol.LateInterestMonthlyPercent) || at.Valor.Juros.ValorPerc != tt.wantJuros {
				t.Fatalf("juros %+v, policy %s", at.Valor.Juros, pol.LateInterestMonthlyPercent)
			}
			if tt.wantFine == "" {
				if at.Valor.Multa != nil {
					t.Fatalf("multa %+v for a policy without fine", at.Valor.Multa)
				}
			} else if at.Valor.Multa == nil || at.Valor.Multa.Modalidade != psp.FinePercent ||
				!decimal.RequireFromString(at.Valor.Multa.ValorPerc).Equal(pol.FinePercent) || at.Valor.Multa.ValorPerc != tt.wantFine {
				t.Fatalf("multa %+v, policy %s", at.Valor.Multa, pol.FinePercent)
			}
			// The PSP's late amount is the policy's arithmetic, to the cent.
			payDate := calendar.MustParse("2026-09-12")
			psPays, err := sandbox.Due(psp.CobV, at, payDate)
			if err != nil {
				t.Fatal(err)
			}
			st := charges.State{Seq: 1, DueDate: calendar.MustParse("2026-09-10"), PrincipalCents: 90000, InterestCents: 10000}
			_, owed := charges.AmountDue(pol, tn.Calendar(), st, payDate)
			if psPays != owed.Total() || psPays != 100000+tt.late {
				t.Fatalf("PSP asks %d, the policy %d, want %d", psPays, owed.Total(), 100000+tt.late)
			}
			// Paid on 09-12 at 10:00 in São Paulo.
			e.Clock.Set(enginetest.SaoPaulo("2026-09-12", 10, 5))
			paid := e.pay(t, fmt.Sprintf(`{"txid":%q,"horario":"2026-09-12T13:00:00Z"}`, ch["chargeId"]))
			if got, _ := psp.ParseValor(paid.Payment.Valor); got != psPays {
				t.Fatalf("paid %s, want %d", paid.Payment.Valor, psPays)
			}
			e.mu.Lock()
			out := e.outcomes
			e.mu.Unlock()
			if len(out) != 1 || out[0]["status"] != "applied" || out[0]["appliedCents"] != float64(psPays) || out[0]["creditCents"] != float64(0) ||
				out[0]["quoteHonoured"] != false {
				t.Fatalf("outcome: %v", out)
			}
			_, page := e.Do(t, http.MethodGet, "/v1/debtors/"+e.dk+"/contracts/C-1/installments?status=paid", e.keys["operator"], "")
			items, _ := page["items"].([]any)
			if len(items) != 1 || items[0].(map[string]any)["seq"] != float64(1) || items[0].(map[string]any)["status"] != contract.InstPaid {
				t.Fatalf("paid instalments: %v", page)
			}
		})
	}
}

// TestPixTypeChoices: a cob can be asked for before the due date, a cobv
// cannot be for a late instalment, pixType is for Pix only.
func TestPixTypeChoices(t *testing.T) {
	t.Parallel()
	e := newPixEnv(t, "", "")
	if status, ch := e.issue(t, enginetest.SaoPaulo("2026-09-01", 9, 0), `,"pixType":"cob"`); status != http.StatusCreated || ch["pixType"] != "cob" ||
		ch["amountCents"] != float64(100000) {
		t.Fatalf("cob before due: %d %v", status, ch)
	}
	status, out := e.issue(t, enginetest.SaoPaulo("2026-09-24", 9, 0), `,"pixType":"cobv"`)
	if status != http.StatusUnprocessableEntity || enginetest.ErrorCode(out) != "cobv_not_applicable" {
		t.Fatalf("cobv when late: %d %v", status, out)
	}
	for _, extra := range []string{`,"pixType":"COBV"`, `,"pixType":"boleto"`} {
		if status, out := e.issue(t, enginetest.SaoPaulo("2026-09-24", 9, 0), extra); status != http.StatusBadRequest ||
			enginetest.ErrorCode(out) != "invalid_pix_type" {
			t.Fatalf("%s: %d %v", extra, status, out)
		}
	}
	status, out = e.Do(t, http.MethodPost, "/v1/charges", e.keys["operator"],
		fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":1,"method":"BOLETO","pixType":"cob"}`, e.dk))
	if status != http.StatusBadRequest || enginetest.ErrorCode(out) != "invalid_pix_type" {
		t.Fatalf("boleto with pixType: %d %v", status, out)
	}
}

// TestPixWithoutPSPKeepsTheQuote: with no PSP (an engine without the
// sandbox), a Pix charge is a txid and an amount, as before, and asking
// for a pixType is a clear 422.
func TestPixWithoutPSPKeepsTheQuote(t *testing.T) {
	t.Parallel()
	_, _, _, ch := issueOver(t, enginetest.SaoPaulo("2026-09-24", 9, 0), charges.PIX)
	if _, ok := ch["pixCopiaECola"]; ok || ch["pixType"] != nil || ch["amountCents"] != float64(102467) {
		t.Fatalf("charge without PSP: %v", ch)
	}
}

// TestTenantPSPConfiguration: PUT /v1/tenant/psp validates and seals the
// provider; GET shows it without secrets; charges then go to it.
func TestTenantPSPConfiguration(t *testing.T) {
	t.Parallel()
	e := newPixEnv(t, "", "")
	sup := e.keys["supervisor"]
	if status, out := e.Do(t, http.MethodGet, "/v1/tenant/psp", sup, ""); status != http.StatusOK || out["configured"] != false {
		t.Fatalf("before: %d %v", status, out)
	}
	const key = "0f6b3c1e-2d4a-4e8b-9c7d-5a1f2e3b4c5d"
	good := fmt.Sprintf(`{"baseUrl":%q,"clientId":%q,"clientSecret":%q,"chave":%q,"webhookUrl":%q}`,
		e.SandboxURL, sandbox.DefaultClientID, e.Sandbox.ClientSecret(), key, e.relay.URL+"/v1/webhooks/"+tenantID)
	for _, tt := range []struct{ body, code string }{
		{strings.Replace(good, e.SandboxURL, "http://psp.example", 1), "url_not_allowed"},
		{strings.Replace(good, `"clientSecret":"`+e.Sandbox.ClientSecret()+`"`, `"clientSecret":""`, 1), "invalid_psp_client"},
		{strings.Replace(good, key, "", 1), "invalid_pix_key"},
		{strings.Replace(good, `"chave"`, `"certPem":"-----BEGIN CERTIFICATE-----","chave"`, 1), "invalid_psp_certificate"},
		{strings.Replace(good, `"chave"`, `"rootCasPem":"not pem","chave"`, 1), "invalid_psp_root_cas"},
	} {
		if status, out := e.Do(t, http.MethodPut, "/v1/tenant/psp", sup, tt.body); status != http.StatusBadRequest || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v", tt.code, status, out)
		}
	}
	if status, out := e.Do(t, http.MethodPut, "/v1/tenant/psp", e.keys["operator"], good); status != http.StatusForbidden {
		t.Fatalf("operator: %d %v", status, out)
	}
	status, raw := e.Raw(t, http.MethodPut, "/v1/tenant/psp", sup, good)
	if status != http.StatusOK || strings.Contains(raw, e.Sandbox.ClientSecret()) || strings.Contains(raw, key) {
		t.Fatalf("put: %d %s", status, raw)
	}
	if status, raw := e.Raw(t, http.MethodGet, "/v1/tenant/psp", sup, ""); status != http.StatusOK || !strings.Contains(raw, `"configured":true`) ||
		strings.Contains(raw, e.Sandbox.ClientSecret()) || strings.Contains(raw, key) {
		t.Fatalf("get: %d %s", status, raw)
	}
	status, ch := e.issue(t, enginetest.SaoPaulo("2026-09-24", 9, 0), "")
	if status != http.StatusCreated {
		t.Fatalf("issue: %d %v", status, ch)
	}
	if at := fetch(t, ch["location"].(string)); at.Chave != key || at.TxID != ch["chargeId"] {
		t.Fatalf("the charge went to %+v", at)
	}
}

// TestOneNoticeCarriesTwoPayments: the sandbox pays a cob and a cobv in
// one webhook; both are applied, each once.
func TestOneNoticeCarriesTwoPayments(t *testing.T) {
	t.Parallel()
	e := newPixEnv(t, "", "")
	_, first := e.issue(t, enginetest.SaoPaulo("2026-09-24", 9, 0), "")
	_, second := e.Do(t, http.MethodPost, "/v1/charges", e.keys["operator"],
		fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":2,"method":"PIX"}`, e.dk))
	if first["pixType"] != "cob" || second["pixType"] != "cobv" {
		t.Fatalf("charges: %v %v", first, second)
	}
	body := fmt.Sprintf(`{"payments":[{"txid":%q},{"txid":%q}]}`, first["chargeId"], second["chargeId"])
	resp, err := e.SandboxPost("/sandbox/pay-batch", body)
	if err != nil {
		t.Fatal(err)
	}
	var paid sandbox.Paid
	err = json.NewDecoder(resp.Body).Decode(&paid)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(paid.Payments) != 2 || paid.Payments[0].Valor != "1024.67" || paid.Payments[1].Valor != "1000.00" {
		t.Fatalf("pay-batch: %d %+v %v", resp.StatusCode, paid, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.outcomes) != 2 || e.outcomes[0]["status"] != "applied" || e.outcomes[1]["status"] != "applied" ||
		e.outcomes[1]["appliedTo"].([]any)[0].(map[string]any)["seq"] != float64(2) {
		t.Fatalf("outcomes: %v", e.outcomes)
	}
	// Paid already: a second batch with one of them is refused whole.
	resp, err = e.SandboxPost("/sandbox/pay-batch", body)
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("paying again: %v %v", resp, err)
	}
	resp.Body.Close()
}
