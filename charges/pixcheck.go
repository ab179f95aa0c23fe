package charges

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// The open Pix charges' keyed list (docs/adr/0070): every Pix charge
// issued at a PSP gets, in the transaction that creates it, a check item
// in the tenant's PIXOPEN partition sorted by when it is next due
// (PXC#<checkAt>#<chargeId>). The scheduled reconcile reads the due ones
// with one Query (no Scan), GETs each charge at its PSP and applies what
// was paid through the webhook's path; it then closes the check or
// moves it later. A lost webhook heals within a check's interval.

// PixCheckAfter is how long after its creation an open Pix charge is
// first checked at its PSP: long enough for the PSP's webhook to have
// arrived in the ordinary case, so the check costs a GET only when the
// webhook is late or lost.
const PixCheckAfter = 30 * time.Minute

// maxCheckInterval bounds the wait between two checks of one charge.
const maxCheckInterval = 12 * time.Hour

// checkGrace is how long after its validity a charge is still checked: a
// payment made in its last minute may reach the PSP's listing later.
const checkGrace = 24 * time.Hour

// PixCheck is one open Pix charge's reconcile check.
type PixCheck struct {
	PK       string `dynamodbav:"PK"`
	SK       string `dynamodbav:"SK"`
	Type     string `dynamodbav:"type"`
	ChargeID string `dynamodbav:"chargeId"`
	PixType  string `dynamodbav:"pixType"`
	CheckAt  string `dynamodbav:"checkAt"`
	// Until is the last instant worth a check: the charge's validity
	// (a cobv's days after its due date included) plus checkGrace.
	Until   string `dynamodbav:"until"`
	Checks  int    `dynamodbav:"checks"`
	Version int    `dynamodbav:"version"`
}

// TypePixCheck is the check item's type.
const TypePixCheck = "PIX_CHECK"

// pixCheckAction is the check item of a new Pix charge: first due
// PixCheckAfter after created, worth checking until its validity ends.
func pixCheckAction(tenantID, chargeID, pixType string, created time.Time, v Validity, expires string, loc *time.Location) (kit.Action, error) {
	until, err := time.Parse(time.RFC3339, expires)
	if err != nil {
		return kit.Action{}, fmt.Errorf("charges: check until: %w", err)
	}
	if v.Rule == RulePixDueDate {
		until = until.AddDate(0, 0, v.DaysAfterDue)
	}
	at := created.Add(PixCheckAfter)
	c := PixCheck{PK: keys.PixOpen(tenantID), SK: keys.PixCheck(at, chargeID), Type: TypePixCheck, ChargeID: chargeID, PixType: pixType,
		CheckAt: keys.Timestamp(at), Until: until.Add(checkGrace).In(loc).Format(time.RFC3339), Version: 1}
	av, err := attributevalue.MarshalMap(c)
	if err != nil {
		return kit.Action{}, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	return kit.PutAction(av, &notExists), nil
}

// DueChecks answers up to limit open Pix charges whose check is due at
// now, oldest first: one strongly consistent Query of the tenant's
// PIXOPEN partition, a key range ending at now.
func (s *Service) DueChecks(ctx context.Context, t *tenant.Tenant, now time.Time, limit int32) ([]PixCheck, error) {
	ctx = kit.Within(ctx, "charge.due_checks")
	hi := keys.PixCheck(now, "~") // "~" sorts after every charge id
	page, err := s.db(t).QueryPage(ctx, kit.Query{Partition: keys.PixOpen(t.ID), Sort: kit.Between(keys.PixCheckPrefix, hi), Limit: limit,
		Consistent: true}, "")
	if err != nil {
		return nil, fmt.Errorf("charges: due checks: %w", err)
	}
	out := make([]PixCheck, 0, len(page.Items))
	for _, it := range page.Items {
		var c PixCheck
		if err := attributevalue.UnmarshalMap(it, &c); err != nil {
			return nil, fmt.Errorf("charges: decode check: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// CloseCheck removes a check: its charge is paid and applied, removed,
// or past its validity. Another instance closing or moving it first
// leaves it to that one.
func (s *Service) CloseCheck(ctx context.Context, t *tenant.Tenant, c PixCheck) error {
	cond := expression.Name("version").Equal(expression.Value(c.Version))
	err := s.db(t).Transact(ctx, kit.DeleteAction(kit.Key{PK: c.PK, SK: c.SK}, &cond))
	return ignoreRaced(err)
}

// NextCheck moves a check of a charge still open later: twice its last
// wait (PixCheckAfter first, at most maxCheckInterval), never past its
// Until; past it, the check is closed (the charge can no longer be paid).
// It reports whether the check was kept.
func (s *Service) NextCheck(ctx context.Context, t *tenant.Tenant, c PixCheck, now time.Time) (bool, error) {
	until, err := time.Parse(time.RFC3339, c.Until)
	if err != nil || !now.Before(until) {
		return false, s.CloseCheck(ctx, t, c)
	}
	wait := PixCheckAfter << min(c.Checks+1, 10)
	at := now.Add(min(wait, maxCheckInterval))
	if at.After(until) {
		at = until
	}
	next := c
	next.SK, next.CheckAt, next.Checks, next.Version = keys.PixCheck(at, c.ChargeID), keys.Timestamp(at), c.Checks+1, 1
	av, err := attributevalue.MarshalMap(next)
	if err != nil {
		return false, err
	}
	cond := expression.Name("version").Equal(expression.Value(c.Version))
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	err = s.db(t).Transact(ctx, kit.DeleteAction(kit.Key{PK: c.PK, SK: c.SK}, &cond), kit.PutAction(av, &notExists))
	return true, ignoreRaced(err)
}

// ignoreRaced drops the error of a conditioned write another instance
// won: the check was closed or moved by it.
func ignoreRaced(err error) error {
	var tc *kit.TxCanceled
	if err == nil || errors.As(err, &tc) || errors.Is(err, kit.ErrConditionFailed) {
		return nil
	}
	return fmt.Errorf("charges: reconcile check: %w", err)
}
