package debtor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"lastro/debtor"
)

// TestContactCardIsAuditedBeforeItIsShown: a collector about to call sees
// the name and phone once an event says who saw which fields; the event
// holds no value of them.
func TestContactCardIsAuditedBeforeItIsShown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "t-a")
	a := f.tenant(t, "t-a")
	bg := context.Background()
	r, err := f.Debtors.Register(bg, a, debtor.RegisterInput{Document: "529.982.247-25", Name: "Maria Sintética", Phone: "+55 11 90000-0001"},
		debtor.Actor{Role: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(time.Minute) // events are ordered by instant
	card, err := f.Debtors.RevealContact(bg, a, r.DebtorKey, debtor.Actor{Role: "operator", RequestID: "req-1"})
	if err != nil || card.Name != "Maria Sintética" || card.Phone != "+5511900000001" || card.Email != "" || card.EventID == "" {
		t.Fatalf("card: %v %+v", err, card)
	}
	v, err := f.Debtors.View(bg, a, r.DebtorKey, debtor.DefaultViewLimit, "")
	if err != nil || len(v.Events) != 2 {
		t.Fatalf("view: %v %+v", err, v)
	}
	ev := v.Events[0]
	if ev.EventType != debtor.EvContactRevealed || ev.ActorRole != "operator" || ev.EventID != card.EventID {
		t.Fatalf("audit event: %+v", ev)
	}
	if got := strings.Join(anyStrings(ev.Details["fields"]), ","); got != "name,phone" {
		t.Fatalf("fields: %q in %+v", got, ev.Details)
	}
	for _, v := range ev.Details {
		if s, _ := v.(string); strings.Contains(s, "Maria") || strings.Contains(s, "900000001") {
			t.Fatalf("personal data in the event: %+v", ev.Details)
		}
	}
	if _, err := f.Debtors.RevealContact(bg, a, "0000000000000000", debtor.Actor{Role: "operator"}); code(err) != "debtor_not_found" {
		t.Fatalf("unknown debtor: %v", err)
	}
	if _, err := f.Debtors.RevealContact(bg, a, "NOT-A-KEY", debtor.Actor{Role: "operator"}); code(err) != "invalid_debtor_key" {
		t.Fatalf("bad key: %v", err)
	}
}

func anyStrings(v any) []string {
	var out []string
	switch l := v.(type) {
	case []any:
		for _, x := range l {
			s, _ := x.(string)
			out = append(out, s)
		}
	case []string:
		out = l
	}
	return out
}
