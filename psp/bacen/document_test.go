package bacen_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"lastro/collections/calendar"
	"lastro/collections/egress"
	"lastro/psp"
	"lastro/psp/bacen"
	"lastro/psp/psptest"
)

// TestEveryCallFollowsTheDocument: every request the client sends — a
// cob, a cobv with its devedor, reading both back, removing one, the
// webhook, a refund and reading it — passes the Central Bank's Pix API
// document, and so does every answer of the sandbox; each token is asked
// for the one scope its call needs; the notices the sandbox posts (a
// payment, then its refund settled) follow the document's callback.
func TestEveryCallFollowsTheDocument(t *testing.T) {
	t.Parallel()
	spec := psptest.Load(t)
	f := newFixture(t)
	c := f.client(t, nil)
	ctx := context.Background()
	const cobID, cobvID = "Cb3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF", "Vb3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF"
	if _, err := c.CreateCob(ctx, psp.CobInput{TxID: cobID, AmountCents: 12345, ExpirationSeconds: 86400}); err != nil {
		t.Fatal(err)
	}
	ch, err := c.CreateCobV(ctx, psp.CobVInput{TxID: cobvID, AmountCents: 100000, DueDate: calendar.MustParse("2026-09-10"), ValidAfterDueDays: 30,
		FinePercent: decimal.RequireFromString("2.00"), InterestMonthly: decimal.RequireFromString("1.00"), Debtor: debtor})
	if err != nil {
		t.Fatal(err)
	}
	if d := ch.Raw.Devedor; d == nil || d.CPF != debtor.CPF || ch.Raw.Recebedor == nil || ch.Raw.Loc == nil || ch.Raw.Loc.TxID != cobvID {
		t.Fatalf("cobv answer: %+v", ch.Raw)
	}
	for _, k := range []psp.Kind{psp.Cob, psp.CobV} {
		id := map[psp.Kind]string{psp.Cob: cobID, psp.CobV: cobvID}[k]
		if _, err := c.Get(ctx, k, id); err != nil {
			t.Fatalf("get %s: %v", k, err)
		}
	}
	if _, err := c.Cancel(ctx, psp.Cob, cobID); err != nil {
		t.Fatal(err)
	}
	if err := c.RegisterWebhook(ctx, f.hookSrv.URL+"/v1/webhooks/t-1"); err != nil {
		t.Fatal(err)
	}
	paid := post(t, f, "/sandbox/pay", `{"txid":"`+cobvID+`"}`)
	e2e := paid.Payment.EndToEndID
	ref, err := c.Refund(ctx, psp.RefundInput{EndToEndID: e2e, ID: "rf1", AmountCents: 40000, Description: "estorno"})
	if err != nil || ref.Status != psp.RefundInProcess || len(ref.RtrID) != 32 || ref.AmountCents != 40000 {
		t.Fatalf("refund: %+v %v", ref, err)
	}
	// The same id again is refused, as the API's PixDevolucaoInvalida says.
	if _, err := c.Refund(ctx, psp.RefundInput{EndToEndID: e2e, ID: "rf1", AmountCents: 40000}); !errors.Is(err, psp.ErrRejected) {
		t.Fatalf("the same refund id again: %v", err)
	}
	if _, err := c.Refund(ctx, psp.RefundInput{EndToEndID: e2e, ID: "rf2", AmountCents: 60001}); !errors.Is(err, psp.ErrRejected) {
		t.Fatalf("more than the payment: %v", err)
	}
	settled := post(t, f, "/sandbox/settle-refund", `{"endToEndId":"`+e2e+`","id":"rf1"}`)
	if settled.WebhookStatus != http.StatusOK || len(settled.Payment.Devolucoes) != 1 || settled.Payment.Devolucoes[0].Status != psp.RefundReturned {
		t.Fatalf("settled: %+v", settled)
	}
	got, err := c.GetRefund(ctx, e2e, "rf1")
	if err != nil || got.Status != psp.RefundReturned || got.RtrID != ref.RtrID || got.SettledAt == "" {
		t.Fatalf("get refund: %+v %v", got, err)
	}
	if refused := f.rec.Refused(); len(refused) > 0 {
		for _, r := range refused {
			if !(r.Path == "/pix/"+e2e+"/devolucao/rf1" || strings.HasSuffix(r.Path, "/rf2")) {
				t.Errorf("the document refused %s %s: %s", r.Method, r.Path, r.Refused)
			}
		}
	}
	var scopes []string
	for _, call := range f.rec.Calls() {
		switch {
		case call.Path == "/oauth/token":
			form, err := url.ParseQuery(string(call.Body))
			if err != nil || len(strings.Fields(form.Get("scope"))) != 1 {
				t.Errorf("a token request asked for %q: one scope per call", form.Get("scope"))
			}
			scopes = append(scopes, form.Get("scope"))
		case strings.HasPrefix(call.Path, "/sandbox/"):
		case !call.Checked:
			t.Errorf("%s %s is not a route of the document", call.Method, call.Path)
		}
	}
	slices.Sort(scopes)
	if want := []string{"cob.read", "cob.write", "cobv.read", "cobv.write", "pix.read", "pix.write", "webhook.write"}; !slices.Equal(slices.Compact(scopes), want) {
		t.Errorf("scopes asked: %v, want %v", scopes, want)
	}
	f.mu.Lock()
	bodies := slices.Clone(f.bodies)
	f.mu.Unlock()
	if len(bodies) != 2 {
		t.Fatalf("notices: %v", bodies)
	}
	for _, b := range bodies {
		if err := spec.CheckNotice([]byte(b)); err != nil {
			t.Errorf("notice %s: %v", b, err)
		}
	}
}

// TestTheDocumentRefusesWhatAStrictPSPRefuses: the checks the recording
// PSP applies are the document's: a cobv without devedor, a CPF of three
// digits, a cob whose expiracao is not a number, an amount with three
// decimals are refused; the client's own cobv passes.
func TestTheDocumentRefusesWhatAStrictPSPRefuses(t *testing.T) {
	t.Parallel()
	spec := psptest.Load(t)
	good := `{"calendario":{"dataDeVencimento":"2026-09-10","validadeAposVencimento":30},"devedor":{"cpf":"52998224725","nome":"Pessoa"},` +
		`"valor":{"original":"10.00"},"chave":"k"}`
	for _, tt := range []struct {
		name, path, body string
		ok               bool
	}{
		{"a cobv with devedor", "/cobv/" + txid, good, true},
		{"a cobv without devedor", "/cobv/" + txid, `{"calendario":{"dataDeVencimento":"2026-09-10"},"valor":{"original":"10.00"},"chave":"k"}`, false},
		{"a CPF of three digits", "/cobv/" + txid, strings.Replace(good, "52998224725", "123", 1), false},
		{"cpf and cnpj", "/cobv/" + txid, strings.Replace(good, `"nome"`, `"cnpj":"11222333000181","nome"`, 1), false},
		{"no due date", "/cobv/" + txid, strings.Replace(good, `"dataDeVencimento":"2026-09-10",`, "", 1), false},
		{"an amount with three decimals", "/cobv/" + txid, strings.Replace(good, "10.00", "10.001", 1), false},
		{"a cob", "/cob/" + txid, `{"calendario":{"expiracao":3600},"valor":{"original":"10.00"},"chave":"k"}`, true},
		{"a cob whose expiracao is text", "/cob/" + txid, `{"calendario":{"expiracao":"3600"},"valor":{"original":"10.00"},"chave":"k"}`, false},
		{"a short txid", "/cob/abc", `{"calendario":{"expiracao":3600},"valor":{"original":"10.00"},"chave":"k"}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPut, tt.path, strings.NewReader(tt.body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Authorization", "Bearer any")
			err := spec.CheckRequest(r, tt.path, []byte(tt.body))
			if (err == nil) != tt.ok {
				t.Fatalf("CheckRequest = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestARefusalShowsItsViolations: a PSP's violacoes reach the error as
// razao and propriedade, so the operator sees why; the valor refused and
// anything like a document, a phone or an e-mail in the texts do not.
func TestARefusalShowsItsViolations(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth/token" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token":"tok","token_type":"Bearer","expires_in":3600}`))
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"type":"https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida","title":"t","status":400,"violacoes":[` +
			`{"razao":"O objeto cobv.devedor não respeita o schema: CPF 529.982.247-25 inválido","propriedade":"cobv.devedor.cpf","valor":"52998224725"},` +
			`{"razao":"contato maria@example.com recusado","propriedade":"cobv.devedor.email","valor":"maria@example.com"}]}`))
	}))
	t.Cleanup(srv.Close)
	c, err := bacen.New(bacen.Config{BaseURL: srv.URL, ClientID: "id", ClientSecret: "secret", Chave: chave, Egress: egress.New(egress.AllowLoopback()),
		Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateCobV(context.Background(), psp.CobVInput{TxID: txid, AmountCents: 1000, DueDate: calendar.MustParse("2026-09-10"),
		ValidAfterDueDays: 30, Debtor: debtor})
	var re *psp.RejectedError
	if !errors.As(err, &re) || !errors.Is(err, psp.ErrRejected) || re.Type != "CobVOperacaoInvalida" || len(re.Violations) != 2 ||
		re.Violations[0].Propriedade != "cobv.devedor.cpf" || !strings.Contains(re.Violations[0].Razao, "não respeita o schema") {
		t.Fatalf("refusal: %#v", err)
	}
	for _, leak := range []string{"52998224725", "529.982.247-25", "maria@example.com"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("the error shows %q: %v", leak, err)
		}
	}
}
