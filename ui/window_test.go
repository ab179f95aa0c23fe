package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"lastro/worklist"
)

// TestQueueMarksDebtorsOutsideTheirWindow: at 13:00 UTC the queue page
// marks a debtor where it is 22:00 and one where it is 07:00 (with the
// hour the window opens) as outside the contact window, lists them after
// the callable one, and taking the late one answers 409 saying what to do.
func TestQueueMarksDebtorsOutsideTheirWindow(t *testing.T) {
	t.Parallel()
	s := seed(t, 3)
	day := "2026-09-24"
	db := s.Kit.Tenant(s.t.ID, s.t.CursorKey())
	for i, z := range []struct{ id, zone, uf string }{{"C-UI-000", "Asia/Tokyo", ""}, {"C-UI-001", "America/Mexico_City", ""}, {"C-UI-002", "", "SP"}} {
		put, err := worklist.Put(worklist.Task{TenantID: s.t.ID, Date: day, DebtorKey: s.contract[z.id], ContractID: z.id, Action: "CALL_D15",
			AttemptID: "att-" + z.id, DaysPastDue: 60 - i, CreatedAt: "2026-09-24T11:00:00.000Z", TimeZone: z.zone, UF: z.uf})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Transact(bg, put); err != nil {
			t.Fatal(err)
		}
	}
	s.Clock.Set(time.Date(2026, 9, 24, 13, 0, 0, 0, time.UTC))
	c := s.client(t)
	s.login(t, c, s.keys["operator"])
	resp, html := get(t, c, s.URL+"/ui/queue?date="+day)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("queue: %d", resp.StatusCode)
	}
	sp, tokyo, mexico := strings.Index(html, `id="task-C-UI-002"`), strings.Index(html, `id="task-C-UI-000"`), strings.Index(html, `id="task-C-UI-001"`)
	if sp < 0 || tokyo < sp || mexico < sp {
		t.Fatalf("the callable debtor (SP, 10:00) is not first: %d %d %d", sp, tokyo, mexico)
	}
	row := func(at int) string { end := strings.Index(html[at:], "</tr>"); return html[at : at+end] }
	if r := row(tokyo); !strings.Contains(r, "Fora da janela de contato") || strings.Contains(r, "abre às") || strings.Contains(r, "claim-form") {
		t.Errorf("22:00 local: %q", r)
	}
	if r := row(mexico); !strings.Contains(r, "Fora da janela de contato") || !strings.Contains(r, "abre às") {
		t.Errorf("07:00 local, opens at 08:00: %q", r)
	}
	if r := row(sp); strings.Contains(r, "Fora da janela") || !strings.Contains(r, "claim-form") {
		t.Errorf("10:00 local: %q", r)
	}
	resp, body := post(t, c, s.URL+"/ui/queue/claim", url.Values{"csrf": {csrfOf(t, html)}, "date": {day}, "debtorKey": {s.contract["C-UI-000"]},
		"contractId": {"C-UI-000"}})
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "Ligue quando a janela abrir") {
		t.Errorf("take a debtor outside the window: %d %s", resp.StatusCode, body)
	}
}
