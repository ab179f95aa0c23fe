package contract_test

import (
	"net/url"
	"testing"
	"time"

	"lastro/collections/calendar"
	"lastro/collections/kit"
	"lastro/collections/web"
	"lastro/contract"
	"lastro/engine/enginetest"
)

func TestReadsAreOneQueryEach(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk := f.register(t)
	if _, err := f.Contracts.Create(t.Context(), f.t, dk, contract.Input{ContractID: "C-1", ProductCode: "CREDIARIO_12X", Installments: enginetest.Monthly("2026-08-10", 12, 41230, 7560)}, actor); err != nil {
		t.Fatal(err)
	}
	ctx, u := kit.Operation(t.Context(), "test.ap02")
	open, err := f.Contracts.Installments(ctx, f.t, dk, "C-1", "open", web.DefaultListLimit, "")
	if err != nil || u.Calls("Query") != 1 || u.Calls("") != 1 || len(open.Items) != 12 || open.Items[0].DueDate != "2026-08-10" {
		t.Fatalf("AP02: %v %d calls, %+v", err, u.Calls(""), open)
	}
	ctx, u = kit.Operation(t.Context(), "test.ap09")
	evs, err := f.Contracts.Events(ctx, f.t, dk, "C-1", "0", web.DefaultListLimit, "")
	if err != nil || u.Calls("Query") != 1 || u.Calls("") != 1 || len(evs.Items) != 1 || evs.Items[0].EventType != contract.EvContractCreated {
		t.Fatalf("AP09: %v %d calls %+v", err, u.Calls(""), evs)
	}
	if e, err := f.Contracts.Events(t.Context(), f.t, dk, "C-1", "7", web.DefaultListLimit, ""); err != nil || len(e.Items) != 0 {
		t.Fatalf("AP09 seq 7: %v %+v", err, e)
	}
	for _, tt := range []struct {
		name string
		err  func() error
		code string
	}{
		{"AP02 unknown contract", func() error {
			_, err := f.Contracts.Installments(t.Context(), f.t, dk, "C-9", "open", 10, "")
			return err
		}, "contract_not_found"},
		{"AP02 bad status", func() error {
			_, err := f.Contracts.Installments(t.Context(), f.t, dk, "C-1", "late", 10, "")
			return err
		}, "invalid_status"},
		{"AP09 unknown contract", func() error { _, err := f.Contracts.Events(t.Context(), f.t, dk, "C-9", "0", 10, ""); return err }, "contract_not_found"},
		{"AP09 bad seq", func() error { _, err := f.Contracts.Events(t.Context(), f.t, dk, "C-1", "1000", 10, ""); return err }, "invalid_seq"},
		{"AP09 bad contract id", func() error { _, err := f.Contracts.Events(t.Context(), f.t, dk, "C#1", "0", 10, ""); return err }, "invalid_contract_id"},
	} {
		if err := tt.err(); code(err) != tt.code {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

// instalments is the items of an AP02 answer.
func instalments(t testing.TB, out map[string]any) []map[string]any {
	t.Helper()
	raw, ok := out["items"].([]any)
	if !ok {
		t.Fatalf("no items: %v", out)
	}
	items := make([]map[string]any, len(raw))
	for i, it := range raw {
		items[i] = it.(map[string]any)
	}
	return items
}

// TestOverdueListsAnInstalmentThatFellDueAfterSigning: signed current on
// 2026-09-01, the first instalment (due Thursday 09-10, payable that day)
// is overdue 17 days later although its stored status never changed.
func TestOverdueListsAnInstalmentThatFellDueAfterSigning(t *testing.T) {
	t.Parallel()
	f := newFixture(t, enginetest.At(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)))
	dk := f.register(t)
	if c := f.sign(t, dk, "C-1", "2026-09-10", 3); c.Status != contract.StatusActive || c.DaysPastDue != 0 {
		t.Fatalf("signed: %+v", c)
	}
	path := "/v1/debtors/" + dk + "/contracts/C-1/installments"
	if items := instalments(t, f.get(t, path+"?status=overdue")); len(items) != 0 {
		t.Fatalf("overdue on signing: %v", items)
	}
	f.Clock.Set(time.Date(2026, 9, 27, 12, 0, 0, 0, time.UTC)) // 09-10 + 17 days
	overdue := instalments(t, f.get(t, path+"?status=overdue"))
	if len(overdue) != 1 {
		t.Fatalf("overdue: %v", overdue)
	}
	in := overdue[0]
	if in["seq"] != float64(1) || in["status"] != contract.InstOverdue || in["late"] != true || in["daysPastDue"] != float64(17) || in["payableDate"] != "2026-09-10" {
		t.Fatalf("overdue instalment: %v", in)
	}
	open := instalments(t, f.get(t, path+"?status=open"))
	if len(open) != 3 || open[0]["seq"] != float64(1) || open[0]["status"] != contract.InstOverdue || open[1]["late"] != false {
		t.Fatalf("open: %v", open)
	}
}

// TestDaysPastDueCountFromThePayableDate: an instalment due Saturday
// 2026-08-15 is payable Monday 08-17, so on 09-24 it is 38 days past due
// (not 40) wherever it is shown.
func TestDaysPastDueCountFromThePayableDate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk := f.register(t)
	created := f.sign(t, dk, "C-SAT", "2026-08-15", 3)
	if created.DaysPastDue != 38 || created.OldestOverdueDueDate == nil || *created.OldestOverdueDueDate != "2026-08-15" {
		t.Fatalf("created: %+v", created)
	}
	today := calendar.Today(f.Clock.Now(), f.t.Location)
	c, err := contract.Load(t.Context(), f.Kit.Tenant(f.t.ID, f.t.CursorKey()), f.t.ID, dk, "C-SAT")
	if err != nil || c == nil {
		t.Fatalf("load: %v", err)
	}
	if d := c.Header.DaysPastDue(today, f.t.Calendar()); d != 38 {
		t.Fatalf("header: %d days past due", d)
	}
	v := f.get(t, "/v1/debtors/"+dk)
	cs, _ := v["contracts"].([]any)
	if len(cs) != 1 {
		t.Fatalf("360 contracts: %v", v["contracts"])
	}
	vc := cs[0].(map[string]any)
	vi := vc["installments"].([]any)[0].(map[string]any)
	if vc["daysPastDue"] != float64(38) || vi["seq"] != float64(1) || vi["daysPastDue"] != float64(38) || vi["payableDate"] != "2026-08-17" {
		t.Fatalf("360: contract %v days, instalment %v", vc["daysPastDue"], vi)
	}
	ap02 := instalments(t, f.get(t, "/v1/debtors/"+dk+"/contracts/C-SAT/installments?status=overdue"))
	// 09-15 is a Tuesday: 9 days.
	if len(ap02) != 2 || ap02[0]["daysPastDue"] != float64(38) || ap02[1]["daysPastDue"] != float64(9) {
		t.Fatalf("AP02: %v", ap02)
	}
}

// TestPaged360CarriesEveryContractsHeaderFacts walks the 360 view three
// items at a time: every page that shows a contract shows it with its
// header's facts, as the whole view does.
func TestPaged360CarriesEveryContractsHeaderFacts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk := f.register(t)
	f.sign(t, dk, "C-LATE", "2026-07-10", 12)
	f.sign(t, dk, "C-NEW", "2026-10-10", 12)
	facts := []string{"status", "statusReason", "outstandingCents", "daysPastDue", "bucket", "oldestOverdueDueDate", "nextAction", "nextActionDate", "version"}
	want := map[string]map[string]any{}
	for _, c := range f.get(t, "/v1/debtors/"+dk)["contracts"].([]any) {
		c := c.(map[string]any)
		want[c["contractId"].(string)] = c
	}
	if len(want) != 2 || want["C-LATE"]["status"] != contract.StatusInCollection || want["C-NEW"]["status"] != contract.StatusActive {
		t.Fatalf("whole view: %v", want)
	}
	pages, shown, cursor := 0, map[string]int{}, ""
	for ; pages < 100; pages++ {
		path := "/v1/debtors/" + dk + "?limit=3"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		v := f.get(t, path)
		cs, _ := v["contracts"].([]any)
		for _, c := range cs {
			c := c.(map[string]any)
			id, _ := c["contractId"].(string)
			shown[id]++
			if c["status"] == "" || c["status"] == nil || c["outstandingCents"] == nil {
				t.Errorf("page %d shows %s without its status or balance: %v", pages, id, c)
				continue
			}
			for _, k := range facts {
				if c[k] != want[id][k] {
					t.Errorf("page %d shows %s with %s %v, the header says %v", pages, id, k, c[k], want[id][k])
				}
			}
		}
		next, _ := v["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	// 2 × (header + event + 12 instalments) + profile + registration: 30 items.
	if pages < 9 || shown["C-LATE"] < 2 || shown["C-NEW"] < 2 {
		t.Fatalf("%d pages, contracts shown %v", pages+1, shown)
	}
}
