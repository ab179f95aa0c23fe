package policy

import (
	"testing"
	"time"

	"lastro/collections/calendar"
	"lastro/collections/errs"
)

func contactInput() DunningInput {
	d := DefaultDunning()
	return DunningInput{Steps: append([]Step(nil), d.Steps...), ContactWindow: d.ContactWindow, MaxDailyContacts: 3, BureauNoticeToReportDays: 15}
}

func TestContactRulesValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mod  func(*DunningInput)
		code string // "" = valid
	}{
		{"stricter state window", func(d *DunningInput) {
			d.StateWindows = map[string]ContactWindow{"RJ": {Weekdays: &Window{"09:00", "18:00"}}}
		}, ""},
		{"state window equal to the general one", func(d *DunningInput) {
			d.StateWindows = map[string]ContactWindow{"SP": d.ContactWindow}
		}, ""},
		{"state window starting earlier", func(d *DunningInput) {
			d.StateWindows = map[string]ContactWindow{"RJ": {Weekdays: &Window{"07:30", "18:00"}}}
		}, "invalid_state_window"},
		{"state window ending later", func(d *DunningInput) {
			d.StateWindows = map[string]ContactWindow{"RJ": {Weekdays: &Window{"09:00", "20:30"}}}
		}, "invalid_state_window"},
		{"state window on a day the general one has none", func(d *DunningInput) {
			d.StateWindows = map[string]ContactWindow{"RJ": {Weekdays: &Window{"09:00", "18:00"}, Sunday: &Window{"09:00", "10:00"}}}
		}, "invalid_state_window"},
		{"state window backwards", func(d *DunningInput) {
			d.StateWindows = map[string]ContactWindow{"RJ": {Weekdays: &Window{"18:00", "09:00"}}}
		}, "invalid_state_window"},
		{"unknown UF", func(d *DunningInput) {
			d.StateWindows = map[string]ContactWindow{"XX": {Weekdays: &Window{"09:00", "18:00"}}}
		}, "invalid_state_window"},
		{"lower-case UF", func(d *DunningInput) {
			d.StateWindows = map[string]ContactWindow{"rj": {Weekdays: &Window{"09:00", "18:00"}}}
		}, "invalid_state_window"},
		{"template with known placeholders", func(d *DunningInput) {
			d.Templates = map[string]string{"SMS_D1": "Contrato {{contractId}}: {{ amount }} vencido em {{dueDate}}."}
		}, ""},
		{"template with a personal placeholder", func(d *DunningInput) {
			d.Templates = map[string]string{"SMS_D1": "Olá {{name}}, contrato {{contractId}}"}
		}, "invalid_templates"},
		{"template key not an action", func(d *DunningInput) {
			d.Templates = map[string]string{"sms d1": "x"}
		}, "invalid_templates"},
		{"empty template", func(d *DunningInput) { d.Templates = map[string]string{"SMS_D1": ""} }, "invalid_templates"},
		{"template with a control character", func(d *DunningInput) {
			d.Templates = map[string]string{"SMS_D1": "a\x00b"}
		}, "invalid_text"},
		{"template with a line break", func(d *DunningInput) {
			d.Templates = map[string]string{"SMS_D1": "Contrato {{contractId}}\r\nPague em outro lugar"}
		}, "invalid_text"},
		{"template with a bidi override", func(d *DunningInput) {
			d.Templates = map[string]string{"SMS_D1": "Contrato {{contractId}} \u202e"}
		}, "invalid_text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := contactInput()
			tt.mod(&in)
			d, err := in.validate()
			if tt.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(d.StateWindows) != len(in.StateWindows) || len(d.Templates) != len(in.Templates) {
					t.Fatalf("validated policy dropped contact rules: %+v", d)
				}
				return
			}
			if _, code, _ := errs.Public(err); !errs.Is(err, errs.Invalid) || code != tt.code {
				t.Fatalf("got %v, want 400 %s", err, tt.code)
			}
		})
	}
}

func TestWindowFor(t *testing.T) {
	t.Parallel()
	d := DefaultDunning()
	d.StateWindows = map[string]ContactWindow{"RJ": {Weekdays: &Window{"09:00", "18:00"}, Saturday: &Window{"09:00", "12:00"}}}
	cal := calendar.New(calendar.MustParse("2026-09-22")) // a tenant's extra (municipal) holiday, a Tuesday
	tests := []struct {
		date, uf, want string
	}{
		{"2026-09-24", "", "08:00-20:00"},   // Thursday
		{"2026-09-24", "SP", "08:00-20:00"}, // a state without its own window
		{"2026-09-24", "RJ", "09:00-18:00"},
		{"2026-09-26", "", "08:00-14:00"}, // Saturday
		{"2026-09-26", "RJ", "09:00-12:00"},
		{"2026-09-27", "", "none"}, // Sunday
		{"2026-09-27", "RJ", "none"},
		{"2026-09-07", "", "none"}, // Independence Day, a Monday: follows Sunday
		{"2026-09-22", "RJ", "none"},
	}
	for _, tt := range tests {
		if got := d.WindowFor(cal, calendar.MustParse(tt.date), tt.uf).String(); got != tt.want {
			t.Errorf("WindowFor(%s, %q) = %s, want %s", tt.date, tt.uf, got, tt.want)
		}
	}
}

func TestWindowContainsIsHalfOpen(t *testing.T) {
	t.Parallel()
	w := &Window{"08:00", "20:00"}
	at := func(h, m, s int) time.Time { return time.Date(2026, 9, 24, h, m, s, 0, time.UTC) }
	for _, tt := range []struct {
		t    time.Time
		want bool
	}{{at(7, 59, 59), false}, {at(8, 0, 0), true}, {at(19, 59, 59), true}, {at(20, 0, 0), false}, {at(20, 1, 0), false}} {
		if got := w.Contains(tt.t); got != tt.want {
			t.Errorf("Contains(%s) = %v", tt.t.Format("15:04:05"), got)
		}
	}
	var none *Window
	if none.Contains(at(12, 0, 0)) {
		t.Error("a nil window admits a contact")
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	got := Render("Contrato {{contractId}}: {{ amount }} ({{dueDate}}){{missing}}", map[string]string{"contractId": "C-1", "amount": "R$ 10,00", "dueDate": "2026-09-10"})
	if want := "Contrato C-1: R$ 10,00 (2026-09-10)"; got != want {
		t.Fatalf("Render = %q, want %q", got, want)
	}
}

func TestContactRulesArePartOfTheVersion(t *testing.T) {
	t.Parallel()
	s, tenants, tn := setup(t)
	in := contactInput()
	in.StateWindows = map[string]ContactWindow{"RJ": {Weekdays: &Window{"09:00", "18:00"}}}
	in.Templates = map[string]string{"SMS_D1": "Contrato {{contractId}} em aberto."}
	d1, created, err := s.PutDunning(ctx, tn, in)
	if err != nil || !created {
		t.Fatalf("v1: %v %v", err, created)
	}
	tn, _ = tenants.Get(ctx, tn.ID)
	if _, created, err := s.PutDunning(ctx, tn, in); err != nil || created {
		t.Fatalf("same rules published again: %v %v", err, created)
	}
	in.Templates = map[string]string{"SMS_D1": "Contrato {{contractId}}: regularize."}
	d2, created, err := s.PutDunning(ctx, tn, in)
	if err != nil || !created || d2.Version != d1.Version+1 {
		t.Fatalf("changed template is a new version: %v %v %+v", err, created, d2)
	}
	fresh := NewService(s.kit, tenants, s.clock) // read back from the store, not the cache
	got, err := fresh.Dunning(ctx, tn, d1.Version)
	if err != nil {
		t.Fatal(err)
	}
	if w := got.StateWindows["RJ"].Weekdays; w == nil || *w != (Window{"09:00", "18:00"}) || got.Templates["SMS_D1"] != "Contrato {{contractId}} em aberto." {
		t.Fatalf("stored v1 = %+v", got)
	}
}
