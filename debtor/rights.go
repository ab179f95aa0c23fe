package debtor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/contract"
	"lastro/tenant"
)

// The debtor's rights under the LGPD (Lei 13.709/2018): the report of
// everything held about one debtor (art. 18 II, access) and the
// elimination of the personal data once the legal retention is over
// (arts. 16 and 18 VI), while the financial and audit records stay,
// pseudonymous under the debtor key (docs/adr/0077).

// Event types of the debtor's rights.
const (
	EvDataReportIssued   = "DataReportIssued"
	EvPersonalDataErased = "PersonalDataErased"
)

// ErrErased is returned by every read that needs the debtor's personal
// data once they were erased: nothing is left to decrypt.
var ErrErased = errs.E(errs.Rule, "personal_data_erased", "the debtor's personal data were erased after the retention period")

// Retention is a tenant's personal-data retention policy: how many years
// after the debtor's last contract closed (settled or written off) and the
// last activity the personal data are kept before they are eliminated.
type Retention struct {
	YearsAfterClosure int    `json:"yearsAfterClosure"`
	Version           int    `json:"version"` // 0: the default, never set
	UpdatedAt         string `json:"updatedAt,omitempty"`
}

// Retention bounds. Five years is the prescription of a debt in writing
// (Código Civil art. 206 §5 I) and the limit of a bureau record (CDC art.
// 43 §1): the lender may need the debtor's identity until then.
const (
	DefaultRetentionYears = 5
	MinRetentionYears     = 5
	MaxRetentionYears     = 30
)

// RetentionInput is the body of PUT /v1/retention.
type RetentionInput struct {
	YearsAfterClosure int `json:"yearsAfterClosure"`
	// Version is the policy version the change was made from (0 when the
	// tenant still has the default): a concurrent change is 409.
	Version int `json:"version"`
}

// retentionItem is the RETENTION item in the tenant partition; this
// package is its only writer.
type retentionItem struct {
	PK                string `dynamodbav:"PK"`
	SK                string `dynamodbav:"SK"`
	Type              string `dynamodbav:"type"`
	TenantID          string `dynamodbav:"tenantId"`
	YearsAfterClosure int    `dynamodbav:"yearsAfterClosure"`
	Version           int    `dynamodbav:"version"`
	UpdatedAt         string `dynamodbav:"updatedAt"`
}

// Retention returns the tenant's retention policy (the default when it
// set none).
func (s *Service) Retention(ctx context.Context, t *tenant.Tenant) (Retention, error) {
	ctx = kit.Within(ctx, "debtor.retention")
	it, err := s.db(t).Get(ctx, kit.Key{PK: keys.Tenant(t.ID), SK: keys.RetentionSK}, true)
	if err != nil {
		return Retention{}, fmt.Errorf("read retention: %w", err)
	}
	if it == nil {
		return Retention{YearsAfterClosure: DefaultRetentionYears}, nil
	}
	var rec retentionItem
	if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
		return Retention{}, fmt.Errorf("decode retention: %w", err)
	}
	return Retention{YearsAfterClosure: rec.YearsAfterClosure, Version: rec.Version, UpdatedAt: rec.UpdatedAt}, nil
}

// SetRetention changes the tenant's retention policy, conditioned on the
// version it was read at.
func (s *Service) SetRetention(ctx context.Context, t *tenant.Tenant, in RetentionInput) (Retention, error) {
	if in.YearsAfterClosure < MinRetentionYears || in.YearsAfterClosure > MaxRetentionYears {
		return Retention{}, errs.E(errs.Rule, "invalid_retention", "yearsAfterClosure must be %d-%d", MinRetentionYears, MaxRetentionYears)
	}
	if in.Version < 0 {
		return Retention{}, errs.E(errs.Invalid, "invalid_version", "version must be 0 or more")
	}
	ctx = kit.Within(ctx, "debtor.retention.set")
	now := keys.Timestamp(s.clock.Now())
	item, err := marshal(retentionItem{PK: keys.Tenant(t.ID), SK: keys.RetentionSK, Type: "RETENTION", TenantID: t.ID,
		YearsAfterClosure: in.YearsAfterClosure, Version: in.Version + 1, UpdatedAt: now})
	if err != nil {
		return Retention{}, err
	}
	cond := expression.AttributeNotExists(expression.Name("PK"))
	if in.Version > 0 {
		cond = expression.Name("version").Equal(expression.Value(in.Version))
	}
	if err := s.db(t).Put(ctx, item, &cond); err != nil {
		if errors.Is(err, kit.ErrConditionFailed) {
			return Retention{}, errs.E(errs.Conflict, "version_conflict", "the retention policy changed since version %d: read it again", in.Version)
		}
		return Retention{}, fmt.Errorf("write retention: %w", err)
	}
	return Retention{YearsAfterClosure: in.YearsAfterClosure, Version: in.Version + 1, UpdatedAt: now}, nil
}

// ReportProfile is the profile in a data report: decrypted, unlike every
// other read of it.
type ReportProfile struct {
	DocumentType   string   `json:"documentType"`
	Document       string   `json:"document,omitempty"`
	MaskedDocument string   `json:"maskedDocument,omitempty"`
	Name           string   `json:"name,omitempty"`
	Phone          string   `json:"phone,omitempty"`
	Email          string   `json:"email,omitempty"`
	UF             string   `json:"uf,omitempty"`
	OptOut         []string `json:"optOut,omitempty"`
	KeyVersion     int      `json:"keyVersion"`
	CreatedAt      string   `json:"createdAt"`
	ErasedAt       string   `json:"erasedAt,omitempty"`
}

// ReportContract is one contract of a data report with every item under
// it.
type ReportContract struct {
	ContractID   string               `json:"contractId"`
	Header       map[string]any       `json:"header"`
	Installments []map[string]any     `json:"installments"`
	Agreements   []map[string]any     `json:"agreements"`
	Charges      []map[string]any     `json:"charges"`
	Disputes     []map[string]any     `json:"disputes"`
	Promises     []map[string]any     `json:"promises"`
	Events       []contract.EventView `json:"events"`
}

// DataReport is everything the engine holds about one debtor (LGPD art.
// 18 II): the decrypted profile, each contract with its instalments,
// agreements, charges, disputes, promises and events, the contact
// attempts (evidence) and daily counters, the bureau records and the
// debtor-level events. Items counts every item read, Other holds those of
// a shape this version does not name, so nothing held is left out.
type DataReport struct {
	DebtorKey       string               `json:"debtorKey"`
	TenantID        string               `json:"tenantId"`
	GeneratedAt     string               `json:"generatedAt"`
	Basis           string               `json:"basis"`
	EventID         string               `json:"eventId"`
	Retention       Retention            `json:"retention"`
	Profile         *ReportProfile       `json:"profile"`
	Contracts       []*ReportContract    `json:"contracts"`
	Contacts        []map[string]any     `json:"contacts"`
	ContactCounters []map[string]any     `json:"contactCounters"`
	BureauRecords   []contract.EventView `json:"bureauRecords"`
	Events          []contract.EventView `json:"events"`
	Other           []map[string]any     `json:"other"`
	Items           int                  `json:"items"`
}

// reasonOf validates an audit reason code, defaulting to def.
func reasonOf(reason, def string) (string, error) {
	if reason == "" {
		return def, nil
	}
	if !contains(RevealReasons, reason) {
		return "", errs.E(errs.Invalid, "invalid_reason", "reason must be one of %s", strings.Join(RevealReasons, ", "))
	}
	return reason, nil
}

// audit builds one debtor-level audit event, for the caller to write
// (conditioned on attribute_not_exists(PK)), and returns its id.
func (s *Service) audit(ctx context.Context, t *tenant.Tenant, dk, evType string, now time.Time, actor Actor, details map[string]any) (string, kit.Item, error) {
	id := contract.NewEventID()
	ev, err := marshal(contract.Event{PK: keys.Debtor(t.ID, dk), SK: keys.DebtorEvent(now, id), Type: "EVENT", Version: 1, EventID: id,
		EventType: evType, At: keys.Timestamp(now), ActorRole: actor.Role, RequestID: actor.RequestID, Details: details})
	return id, ev, err
}

// eachItem reads the debtor's whole partition, strongly consistent, page
// by page: a keyed Query, never a Scan.
func (s *Service) eachItem(ctx context.Context, t *tenant.Tenant, dk string, fn func(kit.Item) error) error {
	q := kit.Query{Partition: keys.Debtor(t.ID, dk), Consistent: true}
	for cursor := ""; ; {
		page, err := s.db(t).QueryPage(ctx, q, cursor)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			if err := fn(it); err != nil {
				return err
			}
		}
		if page.Next == "" {
			return nil
		}
		cursor = page.Next
	}
}

// DataReport answers the debtor's access request (compliance only): the
// audit event is written first, so the report lists its own issue and no
// report leaves without one.
func (s *Service) DataReport(ctx context.Context, t *tenant.Tenant, dk, reason string, actor Actor) (*DataReport, error) {
	if err := ValidKey(dk); err != nil {
		return nil, err
	}
	reason, err := reasonOf(reason, "DATA_SUBJECT_REQUEST")
	if err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "debtor.dataReport")
	pk := keys.Debtor(t.ID, dk)
	prof, err := s.db(t).Get(ctx, kit.Key{PK: pk, SK: keys.ProfileSK}, true)
	if err != nil {
		return nil, err
	}
	if prof == nil {
		return nil, errDebtorNotFound
	}
	ret, err := s.Retention(ctx, t)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	id, ev, err := s.audit(ctx, t, dk, EvDataReportIssued, now, actor, map[string]any{"reason": reason})
	if err != nil {
		return nil, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	if err := s.db(t).Put(ctx, ev, &notExists); err != nil {
		return nil, fmt.Errorf("record data report: %w", err)
	}
	return s.report(ctx, t, dk, "LGPD art. 18 II", id, ret)
}

// HandOver is the data report of a debtor for the hand-over of a tenant
// being offboarded (docs/adr/0076): the same content, without an audit
// event of its own, since the partition is about to be deleted and the
// offboarding job records the hand-over.
func (s *Service) HandOver(ctx context.Context, t *tenant.Tenant, dk string) (*DataReport, error) {
	if err := ValidKey(dk); err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "debtor.handOver")
	ret, err := s.Retention(ctx, t)
	if err != nil {
		return nil, err
	}
	return s.report(ctx, t, dk, "tenant hand-over", "", ret)
}

// report reads the debtor's partition into a data report.
func (s *Service) report(ctx context.Context, t *tenant.Tenant, dk, basis, eventID string, ret Retention) (*DataReport, error) {
	now := s.clock.Now()
	r := &DataReport{DebtorKey: dk, TenantID: t.ID, GeneratedAt: keys.Timestamp(now), Basis: basis, EventID: eventID, Retention: ret,
		Contracts: []*ReportContract{}, Contacts: []map[string]any{}, ContactCounters: []map[string]any{},
		BureauRecords: []contract.EventView{}, Events: []contract.EventView{}, Other: []map[string]any{}}
	byID := map[string]*ReportContract{}
	contractOf := func(cid string) *ReportContract {
		c := byID[cid]
		if c == nil {
			c = &ReportContract{ContractID: cid, Installments: []map[string]any{}, Agreements: []map[string]any{}, Charges: []map[string]any{},
				Disputes: []map[string]any{}, Promises: []map[string]any{}, Events: []contract.EventView{}}
			byID[cid] = c
			r.Contracts = append(r.Contracts, c)
		}
		return c
	}
	event := func(it kit.Item) (contract.EventView, error) {
		e, err := contract.DecodeEvent(it)
		if err == nil && strings.HasPrefix(e.EventType, "Bureau") {
			r.BureauRecords = append(r.BureauRecords, e)
		}
		return e, err
	}
	err := s.eachItem(ctx, t, dk, func(it kit.Item) error {
		r.Items++
		parsed, perr := keys.Parse(keys.SK, skOf(it))
		if perr != nil || len(parsed.Parts) == 0 {
			r.Other = append(r.Other, strip(it))
			return nil
		}
		head := parsed.Parts[0]
		switch head.Prefix {
		case "PROFILE":
			p, err := s.reportProfile(ctx, t, it)
			if err != nil {
				return err
			}
			r.Profile = p
		case "CONTACT":
			r.Contacts = append(r.Contacts, strip(it))
		case "LIMIT":
			r.ContactCounters = append(r.ContactCounters, strip(it))
		case "EV":
			e, err := event(it)
			if err != nil {
				return err
			}
			r.Events = append(r.Events, e)
		case "CT":
			c := contractOf(head.Fields["contractId"])
			if len(parsed.Parts) == 1 {
				c.Header = strip(it)
				return nil
			}
			switch parsed.Parts[1].Prefix {
			case "IN":
				c.Installments = append(c.Installments, strip(it))
			case "AG":
				c.Agreements = append(c.Agreements, strip(it))
			case "CHG":
				c.Charges = append(c.Charges, strip(it))
			case "DSP":
				c.Disputes = append(c.Disputes, strip(it))
			case "PROMISE":
				c.Promises = append(c.Promises, strip(it))
			case "EV":
				e, err := event(it)
				if err != nil {
					return err
				}
				c.Events = append(c.Events, e)
			default:
				r.Other = append(r.Other, strip(it))
			}
		default:
			r.Other = append(r.Other, strip(it))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if r.Profile == nil {
		return nil, errDebtorNotFound
	}
	return r, nil
}

// reportProfile opens the PROFILE for the report; an erased one reports
// what is left of it (no personal field).
func (s *Service) reportProfile(ctx context.Context, t *tenant.Tenant, it kit.Item) (*ReportProfile, error) {
	var rec profileItem
	if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
		return nil, fmt.Errorf("decode profile: %w", err)
	}
	out := &ReportProfile{DocumentType: rec.DocumentType, MaskedDocument: rec.MaskedDocument, UF: rec.UF, OptOut: rec.OptOut,
		KeyVersion: rec.KeyVersion, CreatedAt: rec.CreatedAt, ErasedAt: rec.ErasedAt}
	if rec.ErasedAt != "" {
		return out, nil
	}
	p, _, err := s.open(ctx, t, it)
	if err != nil {
		return nil, err
	}
	out.Name, out.Phone, out.Email = p.Name, p.Phone, p.Email
	if doc, err := ParseDocument(p.Document); err == nil {
		out.Document = doc.Formatted()
	}
	return out, nil
}

// EraseInput is the optional body of POST /v1/debtors/{dk}/erasure.
type EraseInput struct {
	// Reason is RETENTION_ELAPSED (default: the retention policy must be
	// over) or LEGAL_ORDER (an authority ordered it: the retention period
	// is not waited for, open contracts still refuse).
	Reason string `json:"reason,omitempty"`
}

// Erasure reasons.
const (
	ReasonRetentionElapsed = "RETENTION_ELAPSED"
	ReasonLegalOrder       = "LEGAL_ORDER"
)

// Erased is the answer of an erasure.
type Erased struct {
	DebtorKey     string `json:"debtorKey"`
	ErasedAt      string `json:"erasedAt"`
	EventID       string `json:"eventId,omitempty"`
	AlreadyErased bool   `json:"alreadyErased"`
}

var (
	errOpenContracts = errs.E(errs.Rule, "debtor_has_open_contracts",
		"the debtor has contracts that are not settled or written off: their data are still needed")
	errRetentionRunning = errs.E(errs.Rule, "retention_not_elapsed",
		"the retention period after the debtor's last closed contract and last activity is not over")
)

// closedStatuses are the contract statuses after which nothing more is
// collected.
func closed(status string) bool {
	return status == contract.StatusSettled || status == contract.StatusWrittenOff
}

// lastActivity is the latest instant an item of the partition records:
// its update, event or creation time (fixed-width RFC 3339: they sort).
func lastActivity(it kit.Item, latest string) string {
	for _, a := range []string{"updatedAt", "at", "createdAt", "outcomeAt", "resolvedAt"} {
		if v, ok := it[a].(*types.AttributeValueMemberS); ok && v.Value > latest {
			latest = v.Value
		}
	}
	return latest
}

// Eligibility says whether a debtor's personal data may be erased now.
type Eligibility struct {
	Eligible     bool   `json:"eligible"`
	LastActivity string `json:"lastActivity"`
	EligibleFrom string `json:"eligibleFrom"` // the civil date the retention ends
	OpenCount    int    `json:"openContracts"`
	Erased       bool   `json:"erased"`
}

// eligibility reads the partition once: the contracts' statuses and the
// latest activity.
func (s *Service) eligibility(ctx context.Context, t *tenant.Tenant, dk string, years int) (Eligibility, *profileItem, error) {
	var el Eligibility
	var prof *profileItem
	err := s.eachItem(ctx, t, dk, func(it kit.Item) error {
		sk := skOf(it)
		el.LastActivity = lastActivity(it, el.LastActivity)
		switch {
		case sk == keys.ProfileSK:
			prof = &profileItem{}
			return attributevalue.UnmarshalMap(it, prof)
		case strings.HasPrefix(sk, "CT#") && strings.Count(sk, keys.Sep) == 1:
			if st, ok := it["status"].(*types.AttributeValueMemberS); ok && !closed(st.Value) {
				el.OpenCount++
			}
		}
		return nil
	})
	if err != nil {
		return el, nil, err
	}
	if prof == nil {
		return el, nil, errDebtorNotFound
	}
	el.Erased = prof.ErasedAt != ""
	last, perr := time.Parse(time.RFC3339, el.LastActivity)
	if perr != nil {
		return el, prof, fmt.Errorf("debtor's last activity is not a timestamp")
	}
	from := last.In(t.Location).AddDate(years, 0, 1)
	el.EligibleFrom = from.Format("2006-01-02")
	el.Eligible = el.OpenCount == 0 && t.Today(s.clock.Now()) >= el.EligibleFrom
	return el, prof, nil
}

// Erase eliminates a debtor's personal data (LGPD art. 16): the sealed
// document, name, phone and e-mail, the masked document, the state and
// the opt-outs go from the PROFILE, and the phone's lookup entry with
// them, in one transaction with the
// PersonalDataErased event, conditioned on the profile's version. The
// contracts, instalments, settlements, contacts and events stay: they are
// financial and audit records under the debtor key, which no longer leads
// to a person inside the engine. Erasing twice is no error.
func (s *Service) Erase(ctx context.Context, t *tenant.Tenant, dk string, in EraseInput, actor Actor) (*Erased, error) {
	if err := ValidKey(dk); err != nil {
		return nil, err
	}
	reason := in.Reason
	if reason == "" {
		reason = ReasonRetentionElapsed
	}
	if reason != ReasonRetentionElapsed && reason != ReasonLegalOrder {
		return nil, errs.E(errs.Invalid, "invalid_reason", "reason must be %s or %s", ReasonRetentionElapsed, ReasonLegalOrder)
	}
	ctx = kit.Within(ctx, "debtor.erase")
	ret, err := s.Retention(ctx, t)
	if err != nil {
		return nil, err
	}
	el, prof, err := s.eligibility(ctx, t, dk, ret.YearsAfterClosure)
	if err != nil {
		return nil, err
	}
	if el.Erased {
		return &Erased{DebtorKey: dk, ErasedAt: prof.ErasedAt, AlreadyErased: true}, nil
	}
	if el.OpenCount > 0 {
		return nil, errOpenContracts
	}
	if reason == ReasonRetentionElapsed && !el.Eligible {
		return nil, errRetentionRunning
	}
	now := s.clock.Now()
	at := keys.Timestamp(now)
	id, ev, err := s.audit(ctx, t, dk, EvPersonalDataErased, now, actor, map[string]any{
		"reason": reason, "retentionYears": ret.YearsAfterClosure, "lastActivity": el.LastActivity})
	if err != nil {
		return nil, err
	}
	upd := expression.Remove(expression.Name("pii")).Remove(expression.Name("uf")).Remove(expression.Name(profileOptOutAttr)).
		Remove(expression.Name(profilePhoneAttr)).
		Set(expression.Name("maskedDocument"), expression.Value("")).
		Set(expression.Name("hasPhone"), expression.Value(false)).
		Set(expression.Name("hasEmail"), expression.Value(false)).
		Set(expression.Name("erasedAt"), expression.Value(at)).
		Set(expression.Name("version"), expression.Value(prof.Version+1))
	cond := expression.Name("version").Equal(expression.Value(prof.Version)).And(expression.AttributeNotExists(expression.Name("erasedAt"))).
		And(samePhoneLookup(prof.PhoneLookup))
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	actions := []kit.Action{kit.UpdateAction(kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.ProfileSK}, upd, &cond), kit.PutAction(ev, &notExists)}
	if prof.PhoneLookup != "" {
		// The phone's lookup entry goes with the phone (ADR 0084): nothing
		// leads from a phone to this debtor once erased. The contract-id
		// entries stay with the contracts they index.
		actions = append(actions, phoneLookupDelete(t.ID, prof.PhoneLookup, dk))
	}
	err = s.db(t).Transact(ctx, actions...)
	var tc *kit.TxCanceled
	if errors.As(err, &tc) && tc.Failed(0) {
		// Another erasure won, or the profile changed under us: the
		// caller retries (a second erasure then answers alreadyErased).
		return nil, errs.E(errs.Conflict, "profile_changed", "the debtor's profile changed while it was being erased: try again")
	}
	if err != nil {
		return nil, fmt.Errorf("erase personal data: %w", err)
	}
	return &Erased{DebtorKey: dk, ErasedAt: at, EventID: id}, nil
}

// EraseDueProgress is called after each debtor EraseDue visits.
type EraseDueProgress func(visited, erased int)

// EraseDueResult counts what EraseDue did.
type EraseDueResult struct {
	Visited int `json:"visited"`
	Erased  int `json:"erased"`
	Kept    int `json:"kept"` // open contracts or retention not over
}

// EraseDue erases every debtor of the tenant whose retention is over: a
// maintenance job over the tenant's profiles (GSI3, a keyed Query, never a
// Scan). It is resumable by construction: an erased debtor is skipped at
// the cost of one Query, so an interrupted run is simply run again, and
// the same run after a restore from a backup erases again what the backup
// brought back (docs/adr/0077).
func (s *Service) EraseDue(ctx context.Context, t *tenant.Tenant, actor Actor, progress EraseDueProgress) (EraseDueResult, error) {
	var res EraseDueResult
	ctx = kit.Within(ctx, "debtor.eraseDue")
	ret, err := s.Retention(ctx, t)
	if err != nil {
		return res, err
	}
	q := kit.Query{Index: table.TenantDebtors, Partition: keys.Profiles(t.ID)}
	for cursor := ""; ; {
		page, err := s.db(t).QueryPage(ctx, q, cursor)
		if err != nil {
			return res, err
		}
		for _, it := range page.Items {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			pk, _ := it["PK"].(*types.AttributeValueMemberS)
			if pk == nil {
				continue
			}
			parsed, err := keys.Parse(keys.PK, pk.Value)
			if err != nil || len(parsed.Parts) < 2 {
				continue
			}
			dk := parsed.Parts[1].Fields["debtorKey"]
			res.Visited++
			el, _, err := s.eligibility(ctx, t, dk, ret.YearsAfterClosure)
			switch {
			case errors.Is(err, errDebtorNotFound):
				continue
			case err != nil:
				return res, err
			case el.Erased:
			case !el.Eligible:
				res.Kept++
			default:
				if _, err := s.Erase(ctx, t, dk, EraseInput{}, actor); err != nil {
					return res, err
				}
				res.Erased++
			}
			if progress != nil {
				progress(res.Visited, res.Erased)
			}
		}
		if page.Next == "" {
			return res, nil
		}
		cursor = page.Next
	}
}
