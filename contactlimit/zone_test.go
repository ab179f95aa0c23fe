package contactlimit_test

import (
	"testing"
	"time"

	"lastro/collections/keys"
	"lastro/contactlimit"
	"lastro/debtor"
	"lastro/tenant"
)

// at is an instant given as wall-clock time in zone.
func at(zone, date string, h, m int) time.Time {
	d, err := time.ParseInLocation("2006-01-02", date, mustZone(zone))
	if err != nil {
		panic(err)
	}
	return d.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

// TestContactWindowsOnTheDebtorsClock: windows, the counter's date and
// the evidence's local time are the debtor's zone's (ADR 0064), whatever
// the tenant's zone; holidays are the debtor's state's.
func TestContactWindowsOnTheDebtorsClock(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	manaus, err := f.Tenants.Create(bg, tenant.CreateInput{TenantID: "t-manaus", Name: "Crediário Manaus", TimeZone: "America/Manaus"})
	if err != nil || manaus == nil {
		t.Fatal(err)
	}
	tm, err := f.Tenants.Get(bg, "t-manaus")
	if err != nil {
		t.Fatal(err)
	}
	register := func(tn *tenant.Tenant, uf, zone string) string {
		t.Helper()
		r, err := f.Debtors.Register(bg, tn, debtor.RegisterInput{Document: f.CPF(), Name: testName, Phone: testPhone, UF: uf, TimeZone: zone},
			debtor.Actor{Role: "operator"})
		if err != nil {
			t.Fatal(err)
		}
		return r.DebtorKey
	}
	am, ac, west := register(f.t, "AM", ""), register(f.t, "AC", ""), register(f.t, "AM", "America/Eirunepe")
	spDebtor, noState := register(tm, "SP", ""), register(tm, "", "")
	tests := []struct {
		name      string
		tn        *tenant.Tenant
		dk        string
		at        time.Time
		allowed   bool
		reason    contactlimit.Reason
		localTime string
		zone      string
		localDate string
		retryAt   string
	}{
		{"AM debtor at 07:00 Manaus (08:00 in the tenant's São Paulo)", f.t, am, at("America/Manaus", "2026-09-24", 7, 0), false,
			contactlimit.ReasonWindow, "2026-09-24T07:00:00-04:00", "America/Manaus", "2026-09-24", "2026-09-24T12:00:00.000Z"},
		{"AM debtor at 08:00 Manaus", f.t, am, at("America/Manaus", "2026-09-24", 8, 0), true,
			"", "2026-09-24T08:00:00-04:00", "America/Manaus", "2026-09-24", ""},
		{"AM debtor at 19:59 Manaus (20:59 in São Paulo)", f.t, am, at("America/Manaus", "2026-09-24", 19, 59), true,
			"", "2026-09-24T19:59:00-04:00", "America/Manaus", "2026-09-24", ""},
		{"AC debtor at 07:30 Rio Branco (09:30 in São Paulo)", f.t, ac, at("America/Rio_Branco", "2026-09-24", 7, 30), false,
			contactlimit.ReasonWindow, "2026-09-24T07:30:00-05:00", "America/Rio_Branco", "2026-09-24", "2026-09-24T13:00:00.000Z"},
		{"AC debtor at 21:30 Rio Branco: Thursday's date, though Friday in UTC", f.t, ac, at("America/Rio_Branco", "2026-09-24", 21, 30), false,
			contactlimit.ReasonWindow, "2026-09-24T21:30:00-05:00", "America/Rio_Branco", "2026-09-24", ""},
		{"AC debtor at 19:30 Rio Branco (21:30 in São Paulo)", f.t, ac, at("America/Rio_Branco", "2026-09-24", 19, 30), true,
			"", "2026-09-24T19:30:00-05:00", "America/Rio_Branco", "2026-09-24", ""},
		{"AC state holiday (Tratado de Petrópolis, a Tuesday)", f.t, ac, at("America/Rio_Branco", "2026-11-17", 10, 0), false,
			contactlimit.ReasonHoliday, "2026-11-17T10:00:00-05:00", "America/Rio_Branco", "2026-11-17", ""},
		{"western AM, given explicitly, at 07:30 (UTC−5)", f.t, west, at("America/Eirunepe", "2026-09-24", 7, 30), false,
			contactlimit.ReasonWindow, "2026-09-24T07:30:00-05:00", "America/Eirunepe", "2026-09-24", "2026-09-24T13:00:00.000Z"},
		{"Manaus tenant, SP debtor at 20:00 SP (19:00 Manaus)", tm, spDebtor, at("America/Sao_Paulo", "2026-09-24", 20, 0), false,
			contactlimit.ReasonWindow, "2026-09-24T20:00:00-03:00", "America/Sao_Paulo", "2026-09-24", ""},
		{"Manaus tenant, SP debtor on Saturday 14:00 SP (13:00 Manaus)", tm, spDebtor, at("America/Sao_Paulo", "2026-09-26", 14, 0), false,
			contactlimit.ReasonWindow, "2026-09-26T14:00:00-03:00", "America/Sao_Paulo", "2026-09-26", ""},
		{"Manaus tenant, SP debtor on Saturday 13:59 SP", tm, spDebtor, at("America/Sao_Paulo", "2026-09-26", 13, 59), true,
			"", "2026-09-26T13:59:00-03:00", "America/Sao_Paulo", "2026-09-26", ""},
		{"Manaus tenant, SP debtor on SP's 9 July (a Thursday)", tm, spDebtor, at("America/Sao_Paulo", "2026-07-09", 10, 0), false,
			contactlimit.ReasonHoliday, "2026-07-09T10:00:00-03:00", "America/Sao_Paulo", "2026-07-09", ""},
		{"Manaus tenant, debtor without a state: the tenant's zone", tm, noState, at("America/Manaus", "2026-09-24", 19, 30), true,
			"", "2026-09-24T19:30:00-04:00", "America/Manaus", "2026-09-24", ""},
	}
	for _, tt := range tests {
		f.Clock.Set(tt.at)
		a, err := f.Contacts.Claim(bg, tt.tn, claimAt(tt.dk, tt.at))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if a.Allowed != tt.allowed || a.Reason != tt.reason || a.LocalTime != tt.localTime || a.TimeZone != tt.zone ||
			a.LocalDate != tt.localDate || a.RetryAt != tt.retryAt || a.SK != keys.Contact(tt.localDate, tt.at, a.AttemptID) {
			t.Errorf("%s: %+v", tt.name, a)
		}
		if tt.allowed {
			day, err := f.Contacts.Day(bg, tt.tn, tt.dk, tt.localDate, 100, "")
			if err != nil || day.Counter == 0 {
				t.Errorf("%s: the counter of the debtor's date %s: %+v, %v", tt.name, tt.localDate, day, err)
			}
		}
	}
}
