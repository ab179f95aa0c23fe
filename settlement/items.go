package settlement

import (
	"time"

	"lastro/collections/keys"
	"lastro/contract"
)

// Outcomes recorded on the STL item.
const (
	OutcomeApplied   = "APPLIED"
	OutcomeUnmatched = "UNMATCHED"
)

// Answers of the webhook.
const (
	StatusApplied        = "applied"
	StatusAlreadyApplied = "already_applied"
	StatusUnmatched      = "unmatched"
)

// Reasons a settlement is unmatched.
const (
	ReasonChargeNotFound   = "CHARGE_NOT_FOUND"
	ReasonContractNotFound = "CONTRACT_NOT_FOUND"
	ReasonPaidBeforeCharge = "PAID_BEFORE_CHARGE" // paidAt earlier than the charge's creation
	ReasonPaidInFuture     = "PAID_IN_FUTURE"     // paidAt after the settlement was received
)

// stlItem is the settlement record, PK T#<t>#STL#<settlementId>, SK STL.
// Written with attribute_not_exists in the transaction that applies the
// payment, it IS the idempotency record (AP07): it lives as long as the
// fact, unlike a ClientRequestToken's ten minutes. No personal data.
type stlItem struct {
	PK             string    `dynamodbav:"PK"`
	SK             string    `dynamodbav:"SK"`
	Type           string    `dynamodbav:"type"`
	SettlementID   string    `dynamodbav:"settlementId"`
	ChargeID       string    `dynamodbav:"chargeId"`
	AmountCents    int64     `dynamodbav:"amountCents"`
	PaidAt         string    `dynamodbav:"paidAt"`
	ReceivedAt     string    `dynamodbav:"receivedAt"`
	Outcome        string    `dynamodbav:"outcome"`
	Reason         string    `dynamodbav:"reason,omitempty"`
	DebtorKey      string    `dynamodbav:"debtorKey,omitempty"`
	ContractID     string    `dynamodbav:"contractId,omitempty"`
	Seq            int       `dynamodbav:"seq,omitempty"`
	AppliedTo      []Applied `dynamodbav:"appliedTo,omitempty"`
	AppliedCents   int64     `dynamodbav:"appliedCents"`
	CreditCents    int64     `dynamodbav:"creditCents"`
	ContractStatus string    `dynamodbav:"contractStatus,omitempty"`
	QuoteHonoured  bool      `dynamodbav:"quoteHonoured,omitempty"`
	// Paid is what the payment paid on each instalment, by component, in
	// the order it paid them: what a reversal takes back (ADR 0040).
	// Reversed sums, per instalment, what reversals took back so far, and
	// ReversedCreditCents what they took from the payment's credit.
	Paid                []contract.PaidLine `dynamodbav:"paid,omitempty"`
	Reversed            []contract.PaidLine `dynamodbav:"reversed,omitempty"`
	ReversedCents       int64               `dynamodbav:"reversedCents,omitempty"`
	ReversedCreditCents int64               `dynamodbav:"reversedCreditCents,omitempty"`
	// Bank is what a boleto's return file reported beside the amount
	// paid (bank.go); nil for any other settlement.
	Bank *BankReport `dynamodbav:"bank,omitempty"`
	// RefundRequestedCents sums the refunds the tenant asked of this Pix
	// payment and not refused (refund.go): no ask may take it past
	// AmountCents.
	RefundRequestedCents int64 `dynamodbav:"refundRequestedCents,omitempty"`
	Version              int   `dynamodbav:"version"`
}

// Applied is what a settlement paid on one instalment of its contract.
type Applied struct {
	Seq     int   `json:"seq" dynamodbav:"seq"`
	Cents   int64 `json:"cents" dynamodbav:"cents"`
	Settled bool  `json:"settled" dynamodbav:"settled"` // the instalment is paid
}

// suspenseItem lists an unmatched settlement for reconciliation, PK
// T#<t>#SUSPENSE, SK UNM#<receivedAt>#<settlementId> (ADR 0008).
type suspenseItem struct {
	PK           string `dynamodbav:"PK"`
	SK           string `dynamodbav:"SK"`
	Type         string `dynamodbav:"type"`
	SettlementID string `dynamodbav:"settlementId"`
	ChargeID     string `dynamodbav:"chargeId"`
	AmountCents  int64  `dynamodbav:"amountCents"`
	PaidAt       string `dynamodbav:"paidAt"`
	ReceivedAt   string `dynamodbav:"receivedAt"`
	Reason       string `dynamodbav:"reason"`
	Version      int    `dynamodbav:"version"`
}

// Outcome is the webhook's answer: what happened to the settlement, the
// first time it was applied when it is a duplicate.
type Outcome struct {
	Status         string    `json:"status"`  // applied | already_applied | unmatched
	Outcome        string    `json:"outcome"` // APPLIED | UNMATCHED, as first recorded
	SettlementID   string    `json:"settlementId"`
	ChargeID       string    `json:"chargeId"`
	AmountCents    int64     `json:"amountCents"`
	AppliedCents   int64     `json:"appliedCents"`
	CreditCents    int64     `json:"creditCents"`
	ContractID     string    `json:"contractId,omitempty"`
	Seq            int       `json:"seq,omitempty"`
	AppliedTo      []Applied `json:"appliedTo,omitempty"` // instalments of ContractID
	ContractStatus string    `json:"contractStatus,omitempty"`
	QuoteHonoured  bool      `json:"quoteHonoured"` // the charge's quote was paid within its validity
	Reason         string    `json:"reason,omitempty"`
	ReceivedAt     string    `json:"receivedAt"`
	// Bank is the bank's report of a boleto payment, as first recorded.
	Bank *BankReport `json:"bank,omitempty"`
}

func (it stlItem) outcome(status string) *Outcome {
	return &Outcome{Status: status, Outcome: it.Outcome, SettlementID: it.SettlementID, ChargeID: it.ChargeID, AmountCents: it.AmountCents,
		AppliedCents: it.AppliedCents, CreditCents: it.CreditCents, ContractID: it.ContractID, Seq: it.Seq, AppliedTo: it.AppliedTo,
		ContractStatus: it.ContractStatus, QuoteHonoured: it.QuoteHonoured, Reason: it.Reason, ReceivedAt: it.ReceivedAt, Bank: it.Bank}
}

func instant(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func settlementKey(tenantID, settlementID string) (string, string) {
	return keys.Settlement(tenantID, settlementID), keys.SettlementSK
}

// Item types of this package's records.
const (
	TypeSettlement = "SETTLEMENT"
	TypeSuspense   = "SUSPENSE"
)

// Record is the STL item as stored, for readers outside the package that
// decode it from a change image (the stream's translator): the table's
// shape has one definition.
type Record = stlItem
