package ui_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"lastro/collections/calendar"
	"lastro/contactlimit"
	"lastro/contract"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/tenant"
	"lastro/worklist"
)

// TestCollectorsMorning: an operator logs in, finds a debtor by CPF (as
// typed, with punctuation), by phone and by contract id, shows the phone to call (an audit event
// appears on the page), records the promise the debtor made and issues a
// Pix from the 360 whose QR the page shows.
func TestCollectorsMorning(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t, enginetest.PixSandbox())
	tn, keys := env.Tenant(t, "t-desk")
	cpf := env.CPF()
	r, err := env.Debtors.Register(bg, tn, debtor.RegisterInput{Document: cpf, Name: "Joana Sintética", Phone: "+55 11 98888-7777"}, debtor.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	in := contract.Input{ContractID: "C-DESK-1", ProductCode: "CREDIARIO_3X", Installments: enginetest.Monthly("2026-08-10", 3, 30000, 1500)}
	if _, err := env.Contracts.Create(bg, tn, r.DebtorKey, in, contract.Actor{Role: "operator"}); err != nil {
		t.Fatal(err)
	}
	// The régua listed the debtor's call for today (CALL_D15 writes this
	// task in the step's own transaction; agenda's tests cover that).
	today := calendar.Today(env.Clock.Now(), tn.Location).String()
	call, err := env.Contacts.Claim(bg, tn, contactlimit.Claim{DebtorKey: r.DebtorKey, ContractID: "C-DESK-1", Channel: contactlimit.Call,
		Template: "CALL_D15", Action: "CALL_D15", Actor: debtor.Actor{Role: "agenda"}})
	if err != nil || !call.Allowed {
		t.Fatalf("list the call: %+v %v", call, err)
	}
	put, err := worklist.Put(worklist.Task{TenantID: tn.ID, Date: today, DebtorKey: r.DebtorKey, ContractID: "C-DESK-1", Action: "CALL_D15",
		AttemptID: call.AttemptID, AttemptKey: call.SK, DaysPastDue: 45, AmountDueCents: 31500, OutstandingCents: 94500, CreatedAt: "2026-09-24T11:00:00.000Z"})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Kit.Tenant(tn.ID, tn.CursorKey()).Transact(bg, put); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	shot := newShots(t)
	text := func(what string, sel chromedp.CSS) string { return value(t, ctx, what, chromedp.Text(sel)) }

	run(t, ctx, "log in", chromedp.Navigate(env.URL+"/ui/login"), chromedp.WaitVisible(chromedp.ID("login")),
		chromedp.SendKeys(chromedp.CSS(`input[name=key]`), keys["operator"]),
		chromedp.Submit(chromedp.ID("login")), chromedp.WaitVisible(chromedp.ID("queue")))
	// The queue: today's call task, taken, opens the debtor with the call form.
	if row := text("queue", chromedp.CSS(`#task-C-DESK-1`)); !strings.Contains(row, "CALL_D15") || !strings.Contains(row, "A fazer") {
		t.Errorf("queue row: %q", row)
	}
	shot.take(ctx, "queue")
	run(t, ctx, "take the call", chromedp.Click(chromedp.CSS(`#task-C-DESK-1 .claim-form button`)), chromedp.WaitVisible(chromedp.ID("call")))
	shot.take(ctx, "call")
	run(t, ctx, "find page", chromedp.Click(chromedp.CSS(`header a[href="/ui/debtors"]`)), chromedp.WaitVisible(chromedp.ID("find")))
	shot.take(ctx, "find")
	run(t, ctx, "search by CPF", chromedp.SendKeys(chromedp.ID("q"), cpf), chromedp.Submit(chromedp.ID("find")),
		chromedp.WaitVisible(chromedp.ID("profile")))
	if loc := location(t, ctx); !strings.HasSuffix(loc, "/ui/debtors/"+r.DebtorKey) {
		t.Fatalf("search by %s: at %s", cpf, loc)
	}
	// The same debtor by phone, as the collector would type it, and by
	// contract id: each lands on the 360 (ADR 0084).
	for _, q := range []string{"(11) 98888-7777", "C-DESK-1"} {
		run(t, ctx, "search by "+q, chromedp.Navigate(env.URL+"/ui/debtors"), chromedp.WaitVisible(chromedp.ID("find")),
			chromedp.SendKeys(chromedp.ID("q"), q), chromedp.Submit(chromedp.ID("find")), chromedp.WaitVisible(chromedp.ID("profile")))
		if loc := location(t, ctx); !strings.HasSuffix(loc, "/ui/debtors/"+r.DebtorKey) {
			t.Fatalf("search by %s: at %s", q, loc)
		}
	}
	if overdue := text("overdue", chromedp.CSS(`#contract-C-DESK-1 .due-overdue`)); overdue == "R$ 0,00" {
		t.Errorf("a late contract owes %s today", overdue)
	}
	shot.take(ctx, "debtor")

	run(t, ctx, "reveal the phone", chromedp.Click(chromedp.CSS(`#reveal button`)), chromedp.WaitVisible(chromedp.ID("contact-card")))
	if phone := text("phone", chromedp.CSS(`#phone`)); !strings.Contains(phone, "988887777") {
		t.Errorf("contact card phone %q", phone)
	}
	if hist := text("history", chromedp.CSS(`#debtor-events`)); !strings.Contains(hist, "Contato revelado") || !strings.Contains(hist, "operador") {
		t.Errorf("no audit event of the reveal on the page: %q", hist)
	}
	shot.take(ctx, "contact-card")

	run(t, ctx, "record the promise",
		chromedp.Click(chromedp.CSS(`#contract-C-DESK-1 details:not(.done) summary`)),
		chromedp.SetValue(chromedp.CSS(`#contract-C-DESK-1 form.promise-form input[name=promisedDate]`), "2026-09-30"),
		chromedp.SendKeys(chromedp.CSS(`#contract-C-DESK-1 form.promise-form input[name=amount]`), "315,00"),
		chromedp.Submit(chromedp.CSS(`#contract-C-DESK-1 form.promise-form`)), chromedp.WaitVisible(chromedp.ID("flash")))
	if promises := text("promises", chromedp.CSS(`#contract-C-DESK-1 ul.promises`)); !strings.Contains(promises, "30/09/2026") || !strings.Contains(promises, "R$ 315,00") {
		t.Errorf("promise on the page: %q", promises)
	}
	shot.take(ctx, "promise")

	run(t, ctx, "generate a Pix", chromedp.Click(chromedp.CSS(`#contract-C-DESK-1 .pix-form button`)), chromedp.WaitVisible(chromedp.ID("pix")),
		chromedp.WaitVisible(chromedp.ID("pix-qr")))
	if code := value(t, ctx, "copia e cola", chromedp.Evaluate[string](`document.getElementById('copia').value`)); !strings.HasPrefix(code, "000201") {
		t.Errorf("copia e cola %q is no BR Code", code)
	}
	loaded := value(t, ctx, "QR", chromedp.Evaluate[bool](`(async () => { const i = document.getElementById('pix-qr'); if (!i.complete) await new Promise(r => i.onload = r); return i.naturalWidth > 0 })()`,
		chromedp.EvalAwaitPromise))
	if !loaded {
		t.Error("the Pix QR image did not load")
	}
	shot.take(ctx, "pix")

	// The charge is listed with its printable slip.
	run(t, ctx, "reload", chromedp.Navigate(env.URL+"/ui/debtors/"+r.DebtorKey), chromedp.WaitVisible(chromedp.CSS(`#contract-C-DESK-1 a.slip`)))
	href := value(t, ctx, "slip link", chromedp.Evaluate[string](`document.querySelector('#contract-C-DESK-1 a.slip').getAttribute('href')`))
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	_, login := get(t, c, env.URL+"/ui/login")
	post(t, c, env.URL+"/ui/login", url.Values{"csrf": {csrfOf(t, login)}, "key": {keys["operator"]}})
	if resp, body := get(t, c, env.URL+href); resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(body, "%PDF") {
		t.Errorf("slip %s: %d %s", href, resp.StatusCode, resp.Header.Get("Content-Type"))
	}

	// The call's outcome closes the task on the queue.
	run(t, ctx, "back to the call", chromedp.Navigate(env.URL+"/ui/debtors/"+r.DebtorKey+"?task="+today+"/C-DESK-1"), chromedp.WaitVisible(chromedp.ID("call")),
		chromedp.SetValue(chromedp.ID("outcome"), "REACHED"), chromedp.Submit(chromedp.CSS(`form.outcome-form`)), chromedp.WaitVisible(chromedp.ID("queue")))
	if row := text("queue", chromedp.CSS(`#task-C-DESK-1`)); !strings.Contains(row, "Concluída") {
		t.Errorf("queue row after the outcome: %q", row)
	}
	shot.take(ctx, "queue-done")
	// The outcome settled the call's evidence, shown in the contact history.
	run(t, ctx, "contact history", chromedp.Navigate(env.URL+"/ui/debtors/"+r.DebtorKey), chromedp.WaitVisible(chromedp.CSS(`#contacts .call-outcome`)))
	if got := text("call outcome", chromedp.CSS(`#contacts .call-outcome`)); !strings.Contains(got, "falou com o devedor") {
		t.Errorf("the call in the contact history: %q", got)
	}
	v, err := env.Contacts.Day(bg, tn, r.DebtorKey, call.LocalDate, 50, "")
	if err != nil {
		t.Fatal(err)
	}
	opID := tenant.KeyFingerprint(keys["operator"])[:tenant.KeyIDLength]
	if len(v.Items) != 1 || v.Items[0].Outcome != contactlimit.OutcomeCalled || v.Items[0].CallOutcome != "REACHED" || v.Items[0].OperatorID != opID {
		t.Errorf("the call's evidence after the outcome: %+v (operator %s)", v.Items, opID)
	}
}
