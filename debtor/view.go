package debtor

import (
	"context"
	"sort"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/tenant"
)

// ProfileView is the debtor's profile as operators see it: masked.
type ProfileView struct {
	DocumentType   string `json:"documentType"`
	MaskedDocument string `json:"maskedDocument"`
	HasPhone       bool   `json:"hasPhone"`
	HasEmail       bool   `json:"hasEmail"`
	HasAddress     bool   `json:"hasAddress"`
	UF             string `json:"uf,omitempty"`
	// TimeZone is the debtor's zone (contact windows, the contact
	// counter's date): the profile's own, else its UF's; empty, the
	// tenant's (ADR 0064). TimeZoneExplicit says it was given.
	TimeZone         string   `json:"timeZone,omitempty"`
	TimeZoneExplicit bool     `json:"timeZoneExplicit"`
	OptOut           []string `json:"optOut,omitempty"`
	KeyVersion       int      `json:"keyVersion"`
	// Version is what a PATCH of the profile is conditioned on.
	Version   int    `json:"version"`
	CreatedAt string `json:"createdAt"`
}

// ContractView is a contract on a page of the 360 view: the header's
// facts (always: a page never shows a contract without them) and the
// children of it found on the page.
type ContractView struct {
	contract.Facts
	Installments []contract.InstallmentView `json:"installments"`
	Charges      []map[string]any           `json:"charges"`
	Promises     []map[string]any           `json:"promises"`
	Agreements   []map[string]any           `json:"agreements"`
	Events       []contract.EventView       `json:"events"` // latest first
}

// View360 is one page of a debtor's 360 view (AP01): everything in the
// debtor's item collection, in one Query. The collection is read from the
// PROFILE down (descending sort key), so the first page carries the
// profile, the contracts and the latest contacts; further pages (nextCursor)
// continue with older contacts. Contracts split over pages merge by
// contractId.
type View360 struct {
	DebtorKey       string               `json:"debtorKey"`
	Today           string               `json:"today"`
	Profile         *ProfileView         `json:"profile"`
	Contracts       []*ContractView      `json:"contracts"`
	Contacts        []map[string]any     `json:"contacts"`        // latest first
	ContactCounters []map[string]any     `json:"contactCounters"` // latest date first
	Events          []contract.EventView `json:"events"`          // debtor-level, latest first
	NextCursor      *string              `json:"nextCursor"`
}

// DefaultViewLimit is the 360 view's page size when ?limit= is absent.
const DefaultViewLimit = 500

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
		ContactCounters: []map[string]any{}, Events: []contract.EventView{}, NextCursor: cursorPtr(page.Next)}
	byID := map[string]*ContractView{}
	headed := map[string]bool{}
	headers := map[string]contract.Header{}
	insts := map[string][]contract.Installment{}
	contractOf := func(id string) *ContractView {
		c := byID[id]
		if c == nil {
			c = &ContractView{Facts: contract.Facts{ContractID: id}, Installments: []contract.InstallmentView{}, Charges: []map[string]any{},
				Promises: []map[string]any{}, Agreements: []map[string]any{}, Events: []contract.EventView{}}
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
			if p.MovedTo != "" {
				return nil, ErrMoved
			}
			v.Profile = profileView(&p)
		case "CONTACT":
			v.Contacts = append(v.Contacts, strip(it))
		case "LIMIT":
			v.ContactCounters = append(v.ContactCounters, strip(it))
		case "EV":
			e, err := contract.DecodeEvent(it)
			if err != nil {
				return nil, err
			}
			v.Events = append(v.Events, e)
		case "CT":
			id := head.Fields["contractId"]
			c := contractOf(id)
			if len(parsed.Parts) == 1 {
				var h contract.Header
				if err := attributevalue.UnmarshalMap(it, &h); err != nil {
					return nil, err
				}
				c.Facts, headed[id], headers[id] = h.View(today, cal.In(h.UF)), true, h
				continue
			}
			switch parsed.Parts[1].Prefix {
			case "IN":
				var in contract.Installment
				if err := attributevalue.UnmarshalMap(it, &in); err != nil {
					return nil, err
				}
				// Viewed once the header is known: its state's calendar
				// decides the payable dates (the header sorts after them).
				insts[id] = append(insts[id], in)
			case "EV":
				e, err := contract.DecodeEvent(it)
				if err != nil {
					return nil, err
				}
				c.Events = append(c.Events, e)
			case "CHG":
				c.Charges = append(c.Charges, strip(it))
			case "PROMISE":
				c.Promises = append(c.Promises, strip(it))
			case "AG":
				c.Agreements = append(c.Agreements, strip(it))
			}
		}
	}
	// Read from the PROFILE down, a contract's header sorts after its
	// children: a page that ends inside a contract has its children but
	// not its header. One GetItem per such contract (at most one a page:
	// only the last contract on it can be cut) fills in the facts.
	for id, c := range byID {
		if headed[id] {
			continue
		}
		it, err := s.db(t).Get(ctx, kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.Contract(id)}, false)
		if err != nil {
			return nil, err
		}
		if it == nil {
			continue // an abandoned chunked creation: instalments without a header (ADR 0007)
		}
		var h contract.Header
		if err := attributevalue.UnmarshalMap(it, &h); err != nil {
			return nil, err
		}
		c.Facts, headers[id] = h.View(today, cal.In(h.UF)), h
	}
	for id, c := range byID {
		ccal := cal.In(headers[id].UF)
		for _, in := range insts[id] {
			c.Installments = append(c.Installments, in.View(today, ccal))
		}
	}
	// With every instalment of a contract on the page, its delinquency is
	// shown as of today even if the agenda has not run yet.
	for id, c := range byID {
		h, ok := headers[id]
		if !ok || len(insts[id]) != h.InstallmentCount {
			continue
		}
		full := &contract.Contract{Header: h, Installments: insts[id]}
		sort.Slice(full.Installments, func(i, j int) bool { return full.Installments[i].Seq < full.Installments[j].Seq })
		c.Facts = full.FactsOn(today, cal.In(h.UF))
	}
	sort.Slice(v.Contracts, func(i, j int) bool { return v.Contracts[i].ContractID < v.Contracts[j].ContractID })
	for _, c := range v.Contracts {
		sort.Slice(c.Installments, func(i, j int) bool { return c.Installments[i].Seq < c.Installments[j].Seq })
	}
	return v, nil
}
