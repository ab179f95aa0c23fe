package debtor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/collections/text"
	"lastro/contract"
	"lastro/policy"
	"lastro/tenant"
)

// Address is a debtor's postal address, where a LETTER goes. It is
// personal data: sealed with the phone and e-mail in the PROFILE's pii,
// never in clear, and the PROFILE says only hasAddress.
type Address struct {
	Street     string `json:"street"`               // street and number
	Complement string `json:"complement,omitempty"` // apartment, block
	District   string `json:"district,omitempty"`   // bairro
	City       string `json:"city"`
	UF         string `json:"uf"`
	PostalCode string `json:"postalCode"` // CEP, 8 digits (a hyphen is accepted)
}

// Address field bounds (runes).
const (
	maxAddressLine = 120
	maxCity        = 60
)

var cepPattern = regexp.MustCompile(`^[0-9]{5}-?[0-9]{3}$`)

// normalize validates a and returns it with folded spaces and the CEP as
// 8 digits. Messages name the field, never the value.
func (a Address) normalize() (Address, error) {
	field := func(name, v string, max int, required bool) (string, error) {
		if err := text.Check("address."+name, v); err != nil {
			return "", err
		}
		v = strings.Join(strings.Fields(v), " ")
		if (required && v == "") || utf8.RuneCountInString(v) > max {
			return "", errs.E(errs.Invalid, "invalid_address", "address.%s must be at most %d printable characters (street and city are required)", name, max)
		}
		return v, nil
	}
	var out Address
	var err error
	if out.Street, err = field("street", a.Street, maxAddressLine, true); err != nil {
		return Address{}, err
	}
	if out.Complement, err = field("complement", a.Complement, maxAddressLine, false); err != nil {
		return Address{}, err
	}
	if out.District, err = field("district", a.District, maxCity, false); err != nil {
		return Address{}, err
	}
	if out.City, err = field("city", a.City, maxCity, true); err != nil {
		return Address{}, err
	}
	if !policy.ValidUF(a.UF) {
		return Address{}, errs.E(errs.Invalid, "invalid_address", "address.uf must be one of the 27 UFs, upper case")
	}
	out.UF = a.UF
	if !cepPattern.MatchString(a.PostalCode) {
		return Address{}, errs.E(errs.Invalid, "invalid_address", "address.postalCode must be a CEP of 8 digits (12345-678)")
	}
	out.PostalCode = strings.ReplaceAll(a.PostalCode, "-", "")
	return out, nil
}

// String is the address on one line, as a letter's provider takes it:
// "street, complement, district, city - UF, CEP 12345-678".
func (a Address) String() string {
	parts := []string{a.Street}
	for _, p := range []string{a.Complement, a.District} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	cep := a.PostalCode
	if len(cep) == 8 {
		cep = cep[:5] + "-" + cep[5:]
	}
	return strings.Join(parts, ", ") + ", " + a.City + " - " + a.UF + ", CEP " + cep
}

// IsZero reports whether a is empty: in a PATCH, the empty address removes it.
func (a Address) IsZero() bool { return a == Address{} }

var zonePattern = regexp.MustCompile(`^[A-Z][A-Za-z_]+(/[A-Za-z0-9_+-]+){1,2}$`)

// validZone accepts "" (derive the zone) or an IANA zone the embedded
// zone database knows, by name (Area/City), never an offset or "Local".
func validZone(z string) error {
	if z == "" {
		return nil
	}
	if len(z) > 64 || !zonePattern.MatchString(z) {
		return errInvalidZone
	}
	if _, err := calendar.LoadZone(z); err != nil {
		return errInvalidZone
	}
	return nil
}

var errInvalidZone = errs.E(errs.Invalid, "invalid_time_zone", "timeZone must be an IANA zone such as America/Manaus")

// ZoneOf is the debtor's time zone: the profile's explicit zone, else the
// one its UF implies (calendar.ZoneOfUF), else fallback (the tenant's).
// ADR 0064.
func ZoneOf(timeZone, uf string, fallback *time.Location) *time.Location {
	for _, name := range []string{timeZone, calendar.ZoneOfUF(uf)} {
		if name == "" {
			continue
		}
		if loc, err := calendar.LoadZone(name); err == nil {
			return loc
		}
	}
	return fallback
}

// Channels a debtor may refuse, as the contact gateway names them.
var Channels = []string{"SMS", "EMAIL", "WHATSAPP", "CALL", "LETTER"}

// PatchInput is the body of PATCH /v1/debtors/{dk}: only the fields
// present change. Version is the profile's version as last read (the 360
// view's profile.version): a profile changed since is a 409. An empty
// phone, e-mail or time zone removes it, as does an empty address object;
// an empty uf removes the state.
type PatchInput struct {
	Version  int             `json:"version"`
	Phone    *string         `json:"phone,omitempty"`
	Email    *string         `json:"email,omitempty"`
	Address  *Address        `json:"address,omitempty"`
	UF       *string         `json:"uf,omitempty"`
	TimeZone *string         `json:"timeZone,omitempty"`
	OptOut   map[string]bool `json:"optOut,omitempty"` // channel → refused (true) or accepted again (false)
}

// patch is a validated PatchInput.
type patch struct {
	in      PatchInput
	phone   string
	email   string
	address *Address // nil: remove (when in.Address is set)
}

func (in PatchInput) validate() (*patch, error) {
	if in.Version < 1 {
		return nil, errs.E(errs.Invalid, "invalid_version", "version must be the profile's version (1 or more)")
	}
	if in.Phone == nil && in.Email == nil && in.Address == nil && in.UF == nil && in.TimeZone == nil && len(in.OptOut) == 0 {
		return nil, errs.E(errs.Invalid, "empty_patch", "name at least one of phone, email, address, uf, timeZone, optOut")
	}
	p := &patch{in: in}
	var err error
	if in.Phone != nil && *in.Phone != "" {
		if p.phone, err = normalizePhone(*in.Phone); err != nil {
			return nil, err
		}
	}
	if in.Email != nil && *in.Email != "" {
		if p.email, err = normalizeEmail(*in.Email); err != nil {
			return nil, err
		}
	}
	if in.Address != nil && !in.Address.IsZero() {
		a, err := in.Address.normalize()
		if err != nil {
			return nil, err
		}
		p.address = &a
	}
	if in.UF != nil && *in.UF != "" && !policy.ValidUF(*in.UF) {
		return nil, errs.E(errs.Invalid, "invalid_uf", "uf must be one of the 27 UFs, upper case (SP, RJ, ...)")
	}
	if in.TimeZone != nil {
		if err := validZone(*in.TimeZone); err != nil {
			return nil, err
		}
	}
	if len(in.OptOut) > len(Channels) {
		return nil, errs.E(errs.Invalid, "invalid_channel", "optOut keys must be among SMS, EMAIL, WHATSAPP, CALL, LETTER")
	}
	for ch := range in.OptOut {
		if !slices.Contains(Channels, ch) {
			return nil, errs.E(errs.Invalid, "invalid_channel", "optOut keys must be among SMS, EMAIL, WHATSAPP, CALL, LETTER")
		}
	}
	return p, nil
}

// EvProfileChanged is the debtor event a PATCH writes: which fields
// changed and the new version, never their values.
const EvProfileChanged = "DebtorProfileChanged"

var errProfileChanged = errs.E(errs.Conflict, "version_conflict", "the profile changed since that version was read; read it again")

// Patch changes a debtor's contact data, state, time zone and opt-outs in
// one write conditioned on the profile's version (409 when it moved), with
// a DebtorProfileChanged event naming the fields that changed. The sealed
// data is opened and sealed again only when the phone, e-mail or address
// changes. A change of UF moves the debtor's contracts to the new state's
// calendar in the same transaction (contract.Relocate). The opt-out set is
// changed in place (ADD/DELETE), like SetOptOut, so neither loses the
// other's channel. It answers the profile as the 360 view shows it.
func (s *Service) Patch(ctx context.Context, t *tenant.Tenant, dk string, in PatchInput, actor Actor) (*ProfileView, error) {
	if err := ValidKey(dk); err != nil {
		return nil, err
	}
	p, err := in.validate()
	if err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "debtor.patch")
	pk := keys.Debtor(t.ID, dk)
	it, err := s.db(t).Get(ctx, kit.Key{PK: pk, SK: keys.ProfileSK}, true)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, errDebtorNotFound
	}
	var rec profileItem
	if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
		return nil, fmt.Errorf("decode profile: %w", err)
	}
	if rec.ErasedAt != "" {
		// Erased after its retention (ADR 0077): a correction must not
		// bring personal data, or a state, back.
		return nil, ErrErased
	}
	if rec.Version != in.Version {
		return nil, errProfileChanged
	}
	now := s.clock.Now()
	var fields []string
	var lookups []kit.Action // the phone's lookup entry moved (ADR 0084)
	readLookup, phoneMoved := rec.PhoneLookup, false
	upd := expression.Set(expression.Name("version"), expression.Value(rec.Version+1)).
		Set(expression.Name("updatedAt"), expression.Value(keys.Timestamp(now)))
	if in.Phone != nil || in.Email != nil || in.Address != nil {
		data, _, err := s.open(ctx, t, it)
		if err != nil {
			return nil, err
		}
		before := data
		if in.Phone != nil {
			data.Phone = p.phone
		}
		if in.Email != nil {
			data.Email = p.email
		}
		if in.Address != nil {
			data.Address = p.address
		}
		for _, f := range []struct {
			name    string
			changed bool
		}{
			{"phone", before.Phone != data.Phone}, {"email", before.Email != data.Email},
			{"address", !sameAddress(before.Address, data.Address)},
		} {
			if f.changed {
				fields = append(fields, f.name)
			}
		}
		if len(fields) > 0 {
			plain, err := json.Marshal(data)
			if err != nil {
				return nil, err
			}
			sealed, err := s.sealer.Seal(ctx, plain, pii.Owner{Tenant: t.ID, Partition: pk})
			if err != nil {
				return nil, err
			}
			rec.PII, rec.HasPhone, rec.HasEmail, rec.HasAddress = sealed, data.Phone != "", data.Email != "", data.Address != nil
			upd = upd.Set(expression.Name("pii"), expression.Value(sealed)).
				Set(expression.Name("hasPhone"), expression.Value(rec.HasPhone)).
				Set(expression.Name("hasEmail"), expression.Value(rec.HasEmail)).
				Set(expression.Name("hasAddress"), expression.Value(rec.HasAddress))
		}
		if before.Phone != data.Phone {
			phoneMoved = true
			if lookups, err = s.movePhone(t, dk, &rec, data.Phone, now); err != nil {
				return nil, err
			}
			upd = setOrRemove(upd, profilePhoneAttr, rec.PhoneLookup)
		}
	}
	var relocate []kit.Action
	if in.UF != nil && *in.UF != rec.UF {
		fields = append(fields, "uf")
		if relocate, err = contract.Relocate(ctx, s.db(t), t.ID, dk, *in.UF, now); err != nil {
			return nil, err
		}
		rec.UF = *in.UF
		upd = setOrRemove(upd, "uf", rec.UF)
	}
	if in.TimeZone != nil && *in.TimeZone != rec.TimeZone {
		fields = append(fields, "timeZone")
		rec.TimeZone = *in.TimeZone
		upd = setOrRemove(upd, "timeZone", rec.TimeZone)
	}
	var refuse, accept []string
	for _, ch := range Channels {
		out, ok := in.OptOut[ch]
		switch {
		case !ok:
		case out && !slices.Contains(rec.OptOut, ch):
			refuse = append(refuse, ch)
		case !out && slices.Contains(rec.OptOut, ch):
			accept = append(accept, ch)
		}
	}
	if len(refuse)+len(accept) > 0 {
		fields = append(fields, "optOut")
		set := func(v []string) expression.ValueBuilder {
			return expression.Value(&types.AttributeValueMemberSS{Value: v})
		}
		if len(refuse) > 0 {
			upd = upd.Add(expression.Name(profileOptOutAttr), set(refuse))
		}
		if len(accept) > 0 {
			upd = upd.Delete(expression.Name(profileOptOutAttr), set(accept))
		}
		rec.OptOut = slices.DeleteFunc(append(rec.OptOut, refuse...), func(c string) bool { return slices.Contains(accept, c) })
		slices.Sort(rec.OptOut)
	}
	if len(fields) == 0 {
		return profileView(&rec), nil // nothing changes: no write, no event
	}
	rec.Version++
	_, ev, err := s.audit(ctx, t, dk, EvProfileChanged, now, actor, map[string]any{"fields": fields, "version": rec.Version})
	if err != nil {
		return nil, err
	}
	cond := expression.Name("version").Equal(expression.Value(in.Version))
	if phoneMoved {
		cond = cond.And(samePhoneLookup(readLookup))
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	actions := append([]kit.Action{kit.UpdateAction(kit.Key{PK: pk, SK: keys.ProfileSK}, upd, &cond), kit.PutAction(ev, &notExists)}, lookups...)
	actions = append(actions, relocate...)
	if err := s.db(t).Transact(ctx, actions...); err != nil {
		var tc *kit.TxCanceled
		if errors.As(err, &tc) && tc.Failed(0) {
			return nil, errProfileChanged
		}
		if isLookupConflict(err, 2, len(lookups)) {
			return nil, errLookupChanged
		}
		if errors.Is(err, kit.ErrConditionFailed) || errors.Is(err, kit.ErrConflict) {
			// A contract changed between the listing and the commit (a
			// payment, an agenda visit): nothing was written; the caller
			// reads the profile again and retries.
			return nil, errs.E(errs.Conflict, "contract_changed", "a contract of the debtor changed meanwhile; nothing was written, retry")
		}
		return nil, fmt.Errorf("patch profile: %w", err)
	}
	return profileView(&rec), nil
}

// movePhone returns the writes that move dk's phone lookup entry from
// the one the profile names to the new phone's (none when the phone is
// removed), for the profile's own transaction, and sets rec.PhoneLookup to
// the new hash. The hash is computed under the tenant's current secret;
// a phone that normalises to the same E.164 keeps its entry.
func (s *Service) movePhone(t *tenant.Tenant, dk string, rec *profileItem, phone string, now time.Time) ([]kit.Action, error) {
	hash := ""
	if phone != "" {
		var err error
		if hash, err = phoneHash(t, t.KeyVersion, phone); err != nil {
			return nil, err
		}
	}
	if hash == rec.PhoneLookup {
		return nil, nil
	}
	var out []kit.Action
	if rec.PhoneLookup != "" {
		out = append(out, phoneLookupDelete(t.ID, rec.PhoneLookup, dk))
	}
	if hash != "" {
		put, err := PhoneLookupPut(t, t.KeyVersion, hash, dk, keys.Timestamp(now))
		if err != nil {
			return nil, err
		}
		out = append(out, put)
	}
	rec.PhoneLookup = hash
	return out, nil
}

func setOrRemove(upd expression.UpdateBuilder, name, v string) expression.UpdateBuilder {
	if v == "" {
		return upd.Remove(expression.Name(name))
	}
	return upd.Set(expression.Name(name), expression.Value(v))
}

func sameAddress(a, b *Address) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// UF reads the state of dk's profile ("" when it has none or there is no
// profile) strongly consistent: a new contract's calendar follows it
// (contract.DebtorUF).
func (s *Service) UF(ctx context.Context, t *tenant.Tenant, dk string) (string, error) {
	it, err := s.db(t).Get(kit.Within(ctx, "debtor.uf"), kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.ProfileSK}, true)
	if err != nil || it == nil {
		return "", err
	}
	var rec struct {
		UF string `dynamodbav:"uf"`
	}
	if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
		return "", fmt.Errorf("decode profile: %w", err)
	}
	return rec.UF, nil
}

// profileView is the PROFILE as operators see it: masked, no sealed data.
func profileView(p *profileItem) *ProfileView {
	zone := p.TimeZone
	if zone == "" {
		zone = calendar.ZoneOfUF(p.UF)
	}
	return &ProfileView{DocumentType: p.DocumentType, MaskedDocument: p.MaskedDocument, HasPhone: p.HasPhone, HasEmail: p.HasEmail,
		HasAddress: p.HasAddress, UF: p.UF, TimeZone: zone, TimeZoneExplicit: p.TimeZone != "", OptOut: p.OptOut,
		KeyVersion: p.KeyVersion, Version: p.Version, CreatedAt: p.CreatedAt}
}
