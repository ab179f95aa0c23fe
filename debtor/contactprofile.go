package debtor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/keys"
	"lastro/collections/kit"
)

// ContactProfile is what the contact gateway reads of a debtor's PROFILE
// item: its state, its time zone, which addresses it has and the channels
// it refused, never the sealed personal data. The item as read rides
// along, opaque, so the delivery resolves the address from the same read
// (ContactAddressIn, ADR 0032).
type ContactProfile struct {
	UF       string
	TimeZone string // the explicit zone; "" derives it (Zone)
	OptOut   []string
	// HasPhone, HasEmail and HasAddress say which addresses the sealed
	// data holds (the postal Address for LETTER), so a caller can tell a
	// channel without an address before it spends a contact.
	HasPhone, HasEmail, HasAddress bool
	item                           kit.Item
}

// Zone is the debtor's time zone (ADR 0064): the explicit one, else the
// UF's, else fallback (the tenant's zone).
func (p *ContactProfile) Zone(fallback *time.Location) *time.Location {
	return ZoneOf(p.TimeZone, p.UF, fallback)
}

// Item is the PROFILE item as read, for ContactAddressIn.
func (p *ContactProfile) Item() kit.Item { return p.item }

// ReadContactProfile reads dk's PROFILE through db, the caller's kit for
// tenantID, strongly consistent (an opt-out just recorded must hold); 404
// debtor_not_found when there is none. The debtor package owns the
// PROFILE's shape: the gateway reads and writes it only through here.
func ReadContactProfile(ctx context.Context, db *kit.Tenant, tenantID, dk string) (*ContactProfile, error) {
	ctx, _ = kit.Operation(ctx, "contact.profile")
	it, err := db.Get(ctx, kit.Key{PK: keys.Debtor(tenantID, dk), SK: keys.ProfileSK}, true)
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	if it == nil {
		return nil, errDebtorNotFound
	}
	var rec profileItem
	if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
		return nil, fmt.Errorf("decode profile: %w", err)
	}
	return &ContactProfile{UF: rec.UF, TimeZone: rec.TimeZone, OptOut: rec.OptOut, HasPhone: rec.HasPhone, HasEmail: rec.HasEmail,
		HasAddress: rec.HasAddress, item: it}, nil
}

// SetOptOut adds channel to dk's refused channels (out true) or takes it
// off, through db, the caller's kit for tenantID; 404 debtor_not_found
// when there is no PROFILE. The set is changed in place (ADD/DELETE), so
// it never races the profile's other writes.
func SetOptOut(ctx context.Context, db *kit.Tenant, tenantID, dk, channel string, out bool) error {
	ctx, _ = kit.Operation(ctx, "contact.optout")
	set := expression.Value(&types.AttributeValueMemberSS{Value: []string{channel}})
	var upd expression.UpdateBuilder
	if out {
		upd = expression.Add(expression.Name(profileOptOutAttr), set)
	} else {
		upd = expression.Delete(expression.Name(profileOptOutAttr), set)
	}
	cond := expression.AttributeExists(expression.Name("PK"))
	_, err := db.Update(ctx, kit.Key{PK: keys.Debtor(tenantID, dk), SK: keys.ProfileSK}, upd, &cond, types.ReturnValueNone)
	if errors.Is(err, kit.ErrConditionFailed) {
		return errDebtorNotFound
	}
	if err != nil {
		return fmt.Errorf("set opt-out: %w", err)
	}
	return nil
}
