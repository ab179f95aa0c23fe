package settlement

import "lastro/boleto"

// BankReport is what a bank's CNAB 240 return file said of a boleto
// liquidation beyond the amount the payer paid: the bank's fee, the
// interest, discount, rebate and IOF it accounted for, and the net credit
// and its date. The settlement applies the amount paid (ADR 0035); these
// are kept on it so the lender's reconciliation of its account can be
// proven from the same record (docs/adr/0071).
type BankReport struct {
	Bank     string `json:"bank" dynamodbav:"bank"`                             // FEBRABAN code
	Line     int    `json:"line" dynamodbav:"line"`                             // the segment T's line in the imported file
	CreditOn string `json:"creditOn,omitempty" dynamodbav:"creditOn,omitempty"` // YYYY-MM-DD, the credit date
	boleto.Amounts
}
