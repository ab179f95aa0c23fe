package policy

import (
	"regexp"
	"slices"
	"time"
	"unicode/utf8"

	"lastro/collections/errs"
	"lastro/collections/text"
)

// Agenda actions the engine schedules itself; a régua step may not use
// these names.
const (
	DueCheck     = "DUE_CHECK"
	PromiseCheck = "PROMISE_CHECK"
	BucketMove   = "BUCKET_MOVE"
	// BureauRemoval removes a cured or settled contract's credit-bureau
	// record: the creditor must remove it once the debt is paid.
	BureauRemoval = "BUREAU_REMOVAL"
	BureauNotice  = "BUREAU_NOTICE"
	BureauReport  = "BUREAU_REPORT"
)

// Step is one step of the régua: an action on a day past due (negative:
// a reminder that many days before the due date), through its channel and,
// when the debtor has no address for it, its fallbacks in order (ADR
// 0066). What the step does follows from the step table (KindOf).
type Step struct {
	DaysPastDue int      `json:"daysPastDue" dynamodbav:"daysPastDue"`
	Action      string   `json:"action" dynamodbav:"action"`
	Channel     string   `json:"channel,omitempty" dynamodbav:"channel,omitempty"`
	Fallbacks   []string `json:"fallbacks,omitempty" dynamodbav:"fallbacks,omitempty"`
}

// Window is a time-of-day range ("08:00"–"20:00") in the tenant's zone.
type Window struct {
	From string `json:"from" dynamodbav:"from"`
	To   string `json:"to" dynamodbav:"to"`
}

// ContactWindow says when a debtor may be contacted; a nil day means no
// contact at all that day. Holidays follow Sunday.
type ContactWindow struct {
	Weekdays *Window `json:"weekdays" dynamodbav:"weekdays"`
	Saturday *Window `json:"saturday" dynamodbav:"saturday"`
	Sunday   *Window `json:"sunday" dynamodbav:"sunday"`
}

// Dunning is one version of a tenant's dunning policy.
type Dunning struct {
	Version                  int           `json:"version"`
	Name                     string        `json:"name"` // DP#v0002
	Steps                    []Step        `json:"steps"`
	ContactWindow            ContactWindow `json:"contactWindow"`
	MaxDailyContacts         int           `json:"maxDailyContacts"`
	BureauNoticeToReportDays int           `json:"bureauNoticeToReportDays"`
	// StateWindows are optional stricter windows per debtor state (UF),
	// each inside the general window (contacts.go).
	StateWindows map[string]ContactWindow `json:"stateWindows,omitempty"`
	// Templates are optional message texts per action (contacts.go).
	Templates map[string]string `json:"templates,omitempty"`
	// MaxBrokenPromises refuses a new promise on a contract that already
	// broke this many (0: no limit); MaxPromiseDays is how far ahead a
	// promised date may be (0: DefaultMaxPromiseDays).
	MaxBrokenPromises int `json:"maxBrokenPromises,omitempty"`
	MaxPromiseDays    int `json:"maxPromiseDays,omitempty"`
	// AgreementBreakDays is how many days an agreement instalment may be
	// overdue before the agreement breaks (0: DefaultAgreementBreakDays).
	AgreementBreakDays int `json:"agreementBreakDays,omitempty"`
	// MinimumDunnedCents is the overdue amount below which a contract is
	// not dunned (a residue): no contact step runs while what is overdue
	// is less (0: every amount is dunned).
	MinimumDunnedCents int64 `json:"minimumDunnedCents,omitempty"`
	// BureauName is the credit bureau the notice names (Bureau: the
	// default when empty).
	BureauName string `json:"bureauName,omitempty"`
	CreatedAt  string `json:"createdAt,omitempty"`
}

// DefaultAgreementBreakDays is the agreement break of a policy that sets none.
const DefaultAgreementBreakDays = 30

// AgreementBreak is how many days an agreement instalment may be overdue
// before the agreement breaks.
func (d *Dunning) AgreementBreak() int {
	if d != nil && d.AgreementBreakDays > 0 {
		return d.AgreementBreakDays
	}
	return DefaultAgreementBreakDays
}

// DefaultMaxPromiseDays is the promise horizon of a policy that sets none.
const DefaultMaxPromiseDays = 30

// PromiseHorizon is how many days ahead a promised date may be.
func (d *Dunning) PromiseHorizon() int {
	if d.MaxPromiseDays > 0 {
		return d.MaxPromiseDays
	}
	return DefaultMaxPromiseDays
}

// DefaultDunning is version 0: SMS on days 1 and 5, a call on day 15, an
// agreement offer by SMS on day 45, the bureau notice by e-mail on day 60
// and the report on day 75; contacts 08:00–20:00 on weekdays and 08:00–14:00 on Saturdays,
// at most 3 a day.
func DefaultDunning() *Dunning {
	return &Dunning{Version: 0, Name: dunningName(0),
		Steps: []Step{{DaysPastDue: 1, Action: "SMS_D1", Channel: ChannelSMS}, {DaysPastDue: 5, Action: "SMS_D5", Channel: ChannelSMS},
			{DaysPastDue: 15, Action: "CALL_D15", Channel: ChannelCall}, {DaysPastDue: 45, Action: "SMS_D45", Channel: ChannelSMS},
			{DaysPastDue: 60, Action: BureauNotice, Channel: ChannelEmail}, {DaysPastDue: 75, Action: BureauReport}},
		ContactWindow:    ContactWindow{Weekdays: &Window{"08:00", "20:00"}, Saturday: &Window{"08:00", "14:00"}},
		MaxDailyContacts: 3, BureauNoticeToReportDays: 15}
}

// DunningInput is the body of PUT /v1/policies/dunning.
type DunningInput struct {
	Steps                    []Step                   `json:"steps"`
	ContactWindow            ContactWindow            `json:"contactWindow"`
	MaxDailyContacts         int                      `json:"maxDailyContacts"`
	BureauNoticeToReportDays int                      `json:"bureauNoticeToReportDays"`
	StateWindows             map[string]ContactWindow `json:"stateWindows,omitempty"`
	Templates                map[string]string        `json:"templates,omitempty"`
	MaxBrokenPromises        int                      `json:"maxBrokenPromises,omitempty"`
	MaxPromiseDays           int                      `json:"maxPromiseDays,omitempty"`
	AgreementBreakDays       int                      `json:"agreementBreakDays,omitempty"`
	MinimumDunnedCents       int64                    `json:"minimumDunnedCents,omitempty"`
	BureauName               string                   `json:"bureauName,omitempty"`
}

var actionPattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,31}$`)

func (w *Window) valid() bool {
	if w == nil {
		return true
	}
	from, err1 := time.Parse("15:04", w.From)
	to, err2 := time.Parse("15:04", w.To)
	return err1 == nil && err2 == nil && len(w.From) == 5 && len(w.To) == 5 && from.Before(to)
}

func (in DunningInput) validate() (*Dunning, error) {
	if len(in.Steps) == 0 || len(in.Steps) > 50 {
		return nil, errs.E(errs.Invalid, "invalid_steps", "steps must have 1-50 entries")
	}
	notice, report := -1, -1
	in.Steps = slices.Clone(in.Steps) // validateStep fills channels: the caller's slice stays as given
	for i := range in.Steps {
		s := &in.Steps[i]
		if s.DaysPastDue < MinPreDueDays || s.DaysPastDue == 0 || s.DaysPastDue > 3650 {
			return nil, errs.E(errs.Invalid, "invalid_steps", "steps[%d].daysPastDue must be %d to -1 (before the due date) or 1-3650", i, MinPreDueDays)
		}
		if i > 0 && s.DaysPastDue <= in.Steps[i-1].DaysPastDue {
			return nil, errs.E(errs.Invalid, "invalid_steps", "steps must be in strictly increasing daysPastDue")
		}
		if !actionPattern.MatchString(s.Action) || IsEngineAction(s.Action) {
			return nil, errs.E(errs.Invalid, "invalid_steps", "steps[%d].action must be 1-32 of A-Z 0-9 _ and not an engine action", i)
		}
		if slices.ContainsFunc(in.Steps[:i], func(o Step) bool { return o.Action == s.Action }) {
			return nil, errs.E(errs.Invalid, "invalid_steps", "steps[%d].action repeats an earlier step's", i)
		}
		if err := validateStep(i, s); err != nil {
			return nil, err
		}
		switch s.Action {
		case BureauNotice:
			notice = s.DaysPastDue
		case BureauReport:
			report = s.DaysPastDue
		}
	}
	w := in.ContactWindow
	if w.Weekdays == nil || !w.Weekdays.valid() || !w.Saturday.valid() || !w.Sunday.valid() {
		return nil, errs.E(errs.Invalid, "invalid_contact_window", "contactWindow needs weekdays (and optional saturday, sunday) as {from, to} in HH:MM, from before to")
	}
	if in.MaxDailyContacts < 1 || in.MaxDailyContacts > 10 {
		return nil, errs.E(errs.Invalid, "invalid_max_daily_contacts", "maxDailyContacts must be 1-10")
	}
	if in.BureauNoticeToReportDays < 1 || in.BureauNoticeToReportDays > 365 {
		return nil, errs.E(errs.Invalid, "invalid_bureau_notice_days", "bureauNoticeToReportDays must be 1-365")
	}
	if report >= 0 && (notice < 0 || report-notice < in.BureauNoticeToReportDays) {
		return nil, errs.E(errs.Rule, "bureau_report_without_notice",
			"a BUREAU_REPORT step needs a BUREAU_NOTICE step at least bureauNoticeToReportDays before it")
	}
	if in.MaxBrokenPromises < 0 || in.MaxBrokenPromises > 100 {
		return nil, errs.E(errs.Invalid, "invalid_max_broken_promises", "maxBrokenPromises must be 0-100 (0: no limit)")
	}
	if in.MaxPromiseDays < 0 || in.MaxPromiseDays > 365 {
		return nil, errs.E(errs.Invalid, "invalid_max_promise_days", "maxPromiseDays must be 0-365 (0: the default horizon)")
	}
	if in.AgreementBreakDays < 0 || in.AgreementBreakDays > 365 {
		return nil, errs.E(errs.Invalid, "invalid_agreement_break_days", "agreementBreakDays must be 0-365 (0: the default)")
	}
	if in.MinimumDunnedCents < 0 || in.MinimumDunnedCents > 100_000_00 {
		return nil, errs.E(errs.Invalid, "invalid_minimum_dunned", "minimumDunnedCents must be 0-10000000 (0: every amount is dunned)")
	}
	if err := text.Check("bureauName", in.BureauName); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(in.BureauName) > 60 {
		return nil, errs.E(errs.Invalid, "invalid_bureau_name", "bureauName must be at most 60 characters")
	}
	if err := in.validateContacts(); err != nil {
		return nil, err
	}
	return &Dunning{MinimumDunnedCents: in.MinimumDunnedCents, BureauName: in.BureauName, Steps: in.Steps, ContactWindow: in.ContactWindow, MaxDailyContacts: in.MaxDailyContacts,
		BureauNoticeToReportDays: in.BureauNoticeToReportDays, StateWindows: in.StateWindows, Templates: in.Templates,
		MaxBrokenPromises: in.MaxBrokenPromises, MaxPromiseDays: in.MaxPromiseDays, AgreementBreakDays: in.AgreementBreakDays}, nil
}

func (d *Dunning) sameRules(o *Dunning) bool {
	eqw := func(a, b *Window) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	sameStep := func(a, b Step) bool {
		return a.DaysPastDue == b.DaysPastDue && a.Action == b.Action && a.Channel == b.Channel && slices.Equal(a.Fallbacks, b.Fallbacks)
	}
	return slices.EqualFunc(d.Steps, o.Steps, sameStep) && d.MinimumDunnedCents == o.MinimumDunnedCents && d.BureauName == o.BureauName && eqw(d.ContactWindow.Weekdays, o.ContactWindow.Weekdays) &&
		eqw(d.ContactWindow.Saturday, o.ContactWindow.Saturday) && eqw(d.ContactWindow.Sunday, o.ContactWindow.Sunday) &&
		d.MaxDailyContacts == o.MaxDailyContacts && d.BureauNoticeToReportDays == o.BureauNoticeToReportDays &&
		d.MaxBrokenPromises == o.MaxBrokenPromises && d.MaxPromiseDays == o.MaxPromiseDays &&
		d.AgreementBreakDays == o.AgreementBreakDays &&
		sameContacts(d, o)
}

// NextStep is the first step on or after daysPastDue; ok is false when the
// régua has no step left.
func (d *Dunning) NextStep(daysPastDue int) (Step, bool) {
	for _, s := range d.Steps {
		if s.DaysPastDue >= daysPastDue {
			return s, true
		}
	}
	return Step{}, false
}
