package policy

import (
	"slices"
	"strings"

	"lastro/collections/errs"
)

// Channels a régua step contacts the debtor through (the contact
// gateway's channels, contactlimit.Channels, by the same names).
const (
	ChannelSMS      = "SMS"
	ChannelEmail    = "EMAIL"
	ChannelWhatsApp = "WHATSAPP"
	ChannelCall     = "CALL"
	ChannelLetter   = "LETTER"
)

// StepChannels are the channels a step may name, in the order the API
// documents them.
var StepChannels = []string{ChannelSMS, ChannelEmail, ChannelWhatsApp, ChannelCall, ChannelLetter}

// BureauUpdate sends the credit bureau the new amount of a reported
// contract whose overdue amount changed (a partial payment): an engine
// action, never a step (ADR 0067).
const BureauUpdate = "BUREAU_UPDATE"

// engineActions are the agenda actions the engine schedules itself; a
// régua step may not use these names. The agenda and the arrangement
// package both ask IsStep, so there is one list (ADR 0066).
var engineActions = []string{DueCheck, PromiseCheck, BucketMove, BureauRemoval, BureauUpdate}

// IsEngineAction reports whether action is one the engine schedules
// itself (DUE_CHECK, PROMISE_CHECK, BUCKET_MOVE, BUREAU_REMOVAL,
// BUREAU_UPDATE).
func IsEngineAction(action string) bool { return slices.Contains(engineActions, action) }

// IsStep reports whether an agenda action is a régua step rather than one
// the engine schedules itself ("" is neither).
func IsStep(action string) bool { return action != "" && !IsEngineAction(action) }

// Kind is what a step does when it runs: the row of the step table.
type Kind string

// The kinds of step.
const (
	KindMessage Kind = "MESSAGE" // a message through its channel (SMS, EMAIL, WHATSAPP, LETTER)
	KindCall    Kind = "CALL"    // work for a collector: a task on the day's call list, no message
	KindNotice  Kind = "NOTICE"  // the bureau notice (CDC art. 43 §2): a written notice, LETTER or EMAIL
	KindReport  Kind = "REPORT"  // the bureau inclusion: no contact, no channel
	KindEngine  Kind = "ENGINE"  // an engine action, never a step
)

// kindChannels is the step table: the channels each kind of step may
// name, as its channel or a fallback. A report names none.
var kindChannels = map[Kind][]string{
	KindMessage: {ChannelSMS, ChannelEmail, ChannelWhatsApp, ChannelLetter},
	KindCall:    {ChannelCall},
	KindNotice:  {ChannelLetter, ChannelEmail},
	KindReport:  nil,
}

// KindOf is the kind of step s: the bureau's two actions by name, an
// engine action by name, a call by its channel, any other step a message.
func KindOf(s Step) Kind {
	switch {
	case s.Action == BureauNotice:
		return KindNotice
	case s.Action == BureauReport:
		return KindReport
	case IsEngineAction(s.Action):
		return KindEngine
	case s.Channel == ChannelCall:
		return KindCall
	}
	return KindMessage
}

// Channels is the step's channel followed by its fallbacks, in the order
// they are tried; empty for a report and for a legacy step whose channel
// could not be derived.
func (s Step) Channels() []string {
	if s.Channel == "" {
		return nil
	}
	return append([]string{s.Channel}, s.Fallbacks...)
}

// legacyPrefixes derive the channel of a step published before steps
// named one (ADR 0066): the first word of its name, in English or in
// Portuguese. Anything else has no channel and is passed over, on the
// record, when it comes due — never guessed as SMS.
var legacyPrefixes = map[string]string{
	"SMS": ChannelSMS, "EMAIL": ChannelEmail, "WHATSAPP": ChannelWhatsApp, "CALL": ChannelCall, "LETTER": ChannelLetter,
	"CARTA": ChannelLetter, "LIGACAO": ChannelCall, "ZAP": ChannelWhatsApp, "WPP": ChannelWhatsApp,
}

// LegacyChannel is the channel a step without one is read with: EMAIL for
// the bureau notice (what the engine always used), none for the report,
// else the channel its name's first word names (legacyPrefixes), else "".
func LegacyChannel(action string) string {
	switch action {
	case BureauNotice:
		return ChannelEmail
	case BureauReport:
		return ""
	}
	head, _, _ := strings.Cut(action, "_")
	return legacyPrefixes[head]
}

// withChannels derives, once, the channel of every step that has none
// (a version published before steps named their channel). The steps are
// copied: a cached version is never written to.
func withChannels(steps []Step) []Step {
	out := slices.Clone(steps)
	for i := range out {
		if out[i].Channel == "" && KindOf(out[i]) != KindReport {
			out[i].Channel = LegacyChannel(out[i].Action)
		}
	}
	return out
}

// MinPreDueDays is the earliest a pre-due reminder may run: 30 days
// before the due date.
const MinPreDueDays = -30

// validateStep checks one step of a published policy against the step
// table and fills the channel a step may leave out (ADR 0066).
func validateStep(i int, s *Step) error {
	kind := KindOf(*s)
	if s.Channel == "" && kind != KindReport {
		s.Channel = LegacyChannel(s.Action)
		if s.Channel == "" {
			return errs.E(errs.Invalid, "invalid_steps", "steps[%d].channel is required: one of %s", i, strings.Join(StepChannels, ", "))
		}
		kind = KindOf(*s)
	}
	allowed := kindChannels[kind]
	switch {
	case kind == KindReport && (s.Channel != "" || len(s.Fallbacks) > 0):
		return errs.E(errs.Invalid, "invalid_steps", "steps[%d]: BUREAU_REPORT contacts nobody; it names no channel", i)
	case kind != KindReport && !slices.Contains(StepChannels, s.Channel):
		return errs.E(errs.Invalid, "invalid_steps", "steps[%d].channel must be one of %s", i, strings.Join(StepChannels, ", "))
	case kind != KindReport && !slices.Contains(allowed, s.Channel):
		return errs.E(errs.Invalid, "invalid_steps", "steps[%d].channel of %s must be one of %s", i, s.Action, strings.Join(allowed, ", "))
	case len(s.Fallbacks) > 3:
		return errs.E(errs.Invalid, "invalid_steps", "steps[%d].fallbacks has at most 3 channels", i)
	}
	seen := []string{s.Channel}
	for _, f := range s.Fallbacks {
		if !slices.Contains(allowed, f) || slices.Contains(seen, f) {
			return errs.E(errs.Invalid, "invalid_steps", "steps[%d].fallbacks must be distinct channels among %s, other than its channel",
				i, strings.Join(allowed, ", "))
		}
		seen = append(seen, f)
	}
	if s.DaysPastDue < 0 && kind != KindMessage && kind != KindCall {
		return errs.E(errs.Invalid, "invalid_steps", "steps[%d]: only a message or a call may run before the due date", i)
	}
	return nil
}

// PreDue are the policy's pre-due reminders (steps with negative days:
// D−3 runs three days before an instalment's due date), in order.
func (d *Dunning) PreDue() []Step {
	var out []Step
	for _, s := range d.Steps {
		if s.DaysPastDue < 0 {
			out = append(out, s)
		}
	}
	return out
}

// DefaultBureauName is the bureau a policy that names none reports to, as
// the notice names it.
const DefaultBureauName = "SPC/Serasa"

// Bureau is the name of the credit bureau the policy reports to.
func (d *Dunning) Bureau() string {
	if d != nil && d.BureauName != "" {
		return d.BureauName
	}
	return DefaultBureauName
}
