package settlement

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"

	"lastro/collections/errs"
)

func TestParseValor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64 // 0: refused with 400 invalid_valor
	}{
		{"0.10", 10},
		{"0.01", 1},
		{"1.00", 100},
		{"1234.5", 123450},
		{"1234.56", 123456},
		{"1024.67", 102467},
		{"01.00", 100}, // \d{1,10}\.\d{2} allows leading zeros
		{"0000000001.00", 100},
		{"9999999999.99", 999999999999},
		{"1e3", 0},
		{"1E3", 0},
		{"-1.00", 0},
		{"+1.00", 0},
		{"1.234", 0},
		{"1234", 0}, // reais or cents? refused
		{"1234.", 0},
		{".50", 0},
		{"0.00", 0},
		{"0.0", 0},
		{"", 0},
		{" 1.00", 0},
		{"1.00 ", 0},
		{"1,00", 0},
		{"1.0.0", 0},
		{"10000000000.00", 0}, // 11 integer digits
		{"١.٠٠", 0},           // Arabic-Indic digits
		{"0x10.00", 0},
		{"NaN", 0},
		{"Inf", 0},
	}
	for _, tt := range tests {
		got, err := ParseValor(tt.in)
		if tt.want == 0 {
			if status, code, _ := errs.Public(err); err == nil || status != 400 || code != "invalid_valor" {
				t.Errorf("ParseValor(%q) = %d, %v; want 400 invalid_valor", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseValor(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

// valorShape is the accepted language, written independently of the
// parser: 1-10 digits, a point, 1-2 digits.
var valorShape = regexp.MustCompile(`^[0-9]{1,10}\.[0-9]{1,2}$`)

// FuzzParseValor checks ParseValor against an exact oracle (math/big's
// rationals, never a float): it accepts exactly the strings of the
// documented shape with a positive value, and then gives the value times
// 100 exactly; it never panics.
func FuzzParseValor(f *testing.F) {
	for _, s := range []string{"0.10", "1234.5", "1e3", "-1.00", "1.234", "01.00", "9999999999.99", "0.00", "", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseValor(s)
		var want *big.Rat
		if valorShape.MatchString(s) {
			if r, ok := new(big.Rat).SetString(s); ok && r.Sign() > 0 {
				want = r.Mul(r, big.NewRat(100, 1))
			}
		}
		if want == nil {
			if err == nil {
				t.Fatalf("ParseValor(%q) accepted %d", s, got)
			}
			return
		}
		if err != nil || !want.IsInt() || want.Num().Int64() != got {
			t.Fatalf("ParseValor(%q) = %d, %v; want %s", s, got, err, want.RatString())
		}
		if got <= 0 || got > MaxAmountCents {
			t.Fatalf("ParseValor(%q) = %d out of bounds", s, got)
		}
	})
}

const (
	e2e1 = "E12345678202609241315abcdefghij1"
	e2e2 = "E12345678202609241316abcdefghij2"
	rtr1 = "D12345678202609251000abcdefghij1"
)

func pixBody(entries ...string) string { return `{"pix":[` + strings.Join(entries, ",") + `]}` }

func pixEntry(e2e, txid, valor, horario string) string {
	return fmt.Sprintf(`{"endToEndId":%q,"txid":%q,"valor":%q,"horario":%q,"chave":"chave-do-credor","infoPagador":"Pessoa Sintética pagou"}`, e2e, txid, valor, horario)
}

func TestDecodePix(t *testing.T) {
	t.Parallel()
	good := pixEntry(e2e1, "chg1", "1024.67", "2026-09-24T13:15:00.000Z")
	refund := `{"id":"dev1","rtrId":"` + rtr1 + `","valor":"10.00","horario":{"solicitacao":"2026-09-25T10:00:00Z","liquidacao":"2026-09-25T10:00:05Z"},"status":"DEVOLVIDO","motivo":"pedido do cliente"}`
	withRefund := strings.TrimSuffix(good, "}") + `,"devolucoes":[` + refund + `]}`
	ps, err := DecodePix([]byte(pixBody(withRefund, pixEntry(e2e2, "", "0.10", "2026-09-24T10:16:00-03:00"))))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].EndToEndID != e2e1 || ps[0].TxID != "chg1" || ps[0].ValorCents != 102467 ||
		!ps[0].Horario.Equal(time.Date(2026, 9, 24, 13, 15, 0, 0, time.UTC)) || ps[1].TxID != "" || ps[1].ValorCents != 10 {
		t.Fatalf("payments: %+v", ps)
	}
	if r := ps[0].Refunds; len(r) != 1 || r[0].ID != "dev1" || r[0].RtrID != rtr1 || r[0].ValorCents != 1000 || r[0].Status != RefundReturned ||
		!r[0].SettledAt.Equal(time.Date(2026, 9, 25, 10, 0, 5, 0, time.UTC)) {
		t.Fatalf("refunds: %+v", r)
	}
	// Extensions inside a payment are tolerated (and never read).
	ext := strings.TrimSuffix(good, "}") + `,"gnExtras":{"pagador":{"nome":"Pessoa","cpf":"52998224725"}},"componentesValor":{"original":{"valor":"1024.67"}}}`
	if ps, err := DecodePix([]byte(pixBody(ext))); err != nil || len(ps) != 1 {
		t.Fatalf("extension: %v", err)
	}

	bad := []struct {
		name, body, code string
		where            string
	}{
		{"empty", ``, "invalid_json", ""},
		{"list", `[]`, "invalid_json", ""},
		{"no pix", `{}`, "missing_field", ""},
		{"pix empty", pixBody(), "invalid_pix", ""},
		{"pix null", `{"pix":null}`, "invalid_pix", ""},
		{"pix object", `{"pix":{}}`, "invalid_pix", ""},
		{"top-level extra", `{"pix":[` + good + `],"x":1}`, "unknown_field", ""},
		{"trailing", pixBody(good) + `{}`, "invalid_json", ""},
		{"pix twice", `{"pix":[` + good + `],"pix":[]}`, "invalid_json", ""},
		{"valor twice", pixBody(strings.Replace(good, `"valor":"1024.67"`, `"valor":"1024.67","valor":"1.00"`, 1)), "invalid_json", ""},
		{"duplicate deep in an extension", pixBody(strings.TrimSuffix(good, "}") + `,"ext":{"a":{"b":1,"b":2}}}`), "invalid_json", ""},
		{"valor exponent", pixBody(good, pixEntry(e2e2, "c", "1e3", "2026-09-24T13:15:00Z")), "invalid_valor", "pix[1]"},
		{"valor negative", pixBody(pixEntry(e2e2, "c", "-1.00", "2026-09-24T13:15:00Z")), "invalid_valor", "pix[0]"},
		{"valor 3 decimals", pixBody(pixEntry(e2e2, "c", "1.234", "2026-09-24T13:15:00Z")), "invalid_valor", "pix[0]"},
		{"valor number", pixBody(strings.Replace(good, `"1024.67"`, `1024.67`, 1)), "invalid_valor", "pix[0]"},
		{"e2e short", pixBody(pixEntry("E123", "c", "1.00", "2026-09-24T13:15:00Z")), "invalid_end_to_end_id", "pix[0]"},
		{"e2e letter", pixBody(pixEntry("X"+e2e1[1:], "c", "1.00", "2026-09-24T13:15:00Z")), "invalid_end_to_end_id", "pix[0]"},
		{"e2e symbol", pixBody(pixEntry(e2e1[:31]+"#", "c", "1.00", "2026-09-24T13:15:00Z")), "invalid_end_to_end_id", "pix[0]"},
		{"e2e twice", pixBody(good, good), "duplicate_end_to_end_id", "pix[1]"},
		{"txid with #", pixBody(pixEntry(e2e1, "T#x", "1.00", "2026-09-24T13:15:00Z")), "invalid_txid", "pix[0]"},
		{"horario no zone", pixBody(pixEntry(e2e1, "c", "1.00", "2026-09-24T13:15:00")), "invalid_horario", "pix[0]"},
		{"no valor", pixBody(fmt.Sprintf(`{"endToEndId":%q,"horario":"2026-09-24T13:15:00Z"}`, e2e1)), "missing_field", "pix[0]"},
		{"refund bad rtrId", pixBody(strings.Replace(withRefund, rtr1, e2e1, 1)), "invalid_rtr_id", "pix[0].devolucoes[0]"},
		{"refund bad status", pixBody(strings.Replace(withRefund, `"DEVOLVIDO"`, `"OK"`, 1)), "invalid_refund_status", "pix[0].devolucoes[0]"},
		{"refund bad valor", pixBody(strings.Replace(withRefund, `"10.00"`, `"10"`, 1)), "invalid_valor", "pix[0].devolucoes[0]"},
		{"refund twice", pixBody(strings.Replace(withRefund, refund, refund+","+refund, 1)), "duplicate_refund", "pix[0].devolucoes[1]"},
		{"too large", pixBody(pixEntry(e2e1, "c", "1.00", "2026-09-24T13:15:00Z"), `{"x":"`+strings.Repeat("a", MaxPixBodyBytes)+`"}`), "body_too_large", ""},
	}
	for _, tt := range bad {
		_, err := DecodePix([]byte(tt.body))
		if err == nil {
			t.Errorf("%s: accepted", tt.name)
			continue
		}
		var pe *PixError
		where := ""
		if errors.As(err, &pe) {
			where = fmt.Sprintf("pix[%d]", pe.Index)
			if pe.Refund >= 0 {
				where += fmt.Sprintf(".devolucoes[%d]", pe.Refund)
			}
		}
		status, code, msg := errs.Public(err)
		if status != 400 || code != tt.code || where != tt.where {
			t.Errorf("%s: %d %s at %q (%s), want 400 %s at %q", tt.name, status, code, where, msg, tt.code, tt.where)
		}
		if strings.Contains(msg, "Pessoa") || strings.Contains(msg, "529982") || strings.Contains(msg, "1e3") {
			t.Errorf("%s: the error echoes the input: %s", tt.name, msg)
		}
	}
}

// FuzzPixDecode feeds arbitrary bodies to the Pix decoder: it never
// panics, refuses with a 400 only, and every payment it accepts is one
// the engine can key and apply exactly.
func FuzzPixDecode(f *testing.F) {
	f.Add([]byte(pixBody(pixEntry(e2e1, "chg1", "1024.67", "2026-09-24T13:15:00.000Z"))))
	f.Add([]byte(`{"pix":[{"endToEndId":"` + e2e1 + `","valor":"1.5","horario":"2026-09-24T13:15:00Z","devolucoes":[{"id":"a","rtrId":"` + rtr1 + `","valor":"0.5","status":"DEVOLVIDO"}]}]}`))
	f.Add([]byte(`{"pix":[{"a":{"a":1,"a":2}}]}`))
	f.Add([]byte(`{"pix":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ps, err := DecodePix(body)
		if err != nil {
			if status, _, _ := errs.Public(err); status != 400 {
				t.Fatalf("refused with %d: %v", status, err)
			}
			return
		}
		if len(ps) == 0 || len(ps) > MaxPixPayments {
			t.Fatalf("accepted %d payments", len(ps))
		}
		for _, p := range ps {
			if !ValidEndToEndID(p.EndToEndID) || p.ValorCents <= 0 || p.ValorCents > MaxAmountCents || p.Horario.IsZero() {
				t.Fatalf("accepted payment %+v", p)
			}
			for _, r := range p.Refunds {
				if !ValidEndToEndID(r.RtrID) || r.RtrID[0] != 'D' || r.ValorCents <= 0 || r.ID == "" {
					t.Fatalf("accepted refund %+v", r)
				}
			}
		}
	})
}
