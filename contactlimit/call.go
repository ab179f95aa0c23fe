package contactlimit

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// OutcomeCalled is the outcome of a CALL attempt once a collector
// recorded how the call went (CallOutcome names it): the contact the
// listing spent happened (ADR 0085).
const OutcomeCalled = "CALLED"

// CallResult is what a collector recorded of a listed call, for its
// attempt's evidence.
type CallResult struct {
	TenantID   string
	DebtorKey  string
	AttemptKey string // the evidence's sort key, CONTACT#<localDate>#<ts>#<attemptId>
	AttemptID  string
	Outcome    string // the desk's code (worklist.Outcomes)
	OperatorID string // the collector's API key id, never a name
	At         time.Time
}

// CallOutcome is the conditioned update that settles a CALL attempt's
// evidence with the call's result, for the desk's transaction that
// closes the task (worklist.Record): outcome CALLED, callOutcome, the
// operator's id and the time, and calls counting the outcomes recorded
// on it (a callback, or another contract of the debtor on the same
// call). Conditioned on the item being that CALL attempt and still
// PENDING, JOINED (a second contract's task, which joined the day's
// call) or CALLED: a blocked or sent attempt is never rewritten. No
// contact is counted here: the listing spent the day's contact (ADR 0080).
func CallOutcome(r CallResult) (kit.Action, error) {
	if !keys.ValidDebtorKey(r.DebtorKey) || r.AttemptKey == "" || r.AttemptID == "" || r.OperatorID == "" {
		return kit.Action{}, fmt.Errorf("contactlimit: call outcome without its attempt or operator")
	}
	if p, err := keys.Parse(keys.SK, r.AttemptKey); err != nil || len(p.Parts) == 0 || p.Parts[0].Prefix != "CONTACT" {
		return kit.Action{}, fmt.Errorf("contactlimit: %q is no contact attempt's key", r.AttemptKey)
	}
	name, val := expression.Name, expression.Value
	upd := expression.Set(name("outcome"), val(OutcomeCalled)).Set(name("callOutcome"), val(r.Outcome)).
		Set(name("operatorId"), val(r.OperatorID)).Set(name("outcomeAt"), val(keys.Timestamp(r.At))).
		Add(name("calls"), val(1))
	cond := name("attemptId").Equal(val(r.AttemptID)).And(name("channel").Equal(val(string(Call)))).
		And(name("outcome").In(val(OutcomePending), val(OutcomeJoined), val(OutcomeCalled)))
	return kit.UpdateAction(kit.Key{PK: keys.Debtor(r.TenantID, r.DebtorKey), SK: r.AttemptKey}, upd, &cond), nil
}

// MaxDailyContacts is the tenant's daily contact cap per debtor (its
// current dunning policy's maxDailyContacts), for pages that show the
// day's contacts against it.
func (g *Gateway) MaxDailyContacts(ctx context.Context, t *tenant.Tenant) (int, error) {
	pol, err := g.policies.Dunning(ctx, t, t.DunningPolicy)
	if err != nil {
		return 0, err
	}
	return pol.MaxDailyContacts, nil
}
