package charges_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"lastro/collections/egress"
	"lastro/collections/pii/piitest"
	"lastro/engine/enginetest"
	"lastro/psp/psptest"
	"lastro/psp/sandbox"
)

// strictEnv is an engine whose sandbox PSP sits behind the recording PSP
// of psp/psptest (every call checked against the Pix API document), a
// tenant, and a debtor with instalments due 2026-09-10 and 2026-10-10,
// on 2026-09-01.
type strictEnv struct {
	*enginetest.Env
	rec  *psptest.Recorder
	keys enginetest.Keys
	dk   string
	cpf  string
}

func newStrictEnv(t *testing.T, opts ...enginetest.Option) *strictEnv {
	t.Helper()
	spec := psptest.Load(t)
	e := &strictEnv{}
	opts = append([]enginetest.Option{enginetest.At(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)), enginetest.PixSandbox(),
		enginetest.Egress(egress.New(egress.AllowLoopback())),
		enginetest.SandboxWrap(func(h http.Handler) http.Handler { e.rec = spec.Strict(t, "", h); return e.rec })}, opts...)
	e.Env = enginetest.New(t, opts...)
	e.keys = e.CreateTenant(t, "t-strict")
	e.cpf = e.CPF()
	status, reg := e.Do(t, http.MethodPost, "/v1/debtors", e.keys["operator"], fmt.Sprintf(`{"document":%q,"name":"Pessoa Sintética"}`, e.cpf))
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, reg)
	}
	e.dk = reg["debtorKey"].(string)
	insts := `{"seq":1,"dueDate":"2026-09-10","principalCents":90000,"interestCents":10000},` +
		`{"seq":2,"dueDate":"2026-10-10","principalCents":90000,"interestCents":10000}`
	if status, out := e.Do(t, http.MethodPost, "/v1/debtors/"+e.dk+"/contracts", e.keys["operator"],
		`{"contractId":"C-1","productCode":"CREDIARIO_12X","installments":[`+insts+`]}`); status != http.StatusCreated {
		t.Fatalf("sign: %d %v", status, out)
	}
	return e
}

func (e *strictEnv) issue(t *testing.T, seq int) (int, map[string]any) {
	t.Helper()
	return e.Do(t, http.MethodPost, "/v1/charges", e.keys["operator"], fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":%d,"method":"PIX"}`, e.dk, seq))
}

// TestACobVNamesItsDebtorAtAStrictPSP: an instalment not yet late gets a
// cobv that the strict recording PSP accepts: devedor with the debtor's
// CPF and name from the sealed profile. The CPF reaches the PSP and
// nothing else: not the answer, not a log line.
func TestACobVNamesItsDebtorAtAStrictPSP(t *testing.T) {
	t.Parallel()
	e := newStrictEnv(t)
	status, ch := e.issue(t, 1)
	if status != http.StatusCreated || ch["pixType"] != "cobv" || ch["cobFallback"] != nil || ch["pixCopiaECola"] == "" {
		t.Fatalf("issue: %d %v", status, ch)
	}
	if refused := e.rec.Refused(); len(refused) > 0 {
		t.Fatalf("the strict PSP refused %s %s: %s", refused[0].Method, refused[0].Path, refused[0].Refused)
	}
	var sent struct {
		Devedor struct{ CPF, Nome string }
	}
	for _, c := range e.rec.Calls() {
		if c.Method == http.MethodPut && strings.HasPrefix(c.Path, "/cobv/") {
			if err := json.Unmarshal(c.Body, &sent); err != nil {
				t.Fatal(err)
			}
		}
	}
	if sent.Devedor.CPF != e.cpf || sent.Devedor.Nome != "Pessoa Sintética" {
		t.Fatalf("devedor sent: %+v", sent.Devedor)
	}
	if raw, _ := json.Marshal(ch); strings.Contains(string(raw), e.cpf) {
		t.Errorf("the answer shows the CPF: %s", raw)
	}
	if strings.Contains(e.Logs.String(), e.cpf) || strings.Contains(e.Logs.String(), "Pessoa Sint") {
		t.Errorf("a log line shows the debtor")
	}
}

// TestACobWhenTheTenantOrPSPTakesNoCobV: a PSP that answers 403 to a
// cobv, or a tenant whose PSP settings say cobvDisabled, gets a cob for
// today's quote, valid 24 hours, with the reason; asked for a cobv by
// name, the engine refuses instead (422).
func TestACobWhenTheTenantOrPSPTakesNoCobV(t *testing.T) {
	t.Parallel()
	t.Run("the PSP refuses cobv", func(t *testing.T) {
		t.Parallel()
		e := newStrictEnv(t, enginetest.SandboxOptions(func(o *sandbox.Options) { o.RefuseCobV = true }))
		status, ch := e.issue(t, 1)
		v, _ := ch["validity"].(map[string]any)
		if status != http.StatusCreated || ch["pixType"] != "cob" || ch["cobFallback"] != "PSP_REFUSED_COBV" || v["rule"] != "PIX_EXPIRATION" ||
			ch["amountCents"] != float64(100000) {
			t.Fatalf("issue: %d %v", status, ch)
		}
		status, out := e.Do(t, http.MethodPost, "/v1/charges", e.keys["operator"],
			fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":2,"method":"PIX","pixType":"cobv"}`, e.dk))
		if status != http.StatusUnprocessableEntity || enginetest.ErrorCode(out) != "psp_rejected" {
			t.Fatalf("a cobv by name: %d %v", status, out)
		}
	})
	t.Run("the tenant's setting", func(t *testing.T) {
		t.Parallel()
		e := newStrictEnv(t)
		body := fmt.Sprintf(`{"baseUrl":%q,"clientId":%q,"clientSecret":%q,"chave":"0f6b3c1e-2d4a-4e8b-9c7d-5a1f2e3b4c5d","cobvDisabled":true}`,
			e.SandboxURL, sandbox.DefaultClientID, e.Sandbox.ClientSecret())
		if status, out := e.Do(t, http.MethodPut, "/v1/tenant/psp", e.keys["supervisor"], body); status != http.StatusOK || out["cobvDisabled"] != true {
			t.Fatalf("settings: %d %v", status, out)
		}
		status, ch := e.issue(t, 1)
		if status != http.StatusCreated || ch["pixType"] != "cob" || ch["cobFallback"] != "TENANT_SETTING" {
			t.Fatalf("issue: %d %v", status, ch)
		}
		if n := e.rec.Count(http.MethodPut, "/cobv/"); n != 0 {
			t.Fatalf("%d cobv sent", n)
		}
	})
}

// TestAPSPRefusalShowsItsViolations: a PSP that refuses a charge with
// violacoes answers psp_rejected naming them (razao, propriedade), and
// never the value refused.
func TestAPSPRefusalShowsItsViolations(t *testing.T) {
	t.Parallel()
	e := newStrictEnv(t)
	psp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/oauth/token":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token":"tok","token_type":"Bearer","expires_in":3600}`))
		case strings.HasPrefix(r.URL.Path, "/webhook/"):
			w.WriteHeader(http.StatusOK)
		default:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"type":"https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida","title":"x","status":400,` +
				`"violacoes":[{"razao":"O objeto cobv.devedor não respeita o schema","propriedade":"cobv.devedor.cpf","valor":"` + e.cpf + `"}]}`))
		}
	}))
	t.Cleanup(psp.Close)
	body := fmt.Sprintf(`{"baseUrl":%q,"clientId":"c","clientSecret":"s","chave":"0f6b3c1e-2d4a-4e8b-9c7d-5a1f2e3b4c5d"}`, psp.URL)
	if status, out := e.Do(t, http.MethodPut, "/v1/tenant/psp", e.keys["supervisor"], body); status != http.StatusOK {
		t.Fatalf("settings: %d %v", status, out)
	}
	status, raw := e.Raw(t, http.MethodPost, "/v1/charges", e.keys["operator"], fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":1,"method":"PIX"}`, e.dk))
	if status != http.StatusUnprocessableEntity || !strings.Contains(raw, "psp_rejected") || !strings.Contains(raw, "cobv.devedor.cpf") ||
		!strings.Contains(raw, "não respeita o schema") || strings.Contains(raw, e.cpf) {
		t.Fatalf("refusal: %d %s", status, raw)
	}
}

// TestACobVLeaksNoPersonalData: a debtor with the shared test subjects'
// CPF and name gets a cobv naming them at the PSP, and a second charge
// refused by a PSP whose violations quote them; neither reaches a log
// line, an answer, or any stored item outside the sealed profile.
func TestACobVLeaksNoPersonalData(t *testing.T) {
	t.Parallel()
	e := newStrictEnv(t)
	status, reg := e.Do(t, http.MethodPost, "/v1/debtors", e.keys["operator"],
		fmt.Sprintf(`{"document":%q,"name":%q}`, piitest.CPFDigits, piitest.Name))
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, reg)
	}
	dk := reg["debtorKey"].(string)
	insts := `{"seq":1,"dueDate":"2026-09-10","principalCents":90000,"interestCents":10000}`
	if status, out := e.Do(t, http.MethodPost, "/v1/debtors/"+dk+"/contracts", e.keys["operator"],
		`{"contractId":"C-9","productCode":"CREDIARIO_12X","installments":[`+insts+`]}`); status != http.StatusCreated {
		t.Fatalf("sign: %d %v", status, out)
	}
	var answers strings.Builder
	status, raw := e.Raw(t, http.MethodPost, "/v1/charges", e.keys["operator"], fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-9","seq":1,"method":"PIX"}`, dk))
	if status != http.StatusCreated || !strings.Contains(raw, `"pixType":"cobv"`) {
		t.Fatalf("issue: %d %s", status, raw)
	}
	answers.WriteString(raw)
	sent := false
	for _, c := range e.rec.Calls() {
		if strings.HasPrefix(c.Path, "/cobv/") && strings.Contains(string(c.Body), piitest.CPFDigits) {
			sent = true
		}
	}
	if !sent {
		t.Fatal("the cobv did not name the debtor at the PSP")
	}
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/oauth/token":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token":"tok","token_type":"Bearer","expires_in":3600}`))
		case strings.HasPrefix(r.URL.Path, "/webhook/"):
			w.WriteHeader(http.StatusOK)
		default:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = fmt.Fprintf(w, `{"type":"https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida","title":%q,"status":400,"detail":%q,`+
				`"violacoes":[{"razao":"devedor 529.982.247-25 %s recusado","propriedade":"cobv.devedor","valor":%q}]}`,
				piitest.Name, piitest.Email, piitest.Name, piitest.CPFDigits)
		}
	}))
	t.Cleanup(refusing.Close)
	body := fmt.Sprintf(`{"baseUrl":%q,"clientId":"c","clientSecret":"s","chave":"0f6b3c1e-2d4a-4e8b-9c7d-5a1f2e3b4c5d"}`, refusing.URL)
	if status, out := e.Do(t, http.MethodPut, "/v1/tenant/psp", e.keys["supervisor"], body); status != http.StatusOK {
		t.Fatalf("settings: %d %v", status, out)
	}
	status, raw = e.Raw(t, http.MethodPost, "/v1/charges", e.keys["operator"], fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-9","seq":1,"method":"PIX"}`, dk))
	if status != http.StatusUnprocessableEntity || !strings.Contains(raw, "cobv.devedor") {
		t.Fatalf("refused: %d %s", status, raw)
	}
	answers.WriteString(raw)
	for where, text := range map[string]string{"answers": answers.String(), "logs": e.Logs.String()} {
		if leaks := piitest.Leaks(text); len(leaks) > 0 {
			t.Errorf("the %s show %v", where, leaks)
		}
	}
	items := 0
	for _, it := range e.ScanAll(t) {
		if strings.Contains(fmt.Sprintf("%v", it["SK"]), "PROFILE") {
			continue // the sealed profile: encrypted
		}
		items++
		if leaks := piitest.Leaks(fmt.Sprintf("%v", it)); len(leaks) > 0 {
			t.Errorf("an item shows %v: %v", leaks, it["SK"])
		}
	}
	if items < 5 {
		t.Fatalf("scanned only %d items", items)
	}
}
