package debtor

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/collections/text"
	"lastro/policy"
	"lastro/tenant"
)

// profileItem is the PROFILE item: the only item holding personal data,
// encrypted in pii; the document is in clear only masked.
type profileItem struct {
	PK             string `dynamodbav:"PK"`
	SK             string `dynamodbav:"SK"`
	Type           string `dynamodbav:"type"`
	TenantID       string `dynamodbav:"tenantId"`
	DebtorKey      string `dynamodbav:"debtorKey"`
	DocumentType   string `dynamodbav:"documentType"`
	MaskedDocument string `dynamodbav:"maskedDocument"`
	PII            []byte `dynamodbav:"pii"`
	HasPhone       bool   `dynamodbav:"hasPhone"`
	HasEmail       bool   `dynamodbav:"hasEmail"`
	HasAddress     bool   `dynamodbav:"hasAddress,omitempty"`
	// UF is the debtor's state, for per-state contact windows: coarse and
	// non-identifying, so in clear like the masked document.
	UF string `dynamodbav:"uf,omitempty"`
	// TimeZone is the debtor's IANA zone when given explicitly (western
	// Amazonas, Fernando de Noronha); empty, the zone derives from the UF,
	// else the tenant's (ADR 0064). Coarse like the UF, so in clear.
	TimeZone string `dynamodbav:"timeZone,omitempty"`
	// OptOut lists the channels the debtor refused (SMS, WHATSAPP, ...),
	// a string set changed only by SetOptOut (profileOptOutAttr).
	OptOut []string `dynamodbav:"optOut,stringset,omitempty"`
	// PhoneLookup is the hash the phone's lookup entry is filed under
	// (lookup.go); absent when the profile has no phone, or was written
	// before phone lookups and not backfilled yet.
	PhoneLookup string `dynamodbav:"phoneLookup,omitempty"`
	KeyVersion  int    `dynamodbav:"keyVersion"`
	GSI3PK      string `dynamodbav:"GSI3PK"`
	Version     int    `dynamodbav:"version"`
	CreatedAt   string `dynamodbav:"createdAt"`
	// ErasedAt is set when the personal data were eliminated (rights.go):
	// the sealed data, the masked document, the UF and opt-outs are gone.
	ErasedAt string `dynamodbav:"erasedAt,omitempty"`
	// MovedTo, MovingFrom and MovedFrom are a debtor-key rotation's marks
	// (rotate.go, docs/adr/0075): the old PROFILE left as a tombstone names
	// the new key; the copy names the old key until the switch (the old
	// partition is still the debtor's), then the key it moved from until
	// the rotation finishes.
	MovedTo    string `dynamodbav:"movedTo,omitempty"`
	MovingFrom string `dynamodbav:"movingFrom,omitempty"`
	MovedFrom  string `dynamodbav:"movedFrom,omitempty"`
}

// profileOptOutAttr is the PROFILE's set of refused channels, changed in
// place by SetOptOut.
const profileOptOutAttr = "optOut"

// personal is the plaintext sealed into profileItem.PII.
type personal struct {
	Document string   `json:"document"`
	Name     string   `json:"name"`
	Phone    string   `json:"phone,omitempty"`
	Email    string   `json:"email,omitempty"`
	Address  *Address `json:"address,omitempty"` // postal address, for LETTER
}

// RegisterInput is the body of POST /v1/debtors.
type RegisterInput struct {
	Document string `json:"document"`
	Name     string `json:"name"`
	Phone    string `json:"phone,omitempty"`
	Email    string `json:"email,omitempty"`
	UF       string `json:"uf,omitempty"` // state (UF), not personal data: stored in clear
	// TimeZone is an explicit IANA zone; empty, it derives from the UF.
	TimeZone string `json:"timeZone,omitempty"`
	// Address is the postal address letters go to, sealed like the phone.
	Address *Address `json:"address,omitempty"`
}

// Registered is the answer of a registration.
type Registered struct {
	DebtorKey string `json:"debtorKey"`
	Created   bool   `json:"created"`
}

// validate normalises the input. Messages never repeat the values.
func (in RegisterInput) validate() (Document, personal, error) {
	doc, err := ParseDocument(in.Document)
	if err != nil {
		return doc, personal{}, err
	}
	// The raw name, before spaces are folded: a CR or LF would otherwise
	// pass as a space, and the rule is that such text is refused.
	if err := text.Check("name", in.Name); err != nil {
		return doc, personal{}, err
	}
	name := strings.Join(strings.Fields(in.Name), " ")
	if name == "" || utf8.RuneCountInString(name) > 200 {
		return doc, personal{}, errs.E(errs.Invalid, "invalid_name", "name must be 1-200 printable characters")
	}
	if in.UF != "" && !policy.ValidUF(in.UF) {
		return doc, personal{}, errs.E(errs.Invalid, "invalid_uf", "uf must be one of the 27 UFs, upper case (SP, RJ, ...)")
	}
	p := personal{Document: doc.Digits(), Name: name}
	if in.Phone != "" {
		if p.Phone, err = normalizePhone(in.Phone); err != nil {
			return doc, personal{}, err
		}
	}
	if in.Email != "" {
		if p.Email, err = normalizeEmail(in.Email); err != nil {
			return doc, personal{}, err
		}
	}
	if err := validZone(in.TimeZone); err != nil {
		return doc, personal{}, err
	}
	if in.Address != nil {
		a, err := in.Address.normalize()
		if err != nil {
			return doc, personal{}, err
		}
		p.Address = &a
	}
	return doc, p, nil
}

// normalizeEmail keeps a plain address, lower-cased.
func normalizeEmail(s string) (string, error) {
	if err := text.Check("email", s); err != nil {
		return "", err
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > 254 {
		return "", errs.E(errs.Invalid, "invalid_email", "email must be a plain address such as name@example.com")
	}
	return strings.ToLower(s), nil
}

// normalizePhone keeps an optional leading + and 10-15 digits.
func normalizePhone(s string) (string, error) {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' && i == 0:
			b.WriteRune(r)
		case strings.ContainsRune(" -().", r):
		default:
			return "", errs.E(errs.Invalid, "invalid_phone", "phone must be 10-15 digits, optionally with + and punctuation")
		}
	}
	n := strings.TrimPrefix(b.String(), "+")
	if len(n) < 10 || len(n) > 15 {
		return "", errs.E(errs.Invalid, "invalid_phone", "phone must be 10-15 digits, optionally with + and punctuation")
	}
	return b.String(), nil
}

// debtorKey computes the document's key under the tenant's current secret.
func (s *Service) debtorKey(t *tenant.Tenant, doc Document) (string, error) {
	secret, ok := t.DebtorKeySecret(t.KeyVersion)
	if !ok {
		return "", fmt.Errorf("tenant %s has no debtor-key secret version %d", t.ID, t.KeyVersion)
	}
	return s.keyOf(secret, doc.Digits()), nil
}

var errCollision = errs.E(errs.Conflict, "debtor_key_collision",
	"another debtor already holds the key this document maps to; nothing was merged")

// sameDocument opens a stored profile and tells whether it belongs to doc.
func (s *Service) sameDocument(ctx context.Context, t *tenant.Tenant, it kit.Item, doc Document) (bool, error) {
	p, _, err := s.open(ctx, t, it)
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare([]byte(p.Document), []byte(doc.Digits())) == 1, nil
}

func (s *Service) open(ctx context.Context, t *tenant.Tenant, it kit.Item) (personal, *profileItem, error) {
	var rec profileItem
	if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
		return personal{}, nil, fmt.Errorf("decode profile: %w", err)
	}
	if rec.ErasedAt != "" {
		return personal{}, &rec, ErrErased
	}
	if rec.MovedTo != "" {
		return personal{}, &rec, ErrMoved
	}
	raw, err := s.sealer.Open(ctx, rec.PII, pii.Owner{Tenant: t.ID, Partition: rec.PK})
	if err != nil {
		return personal{}, nil, fmt.Errorf("open profile: %w", err)
	}
	var p personal
	if err := json.Unmarshal(raw, &p); err != nil {
		return personal{}, nil, fmt.Errorf("decode profile data: %w", err)
	}
	return p, &rec, nil
}

// Register creates a debtor, or finds it: the same document always maps to
// the same key (created false). A different document whose key is already
// taken is a collision — 409, never a merge.
func (s *Service) Register(ctx context.Context, t *tenant.Tenant, in RegisterInput, actor Actor) (*Registered, error) {
	doc, p, err := in.validate()
	if err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "debtor.register")
	dk, err := s.debtorKey(t, doc)
	if err != nil {
		return nil, err
	}
	if t.RotatingDebtorKeys() {
		// A debtor not moved yet is under an older key: registering the
		// document again must find it, never create a second debtor.
		found, _, err := s.locate(ctx, t, doc)
		if err != nil {
			return nil, err
		}
		if found != "" {
			return &Registered{DebtorKey: found, Created: false}, nil
		}
	}
	pk := keys.Debtor(t.ID, dk)
	plain, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	sealed, err := s.sealer.Seal(ctx, plain, pii.Owner{Tenant: t.ID, Partition: pk})
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	// A phone is filed in its lookup partition in the same transaction
	// (ADR 0084): the profile names the entry's hash.
	var hash string
	if p.Phone != "" {
		if hash, err = phoneHash(t, t.KeyVersion, p.Phone); err != nil {
			return nil, err
		}
	}
	profile, err := marshal(profileItem{PK: pk, SK: keys.ProfileSK, Type: "PROFILE", TenantID: t.ID, DebtorKey: dk,
		DocumentType: string(doc.Type), MaskedDocument: doc.Masked(), PII: sealed, HasPhone: p.Phone != "", HasEmail: p.Email != "",
		HasAddress: p.Address != nil, UF: in.UF, TimeZone: in.TimeZone, PhoneLookup: hash, KeyVersion: t.KeyVersion, GSI3PK: keys.Profiles(t.ID),
		Version: 1, CreatedAt: keys.Timestamp(now)})
	if err != nil {
		return nil, err
	}
	_, ev, err := s.audit(ctx, t, dk, EvDebtorRegistered, now, actor, map[string]any{"documentType": string(doc.Type), "keyVersion": t.KeyVersion})
	if err != nil {
		return nil, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	actions := []kit.Action{kit.PutAction(profile, &notExists), kit.PutAction(ev, &notExists)}
	if hash != "" {
		put, err := PhoneLookupPut(t, t.KeyVersion, hash, dk, keys.Timestamp(now))
		if err != nil {
			return nil, err
		}
		actions = append(actions, put)
	}
	for attempt := 0; ; attempt++ {
		err = s.db(t).Transact(ctx, actions...)
		if err == nil {
			return &Registered{DebtorKey: dk, Created: true}, nil
		}
		var tc *kit.TxCanceled
		if errors.As(err, &tc) && tc.Failed(0) {
			existing := tc.Items[0]
			if existing == nil {
				if existing, err = s.db(t).Get(ctx, kit.Key{PK: pk, SK: keys.ProfileSK}, true); err != nil {
					return nil, err
				}
			}
			same, err := s.sameDocument(ctx, t, existing, doc)
			if err != nil {
				return nil, err
			}
			if !same {
				return nil, errCollision
			}
			if from := str(existing, "movingFrom"); from != "" {
				return &Registered{DebtorKey: from, Created: false}, nil // a copy: the debtor is still at its old key
			}
			return &Registered{DebtorKey: dk, Created: false}, nil
		}
		if !errors.Is(err, kit.ErrConflict) || attempt == 2 {
			return nil, fmt.Errorf("register debtor: %w", err)
		}
	}
}

// LookupInput is the body of POST /v1/debtors/lookup: exactly one of a
// document (CPF or CNPJ, with or without punctuation), a phone (10-15
// digits, optionally + and punctuation; without a country code a
// Brazilian number) or a contract id.
type LookupInput struct {
	Document   string `json:"document,omitempty"`
	Phone      string `json:"phone,omitempty"`
	ContractID string `json:"contractId,omitempty"`
}

// Found is the answer of a lookup: every debtor matched, masked. A
// document names one debtor; a phone or a contract id may name several.
type Found struct {
	// DebtorKey is the match when there is exactly one (always for a
	// document); absent when several debtors match.
	DebtorKey string  `json:"debtorKey,omitempty"`
	Matches   []Match `json:"matches"`
	// More says more than MaxMatches debtors match; the first are listed.
	More bool `json:"more,omitempty"`
}

var errDebtorNotFound = errs.E(errs.NotFound, "debtor_not_found", "debtor not found")

// Lookup finds debtors by one key, never through an index nor a Scan.
// A document: its debtor key is computed and the debtor confirmed to be
// that document (404 when nobody is registered under the key, 409 when
// someone else is). A phone or a contract id: one strongly consistent
// Query of its lookup partition (ADR 0084) and the matched profiles, 404
// when none.
func (s *Service) Lookup(ctx context.Context, t *tenant.Tenant, in LookupInput) (*Found, error) {
	switch n := in.given(); {
	case n > 1:
		return nil, errInvalidLookup
	case in.Phone != "":
		ms, more, err := s.lookupPhone(kit.Within(ctx, "debtor.lookup.phone"), t, in.Phone)
		if err != nil {
			return nil, err
		}
		return found(ms, more)
	case in.ContractID != "":
		ms, more, err := s.lookupContract(kit.Within(ctx, "debtor.lookup.contract"), t, in.ContractID)
		if err != nil {
			return nil, err
		}
		return found(ms, more)
	}
	doc, err := ParseDocument(in.Document)
	if err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "debtor.lookup")
	dk, it, err := s.locate(ctx, t, doc)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, errDebtorNotFound
	}
	// locate has confirmed the document (a collision is refused there).
	return &Found{DebtorKey: dk, Matches: []Match{{DebtorKey: dk, DocumentType: string(doc.Type), MaskedDocument: doc.Masked()}}}, nil
}

// RevealInput is the optional body of POST /v1/debtors/{dk}/reveal.
type RevealInput struct {
	Reason string `json:"reason,omitempty"`
}

// RevealReasons are the accepted reasons (codes, so no free text with
// personal data reaches the audit trail).
var RevealReasons = []string{"LEGAL_REQUEST", "DATA_SUBJECT_REQUEST", "OMBUDSMAN", "AUDIT", "FRAUD_INVESTIGATION"}

// Revealed is the answer of a reveal: the only response with a document.
type Revealed struct {
	DebtorKey    string `json:"debtorKey"`
	DocumentType string `json:"documentType"`
	Document     string `json:"document"`
	EventID      string `json:"eventId"`
}

// Reveal decrypts a debtor's document for compliance and records that it
// did, with who asked and why, before answering.
func (s *Service) Reveal(ctx context.Context, t *tenant.Tenant, dk string, in RevealInput, actor Actor) (*Revealed, error) {
	if err := ValidKey(dk); err != nil {
		return nil, err
	}
	reason := in.Reason
	if reason == "" {
		reason = "UNSPECIFIED"
	} else if !contains(RevealReasons, reason) {
		return nil, errs.E(errs.Invalid, "invalid_reason", "reason must be one of %s", strings.Join(RevealReasons, ", "))
	}
	ctx = kit.Within(ctx, "debtor.reveal")
	pk := keys.Debtor(t.ID, dk)
	it, err := s.db(t).Get(ctx, kit.Key{PK: pk, SK: keys.ProfileSK}, true)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, errDebtorNotFound
	}
	p, rec, err := s.open(ctx, t, it)
	if err != nil {
		return nil, err
	}
	doc, err := ParseDocument(p.Document)
	if err != nil {
		return nil, fmt.Errorf("stored document does not validate")
	}
	now := s.clock.Now()
	id, ev, err := s.audit(ctx, t, dk, EvDocumentRevealed, now, actor, map[string]any{"reason": reason, "documentType": rec.DocumentType})
	if err != nil {
		return nil, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	if err := s.db(t).Put(ctx, ev, &notExists); err != nil {
		return nil, fmt.Errorf("record reveal: %w", err)
	}
	return &Revealed{DebtorKey: dk, DocumentType: string(doc.Type), Document: doc.Formatted(), EventID: id}, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ErrNoAddress is returned by ContactAddress when the profile holds no
// address for the channel.
var ErrNoAddress = errs.E(errs.Rule, "no_contact_address", "the debtor's profile has no address for this channel")

// ContactAddress decrypts the address a channel needs — the phone for
// SMS, WhatsApp and calls, the e-mail for EMAIL, the postal address (one
// line, Address.String) for LETTER — for the contact
// gateway's sender. The address never leaves the send path: no log, no
// error and no item holds it.
func (s *Service) ContactAddress(ctx context.Context, t *tenant.Tenant, dk, channel string) (string, error) {
	if err := ValidKey(dk); err != nil {
		return "", err
	}
	it, err := s.db(t).Get(ctx, kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.ProfileSK}, true)
	if err != nil {
		return "", fmt.Errorf("read profile: %w", err)
	}
	if it == nil {
		return "", errDebtorNotFound
	}
	return s.ContactAddressIn(ctx, t, dk, it, channel)
}

// errNotProfile refuses an item that is not the debtor's PROFILE.
var errNotProfile = errors.New("debtor: the item is not this debtor's profile")

// ContactAddressIn is ContactAddress on a PROFILE item the caller already
// read (the contact gateway's claim reads it strongly consistent): the
// same decryption without a second read. The item must be dk's PROFILE in
// t; its sealed data is bound to that key and tenant, so an item copied
// from elsewhere does not open either.
func (s *Service) ContactAddressIn(ctx context.Context, t *tenant.Tenant, dk string, it kit.Item, channel string) (string, error) {
	if err := ValidKey(dk); err != nil {
		return "", err
	}
	p, rec, err := s.open(ctx, t, it)
	if errors.Is(err, ErrErased) {
		return "", ErrNoAddress // nobody to contact: no address is left
	}
	if err != nil {
		return "", err
	}
	if rec.PK != keys.Debtor(t.ID, dk) || rec.SK != keys.ProfileSK {
		return "", errNotProfile
	}
	addr := ""
	switch channel {
	case "SMS", "WHATSAPP", "CALL":
		addr = p.Phone
	case "EMAIL":
		addr = p.Email
	case "LETTER":
		if p.Address != nil {
			addr = p.Address.String()
		}
	}
	if addr == "" {
		return "", ErrNoAddress
	}
	return addr, nil
}
