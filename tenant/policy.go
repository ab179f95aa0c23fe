package tenant

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/keys"
	"lastro/collections/kit"
)

// PolicyKind names one of the tenant's versioned policies: the TENANT
// item's attribute holding its current version.
type PolicyKind string

// The tenant's versioned policies.
const (
	ChargesPolicyKind PolicyKind = "chargesPolicy"
	DunningPolicyKind PolicyKind = "dunningPolicy"
)

// Current is the tenant's current version of a policy (0: none yet).
func (t *Tenant) Current(k PolicyKind) int {
	if k == ChargesPolicyKind {
		return t.ChargesPolicy
	}
	return t.DunningPolicy
}

// BumpPolicy is the transaction action that makes version v the tenant's
// current policy of kind k. It is conditioned on the TENANT item's version
// and on the policy's current version as t saw them, so two concurrent
// changes never interleave: the loser re-reads and retries. Call
// Invalidate after the transaction commits.
func BumpPolicy(t *Tenant, k PolicyKind, v int, now time.Time) kit.Action {
	upd := expression.Set(expression.Name(string(k)), expression.Value(v)).
		Set(expression.Name("version"), expression.Name("version").Plus(expression.Value(1))).
		Set(expression.Name("updatedAt"), expression.Value(keys.Timestamp(now)))
	cond := expression.Name("version").Equal(expression.Value(t.Version)).
		And(expression.Name(string(k)).Equal(expression.Value(t.Current(k))))
	return kit.UpdateAction(kit.Key{PK: keys.Tenant(t.ID), SK: keys.TenantSK}, upd, &cond)
}
