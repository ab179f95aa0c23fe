package worklist

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contactlimit"
	"lastro/policy"
	"lastro/tenant"
)

// The tenant's outcome codes are the results a collector records of a
// call (tenant.OutcomeCode, ADR 0080): each of a built-in kind, so the
// desk knows a PROMISE-kind code opens the promise form and a
// CALLBACK-kind code needs its time; a tenant that set none has one code
// per kind (tenant.DefaultOutcomeCodes). A listed call already spent the
// debtor's contact of the day when the régua listed it, whatever its
// outcome: an attempt to reach the debtor is what the contact limit
// counts, answered or not. Recording the outcome counts nothing more; it
// settles the attempt's evidence (CALLED, with the code, the operator's id
// and the time), and a callback the debtor asked for on the same day is
// the same contact (ADR 0085).
const (
	OutcomeReached  = tenant.KindReached  // the right party, nothing agreed
	OutcomePromise  = tenant.KindPromise  // the debtor promised to pay: the promise form follows
	OutcomeDispute  = tenant.KindDispute  // the debtor contests the debt: the dispute follows
	OutcomeCallback = tenant.KindCallback // call again at CallbackAt
)

// StatusDone is a task whose call has an outcome; StatusCallback one the
// debtor asked to be called again.
const (
	StatusDone     = "DONE"
	StatusCallback = "CALLBACK"
)

// ClaimFor is how long a collector holds a debtor's task once taken.
const ClaimFor = 15 * time.Minute

// maxQueue bounds a day's queue read at once (pages of the day's list).
const maxQueue = 2000

var (
	errTaken      = errs.E(errs.Conflict, "task_taken", "another collector is working this debtor now; try another task")
	errNoTask     = errs.E(errs.NotFound, "task_not_found", "no such call task on that day's list")
	errOutcome    = errs.E(errs.Invalid, "invalid_outcome", "outcome must be one of the tenant's outcome codes (GET /v1/tenant/outcome-codes)")
	errCallbackAt = errs.E(errs.Invalid, "invalid_callback", "a callback needs its time (RFC 3339, later than now)")
	errNotHolder  = errs.E(errs.Conflict, "task_not_yours", "take the task before recording its outcome (another collector may hold it)")
	errDate       = errs.E(errs.Invalid, "invalid_date", "date must be YYYY-MM-DD")
	errSettled    = errs.E(errs.Conflict, "attempt_settled", "this call's contact attempt is no longer open (blocked or settled otherwise)")
	// ErrOutsideWindow refuses a claim while the debtor is outside the
	// contact window in their own zone and calendar (ADRs 0064, 0080).
	ErrOutsideWindow = errs.E(errs.Conflict, "outside_contact_window",
		"the debtor is outside the contact window now (their zone, hours, weekdays and state holidays); call when it opens or take another task")
)

// WindowFunc tells whether task's debtor is inside the contact window at
// now and, when not, when it opens later that local day (""): the
// gateway's rule (contactlimit.InWindow). Nil: always inside.
type WindowFunc func(task Task, now time.Time) (inside bool, opensAt string)

// validDate refuses a day that is not a civil date before it reaches a key.
func validDate(date string) error {
	if _, err := calendar.Parse(date); err != nil {
		return errDate
	}
	return nil
}

// Queue is a day's call list in the order a collector works it: open
// tasks first, then by days past due (most first), amount due (largest
// first) and the last contact (oldest first); a callback due comes with
// the open ones. A task whose debtor is outside the contact window now
// (win) is marked Outside and comes after the callable ones, before a
// callback later. One keyed Query per page of the day's partition.
func Queue(ctx context.Context, db *kit.Tenant, tenantID, date string, now time.Time, win WindowFunc) ([]Task, error) {
	if err := validDate(date); err != nil {
		return nil, err
	}
	var all []Task
	for cursor := ""; len(all) < maxQueue; {
		page, next, err := Day(ctx, db, tenantID, date, 500, cursor)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if next == "" {
			break
		}
		cursor = next
	}
	ts := keys.Timestamp(now)
	if win != nil {
		for i := range all {
			if all[i].Status != StatusDone {
				in, opens := win(all[i], now)
				all[i].Outside, all[i].OpensAt = !in, opens
			}
		}
	}
	// rank: to call now (open, or a callback due), outside the window
	// now, a callback later, done.
	rank := func(t Task) int {
		switch {
		case t.Status == StatusDone:
			return 3
		case t.Status == StatusCallback && t.CallbackAt > ts:
			return 2
		case t.Outside:
			return 1
		}
		return 0
	}
	slices.SortStableFunc(all, func(a, b Task) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(b.DaysPastDue, a.DaysPastDue), cmp.Compare(b.AmountDueCents, a.AmountDueCents),
			cmp.Compare(a.LastContactAt, b.LastContactAt), cmp.Compare(a.SK, b.SK))
	})
	return all, nil
}

// Claim gives the task of debtor dk's contract on date to holder until
// now + ClaimFor: a conditioned update, refused while another holder's
// claim runs (one collector per debtor at a time), once the task is
// done, or while the debtor is outside the contact window (win): then one
// eventually consistent GetItem of the task reads its zone and state
// first (written once with the task, so never stale).
func Claim(ctx context.Context, db *kit.Tenant, tenantID, date, dk, contractID, holder string, now time.Time, win WindowFunc) error {
	if err := validDate(date); err != nil {
		return err
	}
	if !keys.ValidDebtorKey(dk) || !keys.ValidIdentifier(contractID) {
		return errNoTask
	}
	ctx, _ = kit.Operation(ctx, "worklist.claim")
	name, val := expression.Name, expression.Value
	key := kit.Key{PK: keys.WorkList(tenantID, date), SK: keys.CallTask(dk, contractID)}
	if win != nil {
		it, err := db.Get(ctx, key, false)
		if err != nil {
			return fmt.Errorf("worklist: read the task: %w", err)
		}
		if it == nil {
			return errNoTask
		}
		var task Task
		if err := attributevalue.UnmarshalMap(it, &task); err != nil {
			return fmt.Errorf("worklist: decode task: %w", err)
		}
		if in, _ := win(task, now); !in && task.Status != StatusDone {
			return ErrOutsideWindow
		}
	}
	upd := expression.Set(name("claimedBy"), val(holder)).Set(name("claimedUntil"), val(keys.Timestamp(now.Add(ClaimFor))))
	free := name("claimedBy").AttributeNotExists().Or(name("claimedBy").Equal(val(holder))).
		Or(name("claimedUntil").LessThan(val(keys.Timestamp(now))))
	cond := name("PK").AttributeExists().And(name("status").NotEqual(val(StatusDone))).And(free)
	_, err := db.Update(ctx, key, upd, &cond, types.ReturnValueNone)
	if errors.Is(err, kit.ErrConditionFailed) {
		it, gerr := db.Get(ctx, key, true)
		if gerr == nil && it == nil {
			return errNoTask
		}
		return errTaken
	}
	if err != nil {
		return fmt.Errorf("worklist: claim: %w", err)
	}
	return nil
}

// Record writes the call's outcome on the task holder holds (conditioned
// on the claim), closing it, or keeping it for the callback at callbackAt,
// and settles the task's contact evidence in the same transaction
// (contactlimit.CallOutcome): one consistent GetItem of the task, for its
// attempt's key, then TransactWriteItems of the task and the evidence. A
// task listed before tasks carried the attempt's key is written alone.
// holder is the operator's id (an API key id), recorded as outcomeBy;
// outcome is one of codes, the tenant's (tenant.Tenant.OutcomeCodes), and
// its kind says whether the task waits for a callback.
func Record(ctx context.Context, db *kit.Tenant, tenantID string, codes []tenant.OutcomeCode, date, dk, contractID, holder, outcome string,
	callbackAt time.Time, now time.Time) error {
	i := slices.IndexFunc(codes, func(c tenant.OutcomeCode) bool { return c.Code == outcome })
	if i < 0 {
		return errOutcome
	}
	callback := codes[i].Kind == tenant.KindCallback
	if callback && !callbackAt.After(now) {
		return errCallbackAt
	}
	if err := validDate(date); err != nil {
		return err
	}
	if !keys.ValidDebtorKey(dk) || !keys.ValidIdentifier(contractID) {
		return errNoTask
	}
	ctx, _ = kit.Operation(ctx, "worklist.outcome")
	key := kit.Key{PK: keys.WorkList(tenantID, date), SK: keys.CallTask(dk, contractID)}
	it, err := db.Get(ctx, key, true)
	if err != nil {
		return fmt.Errorf("worklist: read the task: %w", err)
	}
	if it == nil {
		return errNoTask
	}
	var task Task
	if err := attributevalue.UnmarshalMap(it, &task); err != nil {
		return fmt.Errorf("worklist: decode task: %w", err)
	}
	name, val := expression.Name, expression.Value
	status := StatusDone
	upd := expression.Set(name("outcome"), val(outcome)).Set(name("outcomeAt"), val(keys.Timestamp(now))).
		Set(name("outcomeBy"), val(holder)).Remove(name("claimedUntil"))
	if callback {
		status = StatusCallback
		upd = upd.Set(name("callbackAt"), val(keys.Timestamp(callbackAt)))
	}
	upd = upd.Set(name("status"), val(status))
	cond := name("claimedBy").Equal(val(holder)).And(name("claimedUntil").GreaterThanEqual(val(keys.Timestamp(now))))
	if task.AttemptKey == "" {
		_, err = db.Update(ctx, key, upd, &cond, types.ReturnValueNone)
		if errors.Is(err, kit.ErrConditionFailed) {
			return errNotHolder
		}
		if err != nil {
			return fmt.Errorf("worklist: record outcome: %w", err)
		}
		return nil
	}
	ev, err := contactlimit.CallOutcome(contactlimit.CallResult{TenantID: tenantID, DebtorKey: dk, AttemptKey: task.AttemptKey,
		AttemptID: task.AttemptID, Outcome: outcome, OperatorID: holder, At: now})
	if err != nil {
		return err
	}
	err = db.Transact(ctx, kit.UpdateAction(key, upd, &cond), ev)
	var tc *kit.TxCanceled
	switch {
	case errors.As(err, &tc) && tc.Failed(0):
		return errNotHolder
	case errors.As(err, &tc) && tc.Failed(1):
		return errSettled
	case err != nil:
		return fmt.Errorf("worklist: record outcome: %w", err)
	}
	return nil
}

// Desk is the call list as the collectors' pages use it: the functions
// above on one tenant's handle.
type Desk struct {
	kit      *kit.Kit
	clock    clock.Clock
	policies *policy.Service
}

// NewDesk returns the desk on k, timed by clock; policies gives each
// tenant's contact window (nil: the desk does not judge windows).
func NewDesk(k *kit.Kit, clock interface{ Now() time.Time }, policies *policy.Service) *Desk {
	return &Desk{kit: k, clock: clock, policies: policies}
}

// window is t's WindowFunc: its dunning policy's window in each task's
// debtor's zone and state calendar (contactlimit.InWindow).
func (d *Desk) window(ctx context.Context, t *tenant.Tenant) (WindowFunc, error) {
	if d.policies == nil {
		return nil, nil
	}
	pol, err := d.policies.Dunning(ctx, t, t.DunningPolicy)
	if err != nil {
		return nil, fmt.Errorf("worklist: the contact window: %w", err)
	}
	return func(task Task, now time.Time) (bool, string) {
		return contactlimit.InWindow(pol, t, task.TimeZone, task.UF, now)
	}, nil
}

func (d *Desk) db(t *tenant.Tenant) *kit.Tenant { return d.kit.Tenant(t.ID, t.CursorKey()) }

// Queue is t's call list of date, in working order.
func (d *Desk) Queue(ctx context.Context, t *tenant.Tenant, date string) ([]Task, error) {
	win, err := d.window(ctx, t)
	if err != nil {
		return nil, err
	}
	return Queue(ctx, d.db(t), t.ID, date, d.clock.Now(), win)
}

// Claim takes a task for holder.
func (d *Desk) Claim(ctx context.Context, t *tenant.Tenant, date, dk, contractID, holder string) error {
	win, err := d.window(ctx, t)
	if err != nil {
		return err
	}
	return Claim(ctx, d.db(t), t.ID, date, dk, contractID, holder, d.clock.Now(), win)
}

// Record writes a task's outcome, one of t's outcome codes.
func (d *Desk) Record(ctx context.Context, t *tenant.Tenant, date, dk, contractID, holder, outcome string, callbackAt time.Time) error {
	return Record(ctx, d.db(t), t.ID, t.OutcomeCodes(), date, dk, contractID, holder, outcome, callbackAt, d.clock.Now())
}
