package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/shopspring/decimal"

	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

func chargesName(v int) string { return keys.ChargesPolicy(v) }
func dunningName(v int) string { return keys.DunningPolicy(v) }

// pct writes a percentage with at least two decimals ("2.00", "0.0333").
func pct(d decimal.Decimal) string {
	if d.Exponent() >= -2 {
		return d.StringFixed(2)
	}
	return d.String()
}

// ChargesView is a charges policy as the API shows it: percentages as
// exact decimal strings.
type ChargesView struct {
	Version                    int      `json:"version"`
	Name                       string   `json:"name"`
	FinePercent                string   `json:"finePercent"`
	LateInterestMonthlyPercent string   `json:"lateInterestMonthlyPercent"`
	ImputationOrder            []string `json:"imputationOrder"`
	CreatedAt                  string   `json:"createdAt,omitempty"`
}

// View is the API form of the policy.
func (c Charges) View() ChargesView {
	return ChargesView{c.Version, c.Name, pct(c.FinePercent), pct(c.LateInterestMonthlyPercent), c.ImputationOrder, c.CreatedAt}
}

// MarshalJSON writes the API form.
func (c Charges) MarshalJSON() ([]byte, error) { return json.Marshal(c.View()) }

type chargesItem struct {
	PK                         string   `dynamodbav:"PK"`
	SK                         string   `dynamodbav:"SK"`
	Type                       string   `dynamodbav:"type"`
	Version                    int      `dynamodbav:"version"`
	FinePercent                string   `dynamodbav:"finePercent"`
	LateInterestMonthlyPercent string   `dynamodbav:"lateInterestMonthlyPercent"`
	ImputationOrder            []string `dynamodbav:"imputationOrder"`
	CreatedAt                  string   `dynamodbav:"createdAt"`
}

type dunningItem struct {
	PK                       string                   `dynamodbav:"PK"`
	SK                       string                   `dynamodbav:"SK"`
	Type                     string                   `dynamodbav:"type"`
	Version                  int                      `dynamodbav:"version"`
	Steps                    []Step                   `dynamodbav:"steps"`
	ContactWindow            ContactWindow            `dynamodbav:"contactWindow"`
	MaxDailyContacts         int                      `dynamodbav:"maxDailyContacts"`
	BureauNoticeToReportDays int                      `dynamodbav:"bureauNoticeToReportDays"`
	StateWindows             map[string]ContactWindow `dynamodbav:"stateWindows,omitempty"`
	Templates                map[string]string        `dynamodbav:"templates,omitempty"`
	MaxBrokenPromises        int                      `dynamodbav:"maxBrokenPromises,omitempty"`
	MaxPromiseDays           int                      `dynamodbav:"maxPromiseDays,omitempty"`
	AgreementBreakDays       int                      `dynamodbav:"agreementBreakDays,omitempty"`
	MinimumDunnedCents       int64                    `dynamodbav:"minimumDunnedCents,omitempty"`
	BureauName               string                   `dynamodbav:"bureauName,omitempty"`
	CreatedAt                string                   `dynamodbav:"createdAt"`
}

// Service reads and writes policy versions. Versions are immutable, so
// they are cached for the life of the process.
type Service struct {
	kit     *kit.Kit
	tenants *tenant.Service
	clock   clock.Clock

	mu    sync.Mutex
	cache map[string]any // tenant + SK → *Charges | *Dunning
}

// NewService returns the policy service.
func NewService(k *kit.Kit, tenants *tenant.Service, c clock.Clock) *Service {
	return &Service{kit: k, tenants: tenants, clock: c, cache: map[string]any{}}
}

func (s *Service) cached(t, sk string) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.cache[t+"\x00"+sk]
	return v, ok
}

func (s *Service) remember(t, sk string, v any) {
	s.mu.Lock()
	s.cache[t+"\x00"+sk] = v
	s.mu.Unlock()
}

func (s *Service) load(ctx context.Context, t *tenant.Tenant, sk string, into any) (bool, error) {
	ctx, _ = kit.Operation(ctx, "policy.load")
	it, err := s.kit.Tenant(t.ID, t.CursorKey()).Get(ctx, kit.Key{PK: keys.Tenant(t.ID), SK: sk}, true)
	if err != nil {
		return false, fmt.Errorf("load policy %s: %w", sk, err)
	}
	if it == nil {
		return false, nil
	}
	if err := attributevalue.UnmarshalMap(it, into); err != nil {
		return false, fmt.Errorf("decode policy %s: %w", sk, err)
	}
	return true, nil
}

// Charges returns version v of t's charges policy (0: the default).
func (s *Service) Charges(ctx context.Context, t *tenant.Tenant, v int) (*Charges, error) {
	if v == 0 {
		return DefaultCharges(), nil
	}
	sk := chargesName(v)
	if c, ok := s.cached(t.ID, sk); ok {
		return c.(*Charges), nil
	}
	var it chargesItem
	found, err := s.load(ctx, t, sk, &it)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errs.E(errs.NotFound, "policy_not_found", "charges policy %s not found", sk)
	}
	c := &Charges{Version: it.Version, Name: sk, ImputationOrder: it.ImputationOrder, CreatedAt: it.CreatedAt}
	if c.FinePercent, err = decimal.NewFromString(it.FinePercent); err == nil {
		c.LateInterestMonthlyPercent, err = decimal.NewFromString(it.LateInterestMonthlyPercent)
	}
	if err != nil {
		return nil, fmt.Errorf("decode charges policy %s: %w", sk, err)
	}
	s.remember(t.ID, sk, c)
	return c, nil
}

// Dunning returns version v of t's dunning policy (0: the default).
func (s *Service) Dunning(ctx context.Context, t *tenant.Tenant, v int) (*Dunning, error) {
	if v == 0 {
		return DefaultDunning(), nil
	}
	sk := dunningName(v)
	if d, ok := s.cached(t.ID, sk); ok {
		return d.(*Dunning), nil
	}
	var it dunningItem
	found, err := s.load(ctx, t, sk, &it)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errs.E(errs.NotFound, "policy_not_found", "dunning policy %s not found", sk)
	}
	// A version published before steps named their channel gets one
	// derived here, once, as it is decoded (ADR 0066).
	d := &Dunning{Version: it.Version, Name: sk, Steps: withChannels(it.Steps), ContactWindow: it.ContactWindow,
		MinimumDunnedCents: it.MinimumDunnedCents, BureauName: it.BureauName,
		MaxDailyContacts: it.MaxDailyContacts, BureauNoticeToReportDays: it.BureauNoticeToReportDays,
		StateWindows: it.StateWindows, Templates: it.Templates, MaxBrokenPromises: it.MaxBrokenPromises, MaxPromiseDays: it.MaxPromiseDays, AgreementBreakDays: it.AgreementBreakDays,
		CreatedAt: it.CreatedAt}
	s.remember(t.ID, sk, d)
	return d, nil
}

// conflicts paces the retries of a policy change that lost a race:
// jittered, so publishers that collided (a transaction conflict can fail
// both) do not collide again in lockstep.
var conflicts = kit.Backoff{Attempts: 8, Base: 3 * time.Millisecond, Max: 100 * time.Millisecond}

// publish writes the next version of a policy and makes it current in one
// transaction; a concurrent change makes it re-read the tenant and retry.
// It returns the version written, or the current one when the rules are
// unchanged (created false).
func (s *Service) publish(ctx context.Context, t *tenant.Tenant, kind tenant.PolicyKind,
	same func(current int) (bool, error), item func(v int, now string) (kit.Item, error)) (v int, created bool, err error) {
	ctx, _ = kit.Operation(ctx, "policy.publish")
	err = conflicts.Retry(ctx, func(attempt int) (bool, error) {
		if attempt > 1 {
			s.tenants.Invalidate(t.ID)
			var err error
			if t, err = s.tenants.Get(ctx, t.ID); err != nil {
				return false, err
			}
		}
		cur := t.Current(kind)
		if unchanged, err := same(cur); err != nil || unchanged {
			v = cur
			return false, err
		}
		now := s.clock.Now()
		it, err := item(cur+1, keys.Timestamp(now))
		if err != nil {
			return false, err
		}
		notExists := expression.AttributeNotExists(expression.Name("PK"))
		err = s.kit.Tenant(t.ID, t.CursorKey()).Transact(ctx, kit.PutAction(it, &notExists), tenant.BumpPolicy(t, kind, cur+1, now))
		switch {
		case err == nil:
			s.tenants.Invalidate(t.ID)
			v, created = cur+1, true
			return false, nil
		case errors.Is(err, kit.ErrConditionFailed), errors.Is(err, kit.ErrConflict):
			return true, nil
		default:
			return false, fmt.Errorf("publish %s: %w", kind, err)
		}
	})
	if errors.Is(err, kit.ErrAttemptsExhausted) {
		return 0, false, errs.E(errs.Conflict, "policy_conflict", "the policy changed concurrently; retry")
	}
	if err != nil {
		return 0, false, err
	}
	return v, created, nil
}

// PutCharges publishes a new charges policy version (created false when
// the rules equal the current version's).
func (s *Service) PutCharges(ctx context.Context, t *tenant.Tenant, in ChargesInput) (*Charges, bool, error) {
	c, err := in.validate()
	if err != nil {
		return nil, false, err
	}
	same := func(cur int) (bool, error) {
		if cur == 0 {
			return false, nil // the first explicit version is always written
		}
		old, err := s.Charges(ctx, t, cur)
		return err == nil && old.sameRules(c), err
	}
	v, created, err := s.publish(ctx, t, tenant.ChargesPolicyKind, same, func(v int, now string) (kit.Item, error) {
		return attributevalue.MarshalMap(chargesItem{PK: keys.Tenant(t.ID), SK: chargesName(v), Type: "CHARGES_POLICY", Version: v,
			FinePercent: pct(c.FinePercent), LateInterestMonthlyPercent: pct(c.LateInterestMonthlyPercent),
			ImputationOrder: c.ImputationOrder, CreatedAt: now})
	})
	if err != nil {
		return nil, false, err
	}
	out, err := s.Charges(ctx, t, v)
	return out, created, err
}

// PutDunning publishes a new dunning policy version.
func (s *Service) PutDunning(ctx context.Context, t *tenant.Tenant, in DunningInput) (*Dunning, bool, error) {
	d, err := in.validate()
	if err != nil {
		return nil, false, err
	}
	same := func(cur int) (bool, error) {
		if cur == 0 {
			return false, nil
		}
		old, err := s.Dunning(ctx, t, cur)
		return err == nil && old.sameRules(d), err
	}
	v, created, err := s.publish(ctx, t, tenant.DunningPolicyKind, same, func(v int, now string) (kit.Item, error) {
		return attributevalue.MarshalMap(dunningItem{PK: keys.Tenant(t.ID), SK: dunningName(v), Type: "DUNNING_POLICY", Version: v,
			Steps: d.Steps, ContactWindow: d.ContactWindow, MaxDailyContacts: d.MaxDailyContacts,
			BureauNoticeToReportDays: d.BureauNoticeToReportDays, StateWindows: d.StateWindows, Templates: d.Templates,
			MaxBrokenPromises: d.MaxBrokenPromises, MaxPromiseDays: d.MaxPromiseDays, AgreementBreakDays: d.AgreementBreakDays,
			MinimumDunnedCents: d.MinimumDunnedCents, BureauName: d.BureauName, CreatedAt: now})
	})
	if err != nil {
		return nil, false, err
	}
	out, err := s.Dunning(ctx, t, v)
	return out, created, err
}
