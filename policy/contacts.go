package policy

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/text"
)

// UFs are the 27 federative units of Brazil (26 states and the Federal
// District), the keys a per-state contact window may have.
var UFs = []string{"AC", "AL", "AM", "AP", "BA", "CE", "DF", "ES", "GO", "MA", "MG", "MS", "MT", "PA", "PB", "PE",
	"PI", "PR", "RJ", "RN", "RO", "RR", "RS", "SC", "SE", "SP", "TO"}

// ValidUF reports whether uf is one of the 27 UFs (upper case).
func ValidUF(uf string) bool { return slices.Contains(UFs, uf) }

// Placeholders are what a message template may interpolate: facts about the
// contract, never about the person (no name, document, phone or e-mail).
// amountDue is what is overdue today with its fine and late interest (a
// charge quote's arithmetic); amount is its alias; outstanding is the
// whole open balance; contractIds lists every contract one message is
// about; pixCopiaECola and paymentLink come from the charge open for the
// oldest overdue instalment, if any; bureauName and reportDate are the
// bureau notice's (ADR 0067).
var Placeholders = []string{"contractId", "contractIds", "amount", "amountDue", "outstanding", "dueDate", "oldestDueDate",
	"daysPastDue", "tenantName", "pixCopiaECola", "paymentLink", "bureauName", "reportDate"}

// MaxTemplateLen bounds a template's text (runes).
const MaxTemplateLen = 1000

var placeholderPattern = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// minutes reads "HH:MM" as minutes since midnight.
func minutes(hhmm string) int {
	t, _ := time.Parse("15:04", hhmm)
	return t.Hour()*60 + t.Minute()
}

// within reports whether w (nil: no contact) lies inside outer.
func (w *Window) within(outer *Window) bool {
	if w == nil {
		return true
	}
	return outer != nil && minutes(w.From) >= minutes(outer.From) && minutes(w.To) <= minutes(outer.To)
}

// Contains reports whether the wall-clock time of t (already in the
// tenant's zone) is inside the window: from inclusive, to exclusive, so a
// window to 20:00 ends at 19:59:59 and 20:00 is out.
func (w *Window) Contains(t time.Time) bool {
	if w == nil {
		return false
	}
	h, m, s := t.Clock()
	sec := h*3600 + m*60 + s
	return sec >= minutes(w.From)*60 && sec < minutes(w.To)*60
}

// String is "08:00-20:00", or "none" for a day without contact.
func (w *Window) String() string {
	if w == nil {
		return "none"
	}
	return w.From + "-" + w.To
}

// day returns the window of one kind of day: weekdays, Saturday, or Sunday
// (which holidays follow).
func (cw ContactWindow) day(wd time.Weekday, holiday bool) *Window {
	switch {
	case holiday || wd == time.Sunday:
		return cw.Sunday
	case wd == time.Saturday:
		return cw.Saturday
	}
	return cw.Weekdays
}

// WindowFor is the contact window of a local date for a debtor in uf
// ("" when unknown): the general window of that weekday — Sunday's on
// holidays of cal — narrowed to the state's window when the policy has one
// for uf. nil means no contact at all that day.
func (d *Dunning) WindowFor(cal *calendar.Calendar, date calendar.Date, uf string) *Window {
	holiday := cal != nil && cal.IsHoliday(date)
	w := d.ContactWindow.day(date.Weekday(), holiday)
	if sw, ok := d.StateWindows[uf]; ok && w != nil {
		// Validation keeps a state window inside the general one, so the
		// state's window is the stricter of the two.
		return sw.day(date.Weekday(), holiday)
	}
	return w
}

// Template is the text of action's message, and whether the policy has one.
func (d *Dunning) Template(action string) (string, bool) {
	s, ok := d.Templates[action]
	return s, ok
}

// Render fills a template's placeholders from vars; a placeholder vars
// does not have becomes empty. Validation guarantees only Placeholders
// appear in a policy's templates.
func Render(template string, vars map[string]string) string {
	return placeholderPattern.ReplaceAllStringFunc(template, func(m string) string {
		return vars[placeholderPattern.FindStringSubmatch(m)[1]]
	})
}

func (in DunningInput) validateContacts() error {
	general := in.ContactWindow
	for uf, sw := range in.StateWindows {
		if !ValidUF(uf) {
			return errs.E(errs.Invalid, "invalid_state_window", "stateWindows keys must be one of the 27 UFs (upper case)")
		}
		if !sw.Weekdays.valid() || !sw.Saturday.valid() || !sw.Sunday.valid() {
			return errs.E(errs.Invalid, "invalid_state_window", "stateWindows.%s days must be {from, to} in HH:MM, from before to", uf)
		}
		if !sw.Weekdays.within(general.Weekdays) || !sw.Saturday.within(general.Saturday) || !sw.Sunday.within(general.Sunday) {
			return errs.E(errs.Invalid, "invalid_state_window",
				"stateWindows.%s must be within the general contactWindow (a state may only narrow it)", uf)
		}
	}
	if len(in.Templates) > 100 {
		return errs.E(errs.Invalid, "invalid_templates", "at most 100 templates")
	}
	for action, tmpl := range in.Templates {
		if !actionPattern.MatchString(action) {
			return errs.E(errs.Invalid, "invalid_templates", "templates keys must be actions: 1-32 of A-Z 0-9 _")
		}
		// Templates become SMS and e-mail bodies: the shared rule refuses
		// line breaks, NUL and bidi controls (collections/text).
		if err := text.Check("templates."+action, tmpl); err != nil {
			return err
		}
		if tmpl == "" || utf8.RuneCountInString(tmpl) > MaxTemplateLen {
			return errs.E(errs.Invalid, "invalid_templates", "templates.%s must be 1-%d printable characters", action, MaxTemplateLen)
		}
		for _, m := range placeholderPattern.FindAllStringSubmatch(tmpl, -1) {
			if !slices.Contains(Placeholders, m[1]) {
				return errs.E(errs.Invalid, "invalid_templates", "templates.%s: unknown placeholder; use %s",
					action, "{{"+strings.Join(Placeholders, "}} {{")+"}}")
			}
		}
	}
	return nil
}

func sameContacts(d, o *Dunning) bool {
	eqw := func(a, b *Window) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	eqcw := func(a, b ContactWindow) bool {
		return eqw(a.Weekdays, b.Weekdays) && eqw(a.Saturday, b.Saturday) && eqw(a.Sunday, b.Sunday)
	}
	return maps.EqualFunc(d.StateWindows, o.StateWindows, eqcw) && maps.Equal(d.Templates, o.Templates)
}
