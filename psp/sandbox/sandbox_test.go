package sandbox_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"lastro/collections/calendar"
	"lastro/psp"
	"lastro/psp/sandbox"
)

func m(modalidade int, v string) *psp.Modalidade {
	return &psp.Modalidade{Modalidade: modalidade, ValorPerc: v}
}

func TestDue(t *testing.T) {
	t.Parallel()
	cobv := func(multa, juros *psp.Modalidade) psp.CobPayload {
		return psp.CobPayload{Calendario: psp.Calendario{DataDeVencimento: "2026-09-10", ValidadeAposVencimento: 30},
			Valor: psp.Valor{Original: "1000.00", Multa: multa, Juros: juros}}
	}
	for _, tt := range []struct {
		name  string
		p     psp.CobPayload
		kind  psp.Kind
		on    string
		want  int64
		isErr bool
	}{
		{"cob: the original", psp.CobPayload{Valor: psp.Valor{Original: "12.34"}}, psp.Cob, "2026-12-31", 1234, false},
		{"cobv before due", cobv(m(2, "2.00"), m(3, "1.00")), psp.CobV, "2026-09-01", 100000, false},
		{"cobv on due", cobv(m(2, "2.00"), m(3, "1.00")), psp.CobV, "2026-09-10", 100000, false},
		{"percent fine, monthly interest, 1 day", cobv(m(2, "2.00"), m(3, "1.00")), psp.CobV, "2026-09-11", 100000 + 2000 + 33, false},
		{"half a cent rounds up", psp.CobPayload{Calendario: psp.Calendario{DataDeVencimento: "2026-09-10", ValidadeAposVencimento: 30},
			Valor: psp.Valor{Original: "15.00", Juros: m(3, "1.00")}}, psp.CobV, "2026-09-11", 1500 + 1, false}, // 0.5 cent → 1
		{"fixed fine, fixed daily interest", cobv(m(1, "5.00"), m(1, "0.10")), psp.CobV, "2026-09-13", 100000 + 500 + 30, false},
		{"percent a day", cobv(nil, m(2, "0.03")), psp.CobV, "2026-09-20", 100000 + 300, false},
		{"percent a year", cobv(nil, m(4, "12.00")), psp.CobV, "2026-10-10", 100000 + 1000, false},
		{"last valid day", cobv(nil, nil), psp.CobV, "2026-10-10", 100000, false},
		{"expired", cobv(nil, nil), psp.CobV, "2026-10-11", 0, true},
		{"business-day modality", cobv(nil, m(7, "1.00")), psp.CobV, "2026-09-11", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := sandbox.Due(tt.kind, tt.p, calendar.MustParse(tt.on))
			if (err != nil) != tt.isErr || got != tt.want {
				t.Fatalf("Due = %d, %v; want %d (error %v)", got, err, tt.want, tt.isErr)
			}
		})
	}
}

func TestTheAPIRefuses(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Options{WebhookSecret: "s"})
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	sb.SetBaseURL(srv.URL)
	do := func(method, path, token, body string) int {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := do(http.MethodGet, "/cob/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF", "", ""); got != http.StatusUnauthorized {
		t.Fatalf("no token: %d", got)
	}
	if got := do(http.MethodGet, "/cob/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF", "made-up", ""); got != http.StatusUnauthorized {
		t.Fatalf("unknown token: %d", got)
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {sandbox.DefaultClientID}, "client_secret": {"wrong"}}
	if resp, err := http.PostForm(srv.URL+"/oauth/token", form); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong secret: %v %v", resp, err)
	}
	form.Set("client_secret", sb.ClientSecret())
	resp, err := http.PostForm(srv.URL+"/oauth/token", form)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("token: %v %v", resp, err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	decode(t, resp, &tok)
	const txid = "/cob/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF"
	for _, tt := range []struct {
		name, path, body string
		want             int
	}{
		{"short txid", "/cob/abc", `{"valor":{"original":"1.00"},"chave":"k"}`, http.StatusBadRequest},
		{"float amount", txid, `{"valor":{"original":"1e3"},"chave":"k"}`, http.StatusBadRequest},
		{"zero amount", txid, `{"valor":{"original":"0.00"},"chave":"k"}`, http.StatusBadRequest},
		{"no key", txid, `{"valor":{"original":"1.00"}}`, http.StatusBadRequest},
		{"cob with a fine", txid, `{"valor":{"original":"1.00","multa":{"modalidade":2,"valorPerc":"2.00"}},"chave":"k"}`, http.StatusBadRequest},
		{"cobv without due date", "/cobv/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF", `{"valor":{"original":"1.00"},"chave":"k"}`, http.StatusBadRequest},
		{"cobv percent with 3 decimals", "/cobv/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF",
			`{"calendario":{"dataDeVencimento":"2026-09-10"},"valor":{"original":"1.00","juros":{"modalidade":3,"valorPerc":"0.333"}},"chave":"k"}`, http.StatusBadRequest},
		{"cobv without devedor", "/cobv/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF",
			`{"calendario":{"dataDeVencimento":"2099-09-10"},"valor":{"original":"1.00"},"chave":"k"}`, http.StatusBadRequest},
		{"cobv with a CPF of three digits", "/cobv/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF",
			`{"calendario":{"dataDeVencimento":"2099-09-10"},"devedor":{"cpf":"123","nome":"P"},"valor":{"original":"1.00"},"chave":"k"}`, http.StatusBadRequest},
		{"cobv with wrong check digits", "/cobv/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF",
			`{"calendario":{"dataDeVencimento":"2099-09-10"},"devedor":{"cpf":"52998224724","nome":"P"},"valor":{"original":"1.00"},"chave":"k"}`, http.StatusBadRequest},
		{"cobv with a CNPJ of wrong check digits", "/cobv/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF",
			`{"calendario":{"dataDeVencimento":"2099-09-10"},"devedor":{"cnpj":"11222333000182","nome":"P"},"valor":{"original":"1.00"},"chave":"k"}`, http.StatusBadRequest},
		{"cobv without a name", "/cobv/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF",
			`{"calendario":{"dataDeVencimento":"2099-09-10"},"devedor":{"cpf":"52998224725"},"valor":{"original":"1.00"},"chave":"k"}`, http.StatusBadRequest},
		{"cobv due in the past", "/cobv/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF",
			`{"calendario":{"dataDeVencimento":"2001-09-10"},"devedor":{"cpf":"52998224725","nome":"P"},"valor":{"original":"1.00"},"chave":"k"}`, http.StatusBadRequest},
		{"cobv with negative validity", "/cobv/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF",
			`{"calendario":{"dataDeVencimento":"2099-09-10","validadeAposVencimento":-1},"devedor":{"cpf":"52998224725","nome":"P"},"valor":{"original":"1.00"},"chave":"k"}`, http.StatusBadRequest},
		{"cob with expiracao 0", txid, `{"calendario":{"expiracao":0},"valor":{"original":"1.00"},"chave":"k"}`, http.StatusBadRequest},
		{"a good cobv", "/cobv/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF",
			`{"calendario":{"dataDeVencimento":"2099-09-10"},"devedor":{"cnpj":"11222333000181","nome":"P"},"valor":{"original":"1.00"},"chave":"k"}`, http.StatusCreated},
		{"not JSON", txid, `{`, http.StatusBadRequest},
		{"unknown collection", "/lotecobv/Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF", `{}`, http.StatusNotFound},
		{"a good cob", txid, `{"valor":{"original":"1.00"},"chave":"k"}`, http.StatusCreated},
	} {
		if got := do(http.MethodPut, tt.path, tok.AccessToken, tt.body); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
	for _, tt := range []struct {
		name, path, body string
		want             int
	}{
		{"pay unknown txid", "/sandbox/pay", `{"txid":"nope"}`, http.StatusBadRequest},
		{"pay with a float", "/sandbox/pay", `{"txid":"Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF","valor":"1e3"}`, http.StatusBadRequest},
		{"pay with a bad instant", "/sandbox/pay", `{"txid":"Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF","horario":"yesterday"}`, http.StatusBadRequest},
		{"pay without a webhook", "/sandbox/pay", `{"txid":"Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF"}`, http.StatusBadRequest},
		{"redeliver unknown", "/sandbox/redeliver", `{"endToEndId":"E1"}`, http.StatusBadRequest},
	} {
		if got := do(http.MethodPost, tt.path, sb.OperatorToken(), tt.body); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

func decode(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestAnswersCarryWhatTheAPIRequires: a cobv's answer has revisao (0 at
// first), devedor, recebedor, loc with its txid, status; a refusal lists
// its violacoes without the values refused; registering a webhook is 200.
func TestAnswersCarryWhatTheAPIRequires(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	const id = "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF"
	raw := a.raw(t, http.MethodPut, "/cobv/"+id,
		`{"calendario":{"dataDeVencimento":"2099-09-10"},"devedor":{"cpf":"52998224725","nome":"Pessoa"},"valor":{"original":"10.00"},"chave":"k"}`)
	var got map[string]any
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"revisao", "devedor", "recebedor", "loc", "status", "location", "calendario", "txid", "pixCopiaECola"} {
		if _, ok := got[f]; !ok {
			t.Errorf("the answer lacks %s: %s", f, raw)
		}
	}
	if got["revisao"] != float64(0) || got["loc"].(map[string]any)["txid"] != id {
		t.Errorf("answer: %s", raw)
	}
	refusal := a.raw(t, http.MethodPut, "/cobv/"+id,
		`{"calendario":{"dataDeVencimento":"2099-09-10"},"devedor":{"cpf":"52998224724","nome":"Pessoa"},"valor":{"original":"10.00"},"chave":"k"}`)
	if !strings.Contains(refusal, `"violacoes"`) || !strings.Contains(refusal, `"cobv.devedor.cpf"`) || strings.Contains(refusal, "52998224724") {
		t.Errorf("refusal: %s", refusal)
	}
	if status, _ := a.do(t, http.MethodPut, "/webhook/k", `{"webhookUrl":"https://lastro.example/v1/webhooks/t-1"}`); status != http.StatusOK {
		t.Errorf("webhook: %d, want 200", status)
	}
}
