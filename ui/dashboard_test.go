package ui_test

import (
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"lastro/collections/kit"
	"lastro/stream"
)

// TestSupervisorsDashboard: once the stream consumer has counted the
// buckets, the dashboard's counts and balances equal what the portfolio
// API lists for each bucket, and its CSV says the same.
func TestSupervisorsDashboard(t *testing.T) {
	t.Parallel()
	s := seed(t, 12)
	cons, err := stream.New(stream.Config{Kit: s.Kit, Streams: kit.NewStreams(kit.NewEmbeddedStreamsClient(kit.InProcessEndpoint, s.StoreClient)),
		Translate: stream.Translate, Publisher: discard{}, DeadLetter: noDead{}, Clock: s.Clock, Tenants: s.Tenants.List})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cons.Drain(bg); err != nil {
		t.Fatal(err)
	}
	listed := map[string][2]int64{}
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
	}
	if listed["D031_060"][0] != 13 {
		t.Fatalf("the seeded bucket lists %v", listed)
	}
	ctx := browser(t)
	shot := newShots(t)
	run(t, ctx, "log in", chromedp.Navigate(s.URL+"/ui/login"), chromedp.WaitVisible(chromedp.ID("login")),
		chromedp.SendKeys(chromedp.CSS(`input[name=key]`), s.keys["supervisor"]),
		chromedp.Submit(chromedp.ID("login")), chromedp.WaitVisible(chromedp.ID("buckets")))
	for b, want := range listed {
		got := value(t, ctx, "bucket "+b, chromedp.Evaluate[[]string](`(() => { const r = document.getElementById('bucket-`+b+`'); return [r.dataset.contracts, r.dataset.cents] })()`))
		if got[0] != strconv.FormatInt(want[0], 10) || got[1] != strconv.FormatInt(want[1], 10) {
			t.Errorf("dashboard %s: %v, the portfolio lists %v", b, got, want)
		}
	}
	if n := value(t, ctx, "bars", chromedp.Evaluate[int](`document.querySelectorAll('#chart svg rect').length`)); n != 4 {
		t.Errorf("the bucket chart has %d bars", n)
	}
	if n := value(t, ctx, "calls", chromedp.Text(chromedp.CSS(`#calls-listed`))); n != "0" {
		t.Errorf("today's call list: %q listed, none seeded", n)
	}
	shot.take(ctx, "dashboard")

	c := s.client(t)
	s.login(t, c, s.keys["supervisor"])
	resp, body := get(t, c, s.URL+"/ui/dashboard.csv")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("csv: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	want := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d,D031_060,31–60 dias,13,` + strconv.FormatInt(listed["D031_060"][1], 10) + `$`)
	if !want.MatchString(body) {
		t.Errorf("csv:\n%s", body)
	}
}
