package agenda

import (
	"context"
	"fmt"
	"time"

	"lastro/collections/jsonl"
	"lastro/tenant"
)

// Record is a contract as the credit bureau receives it: an inclusion
// when the contract is reported, an update when the overdue amount it
// reported changed (a partial payment), a removal when it is cured or
// settled.
// No personal data: the bureau's integration resolves the debtor from the
// creditor's own reference (tenant, debtor key, contract).
type Record struct {
	Kind          string `json:"kind"` // INCLUSION | UPDATE | REMOVAL
	TenantID      string `json:"tenantId"`
	DebtorKey     string `json:"debtorKey"`
	ContractID    string `json:"contractId"`
	AmountCents   int64  `json:"amountCents,omitempty"` // the overdue amount (principal and interest), never the whole balance
	OldestOverdue string `json:"oldestOverdueDueDate,omitempty"`
	NoticeAt      string `json:"noticeAt,omitempty"`   // the notice's delivery evidence (CDC art. 43 §2)
	ReportedAt    string `json:"reportedAt,omitempty"` // the inclusion a removal undoes
	Reason        string `json:"reason,omitempty"`     // of a removal: CURED, SETTLED
	At            string `json:"at"`
}

// Record kinds.
const (
	Inclusion = "INCLUSION"
	Update    = "UPDATE"
	Removal   = "REMOVAL"
)

// Bureau takes a contract's inclusion in, or removal from, the credit
// bureau. Implementations must tolerate the same record twice (a worker
// retrying after a conflict), keyed by kind, tenant, contract and date.
type Bureau interface {
	Submit(ctx context.Context, t *tenant.Tenant, r Record) error
}

// FileBureau is the local Bureau: one JSON line per record in a file
// (on disk before Submit returns), the stand-in for a bureau's batch
// interface.
type FileBureau struct{ f *jsonl.File }

// NewFileBureau returns a bureau writing to path.
func NewFileBureau(path string) *FileBureau { return &FileBureau{f: jsonl.Open(path)} }

// Submit appends r.
func (b *FileBureau) Submit(_ context.Context, _ *tenant.Tenant, r Record) error {
	if r.At == "" {
		r.At = time.Now().UTC().Format(time.RFC3339)
	}
	if err := b.f.Append(r); err != nil {
		return fmt.Errorf("bureau file: %w", err)
	}
	return nil
}
