// Package contactlimit is the contact gateway (AP08): before anyone
// contacts a debtor it decides whether the contact is allowed — the
// debtor's calendar (national, state and tenant holidays), the dunning
// policy's window for that day on the debtor's clock and in its state, an
// open dispute, the debtor's opt-out of the channel, and the legal daily
// limit — and leaves evidence of every
// attempt, allowed or blocked, in the debtor's collection.
//
// The limit is one conditional ADD on the debtor's LIMIT#<localDate>
// counter (docs/design.md#contact-gateway): the date in the key makes the rule exact, TTL only
// sweeps old counters. A failed condition means do NOT contact, never
// "retry later". Evidence is an item per attempt, CONTACT#<localDate>#...,
// so "why did he get three SMS on Sunday?" is one Query (ADR 0016).
package contactlimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/debtor"
	"lastro/policy"
	"lastro/tenant"
)

// Channel is how a debtor is contacted.
type Channel string

// The channels the gateway knows.
const (
	SMS      Channel = "SMS"
	WhatsApp Channel = "WHATSAPP"
	Email    Channel = "EMAIL"
	Call     Channel = "CALL"
	Letter   Channel = "LETTER"
)

// Channels lists every channel.
var Channels = []Channel{SMS, WhatsApp, Email, Call, Letter}

// Reason says why an attempt was blocked.
type Reason string

// The reasons, in the order the gateway checks them.
const (
	ReasonHoliday Reason = "HOLIDAY" // a holiday of the debtor's calendar (national, state, tenant) outside its (Sunday's) window
	ReasonWindow  Reason = "WINDOW"  // outside the policy's window for that local day and state
	ReasonDispute Reason = "DISPUTE" // the contract is disputed: the régua is paused
	ReasonOptOut  Reason = "OPT_OUT" // the debtor refused this channel
	ReasonLimit   Reason = "LIMIT"   // the day's maxDailyContacts are used up
)

// Outcomes of an attempt.
const (
	OutcomePending = "PENDING" // allowed, not yet sent
	OutcomeBlocked = "BLOCKED" // not allowed: never sent
	OutcomeSent    = "SENT"
	OutcomeFailed  = "FAILED"
)

// ManualAction is the action recorded for an operator's contact.
const ManualAction = "MANUAL"

// MaxClockSkew bounds how far a claim's instant may be from the gateway's
// clock: a claim is for a contact about to happen, so it cannot count
// against another day's counter.
const MaxClockSkew = 5 * time.Minute

// Claim asks for one contact with a debtor.
type Claim struct {
	DebtorKey  string
	ContractID string
	Channel    Channel
	Template   string    // the message template (a policy templates key)
	Action     string    // the régua step or ManualAction; defaults to Template
	At         time.Time // when the contact happens; zero: now
	UF         string    // the debtor's state when the caller knows it; else the PROFILE's
	Disputed   bool      // the contract has an open dispute
	Actor      debtor.Actor

	// Facts a message template may interpolate (never personal data).
	// AmountCents is the amount due today ({{amount}}, {{amountDue}}).
	AmountCents int64
	DueDate     string
	DaysPastDue int
	Message     MessageFacts // the rest of what a message may say (message.go)

	// Fallbacks are the channels tried in order when the debtor has no
	// address for Channel (ADR 0066); the attempt records the one used.
	Fallbacks []Channel
	// Policy is the dunning policy version whose templates render the
	// message: the contract's own (nil: the tenant's current).
	Policy *policy.Dunning
	// Join makes the debtor's contacts of one day on one channel one
	// contact: a claim on a channel already used that day joins that
	// attempt instead of spending another (the agenda's steps, join.go).
	Join bool
}

// Attempt is the evidence of one claim, allowed or blocked.
type Attempt struct {
	AttemptID     string  `json:"attemptId" dynamodbav:"attemptId"`
	DebtorKey     string  `json:"debtorKey" dynamodbav:"debtorKey"`
	ContractID    string  `json:"contractId" dynamodbav:"contractId"`
	Channel       Channel `json:"channel" dynamodbav:"channel"`
	Template      string  `json:"template" dynamodbav:"template"`
	Action        string  `json:"action" dynamodbav:"action"`
	At            string  `json:"at" dynamodbav:"at"`
	LocalDate     string  `json:"localDate" dynamodbav:"localDate"`
	LocalTime     string  `json:"localTime" dynamodbav:"localTime"` // the instant on the debtor's clock, RFC 3339 with its offset
	TimeZone      string  `json:"timeZone" dynamodbav:"timeZone"`   // the debtor's IANA zone it was judged in (ADR 0064)
	Allowed       bool    `json:"allowed" dynamodbav:"allowed"`
	Reason        Reason  `json:"reason,omitempty" dynamodbav:"reason,omitempty"`
	AttemptNumber int     `json:"attemptNumber,omitempty" dynamodbav:"attemptNumber,omitempty"` // of the day, when allowed
	Window        string  `json:"window" dynamodbav:"window"`                                   // the window applied, "08:00-20:00" or "none"
	UF            string  `json:"uf,omitempty" dynamodbav:"uf,omitempty"`
	PolicyVersion string  `json:"dunningPolicy" dynamodbav:"dunningPolicy"`
	Outcome       string  `json:"outcome" dynamodbav:"outcome"`
	OutcomeDetail string  `json:"outcomeDetail,omitempty" dynamodbav:"outcomeDetail,omitempty"`
	OutcomeAt     string  `json:"outcomeAt,omitempty" dynamodbav:"outcomeAt,omitempty"`
	ActorRole     string  `json:"actorRole,omitempty" dynamodbav:"actorRole,omitempty"`
	RequestID     string  `json:"requestId,omitempty" dynamodbav:"requestId,omitempty"`
	RetryAt       string  `json:"retryAt,omitempty" dynamodbav:"retryAt,omitempty"`   // blocked before today's window opens: when it opens (UTC)
	JoinedTo      string  `json:"joinedTo,omitempty" dynamodbav:"joinedTo,omitempty"` // the day's attempt on the channel this one joined
	SK            string  `json:"-" dynamodbav:"-"`
	// CallOutcome, OperatorID and Calls are a CALL attempt's result as the
	// collector recorded it (outcome CALLED, call.go): the desk's code, the
	// operator's API key id (never a name) and how many outcomes it holds.
	CallOutcome string `json:"callOutcome,omitempty" dynamodbav:"callOutcome,omitempty"`
	OperatorID  string `json:"operatorId,omitempty" dynamodbav:"operatorId,omitempty"`
	Calls       int    `json:"calls,omitempty" dynamodbav:"calls,omitempty"`
	// read is the PROFILE item the claim read, kept (unexported, never
	// serialised) so the delivery resolves the address without reading it
	// again. A pointer keeps Attempt comparable.
	read *profileRead
}

// profileRead is the PROFILE item one claim read (strongly consistent).
// It holds the sealed personal data, never the plaintext.
type profileRead struct{ item kit.Item }

// evidenceItem is the CONTACT item: evidence, not a log; no personal data.
type evidenceItem struct {
	PK   string `dynamodbav:"PK"`
	SK   string `dynamodbav:"SK"`
	Type string `dynamodbav:"type"`
	Attempt
}

// Deps are what the gateway needs.
type Deps struct {
	Kit       *kit.Kit
	Tenants   *tenant.Service // the HTTP handlers' caller; optional otherwise
	Policies  *policy.Service
	Clock     clock.Clock
	Logger    *slog.Logger
	Sender    Sender      // optional: Send and the HTTP POST deliver through it
	Addresses AddressBook // optional: resolves the recipient for Send
	Retry     Retry       // how the outbox retries deliveries (ADR 0062); zero fields take the defaults
}

// Gateway is the contact gateway.
type Gateway struct {
	kit       *kit.Kit
	tenants   *tenant.Service
	policies  *policy.Service
	clock     clock.Clock
	log       *slog.Logger
	sender    Sender
	addresses AddressBook
	retry     Retry
}

// New returns the gateway.
func New(d Deps) *Gateway {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Clock == nil {
		d.Clock = clock.System{}
	}
	return &Gateway{kit: d.Kit, tenants: d.Tenants, policies: d.Policies, clock: d.Clock, log: d.Logger,
		sender: d.Sender, addresses: d.Addresses, retry: d.Retry.withDefaults()}
}

func (g *Gateway) db(t *tenant.Tenant) *kit.Tenant { return g.kit.Tenant(t.ID, t.CursorKey()) }

var templatePattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,31}$`)

// ValidChannel reports whether c is a known channel.
func ValidChannel(c Channel) bool { return slices.Contains(Channels, c) }

func (c *Claim) validate(now time.Time) error {
	if err := debtor.ValidKey(c.DebtorKey); err != nil {
		return err
	}
	if !keys.ValidIdentifier(c.ContractID) {
		return errs.E(errs.Invalid, "invalid_contract_id", "contractId must be 1-64 of A-Z a-z 0-9 - _ .")
	}
	if !ValidChannel(c.Channel) {
		return errs.E(errs.Invalid, "invalid_channel", "channel must be one of SMS, WHATSAPP, EMAIL, CALL, LETTER")
	}
	if !templatePattern.MatchString(c.Template) {
		return errs.E(errs.Invalid, "invalid_template", "template must be 1-32 of A-Z 0-9 _, starting with a letter")
	}
	if c.Action == "" {
		c.Action = c.Template
	}
	if !templatePattern.MatchString(c.Action) {
		return errs.E(errs.Invalid, "invalid_action", "action must be 1-32 of A-Z 0-9 _, starting with a letter")
	}
	if c.UF != "" && !policy.ValidUF(c.UF) {
		return errs.E(errs.Invalid, "invalid_uf", "uf must be one of the 27 UFs, upper case")
	}
	if c.At.IsZero() {
		c.At = now
	}
	if d := c.At.Sub(now); d > MaxClockSkew || d < -MaxClockSkew {
		return errs.E(errs.Invalid, "invalid_at", "a claim is for a contact happening now (within %s)", MaxClockSkew)
	}
	if c.AmountCents < 0 || c.DaysPastDue < 0 {
		return errs.E(errs.Invalid, "invalid_amount", "amount and days past due must not be negative")
	}
	if c.DueDate != "" {
		if _, err := calendar.Parse(c.DueDate); err != nil {
			return errs.E(errs.Invalid, "invalid_due_date", "dueDate must be YYYY-MM-DD")
		}
	}
	return nil
}

// profile reads what the gateway needs of dk's PROFILE (its state, its
// opt-outs), through the debtor package, which owns the item.
func (g *Gateway) profile(ctx context.Context, t *tenant.Tenant, dk string) (*debtor.ContactProfile, error) {
	return debtor.ReadContactProfile(ctx, g.db(t), t.ID, dk)
}

// Claim decides whether one contact may happen now and leaves its
// evidence either way. A blocked attempt is not an error: the Attempt says
// Allowed false and why. Bad input is a 400 and writes nothing; an unknown
// debtor is a 404 and writes nothing.
//
// The PROFILE is read first (strongly consistent: an opt-out just recorded
// must hold) because evidence only goes into an existing debtor's
// collection and the state window needs the debtor's UF. Then, without
// touching the counter: HOLIDAY, WINDOW, DISPUTE, OPT_OUT. Only a claim
// that passes them all spends the day's LIMIT, with one conditional ADD.
func (g *Gateway) Claim(ctx context.Context, t *tenant.Tenant, c Claim) (Attempt, error) {
	d, err := g.decide(ctx, t, &c)
	if err != nil {
		return Attempt{}, err
	}
	a := d.attempt
	if a.Reason == "" {
		n, ok, err := 0, false, error(nil)
		if c.Join {
			n, a.JoinedTo, ok, err = g.spendOrJoin(ctx, t, c.DebtorKey, d.date, d.loc, d.max, a.Channel, a.AttemptID)
		} else {
			n, ok, err = g.spend(ctx, t, c.DebtorKey, d.date, d.loc, d.max)
		}
		if err != nil {
			return Attempt{}, err
		}
		if ok {
			// Only an allowed attempt is delivered: only it keeps the item.
			a.Allowed, a.AttemptNumber, a.read = true, n, d.read
		} else {
			a.Reason = ReasonLimit
		}
	}
	return g.settle(ctx, t, a)
}

// decision is what the gateway decided of a claim before the counter:
// the attempt (Reason set when blocked, its channel the routed one), the
// debtor's local date whose counter an allowed attempt spends and its
// zone, the day's maximum and the PROFILE read.
type decision struct {
	attempt Attempt
	date    calendar.Date
	loc     *time.Location
	max     int
	read    *profileRead
}

// decide validates c, reads the policy and the PROFILE, routes the claim
// to a channel and checks, in order and without touching the counter,
// HOLIDAY, WINDOW, DISPUTE, then OPT_OUT or NO_ADDRESS. An attempt
// without a Reason passed them all.
func (g *Gateway) decide(ctx context.Context, t *tenant.Tenant, c *Claim) (*decision, error) {
	if err := c.validate(g.clock.Now()); err != nil {
		return nil, err
	}
	pol, err := g.policies.Dunning(ctx, t, t.DunningPolicy)
	if err != nil {
		return nil, err
	}
	prof, err := g.profile(ctx, t, c.DebtorKey)
	if err != nil {
		return nil, err
	}
	uf := c.UF
	if uf == "" {
		uf = prof.UF
	}
	// The debtor's clock and calendar, not the tenant's (ADR 0064): the
	// window, the local date of the counter and the evidence's local time
	// are the debtor's zone's; holidays are the debtor's state's.
	loc, local, date, cal, window := windowAt(pol, t, prof.TimeZone, uf, c.At)
	channel, unroutable := route(*c, prof)
	c.Channel = channel
	id := uuid.NewString()
	a := Attempt{AttemptID: id, DebtorKey: c.DebtorKey, ContractID: c.ContractID, Channel: c.Channel, Template: c.Template,
		Action: c.Action, At: keys.Timestamp(c.At), LocalDate: date.String(), LocalTime: local.Format(time.RFC3339),
		TimeZone: loc.String(), Window: window.String(), UF: uf, PolicyVersion: pol.Name, ActorRole: c.Actor.Role, RequestID: c.Actor.RequestID,
		SK: keys.Contact(date.String(), c.At, id)}
	switch {
	case cal.IsHoliday(date) && !window.Contains(local):
		a.Reason = ReasonHoliday
		a.RetryAt = opensLater(window, local)
	case !window.Contains(local):
		a.Reason = ReasonWindow
		a.RetryAt = opensLater(window, local)
	case c.Disputed:
		a.Reason = ReasonDispute
	case unroutable != "":
		// Refused, or no address on any channel the step may use: nothing
		// is sent and the day's contact is not spent.
		a.Reason = unroutable
	}
	return &decision{attempt: a, date: date, loc: loc, max: pol.MaxDailyContacts, read: &profileRead{item: prof.Item()}}, nil
}

// settle writes an attempt's evidence: PENDING when allowed, JOINED when
// it joined the day's attempt on its channel, SKIPPED_NO_ADDRESS or
// BLOCKED with its reason when not allowed.
func (g *Gateway) settle(ctx context.Context, t *tenant.Tenant, a Attempt) (Attempt, error) {
	a.Outcome = OutcomeBlocked
	switch {
	case a.Allowed && a.JoinedTo != "":
		a.Outcome = OutcomeJoined
	case a.Allowed:
		a.Outcome = OutcomePending
	case a.Reason == ReasonNoAddress:
		a.Outcome = OutcomeSkippedNoAddress
	}
	if err := g.evidence(ctx, t, a); err != nil {
		// The counter may already count this attempt: that errs on the
		// side of fewer contacts, and without evidence nobody contacts.
		return Attempt{}, err
	}
	if !a.Allowed {
		g.log.InfoContext(ctx, "contact blocked", "tenant", t.ID, "attempt_id", a.AttemptID, "channel", string(a.Channel),
			"action", a.Action, "reason", string(a.Reason), "local_date", a.LocalDate)
	}
	return a, nil
}

// windowAt is the debtor's clock and calendar at at (ADR 0064): the zone
// (timeZone, else the UF's, else the tenant's), the local time and date,
// the calendar of the debtor's state and that day's contact window.
func windowAt(pol *policy.Dunning, t *tenant.Tenant, timeZone, uf string, at time.Time) (*time.Location, time.Time, calendar.Date, *calendar.Calendar, *policy.Window) {
	loc := debtor.ZoneOf(timeZone, uf, t.Location)
	date := calendar.Of(at, loc)
	cal := t.CalendarIn(uf)
	return loc, at.In(loc), date, cal, pol.WindowFor(cal, date, uf)
}

// InWindow reports whether a debtor of zone timeZone and state uf (either
// may be empty) is inside pol's contact window at at — the rule the
// gateway's decide applies (holidays of the debtor's state, weekdays,
// hours in the debtor's zone) — and, when not, the instant the window
// opens later that local day ("" when it does not open again that day).
func InWindow(pol *policy.Dunning, t *tenant.Tenant, timeZone, uf string, at time.Time) (bool, string) {
	_, local, _, _, window := windowAt(pol, t, timeZone, uf, at)
	if window.Contains(local) {
		return true, ""
	}
	return false, opensLater(window, local)
}

// opensLater is the instant w opens on local's day when that is still to
// come ("" when the day has no window or it opened already): a claim
// blocked before the window opens may be served the same day.
func opensLater(w *policy.Window, local time.Time) string {
	if w == nil {
		return ""
	}
	from, err := time.Parse("15:04", w.From)
	if err != nil {
		return ""
	}
	y, m, d := local.Date()
	at := time.Date(y, m, d, from.Hour(), from.Minute(), 0, 0, local.Location())
	if !at.After(local) {
		return ""
	}
	return keys.Timestamp(at)
}

// limitUpdate is the design's conditional ADD on LIMIT#<localDate>, as
// an update and its condition: one more attempt while fewer than max.
// With a channel (a claim that joins, join.go) it also marks the day's
// channel with attemptID, on condition that no attempt marked it yet.
// expiresAt (date + 8 days, midnight in the debtor's zone loc) is
// housekeeping only: the date in the key is what makes tomorrow's counter
// another item.
func limitUpdate(date calendar.Date, loc *time.Location, max int, ch Channel, attemptID string) (expression.UpdateBuilder, expression.ConditionBuilder) {
	ttl := date.AddDays(8).Midnight(loc).Unix()
	upd := expression.Set(expression.Name("expiresAt"), expression.IfNotExists(expression.Name("expiresAt"), expression.Value(ttl))).
		Set(expression.Name("type"), expression.Value("LIMIT")).
		Set(expression.Name("localDate"), expression.Value(date.String())).
		Add(expression.Name("attempts"), expression.Value(1))
	cond := expression.AttributeNotExists(expression.Name("attempts")).
		Or(expression.Name("attempts").LessThan(expression.Value(max)))
	if ch != "" {
		mark := expression.Name(channelAttr(ch))
		upd = upd.Set(mark, expression.Value(attemptID))
		cond = expression.AttributeNotExists(mark).And(cond)
	}
	return upd, cond
}

// spend is the design's conditional ADD on LIMIT#<localDate>: it returns the
// attempt's number of the day, or ok false when the day's contacts are
// used up.
func (g *Gateway) spend(ctx context.Context, t *tenant.Tenant, dk string, date calendar.Date, loc *time.Location, max int) (int, bool, error) {
	ctx, _ = kit.Operation(ctx, "contact.claim")
	upd, cond := limitUpdate(date, loc, max, "", "")
	out, err := g.db(t).Update(ctx, kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.Limit(date.String())}, upd, &cond, types.ReturnValueUpdatedNew)
	if errors.Is(err, kit.ErrConditionFailed) {
		return 0, false, nil // do NOT contact; not "retry later"
	}
	if err != nil {
		return 0, false, fmt.Errorf("claim contact: %w", err)
	}
	var got struct {
		Attempts int `dynamodbav:"attempts"`
	}
	if err := attributevalue.UnmarshalMap(out, &got); err != nil {
		return 0, false, fmt.Errorf("decode counter: %w", err)
	}
	return got.Attempts, true, nil
}

func (g *Gateway) evidence(ctx context.Context, t *tenant.Tenant, a Attempt) error {
	ctx, _ = kit.Operation(ctx, "contact.evidence")
	it, err := attributevalue.MarshalMap(evidenceItem{PK: keys.Debtor(t.ID, a.DebtorKey), SK: a.SK, Type: TypeContact, Attempt: a})
	if err != nil {
		return fmt.Errorf("marshal evidence: %w", err)
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	if err := g.db(t).Put(ctx, it, &notExists); err != nil {
		return fmt.Errorf("write contact evidence: %w", err)
	}
	return nil
}

// MaxDetail bounds an outcome's detail.
const MaxDetail = 200

// Record writes the outcome of an allowed attempt after the send, once:
// SENT or FAILED with a short detail (a code such as "status_500", never
// an address or a message text). Conditioned on the attempt still being
// PENDING, so a second outcome is a 409.
func (g *Gateway) Record(ctx context.Context, t *tenant.Tenant, a Attempt, outcome, detail string) (Attempt, error) {
	if outcome != OutcomeSent && outcome != OutcomeFailed {
		return a, errs.E(errs.Invalid, "invalid_outcome", "outcome must be SENT or FAILED")
	}
	if len(detail) > MaxDetail || strings.IndexFunc(detail, unicode.IsControl) >= 0 {
		return a, errs.E(errs.Invalid, "invalid_detail", "detail must be at most %d printable characters", MaxDetail)
	}
	return g.record(ctx, t, a, outcome, detail)
}

// record writes an allowed attempt's outcome (SENT, FAILED or DEAD) once.
func (g *Gateway) record(ctx context.Context, t *tenant.Tenant, a Attempt, outcome, detail string) (Attempt, error) {
	if !a.Allowed || a.SK == "" {
		return a, errs.E(errs.Rule, "contact_not_allowed", "only an allowed attempt has an outcome")
	}
	ctx, _ = kit.Operation(ctx, "contact.record")
	now := keys.Timestamp(g.clock.Now())
	upd := expression.Set(expression.Name("outcome"), expression.Value(outcome)).
		Set(expression.Name("outcomeAt"), expression.Value(now))
	if detail != "" {
		upd = upd.Set(expression.Name("outcomeDetail"), expression.Value(detail))
	}
	cond := expression.AttributeExists(expression.Name("PK")).
		And(expression.Name("outcome").Equal(expression.Value(OutcomePending)))
	_, err := g.db(t).Update(ctx, kit.Key{PK: keys.Debtor(t.ID, a.DebtorKey), SK: a.SK}, upd, &cond, types.ReturnValueNone)
	if errors.Is(err, kit.ErrConditionFailed) {
		return a, errs.E(errs.Conflict, "outcome_recorded", "this attempt's outcome is already recorded")
	}
	if err != nil {
		return a, fmt.Errorf("record contact outcome: %w", err)
	}
	a.Outcome, a.OutcomeDetail, a.OutcomeAt = outcome, detail, now
	return a, nil
}

// SetOptOut records that the debtor refuses (out true) or accepts again a
// channel: a string set on the PROFILE, which Claim reads strongly
// consistent. 404 when the debtor does not exist.
func (g *Gateway) SetOptOut(ctx context.Context, t *tenant.Tenant, dk string, ch Channel, out bool) error {
	if err := debtor.ValidKey(dk); err != nil {
		return err
	}
	if !ValidChannel(ch) {
		return errs.E(errs.Invalid, "invalid_channel", "channel must be one of SMS, WHATSAPP, EMAIL, CALL, LETTER")
	}
	return debtor.SetOptOut(ctx, g.db(t), t.ID, dk, string(ch), out)
}

// DayView is the compliance answer to "what contacts did this debtor get
// on this date": the day's attempts (one Query on the day's CONTACT range)
// and the counter (a strongly consistent GetItem of LIMIT#<date>).
type DayView struct {
	DebtorKey        string    `json:"debtorKey"`
	Date             string    `json:"date"`
	Counter          int       `json:"counter"` // allowed attempts counted on LIMIT#<date>
	MaxDailyContacts int       `json:"maxDailyContacts"`
	Items            []Attempt `json:"items"`
	NextCursor       *string   `json:"nextCursor"`
}

// Day answers the compliance view of one civil date (ADR 0016 says why it
// is a Query and a GetItem, not one Query).
func (g *Gateway) Day(ctx context.Context, t *tenant.Tenant, dk, date string, limit int32, cursor string) (*DayView, error) {
	if err := debtor.ValidKey(dk); err != nil {
		return nil, err
	}
	if _, err := calendar.Parse(date); err != nil {
		return nil, errs.E(errs.Invalid, "invalid_date", "date must be YYYY-MM-DD")
	}
	ctx = kit.Within(ctx, "contact.day")
	pk := keys.Debtor(t.ID, dk)
	page, err := g.db(t).QueryPage(ctx, kit.Query{Partition: pk, Sort: kit.BeginsWith(keys.ContactsOn(date)), Consistent: true, Limit: limit}, cursor)
	if err != nil {
		return nil, err
	}
	counter, err := g.db(t).Get(ctx, kit.Key{PK: pk, SK: keys.Limit(date)}, true)
	if err != nil {
		return nil, err
	}
	pol, err := g.policies.Dunning(ctx, t, t.DunningPolicy)
	if err != nil {
		return nil, err
	}
	v := &DayView{DebtorKey: dk, Date: date, MaxDailyContacts: pol.MaxDailyContacts, Items: []Attempt{}}
	if page.Next != "" {
		v.NextCursor = &page.Next
	}
	if counter != nil {
		var c struct {
			Attempts int `dynamodbav:"attempts"`
		}
		if err := attributevalue.UnmarshalMap(counter, &c); err != nil {
			return nil, fmt.Errorf("decode counter: %w", err)
		}
		v.Counter = c.Attempts
	}
	for _, it := range page.Items {
		var e evidenceItem
		if err := attributevalue.UnmarshalMap(it, &e); err != nil {
			return nil, fmt.Errorf("decode contact evidence: %w", err)
		}
		e.Attempt.SK = e.SK
		v.Items = append(v.Items, e.Attempt)
	}
	return v, nil
}

// TypeContact is the type of the CONTACT evidence item.
const TypeContact = "CONTACT"

// Evidence is the CONTACT item as stored, for readers outside the package
// that decode it from a change image (the stream's translator).
type Evidence = evidenceItem
