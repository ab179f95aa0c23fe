package contactlimit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"lastro/collections/clock"
	"lastro/collections/egress"
	"lastro/collections/errs"
	"lastro/collections/jsonl"
	"lastro/collections/kit"
	"lastro/collections/signature"
	"lastro/tenant"
)

// Message is one contact to deliver. To is the recipient's address (phone,
// e-mail, postal address): personal data that only the sender sees — it
// is never logged (LogValue leaves it out) nor stored in evidence.
type Message struct {
	AttemptID  string    `json:"attemptId"`
	TenantID   string    `json:"tenantId"`
	DebtorKey  string    `json:"debtorKey"`
	ContractID string    `json:"contractId"`
	Channel    Channel   `json:"channel"`
	Template   string    `json:"template"`
	Action     string    `json:"action"`
	Text       string    `json:"text"`
	To         string    `json:"to"`
	At         time.Time `json:"at"`
}

// LogValue is what a log line may say about a message: no address, no text.
func (m Message) LogValue() slog.Value {
	return slog.GroupValue(slog.String("attempt_id", m.AttemptID), slog.String("tenant", m.TenantID),
		slog.String("channel", string(m.Channel)), slog.String("action", m.Action))
}

// Sender delivers a message through the tenant's messaging provider.
// Send must be idempotent by m.AttemptID: the same attempt may be handed
// over again (a retry after a timeout, a dispatch after a crash) and must
// reach the debtor once.
type Sender interface {
	Send(ctx context.Context, t *tenant.Tenant, m Message) error
}

// AddressBook resolves a debtor's address for a channel (the integrator
// wires it to the PROFILE's decryption). Implementations never log it.
type AddressBook interface {
	Address(ctx context.Context, t *tenant.Tenant, debtorKey string, ch Channel) (string, error)
}

// ProfileAddressBook is an AddressBook that also resolves the address
// from a PROFILE item already read: the claim reads the PROFILE (strongly
// consistent) for the debtor's opt-outs and state, and the delivery that
// follows uses that item instead of a second read (ADR 0032).
type ProfileAddressBook interface {
	AddressBook
	// AddressIn resolves debtorKey's address from its PROFILE item as
	// read; an item that is not that debtor's PROFILE is an error.
	AddressIn(ctx context.Context, t *tenant.Tenant, debtorKey string, profile kit.Item, ch Channel) (string, error)
}

// SendError is a failed delivery with a detail safe to store as the
// attempt's outcome (a code, never a URL, an address or a text).
type SendError struct {
	Detail string
	// Transient says another try later may succeed (the provider timed
	// out, answered 429 or 5xx, the outbox file could not be written):
	// the outbox retries the attempt instead of recording it FAILED.
	Transient bool
	Err       error
}

func (e *SendError) Error() string {
	if e.Err != nil {
		return "send: " + e.Detail + ": " + e.Err.Error()
	}
	return "send: " + e.Detail
}

func (e *SendError) Unwrap() error { return e.Err }

// detailOf is the outcome detail of a send error.
func detailOf(err error) string {
	var se *SendError
	if errors.As(err, &se) {
		return se.Detail
	}
	return "send_failed"
}

// Outbox is the local Sender: one JSON line per message appended to a
// file, for a provider integration (or a person) to pick up. The file holds
// recipients' addresses, so it is created 0600 and is not a log.
//
// It is idempotent by attempt id (ADR 0062): a message whose attempt
// already has a line is not written again, whether the line came from this
// process or from one killed between the write and the outcome's record.
// The ids already written are read from the file once, at the first send,
// and kept in memory (16 bytes an attempt).
type Outbox struct {
	f    *jsonl.File
	path string

	mu     sync.Mutex
	loaded bool
	seen   map[uuid.UUID]*outboxWrite // attempt ids written, or being written
	other  map[string]*outboxWrite    // ids that are not UUIDs (hand-made messages)
}

// outboxWrite is one attempt's line: done closes once it is on disk or
// failed (err).
type outboxWrite struct {
	done chan struct{}
	err  error
}

// NewOutbox returns an outbox appending to path.
func NewOutbox(path string) *Outbox { return &Outbox{f: jsonl.Open(path), path: path} }

// Send appends m as one line and returns once it is on disk (concurrent
// sends share one fsync); a message whose attempt id has a line already
// returns at once, writing nothing.
func (o *Outbox) Send(_ context.Context, _ *tenant.Tenant, m Message) error {
	for {
		w, mine, err := o.slot(m.AttemptID)
		if err != nil {
			return &SendError{Detail: "outbox_read", Transient: true, Err: err}
		}
		if !mine {
			<-w.done
			if w.err == nil {
				return nil // written already: never a second line
			}
			continue // that write failed: try ours
		}
		w.err = o.f.Append(m)
		if w.err != nil {
			o.forget(m.AttemptID)
		}
		close(w.done)
		if w.err != nil {
			return &SendError{Detail: "outbox_write", Transient: true, Err: w.err}
		}
		return nil
	}
}

// slot returns the write of attempt id: an existing one (mine false) or
// a new one the caller makes.
func (o *Outbox) slot(id string) (w *outboxWrite, mine bool, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.loaded {
		if err := o.load(); err != nil {
			return nil, false, err
		}
		o.loaded = true
	}
	if id == "" {
		return &outboxWrite{done: make(chan struct{})}, true, nil
	}
	if u, err := uuid.Parse(id); err == nil {
		if w := o.seen[u]; w != nil {
			return w, false, nil
		}
		w = &outboxWrite{done: make(chan struct{})}
		o.seen[u] = w
		return w, true, nil
	}
	if w := o.other[id]; w != nil {
		return w, false, nil
	}
	w = &outboxWrite{done: make(chan struct{})}
	o.other[id] = w
	return w, true, nil
}

func (o *Outbox) forget(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if u, err := uuid.Parse(id); err == nil {
		delete(o.seen, u)
	} else {
		delete(o.other, id)
	}
}

// load reads the attempt ids the file already holds. A last line cut
// short (the machine lost power mid-write) is ended with a newline first,
// so the next line is not glued to it.
func (o *Outbox) load() error {
	o.seen, o.other = map[uuid.UUID]*outboxWrite{}, map[string]*outboxWrite{}
	// One finished write stands for every line already on disk.
	written := &outboxWrite{done: make(chan struct{})}
	close(written.done)
	f, err := os.OpenFile(o.path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	last := byte('\n')
	for sc.Scan() {
		line := sc.Bytes()
		var m struct {
			AttemptID string `json:"attemptId"`
		}
		if json.Unmarshal(line, &m) != nil || m.AttemptID == "" {
			continue
		}
		if u, err := uuid.Parse(m.AttemptID); err == nil {
			o.seen[u] = written
		} else {
			o.other[m.AttemptID] = written
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, st.Size()-1); err == nil {
			last = b[0]
		}
	}
	if last != '\n' {
		if _, err := f.Seek(0, io.SeekEnd); err != nil {
			return err
		}
		if _, err := f.Write([]byte{'\n'}); err != nil {
			return err
		}
		return f.Sync()
	}
	return nil
}

// Webhook is the Sender that posts each message to the tenant's messaging
// provider (tenant.MessagingURL), signed like our settlement webhooks:
// X-Lastro-Timestamp and X-Lastro-Signature v1=hex HMAC-SHA256(secret,
// ts + "." + body). Transient failures (network, 408, 429, 5xx) are
// retried with exponential backoff and full jitter; other 4xx are final.
type Webhook struct {
	// Client posts the messages; unless set, a 10 s timeout client of
	// Egress: the tenant's URL is dialled only where the outbound policy
	// allows, every redirect and resolved address included (ADR 0055).
	Client *http.Client
	// Egress is the outbound policy of the default client; nil is the
	// strict one.
	Egress    *egress.Policy
	Clock     clock.Clock // signs with its time; the real clock in production
	Logger    *slog.Logger
	Attempts  int           // default 4
	BaseDelay time.Duration // default 200 ms, doubled per retry, capped at 5 s

	once   sync.Once
	client *http.Client // the default client, built once (one connection pool)
}

func (w *Webhook) defaults() (*http.Client, clock.Clock, *slog.Logger, int, time.Duration) {
	c, clk, log, n, d := w.Client, w.Clock, w.Logger, w.Attempts, w.BaseDelay
	if c == nil {
		w.once.Do(func() { w.client = w.Egress.Client(10 * time.Second) })
		c = w.client
	}
	if clk == nil {
		clk = clock.System{}
	}
	if log == nil {
		log = slog.Default()
	}
	if n <= 0 {
		n = 4
	}
	if d <= 0 {
		d = 200 * time.Millisecond
	}
	return c, clk, log, n, d
}

// Router is the Sender registry: a message goes to the sender of its
// channel when one is registered (ByChannel, or Register), else to the
// tenant's own messaging provider when it configured one (PUT
// /v1/tenant/messaging, through Provider), else to Fallback (the engine's
// local outbox). Every sender it routes to must be idempotent by the
// message's attempt id: the outbox's dispatcher may hand it the same
// message again after a crash (ADR 0062).
type Router struct {
	ByChannel map[Channel]Sender
	Provider  Sender
	Fallback  Sender
}

// Register routes channel ch to s, replacing its sender; call it while
// wiring, before the first Send.
func (r *Router) Register(ch Channel, s Sender) {
	if r.ByChannel == nil {
		r.ByChannel = map[Channel]Sender{}
	}
	r.ByChannel[ch] = s
}

// Send implements Sender.
func (r *Router) Send(ctx context.Context, t *tenant.Tenant, m Message) error {
	s := r.For(t, m.Channel)
	if s == nil {
		return &SendError{Detail: "no_provider", Err: ErrNoProvider}
	}
	return s.Send(ctx, t, m)
}

// For is the sender a message of channel ch for t goes to.
func (r *Router) For(t *tenant.Tenant, ch Channel) Sender {
	if s := r.ByChannel[ch]; s != nil {
		return s
	}
	if r.Provider != nil && t.MessagingURL != "" {
		return r.Provider
	}
	return r.Fallback
}

// ErrNoProvider: the tenant has no messaging provider configured.
var ErrNoProvider = errors.New("contactlimit: tenant has no messaging provider")

// Send posts m, retrying transient failures.
func (w *Webhook) Send(ctx context.Context, t *tenant.Tenant, m Message) error {
	client, clk, log, attempts, base := w.defaults()
	if t.MessagingURL == "" || t.MessagingSecret() == "" {
		return &SendError{Detail: "no_provider", Err: ErrNoProvider}
	}
	body, err := json.Marshal(m)
	if err != nil {
		return &SendError{Detail: "encode", Err: err}
	}
	var last *SendError
	policy := kit.Backoff{Attempts: attempts, Base: base, Max: 5 * time.Second}
	err = policy.Retry(ctx, func(n int) (bool, error) {
		retry, err := w.post(ctx, client, clk, t, m, body)
		if err == nil {
			return false, nil
		}
		last = err
		if retry && n < attempts {
			log.WarnContext(ctx, "messaging provider: retrying", "message", m, "try", n, "detail", err.Detail)
		}
		return retry, err
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return &SendError{Detail: "canceled", Transient: true, Err: ctx.Err()}
	case last != nil:
		return last
	}
	return &SendError{Detail: "send", Err: err}
}

// post makes one signed request; retry says whether a failure is transient.
// Errors carry no URL: the transport's own error text names it, so only
// its class is kept.
func (w *Webhook) post(ctx context.Context, client *http.Client, clk clock.Clock, t *tenant.Tenant, m Message, body []byte) (retry bool, _ *SendError) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.MessagingURL, bytes.NewReader(body))
	if err != nil {
		return false, &SendError{Detail: "bad_provider_url"}
	}
	ts := clk.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	// The provider deduplicates by it: a message retried after a timeout
	// or a crash carries the same key (ADR 0062).
	req.Header.Set("Idempotency-Key", m.AttemptID)
	req.Header.Set(signature.TimestampHeader, strconv.FormatInt(ts, 10))
	req.Header.Set(signature.SignatureHeader, signature.Sign(t.MessagingSecret(), ts, body))
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, &SendError{Detail: "canceled", Err: ctx.Err()}
		}
		// The outbound policy refused the URL, a redirect or the address
		// the name resolved to: final, no retry changes that.
		if errors.Is(err, egress.ErrNotAllowed) {
			return false, &SendError{Detail: egress.Code, Err: egress.ErrNotAllowed}
		}
		return true, &SendError{Detail: "transport_error", Transient: true}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
		return true, &SendError{Detail: "status_" + strconv.Itoa(resp.StatusCode), Transient: true}
	}
	return false, &SendError{Detail: "status_" + strconv.Itoa(resp.StatusCode)}
}

// brl formats cents as Brazilian reais: R$ 1.234,56.
func brl(cents int64) string {
	s := strconv.FormatInt(cents/100, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "." + s[i:]
	}
	return fmt.Sprintf("R$ %s,%02d", s, cents%100)
}

// Send is Claim, then — only when allowed — the address, the sender and
// the outcome (Record), for the agenda workers and the operator's POST. A
// blocked claim returns its attempt and no error: nothing was sent. A
// failed delivery is recorded FAILED and returned with the attempt.
func (g *Gateway) Send(ctx context.Context, t *tenant.Tenant, c Claim) (Attempt, error) {
	if g.sender == nil || g.addresses == nil {
		return Attempt{}, errs.E(errs.Other, "no_sender", "the contact gateway has no sender or address book")
	}
	a, err := g.Claim(ctx, t, c)
	if err != nil || !a.Allowed {
		return a, err
	}
	return g.Deliver(ctx, t, c, a)
}

// address resolves the recipient of an allowed attempt: from the PROFILE
// its claim read when the address book can, else with a fresh read. The
// attempt must be this debtor's: an Attempt decoded from elsewhere has no
// item, and an item of another debtor is never used.
func (g *Gateway) address(ctx context.Context, t *tenant.Tenant, c Claim, a Attempt) (string, error) {
	if pb, ok := g.addresses.(ProfileAddressBook); ok && a.read != nil && a.DebtorKey == c.DebtorKey {
		return pb.AddressIn(ctx, t, c.DebtorKey, a.read.item, c.Channel)
	}
	return g.addresses.Address(ctx, t, c.DebtorKey, c.Channel)
}

// CanDeliver reports whether the gateway has a sender and an address book.
func (g *Gateway) CanDeliver() bool { return g.sender != nil && g.addresses != nil }

// Deliver sends the message of an allowed attempt and records its outcome:
// the second half of Send, for callers that must write something between
// the claim and the send (the agenda records the step it executes, so a
// payment that lands in between cancels the contact instead of racing it).
func (g *Gateway) Deliver(ctx context.Context, t *tenant.Tenant, c Claim, a Attempt) (Attempt, error) {
	if !a.Allowed {
		return a, errs.E(errs.Rule, "contact_blocked", "a blocked attempt is not delivered")
	}
	if !g.CanDeliver() {
		return a, errs.E(errs.Other, "no_sender", "the contact gateway has no sender or address book")
	}
	c.Action, c.Channel = a.Action, a.Channel
	pol := c.Policy
	if pol == nil {
		var err error
		if pol, err = g.policies.Dunning(ctx, t, t.DunningPolicy); err != nil {
			return a, err
		}
	}
	to, err := g.address(ctx, t, c, a)
	if err != nil || to == "" {
		rec, rerr := g.Record(ctx, t, a, OutcomeFailed, "no_address")
		return rec, errors.Join(&SendError{Detail: "no_address"}, rerr)
	}
	at, _ := time.Parse("2006-01-02T15:04:05.000Z", a.At)
	m := Message{AttemptID: a.AttemptID, TenantID: t.ID, DebtorKey: a.DebtorKey, ContractID: a.ContractID, Channel: a.Channel,
		Template: a.Template, Action: a.Action, Text: render(t, pol, c), To: to, At: at}
	if serr := g.sender.Send(ctx, t, m); serr != nil {
		g.log.WarnContext(ctx, "contact not delivered", "message", m, "detail", detailOf(serr))
		rec, rerr := g.Record(ctx, t, a, OutcomeFailed, detailOf(serr))
		return rec, errors.Join(serr, rerr)
	}
	return g.Record(ctx, t, a, OutcomeSent, "")
}
