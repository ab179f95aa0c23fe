package contactlimit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/clock"
	"lastro/collections/egress"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/signature"
	"lastro/contactlimit"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

// noPersonalData fails when a log line carries the debtor's phone, e-mail
// or name.
func noPersonalData(t *testing.T, logs string) {
	t.Helper()
	for _, s := range []string{testPhone, testEmail, testName, "98765"} {
		if strings.Contains(logs, s) {
			t.Fatalf("personal data %q in logs:\n%s", s, logs)
		}
	}
}

func TestOutboxWritesOneLinePerSentMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.publish(t, nil, map[string]string{"SMS_D5": "{{tenantName}}: contrato {{contractId}}, {{amount}} desde {{dueDate}}."})
	path := filepath.Join(t.TempDir(), "outbox.jsonl")
	g := f.gateway(contactlimit.Deps{Sender: contactlimit.NewOutbox(path), Addresses: addresses{}})
	dk := f.debtor(t, "")
	var sent []contactlimit.Attempt
	for i := range 5 { // the limit is 3: two are blocked and never written
		c := claimAt(dk, thursday10.Add(time.Duration(i)*time.Minute))
		c.AmountCents, c.DueDate = 123456, "2026-09-10"
		a, err := g.Send(bg, f.t, c)
		if err != nil {
			t.Fatal(err)
		}
		if a.Allowed {
			if a.Outcome != contactlimit.OutcomeSent {
				t.Fatalf("outcome %+v", a)
			}
			sent = append(sent, a)
		} else if a.Reason != contactlimit.ReasonLimit || a.Outcome != contactlimit.OutcomeBlocked {
			t.Fatalf("blocked %+v", a)
		}
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if st, _ := fh.Stat(); st.Mode().Perm() != 0o600 {
		t.Errorf("outbox mode %v: it holds addresses", st.Mode().Perm())
	}
	var lines []contactlimit.Message
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var m contactlimit.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 3 || len(sent) != 3 {
		t.Fatalf("%d lines for %d sent messages", len(lines), len(sent))
	}
	for i, m := range lines {
		if m.AttemptID != sent[i].AttemptID || m.To != testPhone || m.Channel != contactlimit.SMS ||
			m.Text != f.t.Name+": contrato C-1, R$ 1.234,56 desde 2026-09-10." {
			t.Errorf("line %d: %+v", i, m)
		}
	}
	day, _ := g.Day(bg, f.t, dk, "2026-09-24", 100, "")
	for _, e := range day.Items {
		if e.Allowed && e.Outcome != contactlimit.OutcomeSent {
			t.Errorf("evidence %s outcome %s", e.AttemptID, e.Outcome)
		}
	}
	noPersonalData(t, f.Logs.String())
}

// provider is a messaging provider on loopback that verifies our
// signature and fails the first failures requests with a 500.
type provider struct {
	mu       sync.Mutex
	secret   string
	failures int
	calls    int
	verified int
	bodies   []contactlimit.Message
}

func (p *provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if err := signature.Verify(p.secret, r.Header.Get(signature.TimestampHeader), r.Header.Get(signature.SignatureHeader), body, time.Now()); err != nil {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	p.verified++
	if p.calls <= p.failures {
		http.Error(w, "try again", http.StatusInternalServerError)
		return
	}
	var m contactlimit.Message
	_ = json.Unmarshal(body, &m)
	p.bodies = append(p.bodies, m)
	w.WriteHeader(http.StatusAccepted)
}

func (f *fixture) provider(t *testing.T, failures int) *provider {
	t.Helper()
	p := &provider{failures: failures}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	out, err := f.Tenants.SetMessaging(bg, f.t, tenant.MessagingInput{URL: srv.URL + "/hook"})
	if err != nil {
		t.Fatal(err)
	}
	p.secret = out.Secret
	f.reload(t)
	return p
}

// loopback lets the tests' providers, httptest servers on loopback, be
// set and dialled: an explicit opt-in, as an operator's
// LASTRO_EGRESS_ALLOW=loopback.
var loopback = egress.New(egress.AllowLoopback())

func TestWebhookSignsAndRetries(t *testing.T) {
	t.Parallel()
	f := newFixture(t, enginetest.Egress(loopback))
	p := f.provider(t, 1)
	wh := &contactlimit.Webhook{Clock: clock.System{}, Logger: f.Log, BaseDelay: time.Millisecond, Egress: loopback}
	g := f.gateway(contactlimit.Deps{Sender: wh, Addresses: addresses{}})
	dk := f.debtor(t, "")
	a, err := g.Send(bg, f.t, claimAt(dk, thursday10))
	if err != nil || a.Outcome != contactlimit.OutcomeSent {
		t.Fatalf("send: %+v %v", a, err)
	}
	if p.calls != 2 || p.verified != 2 || len(p.bodies) != 1 || p.bodies[0].AttemptID != a.AttemptID || p.bodies[0].To != testPhone {
		t.Fatalf("provider saw %d calls (%d verified): %+v", p.calls, p.verified, p.bodies)
	}
	logs := f.Logs.String()
	if !strings.Contains(logs, "retrying") || !strings.Contains(logs, "status_500") {
		t.Fatalf("the retry is not logged:\n%s", logs)
	}
	noPersonalData(t, logs)
}

func TestWebhookGivesUpAndRecordsTheFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t, enginetest.Egress(loopback))
	p := f.provider(t, 100)
	g := f.gateway(contactlimit.Deps{Sender: &contactlimit.Webhook{Clock: clock.System{}, Logger: f.Log, Attempts: 3, BaseDelay: time.Millisecond,
		Egress: loopback}, Addresses: addresses{}})
	dk := f.debtor(t, "")
	a, err := g.Send(bg, f.t, claimAt(dk, thursday10))
	if err == nil || a.Outcome != contactlimit.OutcomeFailed || a.OutcomeDetail != "status_500" || p.calls != 3 {
		t.Fatalf("after 3 failures: %+v %v (calls %d)", a, err, p.calls)
	}
	// A wrong secret is a 401 from the provider: final, not retried.
	f2 := newFixture(t, enginetest.Egress(loopback))
	p2 := f2.provider(t, 0)
	p2.secret = "another secret"
	g2 := f2.gateway(contactlimit.Deps{Sender: &contactlimit.Webhook{Clock: clock.System{}, Logger: f2.Log, BaseDelay: time.Millisecond,
		Egress: loopback}, Addresses: addresses{}})
	a, err = g2.Send(bg, f2.t, claimAt(f2.debtor(t, ""), thursday10))
	if err == nil || a.OutcomeDetail != "status_401" || p2.calls != 1 {
		t.Fatalf("rejected signature: %+v %v (calls %d)", a, err, p2.calls)
	}
	noPersonalData(t, f.Logs.String()+f2.Logs.String())
	if strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("the error names the provider's URL: %v", err)
	}
}

// profileBook is a ProfileAddressBook that counts how each address was
// resolved and keeps the items it was handed.
type profileBook struct {
	mu       sync.Mutex
	fresh    int
	fromRead []string // the PK of every item AddressIn got
}

func (b *profileBook) Address(_ context.Context, _ *tenant.Tenant, _ string, _ contactlimit.Channel) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fresh++
	return testPhone, nil
}

func (b *profileBook) AddressIn(_ context.Context, _ *tenant.Tenant, _ string, it kit.Item, _ contactlimit.Channel) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	pk, _ := it["PK"].(*types.AttributeValueMemberS)
	if pk == nil {
		return "", errors.New("no PK")
	}
	b.fromRead = append(b.fromRead, pk.Value)
	return testPhone, nil
}

// TestDeliverUsesTheClaimsProfileRead: an attempt the gateway claimed is
// delivered from the PROFILE its claim read (no second read); one that
// was rebuilt elsewhere (decoded from JSON) is resolved afresh.
func TestDeliverUsesTheClaimsProfileRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		roundTrip bool // the attempt reaches Deliver through JSON, without the claim's read
		wantFresh int
		wantRead  int
	}{
		{"as claimed", false, 0, 1},
		{"decoded from JSON", true, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			book := &profileBook{}
			g := f.gateway(contactlimit.Deps{Sender: contactlimit.NewOutbox(filepath.Join(t.TempDir(), "outbox.jsonl")), Addresses: book})
			dk := f.debtor(t, "")
			c := claimAt(dk, thursday10)
			a, err := g.Claim(bg, f.t, c)
			if err != nil || !a.Allowed {
				t.Fatalf("claim: %+v, %v", a, err)
			}
			if tc.roundTrip {
				raw, err := json.Marshal(a)
				if err != nil {
					t.Fatal(err)
				}
				a = contactlimit.Attempt{}
				if err := json.Unmarshal(raw, &a); err != nil {
					t.Fatal(err)
				}
				a.SK = keys.Contact(a.LocalDate, thursday10, a.AttemptID)
			}
			ctx, use := kit.Operation(bg, "test.deliver")
			got, err := g.Deliver(ctx, f.t, c, a)
			if err != nil || got.Outcome != contactlimit.OutcomeSent {
				t.Fatalf("deliver: %+v, %v", got, err)
			}
			if book.fresh != tc.wantFresh || len(book.fromRead) != tc.wantRead {
				t.Fatalf("resolved %d afresh, %d from the claim's read; want %d, %d", book.fresh, len(book.fromRead), tc.wantFresh, tc.wantRead)
			}
			if tc.wantRead > 0 && book.fromRead[0] != keys.Debtor(f.t.ID, dk) {
				t.Errorf("AddressIn got the item of %s", book.fromRead[0])
			}
			if n := use.Calls("GetItem"); n != 0 {
				t.Errorf("Deliver made %d GetItem calls; the test book reads nothing", n)
			}
		})
	}
}
