// Package contract owns a contract as stored: the header and its
// instalments, the one-Query load, the derivation of its delinquency and
// next action (through the régua, contract/regua), and every write of an
// index attribute. Other packages (debtor, charges, settlement, the agenda)
// read and change contracts only through it, so "how does a contract enter
// the portfolio" has one answer: (*Header).index.
package contract

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/google/uuid"

	"lastro/collections/calendar"
	"lastro/collections/kit"
)

// Contract statuses (docs/design.md#contract-header-and-instalment).
const (
	StatusActive       = "ACTIVE"
	StatusInCollection = "IN_COLLECTION"
	StatusInAgreement  = "IN_AGREEMENT"
	StatusSettled      = "SETTLED"
	StatusWrittenOff   = "WRITTEN_OFF"
)

// Stored instalment statuses. "Overdue" is never stored: it is derived
// from today's date on every read (InstallmentView.Status). OVERDUE is
// still read as open, for items written before that rule.
const (
	InstOpen         = "OPEN"
	InstOverdue      = "OVERDUE"
	InstPaid         = "PAID"
	InstRenegotiated = "RENEGOTIATED"
	// InstCancelled is an agreement instalment of a lapsed agreement: it
	// never owed anything (ADR 0027).
	InstCancelled = "CANCELLED"
)

// Status reasons written by this package: statusReason says why the
// status is what it is.
const (
	ReasonSigned        = "SIGNED"
	ReasonOldestOverdue = "OLDEST_INSTALLMENT_OVERDUE"
	ReasonCured         = "CURED"
	ReasonPaidInFull    = "PAID_IN_FULL"
)

// Item types.
const (
	TypeHeader      = "CONTRACT"
	TypeInstallment = "INSTALLMENT"
	TypeEvent       = "EVENT"
)

// Header is the contract header item (names as in docs/design.md#contract-header-and-instalment). The index
// attributes (GSI1PK, GSI1SK, GSI2PK) are never set by hand: index derives
// them from the facts before every write.
type Header struct {
	PK                   string `dynamodbav:"PK"`
	SK                   string `dynamodbav:"SK"`
	Type                 string `dynamodbav:"type"`
	TenantID             string `dynamodbav:"tenantId"`
	DebtorKey            string `dynamodbav:"debtorKey"`
	ContractID           string `dynamodbav:"contractId"`
	ProductCode          string `dynamodbav:"productCode"`
	Currency             string `dynamodbav:"currency"`
	ChargesPolicy        string `dynamodbav:"chargesPolicy"`
	DunningPolicy        string `dynamodbav:"dunningPolicy"`
	Status               string `dynamodbav:"status"`
	StatusReason         string `dynamodbav:"statusReason"`
	OldestOverdueDueDate string `dynamodbav:"oldestOverdueDueDate,omitempty"`
	Bucket               string `dynamodbav:"bucket,omitempty"`
	OutstandingCents     int64  `dynamodbav:"outstandingCents"`
	// CreditCents is money received beyond what was overdue or due: it is
	// applied to each instalment when it falls due (docs/design.md#allocation-and-credit), never
	// to future instalments at face value.
	CreditCents    int64  `dynamodbav:"creditCents,omitempty"`
	LastPaymentAt  string `dynamodbav:"lastPaymentAt,omitempty"`
	LastContactAt  string `dynamodbav:"lastContactAt,omitempty"`
	NextActionDate string `dynamodbav:"nextActionDate,omitempty"`
	NextAction     string `dynamodbav:"nextAction,omitempty"`
	// LastStep and NoticeAt record the régua steps executed in the
	// current delinquency, so a re-run never repeats one (ADR 0014).
	LastStep   int    `dynamodbav:"lastStep,omitempty"`
	LastStepAt string `dynamodbav:"lastStepAt,omitempty"`
	NoticeAt   string `dynamodbav:"noticeAt,omitempty"` // delivery evidence of the BUREAU_NOTICE
	// ReportedAt is set while the contract is reported to the credit
	// bureau: a cure or settlement owes the removal (CDC art. 43).
	ReportedAt string `dynamodbav:"reportedAt,omitempty"`
	// ContactAfter holds the step due today until the instant the
	// debtor's contact window opens (fixed-width UTC), when a claim was
	// blocked before it: the agenda's visits before then leave the
	// contract as it is, and the wake-up at that instant serves it the
	// same day (ADR 0064). Past instants mean nothing.
	ContactAfter string `dynamodbav:"contactAfter,omitempty"`
	// AgendaAction and AgendaDate, when set, are where the agenda entry
	// (GSI1) stays while the plan (NextAction, NextActionDate) is later:
	// a payment re-derives the plan at once for every reader but leaves
	// an earlier entry in place, which the agenda visits and re-plans
	// (ADR 0068). Any other refresh clears them.
	AgendaAction string `dynamodbav:"agendaAction,omitempty"`
	AgendaDate   string `dynamodbav:"agendaDate,omitempty"`
	// ReportedCents is the overdue amount the bureau holds for the
	// contract: a change (a partial payment) owes it a BUREAU_UPDATE
	// (ADR 0067).
	ReportedCents int64 `dynamodbav:"reportedCents,omitempty"`
	// NoticeSkippedAt is the date the bureau notice found no address on
	// any of its channels: the report it would allow is passed over.
	NoticeSkippedAt string `dynamodbav:"noticeSkippedAt,omitempty"`
	// ReminderDue and ReminderStep record the last pre-due reminder: the
	// due date it was about and its (negative) days.
	ReminderDue  string `dynamodbav:"reminderDue,omitempty"`
	ReminderStep int    `dynamodbav:"reminderStep,omitempty"`
	// DelinquentSince is the oldest overdue due date of the delinquency an
	// agreement renegotiated, and PriorLastStep and PriorNoticeAt the
	// régua's record of it: a broken or lapsed agreement resumes that
	// delinquency from there without replaying its steps (ADR 0068).
	DelinquentSince string `dynamodbav:"delinquentSince,omitempty"`
	PriorLastStep   int    `dynamodbav:"priorLastStep,omitempty"`
	PriorNoticeAt   string `dynamodbav:"priorNoticeAt,omitempty"`
	// Hold names what pauses or replaces the régua (regua.Hold*), "" when
	// it runs; PromiseDate goes with a PROMISE hold. HoldID is the
	// promise or dispute item behind the hold (its id under the contract),
	// so the writer that ends the hold finds the item with one GetItem.
	Hold        string `dynamodbav:"hold,omitempty"`
	PromiseDate string `dynamodbav:"promiseDate,omitempty"`
	HoldID      string `dynamodbav:"holdId,omitempty"`
	// UF is the debtor's state the contract's calendar follows (its
	// state bank holidays, ADR 0065): copied from the PROFILE when the
	// contract is created and by Relocate when the profile's UF changes,
	// so no payment or agenda visit reads the PROFILE for it.
	UF               string `dynamodbav:"uf,omitempty"`
	Shard            int    `dynamodbav:"shard"`
	InstallmentCount int    `dynamodbav:"installmentCount"`
	GSI1PK           string `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK           string `dynamodbav:"GSI1SK,omitempty"`
	GSI2PK           string `dynamodbav:"GSI2PK,omitempty"`
	CreationHash     string `dynamodbav:"creationHash,omitempty"`
	Version          int    `dynamodbav:"version"`
	CreatedAt        string `dynamodbav:"createdAt"`
	UpdatedAt        string `dynamodbav:"updatedAt"`
}

// Installment is one instalment item (names as in docs/design.md#contract-header-and-instalment) plus what
// payments record on it: what was paid of each late charge and the date
// late interest was last assessed to (ADR 0009).
type Installment struct {
	PK                    string `dynamodbav:"PK"`
	SK                    string `dynamodbav:"SK"`
	Type                  string `dynamodbav:"type"`
	Seq                   int    `dynamodbav:"seq"`
	OriginalDueDate       string `dynamodbav:"originalDueDate"`
	DueDate               string `dynamodbav:"dueDate"`
	PrincipalCents        int64  `dynamodbav:"principalCents"`
	InterestCents         int64  `dynamodbav:"interestCents"`
	FineCents             int64  `dynamodbav:"fineCents"`
	LateInterestCents     int64  `dynamodbav:"lateInterestCents"`
	PaidCents             int64  `dynamodbav:"paidCents"` // towards principal and interest
	InterestPaidCents     int64  `dynamodbav:"interestPaidCents,omitempty"`
	FinePaidCents         int64  `dynamodbav:"finePaidCents,omitempty"`
	LateInterestPaidCents int64  `dynamodbav:"lateInterestPaidCents,omitempty"`
	ChargedThrough        string `dynamodbav:"chargedThrough,omitempty"`
	// AgreementID marks an instalment an agreement created (ADR 0068).
	AgreementID  string `dynamodbav:"agreementId,omitempty"`
	Status       string `dynamodbav:"status"`
	CreationHash string `dynamodbav:"creationHash,omitempty"`
	Version      int    `dynamodbav:"version"`
}

// Open reports whether the instalment still owes money (neither paid nor
// renegotiated).
func (in *Installment) Open() bool { return IsOpen(in.Status) }

// IsOpen reports whether a stored instalment status still owes money.
func IsOpen(status string) bool { return status == InstOpen || status == InstOverdue }

// Due is the instalment's due date.
func (in *Installment) Due() calendar.Date {
	d, _ := calendar.Parse(in.DueDate) // validated when the contract was signed
	return d
}

// Event is an audit event item: append-only, written in the same
// transaction as the change it records, without personal data.
type Event struct {
	PK         string         `dynamodbav:"PK"`
	SK         string         `dynamodbav:"SK"`
	Type       string         `dynamodbav:"type"`
	EventID    string         `dynamodbav:"eventId"`
	EventType  string         `dynamodbav:"eventType"`
	ContractID string         `dynamodbav:"contractId,omitempty"`
	Seq        *int           `dynamodbav:"seq,omitempty"`
	At         string         `dynamodbav:"at"`
	ActorRole  string         `dynamodbav:"actorRole"`
	RequestID  string         `dynamodbav:"requestId,omitempty"`
	Details    map[string]any `dynamodbav:"details,omitempty"`
	Version    int            `dynamodbav:"version"` // always 1: events are never updated
}

// NewEventID returns a fresh event id.
func NewEventID() string { return uuid.NewString() }

// Actor is who asked for a change, as audit events record it: a role and a
// request id, never a person's data.
type Actor struct {
	Role      string
	RequestID string
}

func marshal(v any) (kit.Item, error) {
	it, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, fmt.Errorf("marshal item: %w", err)
	}
	return it, nil
}
