package debtor

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// ProfileView is the debtor's profile as operators see it: masked.
type ProfileView struct {
	DocumentType   string   `json:"documentType"`
	MaskedDocument string   `json:"maskedDocument"`
	HasPhone       bool     `json:"hasPhone"`
	HasEmail       bool     `json:"hasEmail"`
	UF             string   `json:"uf,omitempty"`
	OptOut         []string `json:"optOut,omitempty"`
	KeyVersion     int      `json:"keyVersion"`
	CreatedAt      string   `json:"createdAt"`
}

// InstallmentView is an instalment with what is derived on read.
type InstallmentView struct {
	Seq               int    `json:"seq"`
	OriginalDueDate   string `json:"originalDueDate"`
	DueDate           string `json:"dueDate"`
	PrincipalCents    int64  `json:"principalCents"`
	InterestCents     int64  `json:"interestCents"`
	FineCents         int64  `json:"fineCents"`
	LateInterestCents int64  `json:"lateInterestCents"`
	PaidCents         int64  `json:"paidCents"`
	OutstandingCents  int64  `json:"outstandingCents"` // principal + interest − paid
	Status            string `json:"status"`
	Late              bool   `json:"late"`        // open and past its (business-day adjusted) due date today
	DaysPastDue       int    `json:"daysPastDue"` // today − dueDate when late
	Version           int    `json:"version"`
}

// EventView is an audit event.
type EventView struct {
	EventID    string         `json:"eventId"`
	EventType  string         `json:"eventType"`
	ContractID string         `json:"contractId,omitempty"`
	Seq        *int           `json:"seq,omitempty"`
	At         string         `json:"at"`
	ActorRole  string         `json:"actorRole"`
	RequestID  string         `json:"requestId,omitempty"`
	Details    map[string]any `json:"details,omitempty"`
}

// ContractView is a contract header with its children found on the page.
type ContractView struct {
	ContractID           string            `json:"contractId"`
	ProductCode          string            `json:"productCode"`
	Currency             string            `json:"currency"`
	Status               string            `json:"status"`
	StatusReason         string            `json:"statusReason"`
	OldestOverdueDueDate *string           `json:"oldestOverdueDueDate"`
	DaysPastDue          int               `json:"daysPastDue"` // derived: today − oldestOverdueDueDate
	Bucket               *string           `json:"bucket"`
	OutstandingCents     int64             `json:"outstandingCents"`
	NextAction           *string           `json:"nextAction"`
	NextActionDate       *string           `json:"nextActionDate"`
	ChargesPolicy        string            `json:"chargesPolicy"`
	DunningPolicy        string            `json:"dunningPolicy"`
	Shard                int               `json:"shard"`
	Version              int               `json:"version"`
	UpdatedAt            string            `json:"updatedAt"`
	HeaderOnPage         bool              `json:"headerOnPage"` // false: only children of it are on this page
	Installments         []InstallmentView `json:"installments"`
	Promises             []map[string]any  `json:"promises"`
	Agreements           []map[string]any  `json:"agreements"`
	Events               []EventView       `json:"events"` // latest first
}

// View360 is one page of a debtor's 360 view (AP01): everything in the
// debtor's item collection, in one Query. The collection is read from the
// PROFILE down (descending sort key), so the first page carries the
// profile, the contracts and the latest contacts; further pages (nextCursor)
// continue with older contacts. Contracts split over pages merge by
// contractId.
type View360 struct {
	DebtorKey       string           `json:"debtorKey"`
	Today           string           `json:"today"`
	Profile         *ProfileView     `json:"profile"`
	Contracts       []*ContractView  `json:"contracts"`
	Contacts        []map[string]any `json:"contacts"`        // latest first
	ContactCounters []map[string]any `json:"contactCounters"` // latest date first
	Events          []EventView      `json:"events"`          // debtor-level, latest first
	NextCursor      *string          `json:"nextCursor"`
}

// Limits of a page.
const (
	DefaultViewLimit = 500
	DefaultListLimit = 100
	MaxLimit         = 1000
)

// ParseLimit reads ?limit= (1..MaxLimit, def when empty).
func ParseLimit(s string, def int) (int32, error) {
	if s == "" {
		return int32(def), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxLimit {
		return 0, errs.E(errs.Invalid, "invalid_limit", "limit must be 1-%d", MaxLimit)
	}
	return int32(n), nil
}

func cursorPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// strip drops the keys and index attributes of an item shown as is.
func strip(it kit.Item) map[string]any {
	out := map[string]any{}
	_ = attributevalue.UnmarshalMap(it, &out)
	for _, k := range []string{"PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK", "GSI3PK"} {
		delete(out, k)
	}
	return out
}

func skOf(it kit.Item) string {
	if s, ok := it["SK"].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func (s *Service) installmentView(it installmentItem, today calendar.Date, cal *calendar.Calendar) InstallmentView {
	v := InstallmentView{Seq: it.Seq, OriginalDueDate: it.OriginalDueDate, DueDate: it.DueDate, PrincipalCents: it.PrincipalCents,
		InterestCents: it.InterestCents, FineCents: it.FineCents, LateInterestCents: it.LateInterestCents, PaidCents: it.PaidCents,
		OutstandingCents: it.PrincipalCents + it.InterestCents - it.PaidCents, Status: it.Status, Version: it.Version}
	if d, err := calendar.Parse(it.DueDate); err == nil && isOpen(it.Status) && cal.IsOverdue(d, today) {
		v.Late, v.DaysPastDue = true, today.Sub(d)
	}
	return v
}

func isOpen(status string) bool { return status == InstOpen || status == InstOverdue }

func eventView(it kit.Item) (EventView, error) {
	var e eventItem
	if err := attributevalue.UnmarshalMap(it, &e); err != nil {
		return EventView{}, err
	}
	return EventView{EventID: e.EventID, EventType: e.EventType, ContractID: e.ContractID, Seq: e.Seq, At: e.At,
		ActorRole: e.ActorRole, RequestID: e.RequestID, Details: e.Details}, nil
}

// View is AP01: one Query on the debtor's partition, no filter, assembled
// into the 360 document. 404 when the debtor has no items at all.
func (s *Service) View(ctx context.Context, t *tenant.Tenant, dk string, limit int32, cursor string) (*View360, error) {
	if err := ValidKey(dk); err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "debtor.view360")
	page, err := s.db(t).QueryPage(ctx, kit.Query{Partition: keys.Debtor(t.ID, dk), Descending: true, Limit: limit}, cursor)
	if err != nil {
		return nil, err
	}
	if cursor == "" && len(page.Items) == 0 {
		return nil, errDebtorNotFound
	}
	cal := s.calendarOf(t)
	today := calendar.Today(s.clock.Now(), t.Location)
	v := &View360{DebtorKey: dk, Today: today.String(), Contracts: []*ContractView{}, Contacts: []map[string]any{},
		ContactCounters: []map[string]any{}, Events: []EventView{}, NextCursor: cursorPtr(page.Next)}
	byID := map[string]*ContractView{}
	contract := func(id string) *ContractView {
		c := byID[id]
		if c == nil {
			c = &ContractView{ContractID: id, Installments: []InstallmentView{}, Promises: []map[string]any{},
				Agreements: []map[string]any{}, Events: []EventView{}}
			byID[id] = c
			v.Contracts = append(v.Contracts, c)
		}
		return c
	}
	for _, it := range page.Items {
		parsed, err := keys.Parse(keys.SK, skOf(it))
		if err != nil || len(parsed.Parts) == 0 {
			continue // a shape this version does not know
		}
		head := parsed.Parts[0]
		switch head.Prefix {
		case "PROFILE":
			var p profileItem
			if err := attributevalue.UnmarshalMap(it, &p); err != nil {
				return nil, err
			}
			v.Profile = &ProfileView{DocumentType: p.DocumentType, MaskedDocument: p.MaskedDocument, HasPhone: p.HasPhone,
				HasEmail: p.HasEmail, UF: p.UF, OptOut: p.OptOut, KeyVersion: p.KeyVersion, CreatedAt: p.CreatedAt}
		case "CONTACT":
			v.Contacts = append(v.Contacts, strip(it))
		case "LIMIT":
			v.ContactCounters = append(v.ContactCounters, strip(it))
		case "EV":
			e, err := eventView(it)
			if err != nil {
				return nil, err
			}
			v.Events = append(v.Events, e)
		case "CT":
			c := contract(head.Fields["contractId"])
			if len(parsed.Parts) == 1 {
				var h contractItem
				if err := attributevalue.UnmarshalMap(it, &h); err != nil {
					return nil, err
				}
				fillHeader(c, h, today)
				continue
			}
			switch parsed.Parts[1].Prefix {
			case "IN":
				var in installmentItem
				if err := attributevalue.UnmarshalMap(it, &in); err != nil {
					return nil, err
				}
				c.Installments = append(c.Installments, s.installmentView(in, today, cal))
			case "EV":
				e, err := eventView(it)
				if err != nil {
					return nil, err
				}
				c.Events = append(c.Events, e)
			case "PROMISE":
				c.Promises = append(c.Promises, strip(it))
			case "AG":
				c.Agreements = append(c.Agreements, strip(it))
			}
		}
	}
	sort.Slice(v.Contracts, func(i, j int) bool { return v.Contracts[i].ContractID < v.Contracts[j].ContractID })
	for _, c := range v.Contracts {
		sort.Slice(c.Installments, func(i, j int) bool { return c.Installments[i].Seq < c.Installments[j].Seq })
	}
	return v, nil
}

func fillHeader(c *ContractView, h contractItem, today calendar.Date) {
	c.HeaderOnPage = true
	c.ProductCode, c.Currency, c.Status, c.StatusReason = h.ProductCode, h.Currency, h.Status, h.StatusReason
	c.OldestOverdueDueDate, c.Bucket = ptr(h.OldestOverdueDueDate), ptr(h.Bucket)
	c.OutstandingCents, c.NextAction, c.NextActionDate = h.OutstandingCents, ptr(h.NextAction), ptr(h.NextActionDate)
	c.ChargesPolicy, c.DunningPolicy, c.Shard, c.Version, c.UpdatedAt = h.ChargesPolicy, h.DunningPolicy, h.Shard, h.Version, h.UpdatedAt
	c.DaysPastDue = DaysPastDue(h.OldestOverdueDueDate, today)
}

// DaysPastDue derives days past due from the stored fact: today −
// oldestOverdueDueDate, 0 when the contract is current.
func DaysPastDue(oldestOverdueDueDate string, today calendar.Date) int {
	d, err := calendar.Parse(oldestOverdueDueDate)
	if err != nil {
		return 0
	}
	return max(today.Sub(d), 0)
}

// InstallmentPage is a page of AP02.
type InstallmentPage struct {
	Items      []InstallmentView `json:"items"`
	NextCursor *string           `json:"nextCursor"`
}

// statusFilter maps ?status= to the stored statuses it selects.
func statusFilter(s string) (func(string) bool, error) {
	switch strings.ToLower(s) {
	case "", "all":
		return func(string) bool { return true }, nil
	case "open":
		return isOpen, nil
	case "overdue":
		return func(st string) bool { return st == InstOverdue }, nil
	case "paid":
		return func(st string) bool { return st == InstPaid }, nil
	case "renegotiated":
		return func(st string) bool { return st == InstRenegotiated }, nil
	}
	return nil, errs.E(errs.Invalid, "invalid_status", "status must be open, overdue, paid, renegotiated or all")
}

var errContractNotFound = errs.E(errs.NotFound, "contract_not_found", "contract not found")

// Installments is AP02: one Query on begins_with CT#<c>#IN#, oldest first,
// optionally only the open ones (filtered on the page: the key range is
// the contract's own instalments, at most 999). 404 when the contract has
// no instalments, i.e. does not exist.
func (s *Service) Installments(ctx context.Context, t *tenant.Tenant, dk, contractID, status string, limit int32, cursor string) (*InstallmentPage, error) {
	if err := ValidKey(dk); err != nil {
		return nil, err
	}
	if !keys.ValidIdentifier(contractID) {
		return nil, errs.E(errs.Invalid, "invalid_contract_id", "contractId must be 1-64 of A-Z a-z 0-9 - _ .")
	}
	keep, err := statusFilter(status)
	if err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "debtor.installments")
	page, err := s.db(t).QueryPage(ctx, kit.Query{Partition: keys.Debtor(t.ID, dk), Sort: kit.BeginsWith(keys.InstallmentsPrefix(contractID)), Limit: limit}, cursor)
	if err != nil {
		return nil, err
	}
	if cursor == "" && len(page.Items) == 0 {
		return nil, errContractNotFound
	}
	cal := s.calendarOf(t)
	today := calendar.Today(s.clock.Now(), t.Location)
	out := &InstallmentPage{Items: []InstallmentView{}, NextCursor: cursorPtr(page.Next)}
	for _, it := range page.Items {
		var in installmentItem
		if err := attributevalue.UnmarshalMap(it, &in); err != nil {
			return nil, err
		}
		if keep(in.Status) {
			out.Items = append(out.Items, s.installmentView(in, today, cal))
		}
	}
	sort.SliceStable(out.Items, func(i, j int) bool {
		a, b := out.Items[i], out.Items[j]
		return a.DueDate < b.DueDate || a.DueDate == b.DueDate && a.Seq < b.Seq
	})
	return out, nil
}

// EventPage is a page of AP09.
type EventPage struct {
	Items      []EventView `json:"items"`
	NextCursor *string     `json:"nextCursor"`
}

// Events is AP09: the audit trail of one instalment (seq 0: the contract
// itself), one Query on begins_with CT#<c>#EV#<seq3>#, oldest first. 404 for
// seq 0 with no events (every contract has its creation event).
func (s *Service) Events(ctx context.Context, t *tenant.Tenant, dk, contractID, seqParam string, limit int32, cursor string) (*EventPage, error) {
	if err := ValidKey(dk); err != nil {
		return nil, err
	}
	if !keys.ValidIdentifier(contractID) {
		return nil, errs.E(errs.Invalid, "invalid_contract_id", "contractId must be 1-64 of A-Z a-z 0-9 - _ .")
	}
	seq, err := strconv.Atoi(seqParam)
	if err != nil || seq < 0 || seq > MaxInstallments || len(seqParam) > 3 {
		return nil, errs.E(errs.Invalid, "invalid_seq", "seq must be 0-%d (0: the contract itself)", MaxInstallments)
	}
	ctx = kit.Within(ctx, "debtor.events")
	page, err := s.db(t).QueryPage(ctx, kit.Query{Partition: keys.Debtor(t.ID, dk), Sort: kit.BeginsWith(keys.EventsPrefix(contractID, seq)), Limit: limit}, cursor)
	if err != nil {
		return nil, err
	}
	if cursor == "" && seq == 0 && len(page.Items) == 0 {
		return nil, errContractNotFound
	}
	out := &EventPage{Items: []EventView{}, NextCursor: cursorPtr(page.Next)}
	for _, it := range page.Items {
		e, err := eventView(it)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, e)
	}
	return out, nil
}
