package charges_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"lastro/boleto"
	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/contract"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

// issueOver registers a debtor of a new tenant and signs a contract whose
// first instalment (due 2026-09-10) is late from 2026-09-11, then issues a
// charge for it at instant at, all over the API. It returns the env, the
// tenant's keys, the debtor key and the charge as answered.
func issueOver(t *testing.T, at time.Time, method string) (*enginetest.Env, enginetest.Keys, string, map[string]any) {
	t.Helper()
	env := enginetest.New(t, enginetest.At(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)))
	keys := env.CreateTenant(t, "t-charge")
	op := keys["operator"]
	status, reg := env.Do(t, http.MethodPost, "/v1/debtors", op, fmt.Sprintf(`{"document":%q,"name":"Pessoa Sintética"}`, env.CPF()))
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, reg)
	}
	dk := reg["debtorKey"].(string)
	insts := `{"seq":1,"dueDate":"2026-09-10","principalCents":90000,"interestCents":10000},` +
		`{"seq":2,"dueDate":"2026-10-10","principalCents":90000,"interestCents":10000}`
	if status, out := env.Do(t, http.MethodPost, "/v1/debtors/"+dk+"/contracts", op,
		`{"contractId":"C-1","productCode":"CREDIARIO_12X","installments":[`+insts+`]}`); status != http.StatusCreated {
		t.Fatalf("sign: %d %v", status, out)
	}
	env.Clock.Set(at)
	body := fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":1,"method":%q}`, dk, method)
	status, out := env.Do(t, http.MethodPost, "/v1/charges", op, body)
	if status != http.StatusCreated {
		t.Fatalf("issue %s: %d %v", method, status, out)
	}
	return env, keys, dk, out
}

// TestPixChargeIsPayableFor24Hours: a Pix charge issued at 23:30 in São
// Paulo is honoured until 23:30 the next day, across the civil date.
func TestPixChargeIsPayableFor24Hours(t *testing.T) {
	t.Parallel()
	issued := time.Date(2026, 9, 25, 2, 30, 0, 0, time.UTC) // Thursday 09-24, 23:30 in São Paulo
	env, keys, dk, ch := issueOver(t, issued, charges.PIX)
	validity, _ := ch["validity"].(map[string]any)
	if ch["expiresAt"] != "2026-09-25T23:30:00-03:00" || validity["rule"] != charges.RulePixExpiration || validity["seconds"] != float64(86400) ||
		ch["computedFor"] != "2026-09-24" {
		t.Fatalf("pix charge: %v", ch)
	}
	// Paid on Friday 09-25 at 20:00, the next civil day, within the 24 h:
	// the quoted amount pays the instalment in full.
	paid := time.Date(2026, 9, 25, 23, 0, 0, 0, time.UTC)
	env.Clock.Set(paid)
	body := enginetest.WebhookBody("stl-pix", ch["chargeId"].(string), int64(ch["amountCents"].(float64)), "2026-09-25T20:00:00-03:00")
	status, raw, err := env.Deliver("t-charge", keys["webhook"], body, paid, nil)
	if err != nil || status != http.StatusOK {
		t.Fatalf("webhook: %d %s %v", status, raw, err)
	}
	out := enginetest.JSON(t, raw)
	if out["status"] != "applied" || out["quoteHonoured"] != true || out["creditCents"] != float64(0) || out["appliedCents"] != ch["amountCents"] {
		t.Fatalf("settlement: %v", out)
	}
	_, page := env.Do(t, http.MethodGet, "/v1/debtors/"+dk+"/contracts/C-1/installments?status=paid", keys["operator"], "")
	items, _ := page["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["seq"] != float64(1) || items[0].(map[string]any)["status"] != contract.InstPaid {
		t.Fatalf("paid instalments: %v", page)
	}
}

// TestBoletoIsPayableUntilTheEndOfItsDueDate: a boleto quotes the first
// business day from today and is valid until that day's last second in
// the tenant's zone.
func TestBoletoIsPayableUntilTheEndOfItsDueDate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		at       time.Time
		due      string
		expireAt string
	}{
		{"Thursday 10:00: due today", time.Date(2026, 9, 24, 13, 0, 0, 0, time.UTC), "2026-09-24", "2026-09-24T23:59:59-03:00"},
		{"Thursday 23:30: still Thursday", time.Date(2026, 9, 25, 2, 30, 0, 0, time.UTC), "2026-09-24", "2026-09-24T23:59:59-03:00"},
		{"Saturday: due Monday", time.Date(2026, 9, 26, 13, 0, 0, 0, time.UTC), "2026-09-28", "2026-09-28T23:59:59-03:00"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, _, ch := issueOver(t, tt.at, charges.BOLETO)
			validity, _ := ch["validity"].(map[string]any)
			if ch["expiresAt"] != tt.expireAt || validity["rule"] != charges.RuleBoletoDueDate || validity["dueDate"] != tt.due ||
				validity["seconds"] != nil || ch["computedFor"] != tt.due {
				t.Fatalf("boleto: %v", ch)
			}
		})
	}
}

// TestBoletoChargeAnswersItsBarcode: a boleto charge's id is a nosso
// número of the tenant's convênio (the demo one until it sets its own),
// and its barcode and linha digitável carry the bank, the quoted amount,
// the due date and that nosso número, every check digit right.
func TestBoletoChargeAnswersItsBarcode(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 9, 26, 13, 0, 0, 0, time.UTC) // a Saturday: due Monday 09-28
	env, keys, dk, ch := issueOver(t, at, charges.BOLETO)
	check := func(ch map[string]any, convenio, carteira string) {
		t.Helper()
		id, _ := ch["chargeId"].(string)
		if len(id) != 17 || !strings.HasPrefix(id, convenio) {
			t.Fatalf("chargeId %q, want a nosso número of convênio %s", id, convenio)
		}
		for _, form := range []string{"barcode", "linhaDigitavel"} {
			s, _ := ch[form].(string)
			b, err := boleto.Parse(s)
			if err != nil {
				t.Fatalf("%s %q: %v", form, s, err)
			}
			due, ok, err := b.DueDate(calendar.MustParse("2026-09-26"))
			fields, known := b.Fields()
			if b.Bank != "001" || b.AmountCents != int64(ch["amountCents"].(float64)) || err != nil || !ok || due.String() != ch["computedFor"] ||
				!known || fields[1].Value != id || fields[3].Value != carteira {
				t.Fatalf("%s %q decodes to %+v due %s (%v): fields %v, charge %v", form, s, b, due, err, fields, ch)
			}
		}
		if ch["barcode"] == ch["linhaDigitavel"] || ch["computedFor"] != "2026-09-28" {
			t.Fatalf("charge %v", ch)
		}
	}
	check(ch, tenant.DefaultBoleto.Convenio, tenant.DefaultBoleto.Carteira)

	sup := keys["supervisor"]
	for _, tt := range []struct {
		body, code string
	}{
		{`{"bank":"237","convenio":"7654321","carteira":"09"}`, "unsupported_bank"},
		{`{"bank":"001","convenio":"765432","carteira":"18"}`, "invalid_boleto_settings"},
		{`{"bank":"001","convenio":"7654321","carteira":"18","agency":"1"}`, "invalid_json"},
	} {
		if status, out := env.Do(t, http.MethodPut, "/v1/tenant/boleto", sup, tt.body); status != http.StatusBadRequest || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want 400 %s", tt.body, status, out, tt.code)
		}
	}
	if status, _ := env.Do(t, http.MethodPut, "/v1/tenant/boleto", keys["operator"], `{"bank":"001","convenio":"7654321","carteira":"18"}`); status != http.StatusForbidden {
		t.Fatalf("operator set the boleto settings: %d", status)
	}
	status, set := env.Do(t, http.MethodPut, "/v1/tenant/boleto", sup, `{"bank":"001","convenio":"7654321","carteira":"18"}`)
	if status != http.StatusOK || set["convenio"] != "7654321" || set["default"] != false {
		t.Fatalf("set: %d %v", status, set)
	}
	if status, got := env.Do(t, http.MethodGet, "/v1/tenant/boleto", keys["operator"], ""); status != http.StatusOK || got["carteira"] != "18" {
		t.Fatalf("get: %d %v", status, got)
	}
	status, again := env.Do(t, http.MethodPost, "/v1/charges", keys["operator"], fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":2,"method":"BOLETO"}`, dk))
	if status != http.StatusCreated {
		t.Fatalf("second boleto: %d %v", status, again)
	}
	check(again, "7654321", "18")
}
