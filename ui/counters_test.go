package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"lastro/collections/kit"
	"lastro/stream"
)

// discard is a publisher that accepts everything (the page needs the
// counters, not the events).
type discard struct{}

func (discard) Publish(_ context.Context, _ []stream.Event) error { return nil }

type noDead struct{}

func (noDead) Dead(context.Context, stream.Record, error) error { return nil }

// TestPortfolioPageShowsTheStreamsCounters: once the stream consumer has
// read the portfolio's writes, the page's summary shows the bucket's
// contracts and balance — the same figures the bucket's own entries add
// up to.
func TestPortfolioPageShowsTheStreamsCounters(t *testing.T) {
	t.Parallel()
	s := seed(t, 4)
	c := s.client(t)
	s.login(t, c, s.keys["supervisor"])
	if _, html := get(t, c, s.URL+"/ui/portfolio?bucket=D031_060"); strings.Contains(html, `class="summary"`) {
		t.Fatal("a summary before the consumer ran")
	}
	cons, err := stream.New(stream.Config{Kit: s.Kit, Streams: kit.NewStreams(kit.NewEmbeddedStreamsClient(kit.InProcessEndpoint, s.StoreClient)),
		Translate: stream.Translate, Publisher: discard{}, DeadLetter: noDead{}, Clock: s.Clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cons.Drain(bg); err != nil {
		t.Fatal(err)
	}
	status, out := s.Do(t, http.MethodGet, "/v1/portfolio?bucket=D031_060&limit=100", s.keys["supervisor"], "")
	if status != http.StatusOK {
		t.Fatalf("portfolio: %d %v", status, out)
	}
	var n, cents int64
	for _, it := range out["items"].([]any) {
		n++
		cents += int64(it.(map[string]any)["outstandingCents"].(float64))
	}
	if n == 0 {
		t.Fatal("the seeded bucket is empty")
	}
	_, html := get(t, c, s.URL+"/ui/portfolio?bucket=D031_060")
	want := fmt.Sprintf(`<p class="summary">%d contratos · %s</p>`, n, moneyText(cents))
	if !strings.Contains(html, want) {
		t.Fatalf("page lacks %q:\n%s", want, html)
	}
}

// moneyText formats cents as the pages do (R$ 1.234,56).
func moneyText(cents int64) string {
	units := fmt.Sprint(cents / 100)
	var b strings.Builder
	for i, r := range units {
		if i > 0 && (len(units)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	return fmt.Sprintf("R$ %s,%02d", b.String(), cents%100)
}
