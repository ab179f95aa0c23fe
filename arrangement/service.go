// Package arrangement is what a collector arranges with a debtor, or
// decides about, on one contract outside the régua: payment promises,
// disputes and write-off. Each is one transaction on the contract (its
// item, the header through contract.Save, and an event), conditioned on
// the versions read. The settlement (OnPayment) and the agenda's
// PROMISE_CHECK (Check) resolve promises through this package too, so a
// promise is resolved exactly once whoever comes first (ADR 0026).
package arrangement

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/google/uuid"

	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/idem"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/contract/regua"
	"lastro/policy"
	"lastro/tenant"
)

// Service makes promises, opens and resolves disputes and writes
// contracts off.
type Service struct {
	kit      *kit.Kit
	tenants  *tenant.Service
	policies *policy.Service
	clock    clock.Clock
	idem     *idem.Store
	charges  *charges.Service
}

// Deps are what the service needs.
type Deps struct {
	Kit      *kit.Kit
	Tenants  *tenant.Service
	Policies *policy.Service
	Clock    clock.Clock
	Idem     *idem.Store      // Idempotency-Key on the creating POSTs; nil disables it
	Charges  *charges.Service // issues an agreement's down-payment charge; nil issues none
}

// NewService returns the arrangement service.
func NewService(d Deps) *Service {
	return &Service{kit: d.Kit, tenants: d.Tenants, policies: d.Policies, clock: d.Clock, idem: d.Idem, charges: d.Charges}
}

func (s *Service) db(t *tenant.Tenant) *kit.Tenant { return s.kit.Tenant(t.ID, t.CursorKey()) }

var (
	errInvalidDebtorKey  = errs.E(errs.Invalid, "invalid_debtor_key", "debtorKey must be 16 lower-case hex characters")
	errInvalidContractID = errs.E(errs.Invalid, "invalid_contract_id", "contractId must be 1-64 of A-Z a-z 0-9 - _ .")
	errNotFound          = errs.E(errs.NotFound, "contract_not_found", "contract not found")
	errContended         = errs.E(errs.Transient, "contract_contended", "the contract is changing concurrently; retry")
	errClosed            = errs.E(errs.Rule, "contract_closed", "the contract is settled or written off")
)

// codePattern is what a reason or an outcome may be: a code, never free
// text, so no personal data reaches an event.
var codePattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

func validCode(field, v string) error {
	if !codePattern.MatchString(v) {
		return errs.E(errs.Invalid, "invalid_"+field, "%s must be a code: 1-64 of A-Z 0-9 _, starting with a letter", field)
	}
	return nil
}

// conflicts re-reads a contract that changed between the read and the
// write (a payment or an agenda action landing in between).
var conflicts = kit.Backoff{Attempts: 5, Base: 3 * time.Millisecond, Max: 100 * time.Millisecond}

// change loads the contract, lets fn decide and build its items, and
// writes them with the header in one transaction; a conflict re-reads and
// decides again.
func (s *Service) change(ctx context.Context, t *tenant.Tenant, dk, contractID string,
	fn func(c *contract.Contract, dunning *policy.Dunning, now time.Time) ([]kit.Action, error)) error {
	if !keys.ValidDebtorKey(dk) {
		return errInvalidDebtorKey
	}
	if !keys.ValidIdentifier(contractID) {
		return errInvalidContractID
	}
	db := s.db(t)
	err := conflicts.Retry(ctx, func(int) (bool, error) {
		c, err := contract.Load(ctx, db, t.ID, dk, contractID)
		if err != nil {
			return false, err
		}
		if c == nil {
			return false, errNotFound
		}
		v, err := contract.PolicyVersion(c.Header.DunningPolicy)
		if err != nil {
			return false, err
		}
		dunning, err := s.policies.Dunning(ctx, t, v)
		if err != nil {
			return false, err
		}
		now := s.clock.Now()
		extra, err := fn(c, dunning, now)
		if err != nil {
			return false, err
		}
		writes, err := c.Save(now)
		if err != nil {
			return false, err
		}
		err = db.Transact(ctx, append(extra, writes...)...)
		if errors.Is(err, kit.ErrConditionFailed) || errors.Is(err, kit.ErrConflict) {
			return true, err
		}
		return false, err
	})
	if errors.Is(err, kit.ErrAttemptsExhausted) {
		return errContended
	}
	return err
}

// PromiseInput is the body of POST .../promises.
type PromiseInput struct {
	PromisedDate string `json:"promisedDate"`
	AmountCents  int64  `json:"amountCents"`
}

// MakePromise records the debtor's promise to pay in.AmountCents by
// in.PromisedDate: the PROMISE item, the contract's PROMISE hold with
// PROMISE_CHECK on the date (the régua pauses) and a PromiseMade event, in
// one transaction. Refused: a date before today or past the policy's
// horizon, a contract not delinquent or closed, an open promise or
// dispute, or a contract that already broke the policy's maximum.
func (s *Service) MakePromise(ctx context.Context, t *tenant.Tenant, dk, contractID string, in PromiseInput, actor contract.Actor) (*Promise, error) {
	ctx = kit.Within(ctx, "arrangement.promise")
	promised, err := calendar.Parse(in.PromisedDate)
	if err != nil {
		return nil, errs.E(errs.Invalid, "invalid_promised_date", "promisedDate must be a date YYYY-MM-DD")
	}
	if in.AmountCents <= 0 {
		return nil, errs.E(errs.Invalid, "invalid_amount", "amountCents must be a positive number of cents")
	}
	var out *Promise
	err = s.change(ctx, t, dk, contractID, func(c *contract.Contract, dunning *policy.Dunning, now time.Time) ([]kit.Action, error) {
		h := &c.Header
		today := calendar.Today(now, t.Location)
		switch {
		case promised.Before(today):
			return nil, errs.E(errs.Rule, "promised_date_past", "promisedDate is before today (%s)", today)
		case promised.Sub(today) > dunning.PromiseHorizon():
			return nil, errs.E(errs.Rule, "promised_date_beyond_horizon", "promisedDate is more than %d days ahead", dunning.PromiseHorizon())
		case h.Status == contract.StatusSettled || h.Status == contract.StatusWrittenOff:
			return nil, errClosed
		case h.Status == contract.StatusInAgreement:
			return nil, errs.E(errs.Rule, "contract_in_agreement", "the contract is in an agreement: its instalments are the promise")
		case h.Hold == regua.HoldPromise:
			return nil, errs.E(errs.Conflict, "promise_open", "the contract already has an open promise")
		case h.Hold != "":
			return nil, errs.E(errs.Conflict, "contract_on_hold", "the contract is on hold (%s)", h.Hold)
		case !h.IsDelinquent():
			return nil, errs.E(errs.Rule, "not_delinquent", "the contract has nothing overdue to promise")
		}
		broken, err := s.brokenPromises(ctx, t, c)
		if err != nil {
			return nil, err
		}
		if dunning.MaxBrokenPromises > 0 && broken >= dunning.MaxBrokenPromises {
			return nil, errs.E(errs.Rule, "too_many_broken_promises",
				"the contract broke %d promises; the dunning policy accepts no more after %d", broken, dunning.MaxBrokenPromises)
		}
		id, err := uuid.NewV7() // time-ordered: the contract's promises list oldest first
		if err != nil {
			return nil, err
		}
		p := &Promise{PK: h.PK, SK: keys.Promise(h.ContractID, id.String()), Type: TypePromise, PromiseID: id.String(), ContractID: h.ContractID,
			PromisedDate: promised.String(), AmountCents: in.AmountCents, Status: PromiseOpen, CreatedAt: keys.Timestamp(now)}
		h.Hold, h.PromiseDate, h.HoldID = regua.HoldPromise, p.PromisedDate, p.PromiseID
		c.Refresh(today, c.Header.Calendar(t), dunning)
		pa, err := p.write()
		if err != nil {
			return nil, err
		}
		ev, err := contract.PutEvent(c.NewEvent(0, EvPromiseMade, now, actor, map[string]any{"promiseId": p.PromiseID,
			"promisedDate": p.PromisedDate, "amountCents": p.AmountCents, "brokenBefore": broken}))
		if err != nil {
			return nil, err
		}
		out = p
		return []kit.Action{pa, ev}, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// brokenPromises counts the contract's broken promises (one Query on its
// PROMISE# range, strongly consistent).
func (s *Service) brokenPromises(ctx context.Context, t *tenant.Tenant, c *contract.Contract) (int, error) {
	n := 0
	cursor := ""
	for {
		page, err := s.db(t).QueryPage(ctx, kit.Query{Partition: c.Header.PK, Sort: kit.BeginsWith(keys.PromisesPrefix(c.Header.ContractID)), Consistent: true}, cursor)
		if err != nil {
			return 0, fmt.Errorf("read promises: %w", err)
		}
		for _, it := range page.Items {
			var p Promise
			if err := attributevalue.UnmarshalMap(it, &p); err != nil {
				return 0, fmt.Errorf("decode promise: %w", err)
			}
			if p.Status == PromiseBroken {
				n++
			}
		}
		if cursor = page.Next; cursor == "" {
			return n, nil
		}
	}
}
