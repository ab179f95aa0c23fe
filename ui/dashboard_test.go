package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"lastro/agenda"
	"lastro/arrangement"
	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/kit"
	"lastro/contactlimit"
	"lastro/contract"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/stream"
	"lastro/tenant"
	"lastro/worklist"
)

// TestSupervisorsDashboard: after a scripted day — promises made on one
// day, one kept by the payment that also cures its contract, two broken by
// the next day's PROMISE_CHECK, contacts up to the daily cap and one
// refused by it, two collectors' calls, the agenda run per shard — and
// once the stream consumer has counted it all, every number on the
// dashboard equals what the API and the data say: the buckets and the
// portfolio, the promises and the cure of the script, the contacts and
// refusals of each debtor's compliance day view, the collectors' tasks on
// the call list and the agenda run's report per shard. The CSVs say the
// same.
func TestSupervisorsDashboard(t *testing.T) {
	t.Parallel()
	s := seed(t, 12)
	day1 := calendar.Today(s.Clock.Now(), s.t.Location) // 2026-09-24
	op := contract.Actor{Role: "operator"}

	// Day 1: three promises for today; C-UI-000 pays off its two late
	// instalments (the promise kept, the contract cured).
	for _, id := range []string{"C-UI-000", "C-UI-001", "C-UI-002"} {
		if _, err := s.Arrangements.MakePromise(bg, s.t, s.contract[id], id, arrangement.PromiseInput{PromisedDate: day1.String(), AmountCents: 5000}, op); err != nil {
			t.Fatalf("promise %s: %v", id, err)
		}
	}
	for seq := 1; seq <= 2; seq++ {
		ch, err := s.Charges.Issue(bg, s.t, charges.Input{DebtorKey: s.contract["C-UI-000"], ContractID: "C-UI-000", Seq: seq, Method: "PIX"})
		if err != nil {
			t.Fatal(err)
		}
		body := enginetest.WebhookBody(fmt.Sprintf("stl-dash-%d", seq), ch.ChargeID, ch.AmountCents, "2026-09-24T09:30:00-03:00")
		if status, out, err := s.Deliver(s.t.ID, s.keys["webhook"], body, s.Clock.Now(), nil); err != nil || status != http.StatusOK {
			t.Fatalf("pay seq %d: %d %s %v", seq, status, out, err)
		}
	}

	// Day 2: the agenda runs (the promises' checks among its actions).
	s.Clock.Advance(24 * time.Hour)
	day2 := calendar.Today(s.Clock.Now(), s.t.Location)
	rep, err := s.Agenda.Run(bg, s.t, day2, agenda.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Manual contacts of one debtor up to the cap, and one past it.
	capped := s.dks[6]
	refused := false
	for range 5 {
		a, err := s.Contacts.Claim(bg, s.t, contactlimit.Claim{DebtorKey: capped, ContractID: "C-UI-006", Channel: contactlimit.SMS,
			Template: "MANUAL", Action: contactlimit.ManualAction, Actor: debtor.Actor{Role: "operator"}})
		if err != nil {
			t.Fatal(err)
		}
		if !a.Allowed {
			if a.Reason != contactlimit.ReasonLimit {
				t.Fatalf("refused for %s, want the cap", a.Reason)
			}
			refused = true
			break
		}
	}
	if !refused {
		t.Fatal("the cap never refused a contact")
	}
	// Two collectors work three calls: A records a promise and a no
	// answer, B reaches a debtor.
	second, err := s.Tenants.CreateKey(bg, s.t, tenant.NewKeyInput{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	opA, opB := s.operatorID(), second.KeyID
	desk := worklist.NewDesk(s.Kit, s.Clock, s.Policies)
	s.call(t, day2, "C-UI-007", opA, "PROMISE")
	s.call(t, day2, "C-UI-008", opA, "NO_ANSWER")
	s.call(t, day2, "C-UI-009", opB, "REACHED")

	cons, err := stream.New(stream.Config{Kit: s.Kit, Streams: kit.NewStreams(kit.NewEmbeddedStreamsClient(kit.InProcessEndpoint, s.StoreClient)),
		Translate: stream.Translate, Publisher: discard{}, DeadLetter: noDead{}, Clock: s.Clock, Tenants: s.Tenants.List,
		Zone: func(ctx context.Context, id string) (*time.Location, error) {
			tn, err := s.Tenants.Get(ctx, id)
			if err != nil {
				return nil, err
			}
			return tn.Location, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cons.Drain(bg); err != nil {
		t.Fatal(err)
	}

	// What the API and the data say.
	listed := map[string][2]int64{}
	var delinquent int64
	for _, b := range []string{"D001_030", "D031_060", "D061_090", "D091_PLUS"} {
		var n, cents int64
		for cursor := ""; ; {
			path := "/v1/portfolio?bucket=" + b + "&limit=5"
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			status, out := s.Do(t, http.MethodGet, path, s.keys["supervisor"], "")
			if status != http.StatusOK {
				t.Fatalf("portfolio %s: %d %v", b, status, out)
			}
			for _, it := range out["items"].([]any) {
				n++
				cents += int64(it.(map[string]any)["outstandingCents"].(float64))
			}
			next, _ := out["nextCursor"].(string)
			if next == "" {
				break
			}
			cursor = next
		}
		listed[b] = [2]int64{n, cents}
		delinquent += n
	}
	if listed["D031_060"][0] != 12 {
		t.Fatalf("the seeded bucket lists %v: the cured contract should have left it", listed)
	}
	promiseStatus := map[string]int{}
	for _, id := range []string{"C-UI-000", "C-UI-001", "C-UI-002"} {
		v, err := s.Debtors.View(bg, s.t, s.contract[id], debtor.DefaultViewLimit, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range v.Contracts {
			for _, p := range c.Promises {
				st, _ := p["status"].(string)
				promiseStatus[st]++
			}
		}
	}
	if promiseStatus[arrangement.PromiseKept] != 1 || promiseStatus[arrangement.PromiseBroken] != 2 {
		t.Fatalf("promises after the script: %v, want 1 kept and 2 broken", promiseStatus)
	}
	contacts, refusals := map[string]int{}, map[string]int{}
	for _, dk := range append(s.dks, s.xssDK) {
		v, err := s.Contacts.Day(bg, s.t, dk, day2.String(), 100, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range v.Items {
			switch {
			case a.Allowed && a.JoinedTo == "":
				contacts[string(a.Channel)]++
			case !a.Allowed:
				refusals[string(a.Reason)]++
			}
		}
	}
	if refusals["LIMIT"] < 1 {
		t.Fatalf("the day's refusals %v lack the cap's", refusals)
	}
	tasks, err := desk.Queue(bg, s.t, day2.String())
	if err != nil {
		t.Fatal(err)
	}
	claimed, done := map[string]int{}, map[string]int{}
	for _, task := range tasks {
		if task.ClaimedBy != "" {
			claimed[task.ClaimedBy]++
		}
		if task.Status == worklist.StatusDone {
			done[task.ClaimedBy]++
		}
	}
	if done[opA] != 2 || done[opB] != 1 {
		t.Fatalf("calls done by the collectors: %v", done)
	}

	ctx := browser(t)
	shot := newShots(t)
	run(t, ctx, "log in", chromedp.Navigate(s.URL+"/ui/login"), chromedp.WaitVisible(chromedp.ID("login")),
		chromedp.SendKeys(chromedp.CSS(`input[name=key]`), s.keys["supervisor"]),
		chromedp.Submit(chromedp.ID("login")), chromedp.WaitVisible(chromedp.ID("buckets")))
	data := func(what, js string) []string { return value(t, ctx, what, chromedp.Evaluate[[]string](js)) }
	attrs := func(id string, names ...string) []string {
		js := `(() => { const r = document.getElementById('` + id + `'); return r ? [`
		for i, n := range names {
			if i > 0 {
				js += ","
			}
			js += `r.dataset.` + n
		}
		return data(id, js+`] : [] })()`)
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	for b, want := range listed {
		if got := attrs("bucket-"+b, "contracts", "cents"); len(got) != 2 || got[0] != itoa(want[0]) || got[1] != itoa(want[1]) {
			t.Errorf("dashboard %s: %v, the portfolio lists %v", b, got, want)
		}
	}
	if n := value(t, ctx, "bars", chromedp.Evaluate[int](`document.querySelectorAll('#chart svg rect').length`)); n != 4 {
		t.Errorf("the bucket chart has %d bars", n)
	}
	// Promises: none resolved by a check today but the two broken; the
	// month has the kept one too.
	if got := attrs("promises-today", "kept", "broken"); fmt.Sprint(got) != "[0 2]" {
		t.Errorf("promises today: %v, want 0 kept 2 broken", got)
	}
	if got := attrs("promises-month", "kept", "broken"); fmt.Sprint(got) != "[1 2]" {
		t.Errorf("promises this month: %v, want 1 kept 2 broken", got)
	}
	// The cure: one contract of the 13 delinquent this month (all entered
	// it when registered this month): 1/13.
	text := func(sel string) string { return value(t, ctx, sel, chromedp.Text(chromedp.CSS(sel))) }
	if got, exposed := text("#cure-count"), text("#cure-exposed"); got != "1" || exposed != itoa(delinquent+1) {
		t.Errorf("cure: %s of %s, want 1 of %d", got, exposed, delinquent+1)
	}
	if got := attrs("cure-rate", "ppm"); fmt.Sprint(got) != fmt.Sprintf("[%d]", 1_000_000/(delinquent+1)) {
		t.Errorf("cure rate %v ppm", got)
	}
	// Contacts and refusals: each debtor's day view, added up.
	for _, ch := range contactlimit.Channels {
		if got := text("#contacts-" + string(ch) + " td"); got != strconv.Itoa(contacts[string(ch)]) {
			t.Errorf("contacts by %s: %s on the page, %d in the day views", ch, got, contacts[string(ch)])
		}
	}
	for _, r := range stream.RefusalReasons {
		if got := attrs("refused-"+r, "n"); fmt.Sprint(got) != fmt.Sprintf("[%d]", refusals[r]) {
			t.Errorf("refused for %s: %v on the page, %d in the day views", r, got, refusals[r])
		}
	}
	if got := text("#contact-cap"); got != "3" {
		t.Errorf("the cap shown: %s", got)
	}
	// The collectors: their tasks on the call list.
	for _, o := range []string{opA, opB} {
		if got := attrs("collector-"+o, "claimed", "done"); fmt.Sprint(got) != fmt.Sprintf("[%d %d]", claimed[o], done[o]) {
			t.Errorf("collector %s: %v, the list has %d claimed %d done", o, got, claimed[o], done[o])
		}
	}
	if got := data("outcomes", `[...document.querySelectorAll('#collector-`+opA+` [data-outcome]')].map(e => e.dataset.outcome + '=' + e.dataset.n)`); fmt.Sprint(got) != "[NO_ANSWER=1 PROMISE=1]" {
		t.Errorf("collector A's outcomes: %v", got)
	}
	// The agenda per shard: the run's report, and what the agenda still
	// lists for the day.
	for _, sr := range rep.Shards {
		executed := 0
		for _, n := range sr.Executed {
			executed += n
		}
		var waiting int
		for cursor := ""; ; {
			l, err := s.Agenda.List(bg, s.t, agenda.ListQuery{Shard: sr.Shard, Limit: 200, Date: day2}, cursor)
			if err != nil {
				t.Fatal(err)
			}
			waiting += len(l.Items)
			if l.NextCursor == nil {
				break
			}
			cursor = *l.NextCursor
		}
		if got := attrs("shard-"+strconv.Itoa(sr.Shard), "executed", "waiting"); fmt.Sprint(got) != fmt.Sprintf("[%d %d]", executed, waiting) {
			t.Errorf("shard %d: %v on the page, the run executed %d and the agenda lists %d", sr.Shard, got, executed, waiting)
		}
	}
	shot.take(ctx, "dashboard")
	run(t, ctx, "phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.URL+"/ui/dashboard"), chromedp.WaitVisible(chromedp.ID("shards")))
	if wide := value(t, ctx, "width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`)); wide {
		t.Error("the dashboard scrolls sideways on a phone")
	}
	shot.take(ctx, "dashboard-phone")

	c := s.client(t)
	s.login(t, c, s.keys["supervisor"])
	resp, body := get(t, c, s.URL+"/ui/dashboard.csv")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("csv: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	want := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d,D031_060,31–60 dias,12,` + itoa(listed["D031_060"][1]) + `$`)
	if !want.MatchString(body) {
		t.Errorf("csv:\n%s", body)
	}
	for table, line := range map[string]string{
		"promises":   `(?m)^2026-09-01,2026-09-25,3,1,2,333333$`,
		"cure":       fmt.Sprintf(`(?m)^2026-09-01,2026-09-25,1,\d+,\d+,\d+,1,%d,%d,%d$`, delinquent, delinquent+1, 1_000_000/(delinquent+1)),
		"contacts":   fmt.Sprintf(`(?m)^2026-09-25,refused,LIMIT,%d,3$`, refusals["LIMIT"]),
		"collectors": fmt.Sprintf(`(?m)^2026-09-25,%s,1,0,0,1,REACHED,1$`, opB),
		"shards":     `(?m)^2026-09-25,0,true,true,\d+,\d+,\d+$`,
	} {
		resp, body := get(t, c, s.URL+"/ui/dashboard.csv?table="+table)
		if resp.StatusCode != http.StatusOK || !regexp.MustCompile(line).MatchString(body) {
			t.Errorf("csv %s: %d, want a line %s in\n%s", table, resp.StatusCode, line, body)
		}
	}
	if resp, _ := get(t, c, s.URL+"/ui/dashboard.csv?table=nope"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown table: %d", resp.StatusCode)
	}
}

// operatorID is the operator key's id, the name its sessions' calls go
// by (ADR 0085).
func (s *seeded) operatorID() string {
	return tenant.KeyFingerprint(s.keys["operator"])[:tenant.KeyIDLength]
}

// call lists a call of contract id on day as the agenda's CALL step does
// (its contact attempt claimed, the task on the call list) and has holder
// take it and record outcome.
func (s *seeded) call(t *testing.T, day calendar.Date, id, holder, outcome string) {
	t.Helper()
	dk := s.contract[id]
	a, err := s.Contacts.Claim(bg, s.t, contactlimit.Claim{DebtorKey: dk, ContractID: id, Channel: contactlimit.Call, Template: "CALL_D15",
		Action: "CALL_D15", Actor: debtor.Actor{Role: "agenda"}})
	if err != nil || !a.Allowed {
		t.Fatalf("list the call of %s: %+v %v", id, a, err)
	}
	put, err := worklist.Put(worklist.Task{TenantID: s.t.ID, Date: day.String(), DebtorKey: dk, ContractID: id, Action: "CALL_D15",
		AttemptID: a.AttemptID, AttemptKey: a.SK, DaysPastDue: 46, CreatedAt: a.At})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Kit.Tenant(s.t.ID, s.t.CursorKey()).Transact(bg, put); err != nil {
		t.Fatal(err)
	}
	desk := worklist.NewDesk(s.Kit, s.Clock, s.Policies)
	if err := desk.Claim(bg, s.t, day.String(), dk, id, holder); err != nil {
		t.Fatal(err)
	}
	if err := desk.Record(bg, s.t, day.String(), dk, id, holder, outcome, time.Time{}); err != nil {
		t.Fatal(err)
	}
}
