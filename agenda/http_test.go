package agenda_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"lastro/engine/enginetest"
)

// httpFixture is a tenant with 4 shards, its keys, and n contracts due on
// Friday 2026-08-07 (DUE_CHECK on Monday 08-10), signed on 08-01.
type httpFixture struct {
	*fixture
	keys enginetest.Keys
	ids  []string
}

func newHTTPFixture(t *testing.T, n int) *httpFixture {
	t.Helper()
	env := enginetest.New(t, enginetest.At(at("2026-08-01", 10, 0)), enginetest.Shards(4))
	tn, keys := env.Tenant(t, "t-http")
	f := &httpFixture{fixture: &fixture{Env: env, t: tn}, keys: keys}
	for i := range n {
		id := fmt.Sprintf("C-%02d", i)
		f.sign(t, id, "2026-08-07", 3)
		f.ids = append(f.ids, id)
	}
	return f
}

// agenda GETs /v1/agenda with the query and returns the items' contract
// ids and the next cursor ("" on the last page).
func (f *httpFixture) agenda(t *testing.T, q url.Values) (ids []string, items []map[string]any, next string) {
	t.Helper()
	status, out := f.Do(t, http.MethodGet, "/v1/agenda?"+q.Encode(), f.keys["supervisor"], "")
	if status != http.StatusOK {
		t.Fatalf("GET /v1/agenda?%s: %d %v", q.Encode(), status, out)
	}
	for _, it := range out["items"].([]any) {
		m := it.(map[string]any)
		items = append(items, m)
		ids = append(ids, m["contractId"].(string))
	}
	next, _ = out["nextCursor"].(string)
	return ids, items, next
}

func TestAgendaListsEachShardWithOneQuery(t *testing.T) {
	t.Parallel()
	f := newHTTPFixture(t, 9)
	var all []string
	for s := range 4 {
		ids, items, next := f.agenda(t, url.Values{"date": {"2026-08-10"}, "shard": {fmt.Sprint(s)}})
		if next != "" {
			t.Errorf("shard %d: a next cursor on a short page", s)
		}
		for _, it := range items {
			if it["nextAction"] != "DUE_CHECK" || it["nextActionDate"] != "2026-08-10" || it["shard"] != float64(s) ||
				it["outstandingCents"] != float64(300000) || it["debtorKey"] == "" {
				t.Errorf("shard %d item: %v", s, it)
			}
			if _, ok := it["daysPastDue"]; ok {
				t.Errorf("daysPastDue is not projected, yet listed: %v", it)
			}
		}
		all = append(all, ids...)
	}
	slices.Sort(all)
	if !slices.Equal(all, f.ids) {
		t.Fatalf("the shards list %v, want %v", all, f.ids)
	}
	// action narrows on the sort key: no contract has SMS_D1 due.
	for _, action := range []string{"DUE_CHECK", "SMS_D1"} {
		var got []string
		for s := range 4 {
			ids, _, _ := f.agenda(t, url.Values{"date": {"2026-08-10"}, "shard": {fmt.Sprint(s)}, "action": {action}})
			got = append(got, ids...)
		}
		if want := map[string]int{"DUE_CHECK": 9, "SMS_D1": 0}[action]; len(got) != want {
			t.Errorf("action %s: %d entries, want %d", action, len(got), want)
		}
	}
	// Another date's partitions are other partitions.
	if ids, _, _ := f.agenda(t, url.Values{"date": {"2026-08-11"}, "shard": {"0"}}); len(ids) != 0 {
		t.Errorf("08-11: %v", ids)
	}
}

func TestAgendaWithoutShardPagesThroughEveryShard(t *testing.T) {
	t.Parallel()
	f := newHTTPFixture(t, 9)
	q := url.Values{"date": {"2026-08-10"}, "limit": {"2"}}
	var all []string
	var shards []float64
	cursor, pages := "", 0
	for {
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		ids, items, next := f.agenda(t, q)
		if len(ids) > 2 {
			t.Fatalf("page of %d over the limit", len(ids))
		}
		all = append(all, ids...)
		for _, it := range items {
			shards = append(shards, it["shard"].(float64))
		}
		pages++
		if next == "" {
			break
		}
		if pages > 20 {
			t.Fatal("the cursor does not end")
		}
		cursor = next
	}
	if !slices.IsSorted(shards) {
		t.Errorf("shards not read in order: %v", shards)
	}
	slices.Sort(all)
	if !slices.Equal(all, f.ids) {
		t.Fatalf("paged %v, want each of %v once", all, f.ids)
	}
	// A first page's cursor is bound to its query: another action, date or
	// a shard selection refuses it.
	q.Del("cursor")
	_, _, first := f.agenda(t, q)
	for _, other := range []url.Values{
		{"date": {"2026-08-10"}, "limit": {"2"}, "action": {"DUE_CHECK"}, "cursor": {first}},
		{"date": {"2026-08-11"}, "limit": {"2"}, "cursor": {first}},
		{"date": {"2026-08-10"}, "limit": {"2"}, "shard": {"0"}, "cursor": {first}},
		{"date": {"2026-08-10"}, "cursor": {first + "x"}},
	} {
		status, out := f.Do(t, http.MethodGet, "/v1/agenda?"+other.Encode(), f.keys["supervisor"], "")
		if status != http.StatusBadRequest || enginetest.ErrorCode(out) != "invalid_cursor" {
			t.Errorf("%s: %d %v, want 400 invalid_cursor", other.Encode(), status, out)
		}
	}
}

func TestAgendaRefusesBadQueriesAndOtherRoles(t *testing.T) {
	t.Parallel()
	f := newHTTPFixture(t, 0)
	for _, tt := range []struct {
		query, code string
	}{
		{"date=2026-13-01", "invalid_date"},
		{"date=10/08/2026", "invalid_date"},
		{"shard=4", "invalid_shard"},
		{"shard=-1", "invalid_shard"},
		{"shard=x", "invalid_shard"},
		{"action=DUE_CHECK%23C-1", "invalid_action"},
		{"action=sms", "invalid_action"},
		{"limit=0", "invalid_limit"},
	} {
		status, out := f.Do(t, http.MethodGet, "/v1/agenda?"+tt.query, f.keys["supervisor"], "")
		if status != http.StatusBadRequest || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("?%s: %d %v, want 400 %s", tt.query, status, out, tt.code)
		}
	}
	for _, role := range []string{"operator", "compliance"} {
		for _, req := range [][2]string{{http.MethodGet, "/v1/agenda"}, {http.MethodPost, "/v1/agenda/run"}} {
			if status, _ := f.Do(t, req[0], req[1], f.keys[role], "{}"); status != http.StatusForbidden {
				t.Errorf("%s %s as %s: %d, want 403", req[0], req[1], role, status)
			}
		}
	}
	if status, _ := f.Do(t, http.MethodGet, "/v1/agenda", "", ""); status != http.StatusUnauthorized {
		t.Errorf("no key: %d, want 401", status)
	}
}

func TestRunEndpointRunsTheWorkersAndReportsPerShard(t *testing.T) {
	t.Parallel()
	f := newHTTPFixture(t, 6)
	f.Clock.Set(at("2026-08-10", 8, 30))
	sup := f.keys["supervisor"]
	// Bad input first: nothing runs.
	for _, tt := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"date":"2026-02-30"}`, 400, "invalid_date"},
		{`{"shards":[4]}`, 400, "invalid_shard"},
		{`{"shards":[1,1]}`, 400, "invalid_shard"},
		{`{"date":"2026-08-18"}`, 422, "date_in_future"},
		{`{"dates":"2026-08-10"}`, 400, "invalid_json"},
	} {
		status, out := f.Do(t, http.MethodPost, "/v1/agenda/run", sup, tt.body)
		if status != tt.status || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want %d %s", tt.body, status, out, tt.status, tt.code)
		}
	}
	if msgs := f.outbox(t); len(msgs) != 0 {
		t.Fatalf("a refused run sent %d messages", len(msgs))
	}
	// One shard only: just its contracts.
	ids, _, _ := f.agenda(t, url.Values{"shard": {"1"}})
	status, out := f.Do(t, http.MethodPost, "/v1/agenda/run", sup, `{"shards":[1]}`)
	if status != http.StatusOK {
		t.Fatalf("run shard 1: %d %v", status, out)
	}
	if sh := out["shards"].([]any); len(sh) != 1 || sh[0].(map[string]any)["shard"] != float64(1) {
		t.Fatalf("shards reported: %v", out["shards"])
	}
	if got := out["executed"].(map[string]any)["DUE_CHECK"]; len(ids) > 0 && got != float64(len(ids)) {
		t.Fatalf("shard 1 executed %v DUE_CHECKs, want %d", got, len(ids))
	}
	// Then the whole day, with no body: today, every shard.
	status, out = f.Do(t, http.MethodPost, "/v1/agenda/run", sup, "")
	if status != http.StatusOK || out["date"] != "2026-08-10" || out["tenantId"] != f.t.ID || len(out["shards"].([]any)) != 4 {
		t.Fatalf("run: %d %v", status, out)
	}
	ex := out["executed"].(map[string]any)
	if rest := float64(6 - len(ids)); ex["DUE_CHECK"] != rest || ex["SMS_D1"] != rest {
		t.Fatalf("executed %v, want %v DUE_CHECK and SMS_D1", ex, rest)
	}
	// The day's partitions are empty now; SMS_D5 waits on Wednesday.
	if ids, _, _ := f.agenda(t, url.Values{}); len(ids) != 0 {
		t.Fatalf("still due today: %v", ids)
	}
	if ids, _, _ := f.agenda(t, url.Values{"date": {"2026-08-12"}, "action": {"SMS_D5"}}); len(ids) != 6 {
		t.Fatalf("SMS_D5 on 08-12: %v", ids)
	}
	if msgs := f.outbox(t); len(msgs) != 6 {
		t.Fatalf("outbox: %d messages, want 6", len(msgs))
	}
	// A past date within the catch-up window is accepted (nothing left).
	if status, out := f.Do(t, http.MethodPost, "/v1/agenda/run", sup, `{"date":"2026-08-09"}`); status != http.StatusOK {
		t.Fatalf("run 08-09: %d %v", status, out)
	}
}
