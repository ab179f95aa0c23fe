package contract

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// InstallmentView is an instalment as answers show it: what was paid by
// component, and its lateness derived from today (never a stored status).
type InstallmentView struct {
	Seq                   int    `json:"seq"`
	OriginalDueDate       string `json:"originalDueDate"`
	DueDate               string `json:"dueDate"`
	PayableDate           string `json:"payableDate"` // the due date moved to the next business day
	PrincipalCents        int64  `json:"principalCents"`
	InterestCents         int64  `json:"interestCents"`
	FineCents             int64  `json:"fineCents"`
	LateInterestCents     int64  `json:"lateInterestCents"`
	PaidCents             int64  `json:"paidCents"` // principal + interest paid
	PrincipalPaidCents    int64  `json:"principalPaidCents"`
	InterestPaidCents     int64  `json:"interestPaidCents"`
	FinePaidCents         int64  `json:"finePaidCents"`
	LateInterestPaidCents int64  `json:"lateInterestPaidCents"`
	OutstandingCents      int64  `json:"outstandingCents"` // principal + interest − paid
	Status                string `json:"status"`           // OPEN, OVERDUE (derived), PAID, RENEGOTIATED
	Late                  bool   `json:"late"`             // open and past its payable date today
	DaysPastDue           int    `json:"daysPastDue"`      // today − payable date when late
	Version               int    `json:"version"`
}

// View is the instalment on today.
func (in *Installment) View(today calendar.Date, cal *calendar.Calendar) InstallmentView {
	v := InstallmentView{Seq: in.Seq, OriginalDueDate: in.OriginalDueDate, DueDate: in.DueDate, PrincipalCents: in.PrincipalCents,
		InterestCents: in.InterestCents, FineCents: in.FineCents, LateInterestCents: in.LateInterestCents, PaidCents: in.PaidCents,
		InterestPaidCents: in.InterestPaidCents, PrincipalPaidCents: in.PaidCents - in.InterestPaidCents,
		FinePaidCents: in.FinePaidCents, LateInterestPaidCents: in.LateInterestPaidCents,
		OutstandingCents: in.PrincipalCents + in.InterestCents - in.PaidCents, Status: in.Status, Version: in.Version}
	due := in.Due()
	v.PayableDate = cal.Adjust(due).String()
	if in.Open() {
		v.Status = InstOpen
		if cal.IsOverdue(due, today) {
			v.Status, v.Late, v.DaysPastDue = InstOverdue, true, DaysPastDue(in.DueDate, today, cal)
		}
	}
	return v
}

// EventView is an audit event as answers show it.
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

// DecodeEvent reads an event item into its view.
func DecodeEvent(it kit.Item) (EventView, error) {
	var e Event
	if err := attributevalue.UnmarshalMap(it, &e); err != nil {
		return EventView{}, err
	}
	return EventView{EventID: e.EventID, EventType: e.EventType, ContractID: e.ContractID, Seq: e.Seq, At: e.At,
		ActorRole: e.ActorRole, RequestID: e.RequestID, Details: e.Details}, nil
}

// Facts is what a header shows of a contract: the stored facts and what
// is derived from them on today.
type Facts struct {
	ContractID           string  `json:"contractId"`
	ProductCode          string  `json:"productCode"`
	Currency             string  `json:"currency"`
	Status               string  `json:"status"`
	StatusReason         string  `json:"statusReason"`
	OldestOverdueDueDate *string `json:"oldestOverdueDueDate"`
	DaysPastDue          int     `json:"daysPastDue"` // derived: today − payable date of the oldest overdue instalment
	Bucket               *string `json:"bucket"`
	OutstandingCents     int64   `json:"outstandingCents"`
	CreditCents          int64   `json:"creditCents"`
	LastPaymentAt        *string `json:"lastPaymentAt"`
	NextAction           *string `json:"nextAction"`
	NextActionDate       *string `json:"nextActionDate"`
	ChargesPolicy        string  `json:"chargesPolicy"`
	DunningPolicy        string  `json:"dunningPolicy"`
	Shard                int     `json:"shard"`
	Version              int     `json:"version"`
	UpdatedAt            string  `json:"updatedAt"`
}

// View is the header's facts on today.
func (h *Header) View(today calendar.Date, cal *calendar.Calendar) Facts {
	return Facts{ContractID: h.ContractID, ProductCode: h.ProductCode, Currency: h.Currency, Status: h.Status, StatusReason: h.StatusReason,
		OldestOverdueDueDate: ptr(h.OldestOverdueDueDate), DaysPastDue: h.DaysPastDue(today, cal), Bucket: ptr(h.Bucket),
		OutstandingCents: h.OutstandingCents, CreditCents: h.CreditCents, LastPaymentAt: ptr(h.LastPaymentAt),
		NextAction: ptr(h.NextAction), NextActionDate: ptr(h.NextActionDate), ChargesPolicy: h.ChargesPolicy,
		DunningPolicy: h.DunningPolicy, Shard: h.Shard, Version: h.Version, UpdatedAt: h.UpdatedAt}
}

func cursorPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// InstallmentPage is a page of AP02.
type InstallmentPage struct {
	Items      []InstallmentView `json:"items"`
	NextCursor *string           `json:"nextCursor"`
}

// statusFilter maps ?status= to the derived statuses it selects.
func statusFilter(s string) (func(InstallmentView) bool, error) {
	switch strings.ToLower(s) {
	case "", "all":
		return func(InstallmentView) bool { return true }, nil
	case "open":
		return func(v InstallmentView) bool { return v.Status == InstOpen || v.Status == InstOverdue }, nil
	case "overdue":
		return func(v InstallmentView) bool { return v.Late }, nil
	case "paid":
		return func(v InstallmentView) bool { return v.Status == InstPaid }, nil
	case "renegotiated":
		return func(v InstallmentView) bool { return v.Status == InstRenegotiated }, nil
	case "cancelled":
		return func(v InstallmentView) bool { return v.Status == InstCancelled }, nil
	}
	return nil, errs.E(errs.Invalid, "invalid_status", "status must be open, overdue, paid, renegotiated, cancelled or all")
}

// Installments is AP02: one Query on begins_with CT#<c>#IN#, oldest first,
// optionally only some (filtered on the page by the status derived from
// today: an instalment that fell due after signing is overdue here the
// day after its payable date). 404 when the contract has no instalments,
// i.e. does not exist.
func (s *Service) Installments(ctx context.Context, t *tenant.Tenant, dk, contractID, status string, limit int32, cursor string) (*InstallmentPage, error) {
	if !keys.ValidDebtorKey(dk) {
		return nil, errInvalidDebtorKey
	}
	if !keys.ValidIdentifier(contractID) {
		return nil, errInvalidContractID
	}
	keep, err := statusFilter(status)
	if err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "contract.installments")
	page, err := s.db(t).QueryPage(ctx, kit.Query{Partition: keys.Debtor(t.ID, dk), Sort: kit.BeginsWith(keys.InstallmentsPrefix(contractID)), Limit: limit}, cursor)
	if err != nil {
		return nil, err
	}
	if cursor == "" && len(page.Items) == 0 {
		return nil, errNotFound
	}
	cal := t.Calendar()
	today := calendar.Today(s.clock.Now(), t.Location)
	out := &InstallmentPage{Items: []InstallmentView{}, NextCursor: cursorPtr(page.Next)}
	for _, it := range page.Items {
		var in Installment
		if err := attributevalue.UnmarshalMap(it, &in); err != nil {
			return nil, err
		}
		if v := in.View(today, cal); keep(v) {
			out.Items = append(out.Items, v)
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
	if !keys.ValidDebtorKey(dk) {
		return nil, errInvalidDebtorKey
	}
	if !keys.ValidIdentifier(contractID) {
		return nil, errInvalidContractID
	}
	seq, err := strconv.Atoi(seqParam)
	if err != nil || seq < 0 || seq > MaxInstallments || len(seqParam) > 3 {
		return nil, errs.E(errs.Invalid, "invalid_seq", "seq must be 0-%d (0: the contract itself)", MaxInstallments)
	}
	ctx = kit.Within(ctx, "contract.events")
	page, err := s.db(t).QueryPage(ctx, kit.Query{Partition: keys.Debtor(t.ID, dk), Sort: kit.BeginsWith(keys.EventsPrefix(contractID, seq)), Limit: limit}, cursor)
	if err != nil {
		return nil, err
	}
	if cursor == "" && seq == 0 && len(page.Items) == 0 {
		return nil, errNotFound
	}
	out := &EventPage{Items: []EventView{}, NextCursor: cursorPtr(page.Next)}
	for _, it := range page.Items {
		e, err := DecodeEvent(it)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, e)
	}
	return out, nil
}
