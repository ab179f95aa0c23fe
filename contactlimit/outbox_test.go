package contactlimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lastro/collections/clock"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contactlimit"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

// TestOutboxWritesOneLinePerAttempt: the JSON-lines outbox is idempotent
// by attempt id, across a crash (a line written by a killed process whose
// outcome was never recorded) and among concurrent sends; a last line cut
// short is ended before the next one is appended.
func TestOutboxWritesOneLinePerAttempt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "outbox.jsonl")
	const before = "7a4c1f2e-0000-4000-8000-000000000001"
	if err := os.WriteFile(path, []byte(`{"attemptId":"`+before+`","action":"SMS_D1"}`+"\n"+`{"attemptId":"torn`), 0o600); err != nil {
		t.Fatal(err)
	}
	o := contactlimit.NewOutbox(path)
	tn := &tenant.Tenant{ID: "t-1"}
	if err := o.Send(bg, tn, contactlimit.Message{AttemptID: before, Action: "SMS_D1"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := o.Send(bg, tn, contactlimit.Message{AttemptID: "7a4c1f2e-0000-4000-8000-000000000002", Action: "SMS_D5"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"attemptId":"` + before + `","action":"SMS_D1"}` + "\n" + `{"attemptId":"torn` + "\n"
	if got := string(raw); len(got) <= len(want) || got[:len(want)] != want {
		t.Fatalf("file:\n%s", got)
	}
	if count := strings.Count(string(raw), "7a4c1f2e-0000-4000-8000-000000000002"); count != 1 {
		t.Fatalf("%d lines for one attempt sent 8 times", count)
	}
}

// crashy is a sender that writes through next and then fails the first
// send of every attempt as a transient error: what a process killed
// between the write and the outcome's record leaves behind.
type crashy struct {
	next contactlimit.Sender
	mu   sync.Mutex
	seen map[string]bool
}

func (c *crashy) Send(ctx context.Context, t *tenant.Tenant, m contactlimit.Message) error {
	if err := c.next.Send(ctx, t, m); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seen[m.AttemptID] {
		c.seen[m.AttemptID] = true
		return &contactlimit.SendError{Detail: "killed", Transient: true}
	}
	return nil
}

// reserve reserves a contact and commits its actions, as the agenda's
// step write does.
func (f *fixture) reserve(t *testing.T, g *contactlimit.Gateway, dk string) *contactlimit.Reservation {
	t.Helper()
	r, err := g.Reserve(bg, f.t, claimAt(dk, f.Clock.Now()), 0)
	if err != nil || !r.Attempt.Allowed || len(r.Actions) != 3 {
		t.Fatalf("reserve: %+v %v", r, err)
	}
	if err := f.Kit.Tenant(f.t.ID, f.t.CursorKey()).Write(bg, r.Actions...); err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fixture) outboxEntries(t *testing.T) int {
	t.Helper()
	p, err := f.Kit.Tenant(f.t.ID, f.t.CursorKey()).QueryPage(bg, kit.Query{Partition: keys.Outbox(f.t.ID, 0), Consistent: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Items)
}

// TestDispatchFinishesWhatACrashLeft: an attempt whose line was written
// but whose outcome was not (the sender's answer lost) stays PENDING with
// its outbox entry; the dispatcher delivers it again, the outbox writes
// no second line, and the outcome and the entry's deletion follow.
func TestDispatchFinishesWhatACrashLeft(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	path := filepath.Join(t.TempDir(), "outbox.jsonl")
	g := f.gateway(contactlimit.Deps{Sender: &crashy{next: contactlimit.NewOutbox(path), seen: map[string]bool{}}, Addresses: addresses{}})
	dk := f.debtor(t, "")
	r := f.reserve(t, g, dk)
	d, err := g.DeliverPending(bg, f.t, r.Pending, true, nil)
	if err != nil || d.Attempt.Outcome != contactlimit.OutcomePending || f.outboxEntries(t) != 1 {
		t.Fatalf("first try: %+v %v, %d entries", d, err, f.outboxEntries(t))
	}
	sent := 0
	rep, err := g.Dispatch(bg, f.t, 0, true, func(_ context.Context, a contactlimit.Attempt) error {
		if a.AttemptID != r.Attempt.AttemptID {
			t.Errorf("sent hook for %s", a.AttemptID)
		}
		sent++
		return nil
	})
	if err != nil || rep.Sent != 1 || sent != 1 || f.outboxEntries(t) != 0 {
		t.Fatalf("dispatch: %+v %v, hook %d, %d entries", rep, err, sent, f.outboxEntries(t))
	}
	if lines := enginetest.JSONLines(t, path); len(lines) != 1 {
		t.Fatalf("%d outbox lines for one attempt", len(lines))
	}
	day, err := g.Day(bg, f.t, dk, "2026-09-24", 10, "")
	if err != nil || day.Counter != 1 || len(day.Items) != 1 || day.Items[0].Outcome != contactlimit.OutcomeSent {
		t.Fatalf("day: %+v %v", day, err)
	}
	// A second pass finds nothing.
	if rep, err := g.Dispatch(bg, f.t, 0, true, nil); err != nil || rep != (contactlimit.DispatchReport{}) {
		t.Fatalf("second pass: %+v %v", rep, err)
	}
}

// failing is a sender that always fails, transiently or not.
type failing struct{ transient bool }

func (s failing) Send(context.Context, *tenant.Tenant, contactlimit.Message) error {
	return &contactlimit.SendError{Detail: "status_503", Transient: s.transient}
}

// TestOutboxRetriesThenGivesUp: a transient failure is retried after a
// backoff until the tries are spent (DEAD); a final one is FAILED at once.
// Either way the outbox entry goes with the outcome.
func TestOutboxRetriesThenGivesUp(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		transient bool
		want      string
	}{{true, contactlimit.OutcomeDead}, {false, contactlimit.OutcomeFailed}} {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			wall := clock.NewManual(time.Now())
			g := f.gateway(contactlimit.Deps{Sender: failing{tt.transient}, Addresses: addresses{},
				Retry: contactlimit.Retry{Clock: wall, Tries: 3, Base: time.Minute}})
			r := f.reserve(t, g, f.debtor(t, ""))
			d, err := g.DeliverPending(bg, f.t, r.Pending, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.transient {
				if d.Attempt.Outcome != contactlimit.OutcomeFailed || f.outboxEntries(t) != 0 {
					t.Fatalf("final failure: %+v, %d entries", d, f.outboxEntries(t))
				}
				return
			}
			for try := 2; try <= 3; try++ {
				// Not due before its backoff.
				if rep, err := g.Dispatch(bg, f.t, 0, false, nil); err != nil || rep != (contactlimit.DispatchReport{}) {
					t.Fatalf("before the backoff: %+v %v", rep, err)
				}
				wall.Advance(time.Duration(1<<(try-2)) * time.Minute)
				rep, err := g.Dispatch(bg, f.t, 0, false, nil)
				if err != nil {
					t.Fatal(err)
				}
				if try < 3 && rep.Retried != 1 || try == 3 && rep.Dead != 1 {
					t.Fatalf("try %d: %+v", try, rep)
				}
			}
			if f.outboxEntries(t) != 0 {
				t.Fatal("a DEAD attempt kept its entry")
			}
		})
	}
}

// TestReservationFailsOnTheLimitInTheTransaction: a reservation whose
// transaction finds the day's limit used up fails whole (LimitReached),
// spends nothing, and is refused on the record with reason LIMIT.
func TestReservationFailsOnTheLimitInTheTransaction(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gateway(contactlimit.Deps{})
	dk := f.debtor(t, "")
	r, err := g.Reserve(bg, f.t, claimAt(dk, thursday10), 0)
	if err != nil || !r.Attempt.Allowed {
		t.Fatal(r, err)
	}
	for range 3 {
		if a, err := g.Claim(bg, f.t, claimAt(dk, thursday10)); err != nil || !a.Allowed {
			t.Fatal(a, err)
		}
	}
	err = f.Kit.Tenant(f.t.ID, f.t.CursorKey()).Write(bg, r.Actions...)
	if !contactlimit.LimitReached(err) || !errors.Is(err, kit.ErrConditionFailed) {
		t.Fatalf("write over the limit: %v", err)
	}
	a, err := g.Refuse(bg, f.t, r)
	if err != nil || a.Allowed || a.Reason != contactlimit.ReasonLimit {
		t.Fatalf("refused: %+v %v", a, err)
	}
	day, err := g.Day(bg, f.t, dk, "2026-09-24", 10, "")
	if err != nil || day.Counter != 3 || len(day.Items) != 4 || f.outboxEntries(t) != 0 {
		t.Fatalf("day: %+v %v, %d entries", day, err, f.outboxEntries(t))
	}
}

// TestWebhookSendsTheAttemptAsIdempotencyKey: the provider can
// deduplicate a message sent again after a timeout or a crash.
func TestWebhookSendsTheAttemptAsIdempotencyKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, enginetest.Egress(loopback))
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	if _, err := f.Tenants.SetMessaging(bg, f.t, tenant.MessagingInput{URL: srv.URL + "/hook"}); err != nil {
		t.Fatal(err)
	}
	f.reload(t)
	router := &contactlimit.Router{Provider: &contactlimit.Webhook{Clock: clock.System{}, Logger: f.Log, Egress: loopback}}
	g := f.gateway(contactlimit.Deps{Sender: router, Addresses: addresses{}})
	r := f.reserve(t, g, f.debtor(t, ""))
	if d, err := g.DeliverPending(bg, f.t, r.Pending, true, nil); err != nil || d.Attempt.Outcome != contactlimit.OutcomeSent {
		t.Fatalf("deliver: %+v %v", d, err)
	}
	if len(got) != 1 || got[0] != r.Attempt.AttemptID {
		t.Fatalf("idempotency keys %v, want [%s]", got, r.Attempt.AttemptID)
	}
}

// recorder is a sender that keeps the channels it was handed.
type recorder struct {
	mu  sync.Mutex
	got []contactlimit.Channel
}

func (s *recorder) Send(_ context.Context, _ *tenant.Tenant, m contactlimit.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, m.Channel)
	return nil
}

// TestRouterSendsEachChannelToItsSender: the registry by channel, then
// the tenant's provider (when it set one), then the fallback.
func TestRouterSendsEachChannelToItsSender(t *testing.T) {
	t.Parallel()
	email, sms, fallback := &recorder{}, &recorder{}, &recorder{}
	r := &contactlimit.Router{Fallback: fallback}
	r.Register(contactlimit.Email, email)
	r.Register(contactlimit.SMS, sms)
	tn := &tenant.Tenant{ID: "t-1"}
	for _, ch := range []contactlimit.Channel{contactlimit.Email, contactlimit.SMS, contactlimit.WhatsApp, contactlimit.SMS} {
		if err := r.Send(bg, tn, contactlimit.Message{AttemptID: "a", Channel: ch}); err != nil {
			t.Fatal(err)
		}
	}
	if len(email.got) != 1 || len(sms.got) != 2 || len(fallback.got) != 1 || fallback.got[0] != contactlimit.WhatsApp {
		t.Fatalf("email %v, sms %v, fallback %v", email.got, sms.got, fallback.got)
	}
}

// TestReservationJoinsTheDaysContactOnItsChannel: a joining reservation's
// LIMIT update marks its channel, so a second contract's step on the same
// channel that day fails in its transaction as on the limit, and Refuse
// joins it to the first attempt instead: one contact spent, one entry
// owed, the second attempt JOINED (ADR 0066).
func TestReservationJoinsTheDaysContactOnItsChannel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gateway(contactlimit.Deps{})
	dk := f.debtor(t, "")
	db := f.Kit.Tenant(f.t.ID, f.t.CursorKey())
	c1, c2 := claimAt(dk, thursday10), claimAt(dk, thursday10)
	c1.Join, c2.Join, c2.ContractID = true, true, "C-2"
	first, err := g.Reserve(bg, f.t, c1, 0)
	if err != nil || !first.Attempt.Allowed {
		t.Fatal(first, err)
	}
	second, err := g.Reserve(bg, f.t, c2, 0)
	if err != nil || !second.Attempt.Allowed {
		t.Fatal(second, err)
	}
	if err := db.Write(bg, first.Actions...); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(bg, second.Actions...); !contactlimit.LimitReached(err) {
		t.Fatalf("second write on a marked channel: %v", err)
	}
	a, err := g.Refuse(bg, f.t, second)
	if err != nil || !a.Allowed || a.JoinedTo != first.Attempt.AttemptID || a.Outcome != contactlimit.OutcomeJoined {
		t.Fatalf("joined: %+v %v", a, err)
	}
	day, err := g.Day(bg, f.t, dk, "2026-09-24", 10, "")
	if err != nil || day.Counter != 1 || len(day.Items) != 2 || f.outboxEntries(t) != 1 {
		t.Fatalf("day: %+v %v, %d entries", day, err, f.outboxEntries(t))
	}
	// Another channel the same day is another contact.
	c3 := claimAt(dk, thursday10)
	c3.Join, c3.ContractID, c3.Channel = true, "C-3", contactlimit.Email
	third, err := g.Reserve(bg, f.t, c3, 0)
	if err != nil || !third.Attempt.Allowed {
		t.Fatal(third, err)
	}
	if err := db.Write(bg, third.Actions...); err != nil {
		t.Fatalf("another channel: %v", err)
	}
}

// TestCallReservationOwesNoMessage: a CALL is reserved (counter and
// PENDING evidence in the caller's transaction) but has no outbox entry:
// the dispatcher never sends a call as a message; the desk records it.
func TestCallReservationOwesNoMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.gateway(contactlimit.Deps{})
	dk := f.debtor(t, "")
	c := claimAt(dk, thursday10)
	c.Channel, c.Template, c.Action, c.Join = contactlimit.Call, "CALL_D5", "CALL_D5", true
	r, err := g.Reserve(bg, f.t, c, 0)
	if err != nil || !r.Attempt.Allowed || r.Attempt.Channel != contactlimit.Call {
		t.Fatal(r, err)
	}
	if err := f.Kit.Tenant(f.t.ID, f.t.CursorKey()).Write(bg, r.Actions...); err != nil {
		t.Fatal(err)
	}
	if n := f.outboxEntries(t); n != 0 || len(r.Actions) != 2 || r.Pending.Attempt.AttemptID != "" {
		t.Fatalf("a call owes a message: %d entries, %d actions", n, len(r.Actions))
	}
	day, err := g.Day(bg, f.t, dk, "2026-09-24", 10, "")
	if err != nil || day.Counter != 1 || len(day.Items) != 1 || day.Items[0].Outcome != contactlimit.OutcomePending {
		t.Fatalf("day: %+v %v", day, err)
	}
}

// texts is a sender that keeps the texts it was handed.
type texts struct {
	mu  sync.Mutex
	got []string
}

func (s *texts) Send(_ context.Context, _ *tenant.Tenant, m contactlimit.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, m.Text)
	return nil
}

// TestDispatchedMessageSaysWhatTheStepsWould: the entry keeps the
// message facts the agenda computed, so a message a dispatcher sends
// after a crash has the step's amount due and payment link, not just
// the claim's own facts.
func TestDispatchedMessageSaysWhatTheStepsWould(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := &texts{}
	g := f.gateway(contactlimit.Deps{Sender: s, Addresses: addresses{}})
	c := claimAt(f.debtor(t, ""), thursday10)
	c.AmountCents, c.Message = 1000, contactlimit.MessageFacts{AmountDueCents: 123456, PaymentLink: "https://pay.example/l"}
	r, err := g.Reserve(bg, f.t, c, 0)
	if err != nil || !r.Attempt.Allowed {
		t.Fatal(r, err)
	}
	if err := f.Kit.Tenant(f.t.ID, f.t.CursorKey()).Write(bg, r.Actions...); err != nil {
		t.Fatal(err)
	}
	if rep, err := g.Dispatch(bg, f.t, 0, true, nil); err != nil || rep.Sent != 1 {
		t.Fatalf("dispatch: %+v %v", rep, err)
	}
	if len(s.got) != 1 || !strings.Contains(s.got[0], "1.234,56") || !strings.Contains(s.got[0], "https://pay.example/l") {
		t.Fatalf("dispatched texts %q", s.got)
	}
}
