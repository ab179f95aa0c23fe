package portfolio_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/contract"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

var bg = context.Background()

// fixture is an engine with one tenant and its keys.
type fixture struct {
	*enginetest.Env
	t    *tenant.Tenant
	keys enginetest.Keys
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	env := enginetest.New(t)
	tn, k := env.Tenant(t, "t-port")
	return &fixture{Env: env, t: tn, keys: k}
}

// debtors registers n debtors and returns their keys.
func (f *fixture) debtors(t testing.TB, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		r, err := f.Debtors.Register(bg, f.t, debtor.RegisterInput{Document: f.CPF(), Name: "Pessoa Sintética"}, debtor.Actor{Role: "operator"})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = r.DebtorKey
	}
	return out
}

// spec is one contract to sign: its first due date and principal per
// instalment (two monthly instalments, 100.00 interest each).
type spec struct {
	id        string
	first     string
	principal int64
}

// sign creates the contracts through Contracts.Create, one goroutine per
// debtor: a contract's creation checks its debtor's profile in the same
// transaction, so two creations for one debtor at once conflict.
func (f *fixture) sign(t testing.TB, dks []string, specs []spec) map[string]string {
	t.Helper()
	owner := make(map[string]string, len(specs))
	for i, s := range specs {
		owner[s.id] = dks[i%len(dks)]
	}
	var wg sync.WaitGroup
	errs := make([]error, len(dks))
	for w, dk := range dks {
		wg.Go(func() {
			for i := w; i < len(specs); i += len(dks) {
				s := specs[i]
				in := contract.Input{ContractID: s.id, ProductCode: "CREDIARIO_2X", Installments: enginetest.Monthly(s.first, 2, s.principal, 10000)}
				if _, err := f.Contracts.Create(bg, f.t, dk, in, contract.Actor{Role: "operator"}); err != nil {
					errs[w] = fmt.Errorf("create %s: %w", s.id, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return owner
}

// page is GET /v1/portfolio with query q as the supervisor.
func (f *fixture) page(t testing.TB, q url.Values) (int, map[string]any) {
	t.Helper()
	return f.Do(t, http.MethodGet, "/v1/portfolio?"+q.Encode(), f.keys["supervisor"], "")
}

func items(out map[string]any) []map[string]any {
	var list []map[string]any
	for _, it := range out["items"].([]any) {
		list = append(list, it.(map[string]any))
	}
	return list
}

func next(out map[string]any) string {
	s, _ := out["nextCursor"].(string)
	return s
}

// rru is the read units the portfolio operation consumed so far.
func (f *fixture) rru() float64 {
	for _, op := range f.Kit.Meter().Snapshot() {
		if op.Name == "portfolio.page" {
			return op.RRU
		}
	}
	return 0
}

// D001_030 on the fixture's today (2026-09-24): due 2026-09-10, a
// Thursday, 14 days past due.
const lateFirst = "2026-09-10"

func TestPageOf100WithinBudget(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dks := f.debtors(t, 4)
	var specs []spec
	for i := range 150 {
		specs = append(specs, spec{id: fmt.Sprintf("C-%04d", i), first: lateFirst, principal: 50000 + int64(i)*1000})
	}
	f.sign(t, dks, specs)

	before := f.rru()
	status, out := f.page(t, url.Values{"bucket": {"D001_030"}, "limit": {"100"}})
	if status != http.StatusOK {
		t.Fatalf("status %d %v", status, out)
	}
	used := f.rru() - before
	if got := len(items(out)); got != 100 {
		t.Fatalf("page has %d items, want 100", got)
	}
	t.Logf("one page of 100: %.1f RRU", used)
	if used <= 0 || used > 4 {
		t.Fatalf("one page of 100 consumed %.2f RRU, budget 4", used)
	}
	first := items(out)[0]
	// Largest balance first: the last signed has the largest principal.
	if first["contractId"] != "C-0149" || first["outstandingCents"].(float64) != 2*(50000+149*1000+10000) {
		t.Fatalf("first item %v", first)
	}
	if first["daysPastDue"].(float64) != 14 || first["oldestOverdueDueDate"] != lateFirst || first["payableDate"] != lateFirst ||
		first["productCode"] != "CREDIARIO_2X" || first["debtorKey"] == "" || first["lastContactAt"] != nil {
		t.Fatalf("first item %v", first)
	}
	if _, ok := out["summary"]; ok {
		t.Fatalf("summary shown without counters: %v", out["summary"])
	}
	if out["today"] != "2026-09-24" || next(out) == "" {
		t.Fatalf("page %v", out)
	}
}

func TestPagingVisitsEachContractOnceLargestFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dks := f.debtors(t, 8)
	const n = 1000
	var specs []spec
	for i := range n {
		// 400 distinct balances: ties on the index's sort key must still
		// page exactly once.
		specs = append(specs, spec{id: fmt.Sprintf("C-%04d", i), first: lateFirst, principal: 10000 + int64(i*7919%400)*100})
	}
	start := time.Now()
	owner := f.sign(t, dks, specs)
	t.Logf("seeded %d contracts in %v", n, time.Since(start))

	seen := map[string]bool{}
	last := int64(1 << 62)
	cursor, pages := "", 0
	for {
		q := url.Values{"bucket": {"D001_030"}, "limit": {"70"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		status, out := f.page(t, q)
		if status != http.StatusOK {
			t.Fatalf("page %d: %d %v", pages, status, out)
		}
		pages++
		for _, it := range items(out) {
			id := it["contractId"].(string)
			if seen[id] {
				t.Fatalf("%s returned twice", id)
			}
			seen[id] = true
			bal := int64(it["outstandingCents"].(float64))
			if bal > last {
				t.Fatalf("%s balance %d after %d: not largest first", id, bal, last)
			}
			last = bal
			if it["debtorKey"] != owner[id] {
				t.Fatalf("%s debtorKey %v, want %s", id, it["debtorKey"], owner[id])
			}
		}
		if cursor = next(out); cursor == "" {
			break
		}
	}
	if len(seen) != n {
		t.Fatalf("paged %d contracts, want %d", len(seen), n)
	}
	t.Logf("%d pages", pages)
}

func TestCuredContractLeavesPortfolioInTheSameCommit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dks := f.debtors(t, 1)
	f.sign(t, dks, []spec{{id: "C-CURED", first: lateFirst, principal: 90000}, {id: "C-STAYS", first: lateFirst, principal: 80000}})

	ids := func() []string {
		status, out := f.page(t, url.Values{"bucket": {"D001_030"}})
		if status != http.StatusOK {
			t.Fatalf("status %d %v", status, out)
		}
		var got []string
		for _, it := range items(out) {
			got = append(got, it["contractId"].(string))
		}
		return got
	}
	if got := strings.Join(ids(), ","); got != "C-CURED,C-STAYS" {
		t.Fatalf("before: %s", got)
	}
	ch, err := f.Charges.Issue(bg, f.t, charges.Input{DebtorKey: dks[0], ContractID: "C-CURED", Seq: 1, Method: charges.PIX})
	if err != nil {
		t.Fatal(err)
	}
	body := enginetest.WebhookBody("stl-cure-1", ch.ChargeID, ch.AmountCents, f.Clock.Now().Format(time.RFC3339))
	status, resp, err := f.Deliver(f.t.ID, f.keys["webhook"], body, f.Clock.Now(), nil)
	if err != nil || status != http.StatusOK || !strings.Contains(resp, `"applied"`) {
		t.Fatalf("webhook: %d %s %v", status, resp, err)
	}
	if got := strings.Join(ids(), ","); got != "C-STAYS" {
		t.Fatalf("after the cure: %s", got)
	}
	c, err := contract.Load(bg, f.Kit.Tenant(f.t.ID, f.t.CursorKey()), f.t.ID, dks[0], "C-CURED")
	if err != nil {
		t.Fatal(err)
	}
	if c.Header.Bucket != "" || c.Header.GSI2PK != "" || c.Header.OldestOverdueDueDate != "" {
		t.Fatalf("cured header keeps portfolio facts: %+v", c.Header)
	}
}

func TestCrossedSinceFiltersOnThePayableDate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dks := f.debtors(t, 1)
	// All in D031_060 on 2026-09-24. crossedSince 2026-09-17 with the
	// bucket's first day 31: payable on or after 2026-08-17 (a Monday),
	// so due dates from Saturday 2026-08-15 qualify.
	specs := []spec{
		{id: "DUE-0820", first: "2026-08-20", principal: 10000}, // payable 08-20, crossed 09-20
		{id: "DUE-0816", first: "2026-08-16", principal: 20000}, // Sunday: payable 08-17, crossed 09-17
		{id: "DUE-0815", first: "2026-08-15", principal: 30000}, // Saturday: payable 08-17, crossed 09-17
		{id: "DUE-0814", first: "2026-08-14", principal: 40000}, // Friday: crossed 09-14
		{id: "DUE-0801", first: "2026-08-01", principal: 50000}, // Saturday: payable 08-03, crossed 09-03
	}
	f.sign(t, dks, specs)
	cal := f.t.Calendar()
	for _, s := range specs {
		crossed := cal.Adjust(calendar.MustParse(s.first)).AddDays(31)
		t.Logf("%s crossed into D031_060 on %s", s.id, crossed)
	}

	tests := []struct {
		since string
		want  string
	}{
		{"2026-09-17", "DUE-0815,DUE-0816,DUE-0820"},
		{"2026-09-18", "DUE-0820"},
		{"2026-09-14", "DUE-0814,DUE-0815,DUE-0816,DUE-0820"},
		{"2026-09-01", "DUE-0801,DUE-0814,DUE-0815,DUE-0816,DUE-0820"},
		{"2026-09-21", ""},
	}
	for _, tt := range tests {
		var got []string
		cursor := ""
		for {
			q := url.Values{"bucket": {"D031_060"}, "crossedSince": {tt.since}, "limit": {"2"}}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			status, out := f.page(t, q)
			if status != http.StatusOK {
				t.Fatalf("crossedSince %s: %d %v", tt.since, status, out)
			}
			for _, it := range items(out) {
				got = append(got, it["contractId"].(string))
			}
			if cursor = next(out); cursor == "" {
				break
			}
		}
		// Largest first is ascending id order here (balances were chosen so).
		if strings.Join(got, ",") != tt.want {
			t.Errorf("crossedSince %s: %v, want %s", tt.since, got, tt.want)
		}
	}
}

func TestBadInputIsA400(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dks := f.debtors(t, 1)
	f.sign(t, dks, []spec{{id: "C-1", first: lateFirst, principal: 1000}, {id: "C-2", first: lateFirst, principal: 2000}})
	_, out := f.page(t, url.Values{"bucket": {"D001_030"}, "limit": {"1"}})
	cursor := next(out)
	if cursor == "" {
		t.Fatal("no cursor")
	}
	_, filtered := f.page(t, url.Values{"bucket": {"D001_030"}, "limit": {"1"}, "crossedSince": {"2026-09-01"}})
	filteredCursor := next(filtered)
	if filteredCursor == "" {
		t.Fatal("no cursor on the filtered page")
	}
	body, sig, _ := strings.Cut(cursor, ".")
	tampered := body[:len(body)-2] + flip(body[len(body)-2]) + body[len(body)-1:] + "." + sig

	tests := []struct {
		name  string
		query url.Values
		code  string
	}{
		{"no bucket", url.Values{}, "invalid_bucket"},
		{"unknown bucket", url.Values{"bucket": {"D999"}}, "invalid_bucket"},
		{"bucket in lower case", url.Values{"bucket": {"d001_030"}}, "invalid_bucket"},
		{"limit zero", url.Values{"bucket": {"D001_030"}, "limit": {"0"}}, "invalid_limit"},
		{"limit text", url.Values{"bucket": {"D001_030"}, "limit": {"ten"}}, "invalid_limit"},
		{"limit too large", url.Values{"bucket": {"D001_030"}, "limit": {"100000"}}, "invalid_limit"},
		{"garbage cursor", url.Values{"bucket": {"D001_030"}, "cursor": {"not-a-cursor"}}, "invalid_cursor"},
		{"tampered cursor", url.Values{"bucket": {"D001_030"}, "cursor": {tampered}}, "invalid_cursor"},
		{"cursor of another bucket", url.Values{"bucket": {"D031_060"}, "cursor": {cursor}}, "invalid_cursor"},
		{"filtered cursor without the filter", url.Values{"bucket": {"D001_030"}, "cursor": {filteredCursor}}, "invalid_cursor"},
		{"cursor with another filter", url.Values{"bucket": {"D001_030"}, "cursor": {filteredCursor}, "crossedSince": {"2026-09-02"}}, "invalid_cursor"},
		{"crossedSince not a date", url.Values{"bucket": {"D001_030"}, "crossedSince": {"yesterday"}}, "invalid_crossed_since"},
		{"crossedSince impossible date", url.Values{"bucket": {"D001_030"}, "crossedSince": {"2026-02-30"}}, "invalid_crossed_since"},
	}
	for _, tt := range tests {
		status, out := f.page(t, tt.query)
		if status != http.StatusBadRequest || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want 400 %s", tt.name, status, out, tt.code)
		}
	}
	// The untampered cursors do work.
	if status, out := f.page(t, url.Values{"bucket": {"D001_030"}, "limit": {"1"}, "cursor": {cursor}}); status != http.StatusOK || len(items(out)) != 1 {
		t.Fatalf("cursor: %d %v", status, out)
	}
	for role, want := range map[string]int{"operator": http.StatusForbidden, "compliance": http.StatusForbidden, "": http.StatusUnauthorized} {
		status, _ := f.Do(t, http.MethodGet, "/v1/portfolio?bucket=D001_030", f.keys[role], "")
		if status != want {
			t.Errorf("role %q: %d, want %d", role, status, want)
		}
	}
}

// flip changes one base64url character into another.
func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func TestSummaryOnlyFromCounters(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dks := f.debtors(t, 1)
	f.sign(t, dks, []spec{{id: "C-1", first: lateFirst, principal: 1000}, {id: "C-2", first: lateFirst, principal: 2000}})
	// The stream consumer's counters item (written here by hand: the
	// consumer is not built yet). Its numbers are deliberately not the
	// bucket's: the answer shows the counters, it never counts.
	counters, err := attributevalue.MarshalMap(map[string]any{"PK": keys.Tenant(f.t.ID), "SK": keys.BucketSummary("D001_030"),
		"type": "BUCKET_SUMMARY", "contracts": 7, "outstandingCents": 123456, "updatedAt": "2026-09-24T11:00:00.000Z"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Kit.Tenant(f.t.ID, f.t.CursorKey()).Put(bg, counters, nil); err != nil {
		t.Fatal(err)
	}
	status, out := f.page(t, url.Values{"bucket": {"D001_030"}, "limit": {"1"}})
	if status != http.StatusOK {
		t.Fatalf("%d %v", status, out)
	}
	sum, _ := out["summary"].(map[string]any)
	if sum["contracts"] != 7.0 || sum["outstandingCents"] != 123456.0 || sum["updatedAt"] != "2026-09-24T11:00:00.000Z" {
		t.Fatalf("summary %v", out["summary"])
	}
	status, out = f.page(t, url.Values{"bucket": {"D001_030"}, "limit": {"1"}, "cursor": {next(out)}})
	if _, ok := out["summary"]; status != http.StatusOK || ok {
		t.Fatalf("a later page: %d %v", status, out)
	}
	// Another bucket has no counters: no summary.
	if _, out := f.page(t, url.Values{"bucket": {"D031_060"}}); out["summary"] != nil || len(items(out)) != 0 {
		t.Fatalf("empty bucket: %v", out)
	}
}
