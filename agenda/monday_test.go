package agenda_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/contract"
	"lastro/contract/regua"
	"lastro/policy"
)

// TestMondayMorningQuestions answers the head of collections' three
// Monday questions over a portfolio run through the weekend by the
// workers, each with the one keyed request the design names for it.
func TestMondayMorningQuestions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, at("2026-09-18", 7, 0))
	// This tenant contacts on Sunday mornings too (its policy says so).
	if _, _, err := f.Policies.PutDunning(bg, f.t, policy.DunningInput{
		Steps: policy.DefaultDunning().Steps,
		ContactWindow: policy.ContactWindow{Weekdays: &policy.Window{From: "08:00", To: "20:00"}, Saturday: &policy.Window{From: "08:00", To: "14:00"},
			Sunday: &policy.Window{From: "09:00", To: "13:00"}},
		MaxDailyContacts: 3, BureauNoticeToReportDays: 15,
	}); err != nil {
		t.Fatal(err)
	}
	f.Tenants.Invalidate(f.t.ID)
	tn, err := f.Tenants.Get(bg, f.t.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.t = tn
	// Portfolio signed on Friday 09-18: three contracts cross into 31+
	// over the weekend (payable 08-19, 08-20, 08-21: day 31 on Sat, Sun,
	// Mon), one crossed long ago, one is still under 31 on Monday.
	crossing := map[string]string{"C-sat": "2026-08-19", "C-sun": "2026-08-20", "C-mon": "2026-08-21"}
	dks := map[string]string{}
	for id, due := range crossing {
		dks[id] = f.sign(t, id, due, 3)
	}
	dks["C-old"] = f.sign(t, "C-old", "2026-08-10", 3)
	dks["C-new"] = f.sign(t, "C-new", "2026-08-25", 3)
	// Debtor X: three contracts whose SMS_D5 falls on Sunday 09-20
	// (payable Tue 09-15), a fourth the same day.
	x := f.register(t)
	for i := range 4 {
		f.signFor(t, x, fmt.Sprintf("X-%d", i), "2026-09-15", 3)
	}
	for _, day := range []string{"2026-09-18", "2026-09-19", "2026-09-20", "2026-09-21"} {
		hour := 8
		if day == "2026-09-20" {
			hour = 9
		}
		f.runAt(t, at(day, hour, 0))
	}
	db := f.Kit.Tenant(f.t.ID, f.t.CursorKey())

	// 1. How many contracts crossed into 31+ over the weekend? GSI2's
	// D031_060 partition, restricted by oldestOverdueDueDate to the due
	// dates whose day 31 was Saturday to Monday.
	lo, hi := "2026-08-19", "2026-08-21"
	between := expression.Name("oldestOverdueDueDate").Between(expression.Value(lo), expression.Value(hi))
	page, err := db.QueryPage(bg, kit.Query{Index: table.Portfolio, Partition: keys.Bucket(f.t.ID, regua.BucketD031_060), Descending: true, Filter: &between}, "")
	if err != nil {
		t.Fatal(err)
	}
	var crossed []string
	for _, it := range page.Items {
		var h contract.Header
		if err := attributevalue.UnmarshalMap(it, &h); err != nil {
			t.Fatal(err)
		}
		crossed = append(crossed, h.ContractID)
	}
	slices.Sort(crossed)
	if !slices.Equal(crossed, []string{"C-mon", "C-sat", "C-sun"}) {
		t.Fatalf("crossed into 31+ over the weekend: %v", crossed)
	}

	// 2. How many of those have a promise this week? Two promises are set
	// directly (promises come with their own endpoint later); GSI1 with
	// PROMISE_CHECK, one Query per day of the week in each shard.
	for id, date := range map[string]string{"C-sat": "2026-09-23", "C-mon": "2026-09-25"} {
		c, err := contract.Load(bg, db, f.t.ID, dks[id], id)
		if err != nil {
			t.Fatal(err)
		}
		c.Header.Hold, c.Header.PromiseDate = regua.HoldPromise, date
		c.Refresh(calendar.MustParse("2026-09-21"), f.t.Calendar(), policy.DefaultDunning())
		writes, err := c.Save(f.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Write(bg, writes...); err != nil {
			t.Fatal(err)
		}
	}
	promised := 0
	for d := calendar.MustParse("2026-09-21"); d.Before(calendar.MustParse("2026-09-28")); d = d.AddDays(1) {
		for shard := range f.t.Shards {
			p, err := db.QueryPage(bg, kit.Query{Index: table.Agenda, Partition: keys.Agenda(f.t.ID, d.String(), shard), Sort: kit.BeginsWith(policy.PromiseCheck + "#")}, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range p.Items {
				var h contract.Header
				_ = attributevalue.UnmarshalMap(it, &h)
				if slices.Contains(crossed, h.ContractID) {
					promised++
				}
			}
		}
	}
	if promised != 2 {
		t.Fatalf("%d of the crossed contracts have a promise this week, want 2", promised)
	}

	// 3. What did debtor X get on Sunday, with four contracts due the
	// same step? The CONTACT range of the day beside the LIMIT counter:
	// one SMS, counted once, the other contracts' steps joined to it
	// (ADR 0066: one contact per debtor a day per channel).
	status, out := f.Do(t, "GET", "/v1/debtors/"+x+"/contacts?date=2026-09-20", f.keys["compliance"], "")
	if status != 200 || out["counter"] != float64(1) {
		t.Fatalf("contacts of Sunday: %d %v", status, out)
	}
	sent, joined := "", 0
	for _, it := range out["items"].([]any) {
		a := it.(map[string]any)
		switch {
		case a["allowed"] == true && a["channel"] == "SMS" && a["outcome"] == "SENT":
			sent, _ = a["attemptId"].(string)
		case a["allowed"] == true && a["outcome"] == "JOINED":
			joined++
		}
	}
	for _, it := range out["items"].([]any) {
		if a := it.(map[string]any); a["outcome"] == "JOINED" && a["joinedTo"] != sent {
			t.Fatalf("a step joined another attempt than the day's SMS: %v", a)
		}
	}
	if sent == "" || joined != 3 {
		t.Fatalf("Sunday's evidence: sent %q, %d joined: %v", sent, joined, out["items"])
	}
}
