package contactlimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/policy"
	"lastro/tenant"
)

// The transactional outbox (ADR 0062). An agenda step that contacts a
// debtor writes, in its own version-conditioned transaction, the day's
// counter, the attempt's evidence (PENDING) and an outbox entry
// T#<t>#OBX#<shard2> / ATT#<attemptId>; the step, the counter and the
// attempt to deliver commit together or not at all. The entry is deleted
// only once the evidence carries the delivery's outcome, so after a crash
// the dispatcher finds every attempt still owed with one keyed Query per
// shard and delivers it, with the attempt id as the sender's idempotency
// key.

// OutcomeDead is the outcome of an attempt whose delivery kept failing
// transiently until its retries ran out: never delivered.
const OutcomeDead = "DEAD"

// TypeOutbox is the type of an outbox entry.
const TypeOutbox = "OUTBOX"

// OutboxOperation names, on the kit's meter, the writes and reads of
// outbox entries after the transaction that put them: the deletion once
// an outcome is recorded (1 WRU) and, on a dispatch, the take, the
// evidence read and a retry's reschedule. The put itself is part of the
// caller's transaction and metered with it.
const OutboxOperation = "contact.outbox"

// Retry is how the outbox retries deliveries. Its times run on a wall
// clock, never the business clock: with LASTRO_NOW frozen a failed
// delivery must still come due again.
type Retry struct {
	Clock clock.Clock // nil is the system clock
	// Grace is how long a fresh entry is left to the engine that wrote it
	// (it delivers right after its commit) before a dispatcher takes it;
	// 0 means 30 s.
	Grace time.Duration
	// Hold is how long a dispatcher that took an entry has it to itself;
	// 0 means 2 minutes.
	Hold time.Duration
	// Base and Max bound the backoff between tries (doubled per try);
	// 0 means 30 s and 30 minutes.
	Base, Max time.Duration
	// Tries is how many deliveries an attempt gets before it is DEAD; 0
	// means 8.
	Tries int
}

func (r Retry) withDefaults() Retry {
	if r.Clock == nil {
		r.Clock = clock.System{}
	}
	if r.Grace <= 0 {
		r.Grace = 30 * time.Second
	}
	if r.Hold <= 0 {
		r.Hold = 2 * time.Minute
	}
	if r.Base <= 0 {
		r.Base = 30 * time.Second
	}
	if r.Max <= 0 {
		r.Max = 30 * time.Minute
	}
	if r.Tries <= 0 {
		r.Tries = 8
	}
	return r
}

// backoff is the wait after the n-th failed try (n from 1).
func (r Retry) backoff(n int) time.Duration {
	d := r.Base
	for i := 1; i < n && d < r.Max; i++ {
		d *= 2
	}
	return min(d, r.Max)
}

// entryItem is the outbox entry as stored: what delivering the attempt
// needs (the template's facts, never personal data) and where its
// retries stand.
type entryItem struct {
	PK          string  `dynamodbav:"PK"`
	SK          string  `dynamodbav:"SK"`
	Type        string  `dynamodbav:"type"`
	AttemptID   string  `dynamodbav:"attemptId"`
	EvidenceSK  string  `dynamodbav:"evidenceSK"`
	DebtorKey   string  `dynamodbav:"debtorKey"`
	ContractID  string  `dynamodbav:"contractId"`
	Channel     Channel `dynamodbav:"channel"`
	Template    string  `dynamodbav:"template"`
	Action      string  `dynamodbav:"action"`
	At          string  `dynamodbav:"at"`
	LocalDate   string  `dynamodbav:"localDate"`
	AmountCents int64   `dynamodbav:"amountCents"`
	DueDate     string  `dynamodbav:"dueDate,omitempty"`
	DaysPastDue int     `dynamodbav:"daysPastDue,omitempty"`
	// Message and Policy are what the message says and the dunning
	// policy version whose templates render it (nil: the tenant's
	// current), so a dispatcher after a crash sends the text the step
	// would have.
	Message MessageFacts `dynamodbav:"message"`
	Policy  *int         `dynamodbav:"policy,omitempty"`
	Shard   int          `dynamodbav:"shard"`
	Tries   int          `dynamodbav:"tries"`
	NextAt  int64        `dynamodbav:"nextAt"` // unix milliseconds, wall clock
	Detail  string       `dynamodbav:"detail,omitempty"`
}

// Pending is an allowed attempt whose delivery has no outcome yet: an
// outbox entry.
type Pending struct {
	// Attempt is the attempt as reserved (its evidence, PENDING).
	Attempt Attempt
	// Tries is how many deliveries failed transiently so far.
	Tries int
	e     entryItem
	read  *profileRead    // the claim's PROFILE read, on a fresh reservation only
	pol   *policy.Dunning // the claim's policy, on a fresh reservation only
}

func (p Pending) key() kit.Key { return kit.Key{PK: p.e.PK, SK: p.e.SK} }

func (p Pending) claim() Claim {
	return Claim{DebtorKey: p.e.DebtorKey, ContractID: p.e.ContractID, Channel: p.e.Channel, Template: p.e.Template, Action: p.e.Action,
		AmountCents: p.e.AmountCents, DueDate: p.e.DueDate, DaysPastDue: p.e.DaysPastDue, Message: p.e.Message, Policy: p.pol}
}

func pendingOf(e entryItem) Pending {
	return Pending{Attempt: Attempt{AttemptID: e.AttemptID, DebtorKey: e.DebtorKey, ContractID: e.ContractID, Channel: e.Channel,
		Template: e.Template, Action: e.Action, At: e.At, LocalDate: e.LocalDate, Allowed: true, Outcome: OutcomePending, SK: e.EvidenceSK},
		Tries: e.Tries, e: e}
}

// Reservation is a claim decided without writing anything yet: blocked
// (its evidence is written, Actions is empty), or allowed so far, with the
// writes that spend the day's counter, leave the evidence PENDING and put
// the outbox entry. The caller puts Actions first in its own transaction,
// so the contact is counted, evidenced and owed if and only if the
// caller's write commits.
type Reservation struct {
	Attempt Attempt
	Actions []kit.Action
	Pending Pending // zero for a CALL: nothing for the dispatcher to send
	join    bool    // the LIMIT update marks the channel (Claim.Join)
	limit   kit.Key // the LIMIT counter the update names
}

// Reserve is Claim for a caller that records the contact in its own
// transaction (the agenda, ADR 0062): it decides HOLIDAY, WINDOW, DISPUTE
// and OPT_OUT as Claim does and, when none applies, returns the
// transaction's first actions instead of writing them: the LIMIT update
// under its condition, the PENDING evidence and the outbox entry in
// shard's partition. A transaction that fails on the limit (LimitReached)
// is answered with Refuse. The attempt's number of the day is not known
// inside a transaction and is left out of its evidence.
//
// A claim that joins (Claim.Join, ADR 0066) has its LIMIT update also
// mark the day's channel with the attempt, on condition that no other
// attempt did: the transaction then fails as on the limit, and Refuse
// finds the mark and joins that attempt. A CALL puts no outbox entry:
// nothing is sent, the attempt stays PENDING for the desk that works the
// call (the agenda's worklist task) and records its outcome.
func (g *Gateway) Reserve(ctx context.Context, t *tenant.Tenant, c Claim, shard int) (*Reservation, error) {
	if shard < 0 || shard >= max(t.Shards, 1) {
		return nil, errs.E(errs.Invalid, "invalid_shard", "shard must be 0-%d", t.Shards-1)
	}
	d, err := g.decide(ctx, t, &c)
	if err != nil {
		return nil, err
	}
	a := d.attempt
	if a.Reason != "" {
		a, err := g.settle(ctx, t, a)
		return &Reservation{Attempt: a}, err
	}
	a.Allowed, a.Outcome, a.read = true, OutcomePending, d.read
	pk := keys.Debtor(t.ID, a.DebtorKey)
	var mark Channel
	if c.Join {
		mark = a.Channel
	}
	upd, cond := limitUpdate(d.date, d.loc, d.max, mark, a.AttemptID)
	limit := kit.Key{PK: pk, SK: keys.Limit(d.date.String())}
	ev, err := attributevalue.MarshalMap(evidenceItem{PK: pk, SK: a.SK, Type: TypeContact, Attempt: a})
	if err != nil {
		return nil, fmt.Errorf("marshal evidence: %w", err)
	}
	fresh := expression.AttributeNotExists(expression.Name("PK"))
	r := &Reservation{Attempt: a, join: c.Join, limit: limit, Actions: []kit.Action{
		kit.UpdateAction(limit, upd, &cond),
		kit.PutAction(ev, &fresh),
	}}
	if a.Channel == Call {
		return r, nil
	}
	rt := g.retry
	e := entryItem{PK: keys.Outbox(t.ID, shard), SK: keys.OutboxEntry(a.AttemptID), Type: TypeOutbox, AttemptID: a.AttemptID,
		EvidenceSK: a.SK, DebtorKey: a.DebtorKey, ContractID: a.ContractID, Channel: a.Channel, Template: a.Template, Action: a.Action,
		At: a.At, LocalDate: a.LocalDate, AmountCents: c.AmountCents, DueDate: c.DueDate, DaysPastDue: c.DaysPastDue, Shard: shard,
		Message: c.Message, NextAt: rt.Clock.Now().Add(rt.Grace).UnixMilli()}
	if c.Policy != nil {
		e.Policy = &c.Policy.Version
	}
	ob, err := attributevalue.MarshalMap(e)
	if err != nil {
		return nil, fmt.Errorf("marshal outbox entry: %w", err)
	}
	r.Pending = pendingOf(e)
	r.Pending.Attempt, r.Pending.read, r.Pending.pol = a, d.read, c.Policy
	r.Actions = append(r.Actions, kit.PutAction(ob, &fresh))
	return r, nil
}

// LimitReached reports whether err is a transaction led by a
// reservation's actions that failed on the day's limit: the contact is
// not allowed today (do NOT contact, not "retry later").
func LimitReached(err error) bool {
	var tc *kit.TxCanceled
	return errors.As(err, &tc) && tc.Failed(0)
}

// Refuse writes the evidence of a reservation whose transaction failed
// on the day's counter, under the same attempt id: JOINED to the attempt
// that marked the channel today when the reservation joins and the LIMIT
// item (read strongly consistent) has that mark, else blocked, reason
// LIMIT. A joined attempt is allowed but owes nothing: the caller writes
// its step without the reservation's actions and sends nothing.
func (g *Gateway) Refuse(ctx context.Context, t *tenant.Tenant, r *Reservation) (Attempt, error) {
	a := r.Attempt
	a.read = nil
	if r.join {
		octx, _ := kit.Operation(ctx, "contact.claim")
		joined, err := g.marked(octx, t, r.limit, a.Channel)
		if err != nil {
			return Attempt{}, fmt.Errorf("claim contact: %w", err)
		}
		if joined != "" {
			a.Allowed, a.JoinedTo = true, joined
			return g.settle(ctx, t, a)
		}
	}
	a.Allowed, a.Reason = false, ReasonLimit
	return g.settle(ctx, t, a)
}

// Delivery is the end of one try of an outbox entry.
type Delivery struct {
	Attempt Attempt // with its outcome: SENT, FAILED, DEAD, or still PENDING (retried later)
	Skipped bool    // another dispatcher has the entry, or it was already done
}

// DeliverPending makes one try of a pending attempt: the address, the text and
// the sender, with the attempt id as the message's idempotency key; then
// the outcome on the evidence (SENT, FAILED for a final refusal, DEAD once
// the retries are spent) and, only after it, sent (for a SENT attempt) and
// the entry's deletion. A transient failure leaves the attempt PENDING and
// the entry due again after a backoff. fresh says the caller wrote the
// entry just now (the agenda right after its commit); otherwise the entry
// is first taken (conditioned on its position, so two dispatchers never
// both try it) and the evidence read, so an attempt whose outcome was
// recorded before a crash is not sent again. sent must be idempotent: a
// crash after it and before the deletion runs it again.
func (g *Gateway) DeliverPending(ctx context.Context, t *tenant.Tenant, p Pending, fresh bool, sent func(context.Context, Attempt) error) (Delivery, error) {
	return g.deliverPending(ctx, t, p, fresh, sent, nil)
}

// DeliverReserved is DeliverPending for an entry the caller wrote just
// now (fresh), whose deletion, once the outcome is recorded and sent has
// run, joins dels instead of costing a call of its own: the caller
// flushes dels (Deletions.Flush), many entries in one BatchWriteItem at
// the same write units. Until then the entry stays with its outcome on
// the evidence, as after a crash between the two: a dispatcher that finds
// it reads the outcome, runs sent again and deletes it, sending nothing.
func (g *Gateway) DeliverReserved(ctx context.Context, t *tenant.Tenant, p Pending, sent func(context.Context, Attempt) error, dels *Deletions) (Delivery, error) {
	return g.deliverPending(ctx, t, p, true, sent, dels)
}

func (g *Gateway) deliverPending(ctx context.Context, t *tenant.Tenant, p Pending, fresh bool, sent func(context.Context, Attempt) error,
	dels *Deletions) (Delivery, error) {
	if !g.CanDeliver() {
		return Delivery{Attempt: p.Attempt, Skipped: true}, nil
	}
	a := p.Attempt
	if !fresh {
		ok, err := g.take(ctx, t, &p)
		if err != nil || !ok {
			return Delivery{Attempt: a, Skipped: true}, err
		}
		octx, _ := kit.Operation(ctx, OutboxOperation)
		ev, err := g.db(t).Get(octx, kit.Key{PK: keys.Debtor(t.ID, a.DebtorKey), SK: a.SK}, true)
		if err != nil {
			return Delivery{Attempt: a}, fmt.Errorf("read contact evidence: %w", err)
		}
		if ev == nil {
			// No evidence: the entry outlived it (removed by hand); nothing
			// proves the contact was allowed, so nothing is sent.
			return Delivery{Attempt: a, Skipped: true}, g.done(ctx, t, p)
		}
		var e evidenceItem
		if err := attributevalue.UnmarshalMap(ev, &e); err != nil {
			return Delivery{Attempt: a}, fmt.Errorf("decode contact evidence: %w", err)
		}
		e.Attempt.SK = e.SK
		if a = e.Attempt; a.Outcome != OutcomePending {
			return Delivery{Attempt: a, Skipped: true}, g.finish(ctx, t, p, a, sent)
		}
	}
	outcome, detail, retry := g.try(ctx, t, p)
	if retry && p.Tries+1 < g.retry.Tries {
		return Delivery{Attempt: a}, g.later(ctx, t, p, detail)
	}
	if retry {
		outcome = OutcomeDead
	}
	rec, err := g.record(ctx, t, a, outcome, detail)
	if errs.Is(err, errs.Conflict) {
		// Recorded meanwhile (a dispatcher at start beside this engine's
		// own delivery): the recorded outcome stands; re-read it.
		return Delivery{Attempt: a, Skipped: true}, nil
	}
	if err != nil {
		return Delivery{Attempt: a}, err
	}
	if dels != nil {
		if rec.Outcome == OutcomeSent && sent != nil {
			if err := sent(ctx, rec); err != nil {
				return Delivery{Attempt: rec}, err
			}
		}
		return Delivery{Attempt: rec}, dels.add(ctx, p.key())
	}
	return Delivery{Attempt: rec}, g.finish(ctx, t, p, rec, sent)
}

// Deletions gathers the deletions of outbox entries whose outcome is
// recorded (DeliverReserved), for one tenant, and writes them in batches:
// one BatchWriteItem per batchWriteMax entries instead of a DeleteItem
// each, the same 1 WRU per entry. Safe for concurrent use.
type Deletions struct {
	g    *Gateway
	t    *tenant.Tenant
	mu   sync.Mutex
	keys []kit.Key
}

// deletionsBatch is how many deletions go in one BatchWriteItem: the
// operation's limit.
const deletionsBatch = 25

// Deletions returns an empty batch of t's outbox deletions.
func (g *Gateway) Deletions(t *tenant.Tenant) *Deletions { return &Deletions{g: g, t: t} }

// add queues k and writes the batch once it is full.
func (d *Deletions) add(ctx context.Context, k kit.Key) error {
	d.mu.Lock()
	d.keys = append(d.keys, k)
	var full []kit.Key
	if len(d.keys) >= deletionsBatch {
		full, d.keys = d.keys, nil
	}
	d.mu.Unlock()
	return d.write(ctx, full)
}

// Flush writes the deletions queued so far. A failure leaves those
// entries to the dispatcher, which finds their outcome recorded and
// only deletes them.
func (d *Deletions) Flush(ctx context.Context) error {
	d.mu.Lock()
	ks := d.keys
	d.keys = nil
	d.mu.Unlock()
	return d.write(ctx, ks)
}

func (d *Deletions) write(ctx context.Context, ks []kit.Key) error {
	if len(ks) == 0 {
		return nil
	}
	ctx, _ = kit.Operation(ctx, OutboxOperation)
	if err := d.g.db(d.t).BatchWrite(ctx, nil, ks); err != nil {
		return fmt.Errorf("delete outbox entries: %w", err)
	}
	return nil
}

// try sends the attempt's message once (the sender's own retries aside):
// its outcome, a detail safe to store, and whether the failure is worth
// another try later.
func (g *Gateway) try(ctx context.Context, t *tenant.Tenant, p Pending) (outcome, detail string, retry bool) {
	c := p.claim()
	pol := c.Policy
	if pol == nil {
		v := t.DunningPolicy
		if p.e.Policy != nil {
			v = *p.e.Policy
		}
		var err error
		if pol, err = g.policies.Dunning(ctx, t, v); err != nil {
			return "", "policy_unavailable", true
		}
	}
	a := p.Attempt
	a.read = p.read
	to, err := g.address(ctx, t, c, a)
	if err != nil && (errors.Is(err, kit.ErrThrottled) || errs.Is(err, errs.Transient) || ctx.Err() != nil) {
		return "", "address_unavailable", true
	}
	if err != nil || to == "" {
		return OutcomeFailed, "no_address", false
	}
	at, _ := time.Parse("2006-01-02T15:04:05.000Z", a.At)
	m := Message{AttemptID: a.AttemptID, TenantID: t.ID, DebtorKey: a.DebtorKey, ContractID: a.ContractID, Channel: a.Channel,
		Template: a.Template, Action: a.Action, Text: render(t, pol, c), To: to, At: at}
	if err := g.sender.Send(ctx, t, m); err != nil {
		g.log.WarnContext(ctx, "contact not delivered", "message", m, "detail", detailOf(err), "try", p.Tries+1)
		return OutcomeFailed, detailOf(err), transient(err)
	}
	return OutcomeSent, "", false
}

// transient reports whether a send failure may succeed if tried again:
// the sender said so, or the send was interrupted (shutdown), or the
// failure is not a sender's answer at all.
func transient(err error) bool {
	var se *SendError
	if !errors.As(err, &se) {
		return true
	}
	return se.Transient || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// take claims an entry for this dispatcher: its nextAt moves to now +
// Hold, conditioned on the value the listing read.
func (g *Gateway) take(ctx context.Context, t *tenant.Tenant, p *Pending) (bool, error) {
	ctx, _ = kit.Operation(ctx, OutboxOperation)
	next := g.retry.Clock.Now().Add(g.retry.Hold).UnixMilli()
	cond := expression.Name("nextAt").Equal(expression.Value(p.e.NextAt))
	_, err := g.db(t).Update(ctx, p.key(), expression.Set(expression.Name("nextAt"), expression.Value(next)), &cond, types.ReturnValueNone)
	if errors.Is(err, kit.ErrConditionFailed) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("take outbox entry: %w", err)
	}
	p.e.NextAt = next
	return true, nil
}

// later leaves a transiently failed attempt PENDING and its entry due
// again after the backoff.
func (g *Gateway) later(ctx context.Context, t *tenant.Tenant, p Pending, detail string) error {
	ctx, _ = kit.Operation(ctx, OutboxOperation)
	n := p.Tries + 1
	next := g.retry.Clock.Now().Add(g.retry.backoff(n)).UnixMilli()
	upd := expression.Set(expression.Name("tries"), expression.Value(n)).Set(expression.Name("nextAt"), expression.Value(next)).
		Set(expression.Name("detail"), expression.Value(detail))
	cond := expression.AttributeExists(expression.Name("PK"))
	_, err := g.db(t).Update(ctx, p.key(), upd, &cond, types.ReturnValueNone)
	if errors.Is(err, kit.ErrConditionFailed) {
		return nil // finished meanwhile
	}
	if err != nil {
		return fmt.Errorf("reschedule outbox entry: %w", err)
	}
	return nil
}

// finish runs sent for a SENT attempt, then deletes the entry: in that
// order, so a crash in between leaves the entry, and its next try finds
// the outcome and runs sent again.
func (g *Gateway) finish(ctx context.Context, t *tenant.Tenant, p Pending, a Attempt, sent func(context.Context, Attempt) error) error {
	if a.Outcome == OutcomeSent && sent != nil {
		if err := sent(ctx, a); err != nil {
			return err
		}
	}
	return g.done(ctx, t, p)
}

func (g *Gateway) done(ctx context.Context, t *tenant.Tenant, p Pending) error {
	ctx, _ = kit.Operation(ctx, OutboxOperation)
	if err := g.db(t).Delete(ctx, p.key(), nil); err != nil {
		return fmt.Errorf("delete outbox entry: %w", err)
	}
	return nil
}

// Due lists one page of shard's outbox entries due now (every entry with
// all: at an engine's start, when nothing of its own is in flight), from
// one strongly consistent Query on the shard's outbox partition.
func (g *Gateway) Due(ctx context.Context, t *tenant.Tenant, shard int, all bool, cursor string) ([]Pending, string, error) {
	q := kit.Query{Partition: keys.Outbox(t.ID, shard), Consistent: true, Limit: 100}
	if !all {
		due := expression.Name("nextAt").LessThanEqual(expression.Value(g.retry.Clock.Now().UnixMilli()))
		q.Filter = &due
	}
	page, err := g.db(t).QueryPage(ctx, q, cursor)
	if err != nil {
		return nil, "", fmt.Errorf("outbox of shard %d: %w", shard, err)
	}
	out := make([]Pending, 0, len(page.Items))
	for _, it := range page.Items {
		var e entryItem
		if err := attributevalue.UnmarshalMap(it, &e); err != nil {
			return nil, "", fmt.Errorf("decode outbox entry: %w", err)
		}
		out = append(out, pendingOf(e))
	}
	return out, page.Next, nil
}

// DispatchReport counts what a dispatch pass did, by outcome.
type DispatchReport struct {
	Sent    int `json:"sent"`
	Failed  int `json:"failed"`
	Dead    int `json:"dead"`
	Retried int `json:"retried"` // left PENDING for a later try
	Skipped int `json:"skipped"`
}

func (r *DispatchReport) add(d Delivery) {
	switch {
	case d.Skipped:
		r.Skipped++
	case d.Attempt.Outcome == OutcomeSent:
		r.Sent++
	case d.Attempt.Outcome == OutcomeFailed:
		r.Failed++
	case d.Attempt.Outcome == OutcomeDead:
		r.Dead++
	default:
		r.Retried++
	}
}

// dispatchParallel entries of a shard are tried at once: their time is
// the sender's waits.
const dispatchParallel = 8

// Dispatch delivers every entry of shard that is due (every entry with
// all), page after page, a few at once, each with DeliverPending; sent runs for
// each SENT attempt before its entry goes. It stops at the first error
// of the store, with what it did so far.
func (g *Gateway) Dispatch(ctx context.Context, t *tenant.Tenant, shard int, all bool, sent func(context.Context, Attempt) error) (DispatchReport, error) {
	var rep DispatchReport
	if !g.CanDeliver() {
		return rep, nil
	}
	ctx = kit.Within(ctx, "contact.dispatch")
	for cursor := ""; ; {
		page, next, err := g.Due(ctx, t, shard, all, cursor)
		if err != nil {
			return rep, err
		}
		var mu sync.Mutex
		var failed []error
		sem := make(chan struct{}, dispatchParallel)
		var wg sync.WaitGroup
		for _, p := range page {
			if ctx.Err() != nil {
				break
			}
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				d, err := g.DeliverPending(ctx, t, p, false, sent)
				mu.Lock()
				defer mu.Unlock()
				rep.add(d)
				if err != nil {
					failed = append(failed, err)
				}
			})
		}
		wg.Wait()
		if err := errors.Join(failed...); err != nil {
			return rep, err
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if next == "" {
			return rep, nil
		}
		cursor = next
	}
}
