package debtor

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/tenant"
)

// The desk's searches by phone and by contract id (docs/adr/0084): keyed
// lookup partitions in the base table, read strongly consistent, written
// in the transaction of what they index. This file is the only writer of
// the phone lookup's shape; contract/lookup.go writes the contract-id one.

// TypePhoneLookup is the type of a phone lookup entry.
const TypePhoneLookup = "PHONE_LOOKUP"

// profilePhoneAttr is the PROFILE's phoneLookup attribute: the hash of
// the phone its lookup entry is filed under (absent: no entry). A hash,
// like the debtor key, never the number; it lets a change of phone, an
// erasure and an offboarding find the entry without opening the sealed
// data.
const profilePhoneAttr = "phoneLookup"

// phoneHashLen is the phone hash's length in hex characters (128 bits):
// the partition of one phone, shared by every debtor registered with it,
// so two phones must never share one.
const phoneHashLen = 32

// phoneLookupItem is one entry of a phone lookup partition
// (T#<t>#PHONE#<hash> / DEBTOR#<debtorKey>): a debtor registered with
// that phone. keyVersion is the debtor-key secret version the hash was
// computed under.
type phoneLookupItem struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	Type       string `dynamodbav:"type"`
	TenantID   string `dynamodbav:"tenantId"`
	DebtorKey  string `dynamodbav:"debtorKey"`
	KeyVersion int    `dynamodbav:"keyVersion"`
	CreatedAt  string `dynamodbav:"createdAt"`
}

// E164 is a phone as normalizePhone keeps it in E.164: a leading + kept
// as given; without one, a Brazilian number — 10 or 11 digits (area code
// and number, a leading trunk 0 dropped) gets +55, 12 or 13 digits
// starting with 55 get their +. Anything else is taken as already
// carrying its country code.
func E164(phone string) string {
	if strings.HasPrefix(phone, "+") {
		return phone
	}
	d := phone
	if strings.HasPrefix(d, "0") && (len(d) == 11 || len(d) == 12) {
		d = d[1:]
	}
	switch {
	case len(d) == 10 || len(d) == 11:
		return "+55" + d
	default:
		return "+" + d
	}
}

// PhoneHash is the key of a phone's lookup partition: hex(HMAC-SHA256(
// secret, E.164 phone)) cut to 128 bits, under the tenant's debtor-key
// secret. The HMAC input starts with '+', so it never equals a document's
// digits (the debtor key's input).
func PhoneHash(secret []byte, e164 string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(e164))
	return hex.EncodeToString(m.Sum(nil))[:phoneHashLen]
}

// phoneHash is the hash of a normalised phone under version v of t's
// debtor-key secret.
func phoneHash(t *tenant.Tenant, v int, phone string) (string, error) {
	secret, ok := t.DebtorKeySecret(v)
	if !ok {
		return "", fmt.Errorf("tenant %s has no debtor-key secret version %d", t.ID, v)
	}
	return PhoneHash(secret, E164(phone)), nil
}

// PhoneLookupPut is the write of the phone lookup entry naming dk under
// hash, for the transaction that gives the profile that phone (or that
// moves the debtor to a new key): conditioned on the entry not existing.
func PhoneLookupPut(t *tenant.Tenant, keyVersion int, hash, dk, createdAt string) (kit.Action, error) {
	it, err := marshal(phoneLookupItem{PK: keys.PhoneLookup(t.ID, hash), SK: keys.LookupEntry(dk), Type: TypePhoneLookup, TenantID: t.ID,
		DebtorKey: dk, KeyVersion: keyVersion, CreatedAt: createdAt})
	if err != nil {
		return kit.Action{}, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	return kit.PutAction(it, &notExists), nil
}

// samePhoneLookup conditions a profile write on the phoneLookup it was
// read with: the lookups backfill files an entry without moving the
// profile's version, so a change of phone or an erasure that read the
// profile before it fails rather than orphan the entry it filed.
func samePhoneLookup(read string) expression.ConditionBuilder {
	if read == "" {
		return expression.AttributeNotExists(expression.Name(profilePhoneAttr))
	}
	return expression.Name(profilePhoneAttr).Equal(expression.Value(read))
}

// phoneLookupDelete removes the entry naming dk under hash, on the
// condition that it exists: the profile names it (phoneLookup), and both
// change in one transaction, so a missing entry is a conflict, not
// something to paper over.
func phoneLookupDelete(tenantID, hash, dk string) kit.Action {
	exists := expression.AttributeExists(expression.Name("PK"))
	return kit.DeleteAction(kit.Key{PK: keys.PhoneLookup(tenantID, hash), SK: keys.LookupEntry(dk)}, &exists)
}

// LookupKeysIn lists the lookup entries that name the debtor whose
// partition items are given (all of them, or at least its PROFILE and
// contract headers): the phone entry the PROFILE names and one contract-id
// entry per contract header. Offboarding deletes them with the partition;
// a debtor-key rotation moves them (a new entry under the new key, the
// phone hashed again under the new secret: PhoneLookupPut and
// contract.LookupPut).
func LookupKeysIn(tenantID string, items []kit.Item) []kit.Key {
	var out []kit.Key
	for _, it := range items {
		pk, sk, dk := attrS(it, "PK"), attrS(it, "SK"), attrS(it, "debtorKey")
		if !keys.ValidDebtorKey(dk) || pk != keys.Debtor(tenantID, dk) {
			continue
		}
		switch {
		case sk == keys.ProfileSK:
			if h := attrS(it, profilePhoneAttr); h != "" {
				out = append(out, kit.Key{PK: keys.PhoneLookup(tenantID, h), SK: keys.LookupEntry(dk)})
			}
		case attrS(it, "type") == contract.TypeHeader:
			if id := attrS(it, "contractId"); keys.ValidIdentifier(id) && sk == keys.Contract(id) {
				out = append(out, contract.LookupKey(tenantID, id, dk))
			}
		}
	}
	return out
}

// Lookups lists the lookup entries naming dk (LookupKeysIn over its
// profile and contract headers, read strongly consistent): what a
// debtor-key rotation moves with the partition.
func (s *Service) Lookups(ctx context.Context, t *tenant.Tenant, dk string) ([]kit.Key, error) {
	if err := ValidKey(dk); err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "debtor.lookups")
	var items []kit.Item
	prof, err := s.db(t).Get(ctx, kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.ProfileSK}, true)
	if err != nil {
		return nil, err
	}
	if prof == nil {
		return nil, errDebtorNotFound
	}
	items = append(items, prof)
	only := expression.Name("type").Equal(expression.Value(contract.TypeHeader))
	q := kit.Query{Partition: keys.Debtor(t.ID, dk), Sort: kit.BeginsWith(keys.Contract("")), Consistent: true, Filter: &only, Tag: "lookups"}
	for cursor := ""; ; {
		page, err := s.db(t).QueryPage(ctx, q, cursor)
		if err != nil {
			return nil, err
		}
		items = append(items, page.Items...)
		if page.Next == "" {
			return LookupKeysIn(t.ID, items), nil
		}
		cursor = page.Next
	}
}

func attrS(it kit.Item, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// MaxMatches is how many debtors one lookup lists: a phone or a contract
// id shared by more says so (Found.More) rather than reading them all.
const MaxMatches = 20

// Match is one debtor a lookup found, as operators may see it: masked.
type Match struct {
	DebtorKey      string `json:"debtorKey"`
	DocumentType   string `json:"documentType,omitempty"`
	MaskedDocument string `json:"maskedDocument,omitempty"`
	// ContractID is the contract a contract-id lookup matched.
	ContractID string `json:"contractId,omitempty"`
	// Erased says the debtor's personal data were erased (ADR 0077): its
	// contracts remain, found by their id.
	Erased bool `json:"erased,omitempty"`
}

// errInvalidLookup refuses a lookup body naming no key or several.
var errInvalidLookup = errs.E(errs.Invalid, "invalid_lookup", "give exactly one of document, phone, contractId")

func (in LookupInput) given() int {
	n := 0
	for _, v := range []string{in.Document, in.Phone, in.ContractID} {
		if v != "" {
			n++
		}
	}
	return n
}

// lookupPhone lists the debtors registered with phone: the hash under
// the current debtor-key secret, and, while nothing is found, under the
// older versions (a rotation in progress moves the entries).
func (s *Service) lookupPhone(ctx context.Context, t *tenant.Tenant, raw string) ([]Match, bool, error) {
	phone, err := normalizePhone(raw)
	if err != nil {
		return nil, false, err
	}
	for v := t.KeyVersion; v >= 1; v-- {
		h, err := phoneHash(t, v, phone)
		if err != nil {
			continue
		}
		q := kit.Query{Partition: keys.PhoneLookup(t.ID, h), Sort: kit.BeginsWith(keys.LookupEntryPrefix), Consistent: true, Limit: MaxMatches + 1}
		page, err := s.db(t).QueryPage(ctx, q, "")
		if err != nil {
			return nil, false, fmt.Errorf("phone lookup: %w", err)
		}
		if len(page.Items) == 0 {
			continue
		}
		var dks []string
		for _, it := range page.Items {
			var rec phoneLookupItem
			if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
				return nil, false, fmt.Errorf("decode phone lookup: %w", err)
			}
			dks = append(dks, rec.DebtorKey)
		}
		more := len(dks) > MaxMatches
		if more {
			dks = dks[:MaxMatches]
		}
		m, err := s.matches(ctx, t, dks, "")
		return m, more, err
	}
	return nil, false, nil
}

// matches reads the profiles of dks (one strongly consistent BatchGet)
// and answers them masked, in the order of dks; a key without a profile
// is left out.
func (s *Service) matches(ctx context.Context, t *tenant.Tenant, dks []string, contractID string) ([]Match, error) {
	if len(dks) == 0 {
		return nil, nil
	}
	ks := make([]kit.Key, len(dks))
	for i, dk := range dks {
		ks[i] = kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.ProfileSK}
	}
	items, err := s.db(t).BatchGet(ctx, ks, true)
	if err != nil {
		return nil, fmt.Errorf("read matched profiles: %w", err)
	}
	byKey := map[string]*profileItem{}
	for _, it := range items {
		var rec profileItem
		if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
			return nil, fmt.Errorf("decode profile: %w", err)
		}
		byKey[rec.DebtorKey] = &rec
	}
	out := []Match{}
	for _, dk := range dks {
		if p := byKey[dk]; p != nil {
			out = append(out, Match{DebtorKey: dk, DocumentType: p.DocumentType, MaskedDocument: p.MaskedDocument,
				ContractID: contractID, Erased: p.ErasedAt != ""})
		}
	}
	return out, nil
}

// lookupContract lists the debtors holding a contract of id.
func (s *Service) lookupContract(ctx context.Context, t *tenant.Tenant, id string) ([]Match, bool, error) {
	dks, more, err := contract.DebtorsOf(ctx, s.db(t), t.ID, id, MaxMatches)
	if err != nil {
		return nil, false, err
	}
	m, err := s.matches(ctx, t, dks, id)
	return m, more, err
}

// found is the answer of a lookup that matched ms: 404 on none.
func found(ms []Match, more bool) (*Found, error) {
	if len(ms) == 0 {
		return nil, errDebtorNotFound
	}
	f := &Found{Matches: ms, More: more}
	if len(ms) == 1 && !more {
		f.DebtorKey = ms[0].DebtorKey
	}
	return f, nil
}

// errLookupChanged answers a change of phone whose lookup entries were
// not as the profile says (the old one gone, the new one already there).
var errLookupChanged = errs.E(errs.Conflict, "lookup_changed",
	"the debtor's phone lookup changed meanwhile; nothing was written: read the profile again and retry")

// isLookupConflict reports whether a canceled transaction failed on one
// of the n actions from index from on (the lookup entries).
func isLookupConflict(err error, from, n int) bool {
	var tc *kit.TxCanceled
	if !errors.As(err, &tc) {
		return false
	}
	for i := from; i < from+n; i++ {
		if tc.Failed(i) {
			return true
		}
	}
	return false
}

// LacksPhoneLookup reports whether a PROFILE item has a phone but no
// lookup entry yet (registered before the lookups, ADR 0084): the lookups
// backfill files it with FilePhoneLookup. An erased profile has no phone.
func LacksPhoneLookup(it kit.Item) bool {
	has, _ := it["hasPhone"].(*types.AttributeValueMemberBOOL)
	return attrS(it, "SK") == keys.ProfileSK && has != nil && has.Value && attrS(it, profilePhoneAttr) == "" && attrS(it, "erasedAt") == ""
}

// ExpectedPhoneLookup is the phone lookup entry a PROFILE item should
// have: should is false without a phone (or erased), known false when
// the profile does not name its entry yet (only its sealed data could
// tell the hash).
func ExpectedPhoneLookup(tenantID string, it kit.Item) (k kit.Key, should, known bool) {
	has, _ := it["hasPhone"].(*types.AttributeValueMemberBOOL)
	dk := attrS(it, "debtorKey")
	if attrS(it, "SK") != keys.ProfileSK || has == nil || !has.Value || attrS(it, "erasedAt") != "" || !keys.ValidDebtorKey(dk) {
		return kit.Key{}, false, false
	}
	h := attrS(it, profilePhoneAttr)
	if h == "" {
		return kit.Key{}, true, false
	}
	return kit.Key{PK: keys.PhoneLookup(tenantID, h), SK: keys.LookupEntry(dk)}, true, true
}

// FilePhoneLookup files the phone lookup entry of a profile that lacks
// one (LacksPhoneLookup): the sealed phone is opened, hashed under the
// tenant's current secret and written with the profile's phoneLookup in
// one transaction conditioned on the profile's version and on neither
// existing yet, so a PATCH, an erasure or a rerun racing it wins and this
// write fails (kit.ErrConditionFailed) rather than undoing them.
func (s *Service) FilePhoneLookup(ctx context.Context, t *tenant.Tenant, it kit.Item) error {
	if !LacksPhoneLookup(it) {
		return nil
	}
	data, rec, err := s.open(ctx, t, it)
	if err != nil {
		return err
	}
	if rec.PK != keys.Debtor(t.ID, rec.DebtorKey) || data.Phone == "" {
		return nil
	}
	hash, err := phoneHash(t, t.KeyVersion, data.Phone)
	if err != nil {
		return err
	}
	put, err := PhoneLookupPut(t, t.KeyVersion, hash, rec.DebtorKey, keys.Timestamp(s.clock.Now()))
	if err != nil {
		return err
	}
	upd := expression.Set(expression.Name(profilePhoneAttr), expression.Value(hash))
	cond := expression.Name("version").Equal(expression.Value(rec.Version)).
		And(expression.AttributeNotExists(expression.Name(profilePhoneAttr))).
		And(expression.AttributeNotExists(expression.Name("erasedAt")))
	return s.db(t).Transact(ctx, kit.UpdateAction(kit.Key{PK: rec.PK, SK: keys.ProfileSK}, upd, &cond), put)
}
