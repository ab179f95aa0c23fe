// Package worklist owns the collector's call list: a CALL step of the
// régua does not send a message, it leaves work for a person — one task
// item per contract of a debtor on the day's list, under the tenant's
// partition for that civil date, so a desk reads its day with one keyed
// Query and a debtor's contracts come together for one call (ADR 0066).
//
// The contact gateway makes the debtor's calls of one day one contact
// (the tasks of its contracts share one attempt). A task carries what a
// desk needs to order its day without reading the
// contracts: the days past due, the amount due, the oldest due date, the
// outstanding balance and the last contact. No personal data: the desk
// resolves the phone through the contact gateway when it calls.
//
// How a call counts against the debtor's daily cap (ADRs 0080, 0085):
// the contact is spent once, when the régua lists the call — the listing
// claims the day's contact through the gateway, whether or not anyone
// answers, as the law counts attempts to reach the debtor. The debtor's
// other contracts on the same day join that attempt (no second contact).
// Recording the outcome spends nothing: it settles the listed attempt's
// evidence (outcome CALLED, the desk's code, the operator's API key id
// and the time) in the transaction that closes the task, and a callback
// the debtor asks for on the same day is the same contact. A call on
// another day is another day's listing, and spends that day's contact.
package worklist

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
)

// TypeCallTask is the task item's type.
const TypeCallTask = "CALL_TASK"

// StatusOpen is a task nobody has worked yet; the desk that consumes the
// list owns every later status.
const StatusOpen = "OPEN"

// Task is one contract's call task on a day's list,
// PK T#<t>#WL#<date>, SK CALL#<debtorKey>#<contractId>.
type Task struct {
	PK               string `dynamodbav:"PK" json:"-"`
	SK               string `dynamodbav:"SK" json:"-"`
	Type             string `dynamodbav:"type" json:"-"`
	TenantID         string `dynamodbav:"tenantId" json:"tenantId"`
	Date             string `dynamodbav:"date" json:"date"` // the civil date the call is due
	DebtorKey        string `dynamodbav:"debtorKey" json:"debtorKey"`
	ContractID       string `dynamodbav:"contractId" json:"contractId"`
	Action           string `dynamodbav:"action" json:"action"`       // the régua step (CALL_D15)
	AttemptID        string `dynamodbav:"attemptId" json:"attemptId"` // the contact the day's call spends
	DaysPastDue      int    `dynamodbav:"daysPastDue" json:"daysPastDue"`
	AmountDueCents   int64  `dynamodbav:"amountDueCents" json:"amountDueCents"`
	OutstandingCents int64  `dynamodbav:"outstandingCents" json:"outstandingCents"`
	OldestDueDate    string `dynamodbav:"oldestDueDate,omitempty" json:"oldestDueDate,omitempty"`
	LastContactAt    string `dynamodbav:"lastContactAt,omitempty" json:"lastContactAt,omitempty"`
	Status           string `dynamodbav:"status" json:"status"`
	CreatedAt        string `dynamodbav:"createdAt" json:"createdAt"`
	// ClaimedBy and ClaimedUntil are the collector working the task (a
	// lease: one collector per debtor at a time, desk.go): the operator's
	// API key id, never a name. ClaimedBy stays once the task is done, so
	// the dashboard counts each collector's calls.
	ClaimedBy    string `dynamodbav:"claimedBy,omitempty" json:"-"`
	ClaimedUntil string `dynamodbav:"claimedUntil,omitempty" json:"claimedUntil,omitempty"`
	// Outcome is the call's result (Outcomes), at OutcomeAt; CallbackAt is
	// when the debtor asked to be called again.
	Outcome    string `dynamodbav:"outcome,omitempty" json:"outcome,omitempty"`
	OutcomeAt  string `dynamodbav:"outcomeAt,omitempty" json:"outcomeAt,omitempty"`
	OutcomeBy  string `dynamodbav:"outcomeBy,omitempty" json:"-"` // the operator's API key id
	CallbackAt string `dynamodbav:"callbackAt,omitempty" json:"callbackAt,omitempty"`
	// AttemptKey is the sort key of this task's own contact evidence (the
	// attempt that spent the day's contact, or the one that joined it):
	// the outcome settles it (Record, ADR 0085). Empty on tasks listed
	// before it existed.
	AttemptKey string `dynamodbav:"attemptKey,omitempty" json:"-"`
	// TimeZone and UF are the debtor's zone and state the listing's
	// attempt was judged in (coarse, not personal data, ADR 0064): the
	// desk tells from them whether the debtor is inside the contact
	// window now without reading the profile (ADR 0080). Empty on tasks
	// listed before they existed: the tenant's zone and calendar.
	TimeZone string `dynamodbav:"timeZone,omitempty" json:"timeZone,omitempty"`
	UF       string `dynamodbav:"uf,omitempty" json:"uf,omitempty"`
	// Outside and OpensAt are derived at read time, never stored: the
	// debtor is outside the contact window now, and the window opens
	// again at OpensAt that local day ("" when not today).
	Outside bool   `dynamodbav:"-" json:"outsideContactWindow,omitempty"`
	OpensAt string `dynamodbav:"-" json:"windowOpensAt,omitempty"`
}

// Put is the task's write, for the transaction that records its step:
// written once (a task already there is the same step's, and the step's
// own write is conditioned on the contract's version).
func Put(t Task) (kit.Action, error) {
	if !keys.ValidDebtorKey(t.DebtorKey) || !keys.ValidIdentifier(t.ContractID) {
		return kit.Action{}, fmt.Errorf("worklist: invalid task key")
	}
	if _, err := calendar.Parse(t.Date); err != nil {
		return kit.Action{}, fmt.Errorf("worklist: task date: %w", err)
	}
	t.PK, t.SK, t.Type = keys.WorkList(t.TenantID, t.Date), keys.CallTask(t.DebtorKey, t.ContractID), TypeCallTask
	if t.Status == "" {
		t.Status = StatusOpen
	}
	it, err := attributevalue.MarshalMap(t)
	if err != nil {
		return kit.Action{}, fmt.Errorf("worklist: marshal task: %w", err)
	}
	cond := expression.AttributeNotExists(expression.Name("PK"))
	return kit.PutAction(it, &cond), nil
}

// Day is one page of a day's call list, a debtor's tasks together (the
// sort key starts with the debtor key); cursor "" is the first page.
func Day(ctx context.Context, db *kit.Tenant, tenantID, date string, limit int32, cursor string) ([]Task, string, error) {
	page, err := db.QueryPage(ctx, kit.Query{Partition: keys.WorkList(tenantID, date), Limit: limit}, cursor)
	if err != nil {
		return nil, "", fmt.Errorf("worklist: read the day: %w", err)
	}
	out := make([]Task, 0, len(page.Items))
	for _, it := range page.Items {
		var t Task
		if err := attributevalue.UnmarshalMap(it, &t); err != nil {
			return nil, "", fmt.Errorf("worklist: decode task: %w", err)
		}
		out = append(out, t)
	}
	return out, page.Next, nil
}
