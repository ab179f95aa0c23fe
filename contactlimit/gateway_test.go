package contactlimit_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contactlimit"
	"lastro/policy"
	"lastro/tenant"
)

func TestConcurrentClaimsNeverExceedTheLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.Contacts
	dk := f.debtor(t, "")
	const n = 50
	var wg sync.WaitGroup
	results := make([]contactlimit.Attempt, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = g.Claim(bg, f.t, claimAt(dk, thursday10.Add(time.Duration(i)*time.Second)))
		}()
	}
	wg.Wait()
	var numbers []int
	blocked := 0
	for i, a := range results {
		if errs[i] != nil {
			t.Fatalf("claim %d: %v", i, errs[i])
		}
		switch {
		case a.Allowed:
			numbers = append(numbers, a.AttemptNumber)
		case a.Reason == contactlimit.ReasonLimit && a.AttemptNumber == 0:
			blocked++
		default:
			t.Fatalf("claim %d: %+v", i, a)
		}
	}
	slices.Sort(numbers)
	if !slices.Equal(numbers, []int{1, 2, 3}) || blocked != n-3 {
		t.Fatalf("allowed %v, blocked %d", numbers, blocked)
	}
	day, err := g.Day(bg, f.t, dk, "2026-09-24", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	allowed := 0
	for _, a := range day.Items {
		if a.Allowed {
			allowed++
		}
	}
	if len(day.Items) != n || allowed != 3 || day.Counter != 3 || day.MaxDailyContacts != 3 || day.NextCursor != nil {
		t.Fatalf("day view: %d items (%d allowed), counter %d", len(day.Items), allowed, day.Counter)
	}
	// The counter's TTL is housekeeping: the date + 8 days.
	it, err := f.Kit.Tenant(f.t.ID, f.t.CursorKey()).Get(bg, kit.Key{PK: keys.Debtor(f.t.ID, dk), SK: keys.Limit("2026-09-24")}, true)
	if err != nil {
		t.Fatal(err)
	}
	var counter struct {
		Attempts  int   `dynamodbav:"attempts"`
		ExpiresAt int64 `dynamodbav:"expiresAt"`
	}
	if err := attributevalue.UnmarshalMap(it, &counter); err != nil || counter.Attempts != 3 || counter.ExpiresAt != local("2026-10-02", 0, 0).Unix() {
		t.Fatalf("counter %+v: %v", counter, err)
	}
}

func TestBlockedDaysAndTheLocalDate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.Contacts
	dk := f.debtor(t, "")
	tests := []struct {
		name      string
		at        time.Time
		reason    contactlimit.Reason // "" = allowed
		localDate string
		window    string
	}{
		// 02:30 UTC on Friday is 23:30 on Thursday in São Paulo: Thursday's
		// counter and evidence, outside Thursday's window.
		{"02:30 UTC belongs to the previous day", time.Date(2026, 9, 25, 2, 30, 0, 0, time.UTC), contactlimit.ReasonWindow, "2026-09-24", "08:00-20:00"},
		{"Sunday", local("2026-09-27", 10, 0), contactlimit.ReasonWindow, "2026-09-27", "none"},
		{"national holiday", local("2026-10-12", 10, 0), contactlimit.ReasonHoliday, "2026-10-12", "none"},
		{"20:01", local("2026-09-24", 20, 1), contactlimit.ReasonWindow, "2026-09-24", "08:00-20:00"},
		{"before 08:00", local("2026-09-24", 7, 59), contactlimit.ReasonWindow, "2026-09-24", "08:00-20:00"},
		{"Saturday after 14:00", local("2026-09-26", 14, 0), contactlimit.ReasonWindow, "2026-09-26", "08:00-14:00"},
		{"Saturday morning", local("2026-09-26", 9, 0), "", "2026-09-26", "08:00-14:00"},
		{"19:59", local("2026-09-24", 19, 59), "", "2026-09-24", "08:00-20:00"},
	}
	for _, tt := range tests {
		f.Clock.Set(tt.at)
		a, err := g.Claim(bg, f.t, claimAt(dk, tt.at))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if a.Allowed != (tt.reason == "") || a.Reason != tt.reason || a.LocalDate != tt.localDate || a.Window != tt.window {
			t.Errorf("%s: %+v", tt.name, a)
		}
		if !strings.HasPrefix(a.SK, keys.ContactsOn(tt.localDate)) {
			t.Errorf("%s: evidence %s outside the local day", tt.name, a.SK)
		}
		day, err := g.Day(bg, f.t, dk, tt.localDate, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		found := slices.IndexFunc(day.Items, func(e contactlimit.Attempt) bool { return e.AttemptID == a.AttemptID })
		if found < 0 || day.Items[found].Reason != tt.reason || day.Items[found].Outcome != map[bool]string{true: contactlimit.OutcomePending, false: contactlimit.OutcomeBlocked}[a.Allowed] {
			t.Errorf("%s: no matching evidence in the day view %+v", tt.name, day.Items)
		}
	}
	// Blocked claims never touched a counter: Thursday counts only 19:59.
	day, err := g.Day(bg, f.t, dk, "2026-09-24", 100, "")
	if err != nil || day.Counter != 1 || len(day.Items) != 4 {
		t.Fatalf("Thursday: counter %d, %d attempts: %v", day.Counter, len(day.Items), err)
	}
	if day, _ := g.Day(bg, f.t, dk, "2026-09-27", 100, ""); day.Counter != 0 || len(day.Items) != 1 {
		t.Fatalf("Sunday: counter %d, %d attempts", day.Counter, len(day.Items))
	}
}

func TestTenantHolidayBlocks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if _, err := f.Tenants.SetHolidays(bg, f.t, tenant.HolidaysInput{Dates: []string{"2026-09-24"}}); err != nil {
		t.Fatal(err)
	}
	f.reload(t)
	g := f.Contacts
	a, err := g.Claim(bg, f.t, claimAt(f.debtor(t, ""), thursday10))
	if err != nil || a.Allowed || a.Reason != contactlimit.ReasonHoliday {
		t.Fatalf("municipal holiday: %+v %v", a, err)
	}
}

func TestClaimCostsAtMostTwoWRU(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.Contacts
	dk := f.debtor(t, "")
	ctx, usage := kit.Operation(bg, "test.claim")
	if a, err := g.Claim(ctx, f.t, claimAt(dk, thursday10)); err != nil || !a.Allowed {
		t.Fatalf("claim: %+v %v", a, err)
	}
	// The gateway measures its own steps (kit.Operation), so the caller's
	// operation sees nothing written and the meter splits the claim: the
	// LIMIT update alone is 1 WRU (an item far under 1 KB, no index), the
	// evidence item another 1 WRU, counted separately.
	if usage.WRU() != 0 {
		t.Fatalf("caller's operation absorbed %.1f WRU", usage.WRU())
	}
	ops := map[string]kit.OpTotal{}
	for _, op := range f.Kit.Meter().Snapshot() {
		ops[op.Name] = op
	}
	limit, evidence, prof := ops["contact.claim"], ops["contact.evidence"], ops["contact.profile"]
	if limit.WRU != 1 || limit.Calls != 1 || limit.RRU != 0 {
		t.Errorf("LIMIT update: %+v, want exactly 1 WRU in 1 call", limit)
	}
	if evidence.WRU != 1 || evidence.Calls != 1 {
		t.Errorf("evidence: %+v, want exactly 1 WRU in 1 call", evidence)
	}
	if limit.WRU+evidence.WRU > 2 {
		t.Errorf("claim %.1f WRU, budget 2", limit.WRU+evidence.WRU)
	}
	if prof.RRU != 1 || prof.WRU != 0 {
		t.Errorf("profile read: %+v, want 1 strongly consistent RRU", prof)
	}
}

func TestStateWindowOptOutAndDispute(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.publish(t, map[string]policy.ContactWindow{"RJ": {Weekdays: &policy.Window{From: "09:00", To: "18:00"}}}, nil)
	g := f.Contacts
	rj, sp, anywhere := f.debtor(t, "RJ"), f.debtor(t, "SP"), f.debtor(t, "")
	at := local("2026-09-24", 18, 30)
	f.Clock.Set(at)
	tests := []struct {
		name   string
		claim  contactlimit.Claim
		reason contactlimit.Reason
		window string
	}{
		{"RJ debtor after the state's window", claimAt(rj, at), contactlimit.ReasonWindow, "09:00-18:00"},
		{"SP debtor, no state window", claimAt(sp, at), "", "08:00-20:00"},
		{"unknown state", claimAt(anywhere, at), "", "08:00-20:00"},
		{"caller says RJ", func() contactlimit.Claim { c := claimAt(anywhere, at); c.UF = "RJ"; return c }(), contactlimit.ReasonWindow, "09:00-18:00"},
		{"disputed", func() contactlimit.Claim { c := claimAt(sp, at); c.Disputed = true; return c }(), contactlimit.ReasonDispute, "08:00-20:00"},
	}
	for _, tt := range tests {
		a, err := g.Claim(bg, f.t, tt.claim)
		if err != nil || a.Allowed != (tt.reason == "") || a.Reason != tt.reason || a.Window != tt.window {
			t.Errorf("%s: %+v %v", tt.name, a, err)
		}
	}
	// Opt-out is per channel and takes effect on the next claim.
	if err := g.SetOptOut(bg, f.t, sp, contactlimit.SMS, true); err != nil {
		t.Fatal(err)
	}
	if a, err := g.Claim(bg, f.t, claimAt(sp, at)); err != nil || a.Allowed || a.Reason != contactlimit.ReasonOptOut {
		t.Fatalf("opted-out SMS: %+v %v", a, err)
	}
	email := claimAt(sp, at)
	email.Channel = contactlimit.Email
	if a, err := g.Claim(bg, f.t, email); err != nil || !a.Allowed {
		t.Fatalf("e-mail after SMS opt-out: %+v %v", a, err)
	}
	if err := g.SetOptOut(bg, f.t, sp, contactlimit.SMS, false); err != nil {
		t.Fatal(err)
	}
	if a, err := g.Claim(bg, f.t, claimAt(sp, at)); err != nil || !a.Allowed || a.AttemptNumber != 3 {
		t.Fatalf("opted back in: %+v %v", a, err)
	}
	if err := g.SetOptOut(bg, f.t, "0123456789abcdef", contactlimit.SMS, true); !errs.Is(err, errs.NotFound) {
		t.Fatalf("opt-out of an unknown debtor: %v", err)
	}
}

func TestBadClaimsWriteNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.Contacts
	dk := f.debtor(t, "")
	tests := []struct {
		name string
		mod  func(*contactlimit.Claim)
		kind errs.Kind
		code string
	}{
		{"channel", func(c *contactlimit.Claim) { c.Channel = "PIGEON" }, errs.Invalid, "invalid_channel"},
		{"contract", func(c *contactlimit.Claim) { c.ContractID = "C#1" }, errs.Invalid, "invalid_contract_id"},
		{"template", func(c *contactlimit.Claim) { c.Template = "sms d5" }, errs.Invalid, "invalid_template"},
		{"debtor key", func(c *contactlimit.Claim) { c.DebtorKey = "XYZ" }, errs.Invalid, "invalid_debtor_key"},
		{"uf", func(c *contactlimit.Claim) { c.UF = "ZZ" }, errs.Invalid, "invalid_uf"},
		{"another day", func(c *contactlimit.Claim) { c.At = thursday10.Add(-24 * time.Hour) }, errs.Invalid, "invalid_at"},
		{"unknown debtor", func(c *contactlimit.Claim) { c.DebtorKey = "0123456789abcdef" }, errs.NotFound, "debtor_not_found"},
	}
	for _, tt := range tests {
		c := claimAt(dk, thursday10)
		tt.mod(&c)
		_, err := g.Claim(bg, f.t, c)
		if _, code, _ := errs.Public(err); !errs.Is(err, tt.kind) || code != tt.code {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	if day, err := g.Day(bg, f.t, dk, "2026-09-24", 100, ""); err != nil || len(day.Items) != 0 || day.Counter != 0 {
		t.Fatalf("refused claims wrote %+v %v", day, err)
	}
}

func TestRecordOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.Contacts
	dk := f.debtor(t, "")
	a, err := g.Claim(bg, f.t, claimAt(dk, thursday10))
	if err != nil || !a.Allowed {
		t.Fatal(a, err)
	}
	if _, err := g.Record(bg, f.t, a, "DELIVERED", ""); !errs.Is(err, errs.Invalid) {
		t.Fatalf("unknown outcome: %v", err)
	}
	sent, err := g.Record(bg, f.t, a, contactlimit.OutcomeSent, "")
	if err != nil || sent.Outcome != contactlimit.OutcomeSent {
		t.Fatalf("record: %+v %v", sent, err)
	}
	if _, err := g.Record(bg, f.t, a, contactlimit.OutcomeFailed, "late"); !errs.Is(err, errs.Conflict) {
		t.Fatalf("second outcome: %v", err)
	}
	f.Clock.Set(thursday10.Add(11 * time.Hour)) // 21:00
	blocked, err := g.Claim(bg, f.t, claimAt(dk, thursday10.Add(11*time.Hour)))
	if err != nil || blocked.Allowed {
		t.Fatal(blocked, err)
	}
	if _, err := g.Record(bg, f.t, blocked, contactlimit.OutcomeSent, ""); !errs.Is(err, errs.Rule) {
		t.Fatalf("outcome of a blocked attempt: %v", err)
	}
	day, _ := g.Day(bg, f.t, dk, "2026-09-24", 100, "")
	outcomes := map[string]string{}
	for _, e := range day.Items {
		outcomes[e.AttemptID] = e.Outcome
	}
	if outcomes[a.AttemptID] != contactlimit.OutcomeSent || outcomes[blocked.AttemptID] != contactlimit.OutcomeBlocked {
		t.Fatalf("outcomes %v", outcomes)
	}
}
