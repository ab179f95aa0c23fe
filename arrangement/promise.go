package arrangement

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/contract/regua"
)

// Promise statuses. A promise is OPEN until exactly one writer resolves
// it: the settlement that completes it (KEPT), its PROMISE_CHECK (KEPT or
// BROKEN) or a write-off (CANCELLED). Every resolution is conditioned on
// the status OPEN and the version read, so two writers never both win.
const (
	PromiseOpen      = "OPEN"
	PromiseKept      = "KEPT"
	PromiseBroken    = "BROKEN"
	PromiseCancelled = "CANCELLED"
)

// Event types on the contract's trail (seq 0).
const (
	EvPromiseMade   = "PromiseMade"
	EvPromiseKept   = "PromiseKept"
	EvPromiseBroken = "PromiseBroken"
)

// TypePromise is the promise item's type.
const TypePromise = "PROMISE"

// Promise is a payment promise item, CT#<c>#PROMISE#<id>: the debtor
// promises AmountCents by PromisedDate. ReceivedCents counts what
// payments made since the promise (CreatedAt) and by the promised date
// brought in; the settlement adds to it in its own transaction.
type Promise struct {
	PK            string `dynamodbav:"PK" json:"-"`
	SK            string `dynamodbav:"SK" json:"-"`
	Type          string `dynamodbav:"type" json:"-"`
	PromiseID     string `dynamodbav:"promiseId" json:"promiseId"`
	ContractID    string `dynamodbav:"contractId" json:"contractId"`
	PromisedDate  string `dynamodbav:"promisedDate" json:"promisedDate"`
	AmountCents   int64  `dynamodbav:"amountCents" json:"amountCents"`
	ReceivedCents int64  `dynamodbav:"receivedCents" json:"receivedCents"`
	Status        string `dynamodbav:"status" json:"status"`
	CreatedAt     string `dynamodbav:"createdAt" json:"createdAt"`
	ResolvedAt    string `dynamodbav:"resolvedAt,omitempty" json:"resolvedAt,omitempty"`
	ResolvedBy    string `dynamodbav:"resolvedBy,omitempty" json:"resolvedBy,omitempty"` // settlement | check | write-off
	Version       int    `dynamodbav:"version" json:"-"`

	read int // version as read (0: new)
}

// OpenPromise reads the open promise behind c's PROMISE hold, strongly
// consistent (a promise made a second ago must count); nil when the
// contract holds none.
func OpenPromise(ctx context.Context, db *kit.Tenant, c *contract.Contract) (*Promise, error) {
	h := &c.Header
	if h.Hold != regua.HoldPromise || h.HoldID == "" {
		return nil, nil
	}
	it, err := db.Get(ctx, kit.Key{PK: h.PK, SK: keys.Promise(h.ContractID, h.HoldID)}, true)
	if err != nil {
		return nil, fmt.Errorf("read promise: %w", err)
	}
	if it == nil {
		return nil, nil
	}
	p, err := decodePromise(it)
	if err != nil || p.Status != PromiseOpen {
		return nil, err
	}
	return p, nil
}

func decodePromise(it kit.Item) (*Promise, error) {
	var p Promise
	if err := attributevalue.UnmarshalMap(it, &p); err != nil {
		return nil, fmt.Errorf("decode promise: %w", err)
	}
	p.read = p.Version
	return &p, nil
}

// write is the Put of the promise as changed: a new one only if absent,
// an existing one only while it is still OPEN at the version read.
func (p *Promise) write() (kit.Action, error) {
	p.Version = p.read + 1
	it, err := attributevalue.MarshalMap(p)
	if err != nil {
		return kit.Action{}, fmt.Errorf("marshal promise: %w", err)
	}
	cond := expression.AttributeNotExists(expression.Name("PK"))
	if p.read > 0 {
		cond = expression.Name("version").Equal(expression.Value(p.read)).And(expression.Name("status").Equal(expression.Value(PromiseOpen)))
	}
	return kit.PutAction(it, &cond), nil
}

// resolve ends the promise and the contract's hold on it.
func (p *Promise) resolve(c *contract.Contract, status, by string, now time.Time) {
	p.Status, p.ResolvedAt, p.ResolvedBy = status, keys.Timestamp(now), by
	h := &c.Header
	if h.Hold == regua.HoldPromise && h.HoldID == p.PromiseID {
		h.Hold, h.PromiseDate, h.HoldID = "", "", ""
	}
}

// Payment is a settlement as a promise sees it.
type Payment struct {
	SettlementID string
	PaidAt       time.Time
	PayDate      calendar.Date // the payment's civil date in the tenant's zone
	AmountCents  int64
}

// PaymentResult is what a payment did to the contract's open promise.
type PaymentResult struct {
	Kept    bool         // the promise is KEPT in this transaction: refresh the whole plan
	Actions []kit.Action // the promise's conditioned write, and its event when kept
}

// OnPayment counts a payment towards the contract's open promise p (nil:
// nothing to do), for the settlement transaction that applies it: a
// payment made since the promise and by its date adds to ReceivedCents;
// reaching the amount, or paying the contract off, keeps it — the hold is
// cleared on the header the caller then refreshes and saves. The promise
// write is conditioned on OPEN and its version, so a PROMISE_CHECK that
// broke it meanwhile fails this transaction instead of being overwritten.
func OnPayment(c *contract.Contract, p *Promise, pay Payment, now time.Time) (PaymentResult, error) {
	var res PaymentResult
	if p == nil {
		return res, nil
	}
	promised, err := calendar.Parse(p.PromisedDate)
	if err != nil {
		return res, fmt.Errorf("promise %s: %w", p.PromiseID, err)
	}
	created, _ := time.Parse(time.RFC3339Nano, p.CreatedAt)
	counts := !pay.PayDate.After(promised) && !pay.PaidAt.Before(created.Truncate(time.Second))
	// A contract paid off owes nothing a promise could be about: the
	// promise closes with it (the header's refresh drops the hold).
	settled := true
	for i := range c.Installments {
		if c.Installments[i].Open() {
			settled = false
			break
		}
	}
	if !counts && !settled {
		return res, nil // a payment outside the promise leaves it to its check
	}
	if counts {
		p.ReceivedCents += pay.AmountCents
	}
	if p.ReceivedCents >= p.AmountCents || settled {
		p.resolve(c, PromiseKept, "settlement", now)
		res.Kept = true
		ev := c.NewEvent(0, EvPromiseKept, now, contract.Actor{Role: "webhook"}, map[string]any{"promiseId": p.PromiseID,
			"promisedDate": p.PromisedDate, "amountCents": p.AmountCents, "receivedCents": p.ReceivedCents, "settlementId": pay.SettlementID, "by": "settlement"})
		a, err := contract.PutEvent(ev)
		if err != nil {
			return res, err
		}
		res.Actions = append(res.Actions, a)
	}
	a, err := p.write()
	if err != nil {
		return res, err
	}
	res.Actions = append([]kit.Action{a}, res.Actions...)
	return res, nil
}

// CheckResult is what a PROMISE_CHECK decided.
type CheckResult struct {
	Event   contract.Event // PromiseKept or PromiseBroken
	Actions []kit.Action   // the promise's conditioned write
}

// Check resolves the open promise p at its PROMISE_CHECK on date, for the
// agenda's write: KEPT when the payments it counted reach its amount or
// nothing is overdue any more (the debt it was about is paid), else BROKEN.
// Either way the hold is cleared and the caller's refresh puts the
// contract back on the régua at the step it is owed. p nil (a hold without
// its item) decides on the delinquency alone.
func Check(c *contract.Contract, p *Promise, date calendar.Date, delinquent bool, now time.Time, actor contract.Actor) (CheckResult, error) {
	var res CheckResult
	h := &c.Header
	kind, status := EvPromiseBroken, PromiseBroken
	if !delinquent || (p != nil && p.ReceivedCents >= p.AmountCents) {
		kind, status = EvPromiseKept, PromiseKept
	}
	details := map[string]any{"promiseDate": h.PromiseDate, "on": date.String(), "by": "check"}
	if p == nil {
		h.Hold, h.PromiseDate, h.HoldID = "", "", ""
	} else {
		details["promiseId"], details["amountCents"], details["receivedCents"] = p.PromiseID, p.AmountCents, p.ReceivedCents
		p.resolve(c, status, "check", now)
		a, err := p.write()
		if err != nil {
			return res, err
		}
		res.Actions = append(res.Actions, a)
	}
	res.Event = c.NewEvent(0, kind, now, actor, details)
	return res, nil
}
