package debtor

// The stored shapes of a contract, shared with the packages that change
// contracts after they are signed (charges, settlement, the agenda), so
// that every package reads and writes the same items with the same names.
// Aliases, not copies: a field added here is added everywhere.
type (
	// ContractHeader is the contract header item (SPEC section 3).
	ContractHeader = contractItem
	// Installment is an instalment item (SPEC section 3).
	Installment = installmentItem
	// Event is an audit event item: append-only, written in the same
	// transaction as the change it records, without personal data.
	Event = eventItem
	// Due is what the delinquency rules (Derive) need of an instalment.
	Due = due
)

// NewEventID returns a fresh event id.
func NewEventID() string { return newEventID() }

// IsOpen reports whether an instalment status still owes money (neither
// paid nor renegotiated).
func IsOpen(status string) bool { return isOpen(status) }
