// Package portfolio answers AP05, the supervisor's portfolio: the
// contracts of one delinquency bucket, largest balance first, one Query on
// the sparse GSI2 partition of the bucket with the kit's signed cursor.
// Days past due are derived on every read from the stored
// oldestOverdueDueDate, never stored (docs/design.md#gsi2-portfolio).
// Bucket counts and balances are never computed by reading the bucket:
// they come from counters kept from the stream, shown only when present
// (ADR 0028).
package portfolio

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/contract"
	"lastro/contract/regua"
	"lastro/tenant"
)

// Buckets are the portfolio's partitions, in order of delinquency.
var Buckets = []string{regua.BucketD001_030, regua.BucketD031_060, regua.BucketD061_090, regua.BucketD091_PLUS}

// lowerBound is the first day past due of each bucket: the day a contract
// crosses into it.
var lowerBound = map[string]int{regua.BucketD001_030: 1, regua.BucketD031_060: 31, regua.BucketD061_090: 61, regua.BucketD091_PLUS: 91}

// Service answers the portfolio.
type Service struct {
	kit     *kit.Kit
	tenants *tenant.Service
	clock   clock.Clock
}

// Deps are what the service needs.
type Deps struct {
	Kit     *kit.Kit
	Tenants *tenant.Service
	Clock   clock.Clock
}

// NewService returns the portfolio service.
func NewService(d Deps) *Service { return &Service{kit: d.Kit, tenants: d.Tenants, clock: d.Clock} }

// Params select a page of the portfolio.
type Params struct {
	Bucket string // one of Buckets; required
	Limit  int32  // page size (items evaluated, see CrossedSince)
	Cursor string // "" for the first page
	// CrossedSince, when set, keeps only the contracts that crossed into
	// the bucket on or after this date (see crossedSinceDue). It is a
	// filter inside the bucket's partition: the page still reads Limit
	// entries, so it may carry fewer items, and an empty page with a
	// cursor is not the end.
	CrossedSince string
}

// Item is one contract of the portfolio, from the index entry alone.
type Item struct {
	ContractID           string  `json:"contractId"`
	DebtorKey            string  `json:"debtorKey"`
	ProductCode          string  `json:"productCode"`
	OutstandingCents     int64   `json:"outstandingCents"`
	OldestOverdueDueDate string  `json:"oldestOverdueDueDate"`
	PayableDate          string  `json:"payableDate"` // oldestOverdueDueDate moved to the next business day
	DaysPastDue          int     `json:"daysPastDue"` // derived: today − payableDate
	LastContactAt        *string `json:"lastContactAt"`
}

// Summary is a bucket's counters as the stream consumer keeps them.
type Summary struct {
	Contracts        int64  `json:"contracts"`
	OutstandingCents int64  `json:"outstandingCents"`
	UpdatedAt        string `json:"updatedAt"`
}

// Page is one page of the portfolio. Summary is present only on a first
// page, and only when the bucket's counters exist (ADR 0028).
type Page struct {
	Bucket     string   `json:"bucket"`
	Today      string   `json:"today"` // the tenant's civil date daysPastDue is counted to
	Items      []Item   `json:"items"`
	NextCursor *string  `json:"nextCursor"`
	Summary    *Summary `json:"summary,omitempty"`
}

// entry is the GSI2 projection of a contract header.
type entry struct {
	ContractID           string `dynamodbav:"contractId"`
	DebtorKey            string `dynamodbav:"debtorKey"`
	ProductCode          string `dynamodbav:"productCode"`
	OutstandingCents     int64  `dynamodbav:"outstandingCents"`
	OldestOverdueDueDate string `dynamodbav:"oldestOverdueDueDate"`
	LastContactAt        string `dynamodbav:"lastContactAt"`
}

// summaryItem is the counters item, PK T#<t>, SK BSUM#<bucket>.
type summaryItem struct {
	Contracts        int64  `dynamodbav:"contracts"`
	OutstandingCents int64  `dynamodbav:"outstandingCents"`
	UpdatedAt        string `dynamodbav:"updatedAt"`
}

var (
	errBucket       = errs.E(errs.Invalid, "invalid_bucket", "bucket must be one of D001_030, D031_060, D061_090, D091_PLUS")
	errCrossedSince = errs.E(errs.Invalid, "invalid_crossed_since", "crossedSince must be a date YYYY-MM-DD")
)

// ValidBucket reports whether b names a bucket.
func ValidBucket(b string) bool {
	_, ok := lowerBound[b]
	return ok
}

// Page reads one page of a bucket, largest balance first: one Query on
// GSI2 (eventually consistent, as every index read), plus, on a first
// page, one GetItem of the bucket's counters.
func (s *Service) Page(ctx context.Context, t *tenant.Tenant, p Params) (*Page, error) {
	if !ValidBucket(p.Bucket) {
		return nil, errBucket
	}
	cal := t.Calendar()
	today := calendar.Today(s.clock.Now(), t.Location)
	q := kit.Query{Index: table.Portfolio, Partition: keys.Bucket(t.ID, p.Bucket), Descending: true, Limit: p.Limit}
	if p.CrossedSince != "" {
		since, err := calendar.Parse(p.CrossedSince)
		if err != nil {
			return nil, errCrossedSince
		}
		due := crossedSinceDue(since, lowerBound[p.Bucket], cal)
		f := expression.Name("oldestOverdueDueDate").GreaterThanEqual(expression.Value(due.String()))
		q.Filter, q.Tag = &f, "crossedSince="+since.String()
	}
	ctx = kit.Within(ctx, "portfolio.page")
	db := s.kit.Tenant(t.ID, t.CursorKey())
	page, err := db.QueryPage(ctx, q, p.Cursor)
	if err != nil {
		return nil, err
	}
	out := &Page{Bucket: p.Bucket, Today: today.String(), Items: make([]Item, 0, len(page.Items))}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	for _, it := range page.Items {
		var e entry
		if err := attributevalue.UnmarshalMap(it, &e); err != nil {
			return nil, fmt.Errorf("portfolio: decode entry: %w", err)
		}
		v := Item{ContractID: e.ContractID, DebtorKey: e.DebtorKey, ProductCode: e.ProductCode, OutstandingCents: e.OutstandingCents,
			OldestOverdueDueDate: e.OldestOverdueDueDate, DaysPastDue: contract.DaysPastDue(e.OldestOverdueDueDate, today, cal)}
		if d, err := calendar.Parse(e.OldestOverdueDueDate); err == nil {
			v.PayableDate = cal.Adjust(d).String()
		}
		if e.LastContactAt != "" {
			v.LastContactAt = &e.LastContactAt
		}
		out.Items = append(out.Items, v)
	}
	if p.Cursor == "" {
		if out.Summary, err = s.summary(ctx, db, t, p.Bucket); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Summary reads one bucket's counters alone (one GetItem, no page of the
// bucket): nil while the stream consumer has not written them.
func (s *Service) Summary(ctx context.Context, t *tenant.Tenant, bucket string) (*Summary, error) {
	if !ValidBucket(bucket) {
		return nil, errBucket
	}
	ctx = kit.Within(ctx, "portfolio.summary")
	return s.summary(ctx, s.kit.Tenant(t.ID, t.CursorKey()), t, bucket)
}

// summary reads the bucket's counters; nil while the stream consumer has
// not written them.
func (s *Service) summary(ctx context.Context, db *kit.Tenant, t *tenant.Tenant, bucket string) (*Summary, error) {
	it, err := db.Get(ctx, kit.Key{PK: keys.Tenant(t.ID), SK: keys.BucketSummary(bucket)}, false)
	if err != nil || it == nil {
		return nil, err
	}
	var si summaryItem
	if err := attributevalue.UnmarshalMap(it, &si); err != nil {
		return nil, fmt.Errorf("portfolio: decode bucket counters: %w", err)
	}
	return &Summary{Contracts: si.Contracts, OutstandingCents: si.OutstandingCents, UpdatedAt: si.UpdatedAt}, nil
}

// crossedSinceDue is the earliest oldestOverdueDueDate of a contract that
// crossed into a bucket (first day past due `lower`) on or after since.
//
// Days past due on a date D are D − Adjust(due), so the contract entered
// the bucket on Adjust(due) + lower. It crossed on or after since exactly
// when Adjust(due) ≥ since − lower. Adjust is non-decreasing, so the due
// dates that qualify are all those from the earliest d with
// Adjust(d) ≥ since − lower: that is since − lower itself, moved back
// over the non-business days just before it (a due date on those days is
// payable on the next business day, which is on or after the target).
// The answer is a plain lower bound on the stored date, which a filter
// compares as an ISO string.
func crossedSinceDue(since calendar.Date, lower int, cal *calendar.Calendar) calendar.Date {
	d := since.AddDays(-lower)
	for prev := d.AddDays(-1); !cal.IsBusinessDay(prev); prev = prev.AddDays(-1) {
		d = prev
	}
	return d
}
