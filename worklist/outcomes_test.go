package worklist_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"lastro/engine/enginetest"
	"lastro/worklist"
)

// TestTenantOutcomeCodes: a supervisor sets the tenant's outcome codes
// through the API (validated at the edge, the spec's error shape); Record
// then takes the tenant's codes and only those, a CALLBACK-kind code
// needs its time and keeps the task for later.
func TestTenantOutcomeCodes(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	tn, ks := env.Tenant(t, "t-codes")
	ctx := context.Background()
	sup, op := ks["supervisor"], ks["operator"]
	status, got := env.Do(t, http.MethodGet, "/v1/tenant/outcome-codes", op, "")
	if codes, _ := got["codes"].([]any); status != http.StatusOK || got["default"] != true || len(codes) != 7 {
		t.Fatalf("default codes: %d %v", status, got)
	}
	for _, tt := range []struct{ body, code string }{
		{`{"codes":[]}`, "invalid_outcome_codes"},
		{`{"codes":[{"code":"caixa_postal","kind":"NO_ANSWER","labelPt":"Caixa postal"}]}`, "invalid_outcome_codes"},
		{`{"codes":[{"code":"CAIXA_POSTAL","kind":"VOICEMAIL","labelPt":"Caixa postal"}]}`, "invalid_outcome_codes"},
		{`{"codes":[{"code":"CAIXA_POSTAL","kind":"NO_ANSWER","labelPt":""}]}`, "invalid_outcome_codes"},
		{`{"codes":[{"code":"A","kind":"REACHED","labelPt":"a"},{"code":"A","kind":"REACHED","labelPt":"b"}]}`, "invalid_outcome_codes"},
		{`{"codes":[{"code":"A","kind":"REACHED","labelPt":"a","color":"red"}]}`, "invalid_json"},
	} {
		if status, out := env.Do(t, http.MethodPut, "/v1/tenant/outcome-codes", sup, tt.body); status != http.StatusBadRequest || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want 400 %s", tt.body, status, out, tt.code)
		}
	}
	body := `{"codes":[{"code":"CAIXA_POSTAL","kind":"NO_ANSWER","labelPt":"Caixa postal","labelEn":"Voicemail"},` +
		`{"code":"ACORDO","kind":"PROMISE","labelPt":"Promessa"},{"code":"LIGAR_DEPOIS","kind":"CALLBACK","labelPt":"Retornar"}]}`
	if status, _ := env.Do(t, http.MethodPut, "/v1/tenant/outcome-codes", op, body); status != http.StatusForbidden {
		t.Fatalf("an operator sets the codes: %d", status)
	}
	if status, out := env.Do(t, http.MethodPut, "/v1/tenant/outcome-codes", sup, body); status != http.StatusOK {
		t.Fatalf("set: %d %v", status, out)
	}
	status, got = env.Do(t, http.MethodGet, "/v1/tenant/outcome-codes", op, "")
	if codes, _ := got["codes"].([]any); status != http.StatusOK || got["default"] != false || len(codes) != 3 {
		t.Fatalf("the tenant's codes: %d %v", status, got)
	}

	tn, err := env.Tenants.Get(ctx, tn.ID)
	if err != nil {
		t.Fatal(err)
	}
	db := env.Kit.Tenant(tn.ID, tn.CursorKey())
	day := "2026-09-24"
	for _, cid := range []string{"C-1", "C-2"} {
		put, err := worklist.Put(worklist.Task{TenantID: tn.ID, Date: day, DebtorKey: "00000000000000b1", ContractID: cid, Action: "CALL_D15",
			AttemptID: "att-" + cid, CreatedAt: "2026-09-24T11:00:00.000Z"})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Transact(ctx, put); err != nil {
			t.Fatal(err)
		}
	}
	desk := worklist.NewDesk(env.Kit, env.Clock, env.Policies)
	for _, cid := range []string{"C-1", "C-2"} {
		if err := desk.Claim(ctx, tn, day, "00000000000000b1", cid, "ana"); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []struct {
		outcome string
		at      time.Time
		want    string
	}{
		{"NO_ANSWER", time.Time{}, "invalid_outcome"}, // a built-in code the tenant replaced
		{"LIGAR_DEPOIS", time.Time{}, "invalid_callback"},
	} {
		if err := desk.Record(ctx, tn, day, "00000000000000b1", "C-1", "ana", bad.outcome, bad.at); code(err) != bad.want {
			t.Errorf("%s: %v, want %s", bad.outcome, err, bad.want)
		}
	}
	if err := desk.Record(ctx, tn, day, "00000000000000b1", "C-1", "ana", "LIGAR_DEPOIS", env.Clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := desk.Record(ctx, tn, day, "00000000000000b1", "C-2", "ana", "CAIXA_POSTAL", time.Time{}); err != nil {
		t.Fatal(err)
	}
	q, err := desk.Queue(ctx, tn, day)
	if err != nil || len(q) != 2 || q[0].Status != worklist.StatusCallback || q[0].Outcome != "LIGAR_DEPOIS" ||
		q[1].Status != worklist.StatusDone || q[1].Outcome != "CAIXA_POSTAL" {
		t.Fatalf("queue %v %+v", err, q)
	}
}
