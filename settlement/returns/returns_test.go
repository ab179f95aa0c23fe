package returns_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"lastro/boleto/cnabtest"
	"lastro/contract"
	"lastro/engine/enginetest"
	"lastro/settlement/returns"
)

// fixture signs a contract of three instalments for a debtor of a new
// tenant and issues a boleto for each on Thursday 2026-09-24 (due that
// day), all over the API. It returns the env, the keys, the debtor key and
// the three charges as answered.
func fixture(t *testing.T) (*enginetest.Env, enginetest.Keys, string, []map[string]any) {
	t.Helper()
	env := enginetest.New(t, enginetest.At(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)))
	keys := env.CreateTenant(t, "t-cnab")
	op := keys["operator"]
	status, reg := env.Do(t, http.MethodPost, "/v1/debtors", op, fmt.Sprintf(`{"document":%q,"name":"Pessoa Sintética"}`, env.CPF()))
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, reg)
	}
	dk := reg["debtorKey"].(string)
	insts := `{"seq":1,"dueDate":"2026-09-10","principalCents":90000,"interestCents":10000},` +
		`{"seq":2,"dueDate":"2026-10-10","principalCents":90000,"interestCents":10000},` +
		`{"seq":3,"dueDate":"2026-11-10","principalCents":90000,"interestCents":10000}`
	if status, out := env.Do(t, http.MethodPost, "/v1/debtors/"+dk+"/contracts", op,
		`{"contractId":"C-1","productCode":"CREDIARIO_12X","installments":[`+insts+`]}`); status != http.StatusCreated {
		t.Fatalf("sign: %d %v", status, out)
	}
	env.Clock.Set(time.Date(2026, 9, 24, 13, 0, 0, 0, time.UTC))
	var chs []map[string]any
	for seq := 1; seq <= 3; seq++ {
		status, ch := env.Do(t, http.MethodPost, "/v1/charges", op, fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":%d,"method":"BOLETO"}`, dk, seq))
		if status != http.StatusCreated || ch["computedFor"] != "2026-09-24" {
			t.Fatalf("boleto %d: %d %v", seq, status, ch)
		}
		chs = append(chs, ch)
	}
	// The bank's return arrives the next morning.
	env.Clock.Set(time.Date(2026, 9, 25, 11, 0, 0, 0, time.UTC))
	return env, keys, dk, chs
}

// paid is a liquidation of a charge as answered, paid in full on the
// due date and credited the next day.
func paid(ch map[string]any) cnabtest.Title {
	cents := int64(ch["amountCents"].(float64))
	return cnabtest.Title{Movement: "06", NossoNumero: ch["chargeId"].(string), DueDate: "24092026", FaceCents: cents, PaidCents: cents,
		PaidOn: "24092026", CreditOn: "25092026"}
}

// unknown is a liquidation of a nosso número the engine never issued.
var unknown = cnabtest.Title{Movement: "06", NossoNumero: "12345679999999999", DueDate: "24092026", FaceCents: 5000, PaidCents: 5000,
	PaidOn: "24092026", CreditOn: "25092026"}

func counts(out map[string]any) string {
	return fmt.Sprintf("titles=%v liquidations=%v registrations=%v ignored=%v applied=%v suspense=%v alreadyApplied=%v alreadyInSuspense=%v repeated=%v conflicts=%v",
		out["titles"], out["liquidations"], out["registrations"], out["ignored"], out["applied"], out["suspense"], out["alreadyApplied"],
		out["alreadyInSuspense"], out["repeated"], out["conflicts"])
}

func paidSeqs(t *testing.T, env *enginetest.Env, keys enginetest.Keys, dk string) []float64 {
	t.Helper()
	status, page := env.Do(t, http.MethodGet, "/v1/debtors/"+dk+"/contracts/C-1/installments?status=paid", keys["operator"], "")
	items, ok := page["items"].([]any)
	if status != http.StatusOK || !ok {
		t.Fatalf("paid instalments: %d %v", status, page)
	}
	var seqs []float64
	for _, it := range items {
		in := it.(map[string]any)
		if in["status"] != contract.InstPaid {
			t.Fatalf("instalment %v", in)
		}
		seqs = append(seqs, in["seq"].(float64))
	}
	return seqs
}

func suspended(t *testing.T, env *enginetest.Env, keys enginetest.Keys) []any {
	t.Helper()
	status, page := env.Do(t, http.MethodGet, "/v1/settlements/unmatched", keys["supervisor"], "")
	if status != http.StatusOK {
		t.Fatalf("unmatched: %d %v", status, page)
	}
	return page["items"].([]any)
}

// TestImportReturnFile: three liquidations, one of a nosso número never
// issued, and an entry confirmation: two applied, one in suspense. The same
// file again applies nothing and says which repeats were in suspense.
func TestImportReturnFile(t *testing.T) {
	t.Parallel()
	env, keys, dk, chs := fixture(t)
	entry := cnabtest.Title{Movement: "02", NossoNumero: chs[2]["chargeId"].(string), DueDate: "24092026", FaceCents: 1, PaidOn: "00000000",
		CreditOn: "00000000"}
	file := cnabtest.Return("001", paid(chs[0]), entry, unknown, paid(chs[1])).CRLF()
	sup := keys["supervisor"]

	status, out := env.Do(t, http.MethodPost, "/v1/boletos/returns", sup, file, "Content-Type", "text/plain")
	if status != http.StatusOK {
		t.Fatalf("import: %d %v", status, out)
	}
	if got := counts(out); got != "titles=4 liquidations=3 registrations=1 ignored=0 applied=2 suspense=1 alreadyApplied=0 alreadyInSuspense=0 repeated=0 conflicts=0" {
		t.Fatalf("first import: %s", got)
	}
	items := out["items"].([]any)
	first, third := items[0].(map[string]any), items[1].(map[string]any)
	id0 := chs[0]["chargeId"].(string)
	if first["line"] != float64(3) || first["chargeId"] != id0 || first["settlementId"] != returns.SettlementID("001", id0) ||
		first["settlementId"] != "BOL-001-"+id0[:7]+"-"+id0[7:] || first["paidAt"] != "2026-09-24T23:59:59-03:00" ||
		first["status"] != "applied" || first["amountCents"] != chs[0]["amountCents"] {
		t.Fatalf("first item %v", first)
	}
	if third["line"] != float64(7) || third["status"] != "unmatched" || third["reason"] != "CHARGE_NOT_FOUND" ||
		third["settlementId"] != "BOL-001-1234567-9999999999" {
		t.Fatalf("unknown item %v", third)
	}
	if seqs := paidSeqs(t, env, keys, dk); fmt.Sprint(seqs) != "[1 2]" {
		t.Fatalf("paid instalments %v, want 1 and 2", seqs)
	}
	if s := suspended(t, env, keys); len(s) != 1 || s[0].(map[string]any)["settlementId"] != "BOL-001-1234567-9999999999" {
		t.Fatalf("suspense %v", s)
	}

	// The same file again, with LF line ends this time.
	status, again := env.Do(t, http.MethodPost, "/v1/boletos/returns", sup, strings.ReplaceAll(file, "\r\n", "\n"))
	if status != http.StatusOK {
		t.Fatalf("second import: %d %v", status, again)
	}
	if got := counts(again); got != "titles=4 liquidations=3 registrations=1 ignored=0 applied=0 suspense=0 alreadyApplied=2 alreadyInSuspense=1 repeated=3 conflicts=0" {
		t.Fatalf("second import: %s", got)
	}
	if st := again["items"].([]any)[1].(map[string]any); st["status"] != "already_in_suspense" || st["outcome"] != "UNMATCHED" {
		t.Fatalf("repeated unknown item %v", st)
	}
	if s := suspended(t, env, keys); len(s) != 1 {
		t.Fatalf("suspense after the repeat %v", s)
	}

	// The bank reports the same nosso número paid with another amount: a
	// conflict, counted and listed, the rest of the file still imported.
	other := paid(chs[0])
	other.PaidCents++
	status, conflict := env.Do(t, http.MethodPost, "/v1/boletos/returns", sup, cnabtest.Return("001", other, paid(chs[2])).LF())
	if status != http.StatusOK || counts(conflict) != "titles=2 liquidations=2 registrations=0 ignored=0 applied=1 suspense=0 alreadyApplied=0 alreadyInSuspense=0 repeated=0 conflicts=1" ||
		conflict["items"].([]any)[0].(map[string]any)["error"] != "settlement_id_reused" {
		t.Fatalf("conflicting import: %d %v", status, conflict)
	}
}

// TestMalformedReturnFileAppliesNothing: a truncated file, or one with a
// defect after valid liquidations, is refused whole with the line.
func TestMalformedReturnFileAppliesNothing(t *testing.T) {
	t.Parallel()
	env, keys, dk, chs := fixture(t)
	sup := keys["supervisor"]
	good := cnabtest.Return("001", paid(chs[0]), unknown, paid(chs[1]))
	badAmount := cnabtest.Return("001", paid(chs[0]), unknown, paid(chs[1]))
	badAmount[7] = badAmount[7][:77] + "00000000000000x" + badAmount[7][92:] // the last segment U
	tests := []struct {
		name, file, code, want string
	}{
		{"truncated after the details", good[:8].CRLF(), "invalid_return_file", "line 9: the file ends without its trailer"},
		{"cut mid-record", good[:5].CRLF() + good[5][:120], "invalid_return_file", "line 6: the other expenses"},
		{"a record too long", good[:5].CRLF() + good[5] + "  \r\n", "invalid_return_file", "line 6: a record has more than 240 characters"},
		{"a bad amount on the last title", badAmount.CRLF(), "invalid_return_file", "line 8: the amount paid"},
		{"another bank's file", cnabtest.Return("237", paid(chs[0])).CRLF(), "wrong_bank", "bank 237"},
		{"not a file", `{"hello":"world"}`, "invalid_return_file", "line 1"},
	}
	for _, tt := range tests {
		status, out := env.Do(t, http.MethodPost, "/v1/boletos/returns", sup, tt.file)
		e, _ := out["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if status != http.StatusBadRequest || enginetest.ErrorCode(out) != tt.code || !strings.Contains(msg, tt.want) ||
			!strings.Contains(msg, "nothing was imported") {
			t.Errorf("%s: %d %v, want 400 %s holding %q", tt.name, status, out, tt.code, tt.want)
		}
	}
	if seqs := paidSeqs(t, env, keys, dk); len(seqs) != 0 {
		t.Fatalf("paid instalments after refused files: %v", seqs)
	}
	if s := suspended(t, env, keys); len(s) != 0 {
		t.Fatalf("suspense after refused files: %v", s)
	}
	// Only a supervisor imports; the body is bounded.
	if status, _ := env.Do(t, http.MethodPost, "/v1/boletos/returns", keys["operator"], good.CRLF()); status != http.StatusForbidden {
		t.Fatalf("operator import: %d", status)
	}
	huge := strings.Repeat(good[1]+"\r\n", 4400)
	if status, out := env.Do(t, http.MethodPost, "/v1/boletos/returns", sup, huge); status != http.StatusRequestEntityTooLarge ||
		enginetest.ErrorCode(out) != "body_too_large" {
		t.Fatalf("huge file: %d %v", status, out)
	}
	// The good file still imports after all the refusals.
	if status, out := env.Do(t, http.MethodPost, "/v1/boletos/returns", sup, good.CRLF()); status != http.StatusOK || out["applied"] != float64(2) {
		t.Fatalf("good file: %d %v", status, out)
	}
}
