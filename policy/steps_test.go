package policy

import (
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/errs"
	"lastro/collections/keys"
)

func TestKindOfAndLegacyChannel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		step    Step
		kind    Kind
		channel string // LegacyChannel(step.Action)
	}{
		{Step{DaysPastDue: 1, Action: "SMS_D1", Channel: ChannelSMS}, KindMessage, ChannelSMS},
		{Step{DaysPastDue: 15, Action: "CALL_D15", Channel: ChannelCall}, KindCall, ChannelCall},
		{Step{DaysPastDue: 20, Action: "CARTA_D20", Channel: ChannelLetter}, KindMessage, ChannelLetter},
		{Step{DaysPastDue: 25, Action: "LIGACAO_D25", Channel: ChannelCall}, KindCall, ChannelCall},
		{Step{DaysPastDue: 60, Action: BureauNotice, Channel: ChannelLetter}, KindNotice, ChannelEmail},
		{Step{DaysPastDue: 75, Action: BureauReport}, KindReport, ""},
		{Step{DaysPastDue: 9, Action: "AVISO_D9"}, KindMessage, ""}, // never guessed as SMS
	}
	for _, tt := range tests {
		if got := KindOf(tt.step); got != tt.kind {
			t.Errorf("KindOf(%s) = %s, want %s", tt.step.Action, got, tt.kind)
		}
		if got := LegacyChannel(tt.step.Action); got != tt.channel {
			t.Errorf("LegacyChannel(%s) = %q, want %q", tt.step.Action, got, tt.channel)
		}
	}
	for _, a := range []string{DueCheck, PromiseCheck, BucketMove, BureauRemoval, BureauUpdate, ""} {
		if IsStep(a) {
			t.Errorf("IsStep(%q)", a)
		}
	}
	if !IsStep("SMS_D1") || !IsStep(BureauNotice) {
		t.Error("a régua step is not a step")
	}
}

func TestStepValidation(t *testing.T) {
	t.Parallel()
	base := func(steps ...Step) DunningInput {
		d := DefaultDunning()
		return DunningInput{Steps: steps, ContactWindow: d.ContactWindow, MaxDailyContacts: 3, BureauNoticeToReportDays: 15}
	}
	tests := []struct {
		name    string
		steps   []Step
		invalid bool
	}{
		{"explicit channel", []Step{{DaysPastDue: 1, Action: "AVISO_D1", Channel: ChannelWhatsApp, Fallbacks: []string{ChannelSMS}}}, false},
		{"derived from the name", []Step{{DaysPastDue: 1, Action: "SMS_D1"}}, false},
		{"pre-due reminder", []Step{{DaysPastDue: -3, Action: "SMS_DM3", Channel: ChannelSMS}, {DaysPastDue: 1, Action: "SMS_D1"}}, false},
		{"unknown channel", []Step{{DaysPastDue: 1, Action: "SMS_D1", Channel: "FAX"}}, true},
		{"no channel, none derivable", []Step{{DaysPastDue: 1, Action: "AVISO_D1"}}, true},
		{"fallback of another kind", []Step{{DaysPastDue: 1, Action: "SMS_D1", Channel: ChannelSMS, Fallbacks: []string{ChannelCall}}}, true},
		{"fallback repeating the channel", []Step{{DaysPastDue: 1, Action: "SMS_D1", Channel: ChannelSMS, Fallbacks: []string{ChannelSMS}}}, true},
		{"notice by SMS", []Step{{DaysPastDue: 1, Action: BureauNotice, Channel: ChannelSMS}}, true},
		{"report with a channel", []Step{{DaysPastDue: 1, Action: BureauNotice, Channel: ChannelEmail}, {DaysPastDue: 20, Action: BureauReport, Channel: ChannelEmail}}, true},
		{"notice by letter, e-mail as fallback", []Step{{DaysPastDue: 1, Action: BureauNotice, Channel: ChannelLetter, Fallbacks: []string{ChannelEmail}}}, false},
		{"notice before the due date", []Step{{DaysPastDue: -1, Action: BureauNotice, Channel: ChannelEmail}}, true},
		{"day zero", []Step{{DaysPastDue: 0, Action: "SMS_D0", Channel: ChannelSMS}}, true},
		{"too early", []Step{{DaysPastDue: -31, Action: "SMS_DM31", Channel: ChannelSMS}}, true},
		{"repeated action", []Step{{DaysPastDue: 1, Action: "SMS_X", Channel: ChannelSMS}, {DaysPastDue: 2, Action: "SMS_X", Channel: ChannelSMS}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := base(tt.steps...).validate()
			var e *errs.Error
			if tt.invalid != (err != nil) || (err != nil && (!errors.As(err, &e) || e.Kind != errs.Invalid)) {
				t.Fatalf("validate: %v, want invalid %v", err, tt.invalid)
			}
			if err == nil && slices.ContainsFunc(d.Steps, func(s Step) bool { return s.Channel == "" && KindOf(s) != KindReport }) {
				t.Fatalf("a step was stored without its channel: %+v", d.Steps)
			}
		})
	}
}

// TestLegacyVersionGetsItsChannelsAtDecode: a version published before
// steps named their channel is read with one derived once, and a name
// that names none is left without (passed over when due, never SMS).
func TestLegacyVersionGetsItsChannelsAtDecode(t *testing.T) {
	t.Parallel()
	s, _, tn := setup(t)
	d := DefaultDunning()
	it, err := attributevalue.MarshalMap(dunningItem{PK: keys.Tenant(tn.ID), SK: dunningName(7), Type: "DUNNING_POLICY", Version: 7,
		Steps: []Step{{DaysPastDue: 1, Action: "SMS_D1"}, {DaysPastDue: 20, Action: "CARTA_D20"}, {DaysPastDue: 25, Action: "LIGACAO_D25"},
			{DaysPastDue: 30, Action: "AVISO_D30"}, {DaysPastDue: 60, Action: BureauNotice}, {DaysPastDue: 75, Action: BureauReport}},
		ContactWindow: d.ContactWindow, MaxDailyContacts: 3, BureauNoticeToReportDays: 15})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.kit.Tenant(tn.ID, tn.CursorKey()).Put(ctx, it, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.Dunning(ctx, tn, 7)
	if err != nil {
		t.Fatal(err)
	}
	var channels []string
	for _, st := range got.Steps {
		channels = append(channels, st.Channel)
	}
	if want := []string{ChannelSMS, ChannelLetter, ChannelCall, "", ChannelEmail, ""}; !slices.Equal(channels, want) {
		t.Fatalf("channels %q, want %q", channels, want)
	}
}
