package ui_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is where Debian's chromium package puts the browser;
// .ci/run installs it when missing. The browser test fails without it:
// it is never skipped.
const chromiumPath = "/usr/bin/chromium"

// oneBrowser keeps one chromium at a time: several at once on a small
// machine starve each other (and the engines they drive) into timeouts.
var oneBrowser sync.Mutex

// browser starts a headless chromium with a fresh profile for the test;
// it holds oneBrowser until the test ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	oneBrowser.Lock()
	t.Cleanup(oneBrowser.Unlock)
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("chromium is required at %s (apt-get install -y chromium): %v", chromiumPath, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTime(); cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// shots saves full-page screenshots into LASTRO_UI_SCREENSHOTS, or the
// test's temporary folder: artefacts, never committed.
type shots struct {
	t   *testing.T
	dir string
	n   int
}

func newShots(t *testing.T) *shots {
	dir := os.Getenv("LASTRO_UI_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &shots{t: t, dir: dir}
}

func (s *shots) take(ctx context.Context, name string) {
	s.t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		s.t.Fatalf("screenshot %s: %v", name, err)
	}
	s.n++
	path := filepath.Join(s.dir, strings.ReplaceAll(s.t.Name(), "/", "_")+"-"+itoa2(s.n)+"-"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func itoa2(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }

func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// value runs one action that answers a value.
func value[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func location(t *testing.T, ctx context.Context) string {
	t.Helper()
	return value(t, ctx, "location", chromedp.Location())
}

func TestBrowser(t *testing.T) {
	t.Parallel()
	s := seed(t, 25)
	stl, charge := s.suspend(t, "C-UI-003", 4000)
	ctx := browser(t)
	shot := newShots(t)
	text := func(what string, sel chromedp.CSS) string { return value(t, ctx, what, chromedp.Text(sel)) }

	// Without a session every page lands on the login.
	for _, p := range []string{"/", "/ui/portfolio", "/ui/debtors/" + s.dks[0], "/ui/agenda", "/ui/suspense"} {
		run(t, ctx, "open "+p, chromedp.Navigate(s.URL+p), chromedp.WaitVisible(chromedp.ID("login")))
		if loc := location(t, ctx); !strings.HasPrefix(loc, s.URL+"/ui/login") {
			t.Errorf("%s without a session: at %s", p, loc)
		}
	}
	shot.take(ctx, "login")

	// Log in as the supervisor: the page asked for, else the dashboard.
	run(t, ctx, "log in", chromedp.Navigate(s.URL+"/ui/login"), chromedp.WaitVisible(chromedp.ID("login")),
		chromedp.SendKeys(chromedp.CSS(`input[name=key]`), s.keys["supervisor"]),
		chromedp.Submit(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("buckets")))
	if loc := location(t, ctx); !strings.HasPrefix(loc, s.URL+"/ui/dashboard") {
		t.Fatalf("after login: at %s", loc)
	}
	run(t, ctx, "portfolio", chromedp.Navigate(s.URL+"/ui/portfolio"), chromedp.WaitVisible(chromedp.ID("portfolio")))

	// Bucket D031_060, then two pages forward: the 26 contracts (25 and
	// the script-named debtor's smallest one), largest balance first.
	run(t, ctx, "open the bucket", chromedp.Click(chromedp.CSS(`a[href="/ui/portfolio?bucket=D031_060"]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav.tabs a.active[href$="D031_060"]`)))
	shot.take(ctx, "portfolio")
	var seen, balances []string
	for page := range 3 {
		ids := value(t, ctx, "ids", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#portfolio tbody a.debtor')].map(a => a.textContent)`))
		outs := value(t, ctx, "balances", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#portfolio tbody tr td:nth-child(2)')].map(td => td.textContent)`))
		want := 10
		if page == 2 {
			want = 6
		}
		if len(ids) != want {
			t.Fatalf("page %d: %d rows %v, want %d", page+1, len(ids), ids, want)
		}
		seen, balances = append(seen, ids...), append(balances, outs...)
		if page < 2 {
			first := ids[0]
			run(t, ctx, "next page", chromedp.Click(chromedp.ID("next")),
				chromedp.WaitNotPresent(chromedp.ID("row-"+first)), chromedp.WaitVisible(chromedp.ID("portfolio")))
			shot.take(ctx, "portfolio-next")
		}
	}
	if seen[0] != "C-UI-024" || seen[24] != "C-UI-000" || seen[25] != "C-XSS" {
		t.Errorf("order over the pages: %v (balances %v), want largest first", seen, balances)
	}
	dup := map[string]bool{}
	for _, c := range seen {
		if dup[c] {
			t.Errorf("%s shown twice", c)
		}
		dup[c] = true
	}
	if n := value(t, ctx, "next buttons", chromedp.Evaluate[int](`document.querySelectorAll('#next').length`)); n != 0 {
		t.Error("the last page has a next button")
	}

	// Open a debtor and record a promise: on the 360 page, then on the
	// agenda of its date.
	run(t, ctx, "open debtor", chromedp.Click(chromedp.CSS(`#portfolio tbody a.debtor`)), chromedp.WaitVisible(chromedp.ID("profile")))
	shot.take(ctx, "debtor")
	cid := strings.Fields(text("contract id", chromedp.CSS(`section.contract h2`)))[0]
	run(t, ctx, "record a promise",
		chromedp.Click(chromedp.CSS(`section.contract details summary`)),
		chromedp.SetValue(chromedp.CSS(`form.promise-form input[name=promisedDate]`), "2026-09-29"),
		chromedp.SendKeys(chromedp.CSS(`form.promise-form input[name=amount]`), "150,00"),
		chromedp.Submit(chromedp.CSS(`form.promise-form`)),
		chromedp.WaitVisible(chromedp.ID("flash")))
	if promises := text("promises", chromedp.CSS(`ul.promises`)); !strings.Contains(promises, "29/09/2026") || !strings.Contains(promises, "R$ 150,00") {
		t.Errorf("promises on the 360 page: %q", promises)
	}
	shot.take(ctx, "debtor-promise")
	run(t, ctx, "audit trail", chromedp.Click(chromedp.CSS(`a.contract-audit`)), chromedp.WaitVisible(chromedp.ID("events")))
	if trail := text("trail", chromedp.CSS(`#events`)); !strings.Contains(trail, "ContractCreated") || !strings.Contains(trail, "PromiseMade") {
		t.Errorf("audit trail of %s: %q", cid, trail)
	}
	run(t, ctx, "instalment trail", chromedp.Click(chromedp.CSS(`table.installments a`)), chromedp.WaitVisible(chromedp.ID("events")))
	if trail := text("trail", chromedp.CSS(`#events h2`)); !strings.Contains(trail, cid+"/1") {
		t.Errorf("instalment trail heading: %q", trail)
	}
	shot.take(ctx, "debtor-events")
	// The promise of 09-29 is checked the day after (the debtor has the whole day).
	run(t, ctx, "agenda", chromedp.Navigate(s.URL+"/ui/agenda?date=2026-09-30"), chromedp.WaitVisible(chromedp.CSS(`form.filters`)))
	if agendaText := text("agenda", chromedp.CSS(`main`)); !strings.Contains(agendaText, "PROMISE_CHECK") || !strings.Contains(agendaText, cid) {
		t.Errorf("agenda of 2026-09-30 lacks %s under PROMISE_CHECK: %q", cid, agendaText)
	}
	shot.take(ctx, "agenda")
	run(t, ctx, "run now", chromedp.Navigate(s.URL+"/ui/agenda"), chromedp.WaitVisible(chromedp.ID("run")),
		chromedp.Click(chromedp.ID("run")), chromedp.WaitVisible(chromedp.ID("report")))
	shot.take(ctx, "agenda-run")

	// Resolve the suspended settlement: the contract's balance drops.
	before := s.outstanding(t, ctx, "C-UI-003")
	run(t, ctx, "suspense", chromedp.Navigate(s.URL+"/ui/suspense"), chromedp.WaitVisible(chromedp.ID("suspense")))
	shot.take(ctx, "suspense")
	form := `form[action="/ui/suspense/` + stl + `/resolve"]`
	run(t, ctx, "resolve", chromedp.SendKeys(chromedp.CSS(form+` input[name=chargeId]`), charge),
		chromedp.Submit(chromedp.CSS(form)), chromedp.WaitVisible(chromedp.ID("flash")))
	shot.take(ctx, "suspense-resolved")
	if after := s.outstanding(t, ctx, "C-UI-003"); after == before {
		t.Errorf("outstanding of C-UI-003 still %s after the resolve", before)
	}

	// Script in a debtor's name, and in a query string an error page
	// answers: inert.
	for _, p := range []string{"/ui/debtors/" + s.xssDK, "/ui/portfolio?bucket=" + url.QueryEscape(xssName)} {
		run(t, ctx, "open "+p, chromedp.Navigate(s.URL+p), chromedp.WaitVisible(chromedp.CSS(`main`)))
		if value(t, ctx, "check", chromedp.Evaluate[bool](`window.__xss !== undefined || document.querySelector('main img, main script') !== null`)) {
			t.Errorf("%s: the injected markup ran or was parsed", p)
		}
	}
	shot.take(ctx, "xss")

	// A form stripped of its CSRF token is refused.
	run(t, ctx, "debtor", chromedp.Navigate(s.URL+"/ui/debtors/"+s.dks[1]), chromedp.WaitVisible(chromedp.ID("profile")))
	value(t, ctx, "strip the token", chromedp.Evaluate[bool](`(document.querySelector('form.promise-form input[name=csrf]').remove(), true)`))
	run(t, ctx, "post without the token",
		chromedp.Click(chromedp.CSS(`section.contract details summary`)),
		chromedp.SetValue(chromedp.CSS(`form.promise-form input[name=promisedDate]`), "2026-09-30"),
		chromedp.SendKeys(chromedp.CSS(`form.promise-form input[name=amount]`), "10"),
		chromedp.Submit(chromedp.CSS(`form.promise-form`)),
		chromedp.WaitVisible(chromedp.ID("error-status")))
	if status := text("status", chromedp.CSS(`#error-status`)); !strings.HasPrefix(status, "403") {
		t.Errorf("form without CSRF token: %q, want 403", status)
	}
	shot.take(ctx, "csrf-refused")

	// Another tenant's debtor key: the 404 page.
	run(t, ctx, "other tenant", chromedp.Navigate(s.URL+"/ui/debtors/"+s.otherDK), chromedp.WaitVisible(chromedp.ID("error-status")))
	if status := text("status", chromedp.CSS(`#error-status`)); !strings.HasPrefix(status, "404") {
		t.Errorf("another tenant's debtor: %q, want 404", status)
	}
	shot.take(ctx, "not-found")

	// Phone width: the portfolio still renders its table.
	run(t, ctx, "phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.URL+"/ui/portfolio?bucket=D031_060"),
		chromedp.WaitVisible(chromedp.ID("portfolio")))
	shot.take(ctx, "portfolio-phone")

	// Log out: the pages send to the login again.
	run(t, ctx, "log out", chromedp.Click(chromedp.CSS(`header form button`)), chromedp.WaitVisible(chromedp.ID("login")),
		chromedp.Navigate(s.URL+"/ui/suspense"), chromedp.WaitVisible(chromedp.ID("login")))
}

// outstanding reads a contract's outstanding balance on its debtor page.
func (s *seeded) outstanding(t *testing.T, ctx context.Context, cid string) string {
	t.Helper()
	run(t, ctx, "debtor of "+cid, chromedp.Navigate(s.URL+"/ui/debtors/"+s.contract[cid]), chromedp.WaitVisible(chromedp.ID("contract-"+cid)))
	return value(t, ctx, "outstanding of "+cid, chromedp.Text(chromedp.CSS(`#contract-`+cid+` .outstanding`)))
}
