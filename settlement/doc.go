// Package settlement applies payment notifications exactly once (AP06,
// AP07; docs/design.md#settlement-exactly-once). The provider's signed
// webhook names a charge; the charge is found by a strongly consistent
// GetItem on its lookup, never through an index; the contract is read
// with one Query; the allocation is a pure function of the contract, the
// charges policy version it was signed under and the payment; and
// everything — the STL item that IS the idempotency record, the
// instalments, the header and the audit event — is written in one
// TransactWriteItems. A settlement for an unknown charge is never
// dropped: it is recorded as UNMATCHED and listed for reconciliation.
//
// Two webhooks feed it: our own JSON (decode.go) and the Central Bank's
// Pix API format (pix.go), whose calls carry several payments, each
// applied exactly once by its endToEndId, and whose refunds are recorded
// exactly once by their rtrId as reversals that reopen what the payment
// paid (reverse.go, ADR 0040).
package settlement
