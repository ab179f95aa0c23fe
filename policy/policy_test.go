package policy

import (
	"context"
	"sync"
	"testing"
	"time"

	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/kit"
	"lastro/collections/secret"
	"lastro/collections/table"
	"lastro/ddblocal/ddbtest"
	"lastro/tenant"
)

var ctx = context.Background()

func setup(t *testing.T) (*Service, *tenant.Service, *tenant.Tenant) {
	t.Helper()
	db := ddbtest.New(t)
	if _, err := table.Ensure(ctx, db, "lastro"); err != nil {
		t.Fatal(err)
	}
	k := kit.New(db, "lastro")
	box, _ := secret.New(secret.Random(32))
	c := clock.NewManual(time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC))
	tenants := tenant.NewService(k, box, c, 16)
	if _, err := tenants.Create(ctx, tenant.CreateInput{TenantID: "t-pol", Name: "Policy Test"}); err != nil {
		t.Fatal(err)
	}
	tn, err := tenants.Get(ctx, "t-pol")
	if err != nil {
		t.Fatal(err)
	}
	return NewService(k, tenants, c), tenants, tn
}

func TestChargesValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   ChargesInput
		kind errs.Kind
		code string
	}{
		{"fine above cap", ChargesInput{FinePercent: "2.01", LateInterestMonthlyPercent: "1.00"}, errs.Rule, "fine_above_cap"},
		{"fine far above cap", ChargesInput{FinePercent: "10", LateInterestMonthlyPercent: "1.00"}, errs.Rule, "fine_above_cap"},
		{"not a number", ChargesInput{FinePercent: "two", LateInterestMonthlyPercent: "1.00"}, errs.Invalid, "invalid_percent"},
		{"empty", ChargesInput{LateInterestMonthlyPercent: "1.00"}, errs.Invalid, "invalid_percent"},
		{"negative", ChargesInput{FinePercent: "-1", LateInterestMonthlyPercent: "1.00"}, errs.Invalid, "invalid_percent"},
		{"too precise", ChargesInput{FinePercent: "1.00001", LateInterestMonthlyPercent: "1.00"}, errs.Invalid, "invalid_percent"},
		{"late interest above 100", ChargesInput{FinePercent: "2", LateInterestMonthlyPercent: "101"}, errs.Invalid, "invalid_percent"},
		{"order missing one", ChargesInput{FinePercent: "2", LateInterestMonthlyPercent: "1", ImputationOrder: []string{Fine, Interest, Principal}}, errs.Invalid, "invalid_imputation_order"},
		{"order repeated", ChargesInput{FinePercent: "2", LateInterestMonthlyPercent: "1", ImputationOrder: []string{Fine, Fine, Interest, Principal}}, errs.Invalid, "invalid_imputation_order"},
	}
	for _, tt := range tests {
		_, err := tt.in.validate()
		if !errs.Is(err, tt.kind) {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if _, code, _ := errs.Public(err); code != tt.code {
			t.Errorf("%s: code %s", tt.name, code)
		}
	}
	c, err := ChargesInput{FinePercent: "2.00", LateInterestMonthlyPercent: "0.0333", ImputationOrder: []string{Interest, Principal, Fine, LateInterest}}.validate()
	if err != nil || pct(c.FinePercent) != "2.00" || pct(c.LateInterestMonthlyPercent) != "0.0333" {
		t.Fatalf("valid policy: %v %+v", err, c)
	}
}

func TestDunningValidation(t *testing.T) {
	t.Parallel()
	good := func() DunningInput {
		d := DefaultDunning()
		return DunningInput{Steps: append([]Step(nil), d.Steps...), ContactWindow: d.ContactWindow, MaxDailyContacts: 3, BureauNoticeToReportDays: 15}
	}
	if _, err := good().validate(); err != nil {
		t.Fatalf("default is valid: %v", err)
	}
	tests := []struct {
		name string
		mod  func(*DunningInput)
		code string
	}{
		{"no steps", func(d *DunningInput) { d.Steps = nil }, "invalid_steps"},
		{"unordered", func(d *DunningInput) { d.Steps[1].DaysPastDue = 1 }, "invalid_steps"},
		{"day zero", func(d *DunningInput) { d.Steps[0].DaysPastDue = 0 }, "invalid_steps"},
		{"engine action", func(d *DunningInput) { d.Steps[0].Action = BucketMove }, "invalid_steps"},
		{"hash in action", func(d *DunningInput) { d.Steps[0].Action = "SMS#1" }, "invalid_steps"},
		{"no weekday window", func(d *DunningInput) { d.ContactWindow.Weekdays = nil }, "invalid_contact_window"},
		{"window backwards", func(d *DunningInput) { d.ContactWindow.Saturday = &Window{"14:00", "08:00"} }, "invalid_contact_window"},
		{"window not a time", func(d *DunningInput) { d.ContactWindow.Weekdays = &Window{"8h", "20:00"} }, "invalid_contact_window"},
		{"no contacts", func(d *DunningInput) { d.MaxDailyContacts = 0 }, "invalid_max_daily_contacts"},
		{"notice days zero", func(d *DunningInput) { d.BureauNoticeToReportDays = 0 }, "invalid_bureau_notice_days"},
		{"report too soon after notice", func(d *DunningInput) { d.BureauNoticeToReportDays = 20 }, "bureau_report_without_notice"},
		{"report without notice", func(d *DunningInput) { d.Steps[4].Action = "SMS_D60" }, "bureau_report_without_notice"},
	}
	for _, tt := range tests {
		in := good()
		tt.mod(&in)
		_, err := in.validate()
		if _, code, _ := errs.Public(err); err == nil || code != tt.code {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	d := DefaultDunning()
	for _, tt := range []struct {
		dpd  int
		want string
	}{{1, "SMS_D1"}, {2, "SMS_D5"}, {5, "SMS_D5"}, {46, BureauNotice}, {75, BureauReport}, {76, ""}} {
		s, ok := d.NextStep(tt.dpd)
		if s.Action != tt.want || ok != (tt.want != "") {
			t.Errorf("NextStep(%d) = %v %v", tt.dpd, s, ok)
		}
	}
}

func TestPublishVersions(t *testing.T) {
	t.Parallel()
	s, tenants, tn := setup(t)
	c0, err := s.Charges(ctx, tn, tn.ChargesPolicy)
	if err != nil || c0.Version != 0 || c0.Name != "CP#v0000" {
		t.Fatalf("default: %v %+v", err, c0)
	}
	c1, created, err := s.PutCharges(ctx, tn, ChargesInput{FinePercent: "2.00", LateInterestMonthlyPercent: "1.00"})
	if err != nil || !created || c1.Version != 1 || c1.Name != "CP#v0001" {
		t.Fatalf("v1: %v %v %+v", err, created, c1)
	}
	tn, _ = tenants.Get(ctx, "t-pol")
	if tn.ChargesPolicy != 1 {
		t.Fatalf("tenant current %d", tn.ChargesPolicy)
	}
	// The same rules again: no new version.
	same, created, err := s.PutCharges(ctx, tn, ChargesInput{FinePercent: "2", LateInterestMonthlyPercent: "1.0"})
	if err != nil || created || same.Version != 1 {
		t.Fatalf("unchanged: %v %v %+v", err, created, same)
	}
	c2, created, err := s.PutCharges(ctx, tn, ChargesInput{FinePercent: "1.50", LateInterestMonthlyPercent: "1.00"})
	if err != nil || !created || c2.Version != 2 {
		t.Fatalf("v2: %v %+v", err, c2)
	}
	// Version 1 is untouched (read from the store, not the cache).
	fresh := NewService(s.kit, tenants, s.clock)
	old, err := fresh.Charges(ctx, tn, 1)
	if err != nil || pct(old.FinePercent) != "2.00" || old.Version != 1 {
		t.Fatalf("v1 after v2: %v %+v", err, old)
	}
	// A stale tenant (current 1) still publishes: the conflict re-reads.
	d1, created, err := s.PutDunning(ctx, tn, DunningInput{Steps: []Step{{DaysPastDue: 3, Action: "SMS_D3"}}, ContactWindow: DefaultDunning().ContactWindow, MaxDailyContacts: 2, BureauNoticeToReportDays: 10})
	if err != nil || !created || d1.Version != 1 || d1.Name != "DP#v0001" {
		t.Fatalf("dunning v1: %v %+v", err, d1)
	}
	if _, err := fresh.Dunning(ctx, tn, 7); !errs.Is(err, errs.NotFound) {
		t.Fatalf("missing version: %v", err)
	}
}

func TestConcurrentPublishesNeverShareAVersion(t *testing.T) {
	t.Parallel()
	s, tenants, tn := setup(t)
	var wg sync.WaitGroup
	versions := make(chan int, 4)
	for i, fine := range []string{"0.50", "1.00", "1.50", "2.00"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _, err := s.PutCharges(ctx, tn, ChargesInput{FinePercent: fine, LateInterestMonthlyPercent: "1.00"})
			if err != nil {
				t.Errorf("publish %d: %v", i, err)
				return
			}
			versions <- c.Version
		}()
	}
	wg.Wait()
	close(versions)
	seen := map[int]bool{}
	for v := range versions {
		if seen[v] {
			t.Errorf("version %d published twice", v)
		}
		seen[v] = true
	}
	tenants.Invalidate("t-pol")
	tn, _ = tenants.Get(ctx, "t-pol")
	if tn.ChargesPolicy != len(seen) {
		t.Errorf("current %d after %d publishes", tn.ChargesPolicy, len(seen))
	}
}

func TestLateInterestCap(t *testing.T) {
	t.Parallel()
	s, tenants, tn := setup(t)
	for _, tt := range []struct {
		name, late string
		kind       errs.Kind
		code       string
	}{
		{"a hundredth over the cap", "1.01", errs.Rule, "late_interest_above_cap"},
		{"a ten-thousandth over the cap", "1.0001", errs.Rule, "late_interest_above_cap"},
		{"far over the cap", "12", errs.Rule, "late_interest_above_cap"},
		{"not a percent at all", "101", errs.Invalid, "invalid_percent"},
	} {
		_, _, err := s.PutCharges(ctx, tn, ChargesInput{FinePercent: "2.00", LateInterestMonthlyPercent: tt.late})
		if !errs.Is(err, tt.kind) {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if status, code, _ := errs.Public(err); code != tt.code || (tt.kind == errs.Rule && status != 422) {
			t.Errorf("%s: %d %s", tt.name, status, code)
		}
	}
	// Nothing was written: the tenant still uses the default and no version 1 exists.
	if fresh, err := tenants.Get(ctx, "t-pol"); err != nil || fresh.ChargesPolicy != 0 {
		t.Fatalf("tenant after refusals: %v %+v", err, fresh)
	}
	if _, err := NewService(s.kit, tenants, s.clock).Charges(ctx, tn, 1); !errs.Is(err, errs.NotFound) {
		t.Fatalf("version 1 after refusals: %v", err)
	}
	// The cap itself, however written, is allowed.
	for i, late := range []string{"1.00", "1", "1.0000", "0.9999"} {
		c, created, err := s.PutCharges(ctx, tn, ChargesInput{FinePercent: "2.00", LateInterestMonthlyPercent: late})
		if err != nil || c.LateInterestMonthlyPercent.GreaterThan(LateInterestCap) {
			t.Fatalf("%s: %v %+v", late, err, c)
		}
		// 1.00, 1 and 1.0000 are the same rules: only the first and 0.9999 publish.
		if want := i == 0 || late == "0.9999"; created != want {
			t.Errorf("%s: created %v", late, created)
		}
	}
}
