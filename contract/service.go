package contract

import (
	"context"

	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/idem"
	"lastro/collections/kit"
	"lastro/policy"
	"lastro/tenant"
)

// Service signs contracts and answers a contract's own reads (AP02, AP09).
type Service struct {
	kit      *kit.Kit
	tenants  *tenant.Service
	policies *policy.Service
	clock    clock.Clock
	idem     *idem.Store
	debtorUF DebtorUF
}

// DebtorUF reads the state (UF) of a debtor's profile, "" when it has
// none, for a new contract's calendar; the debtor package owns the
// PROFILE and answers it (debtor.Service.UF). A debtor that does not
// exist answers "" too: creation's own check of the PROFILE refuses it.
type DebtorUF func(ctx context.Context, t *tenant.Tenant, dk string) (string, error)

// Deps are what the service needs.
type Deps struct {
	Kit      *kit.Kit
	Tenants  *tenant.Service
	Policies *policy.Service
	Clock    clock.Clock
	Idem     *idem.Store // Idempotency-Key on POST contracts; nil disables it
	// DebtorUF gives a new contract the debtor's state calendar; nil: every
	// contract follows the tenant's calendar (no state holidays).
	DebtorUF DebtorUF
}

// NewService returns the contract service.
func NewService(d Deps) *Service {
	return &Service{kit: d.Kit, tenants: d.Tenants, policies: d.Policies, clock: d.Clock, idem: d.Idem, debtorUF: d.DebtorUF}
}

func (s *Service) db(t *tenant.Tenant) *kit.Tenant { return s.kit.Tenant(t.ID, t.CursorKey()) }

// EvContractCreated is the event a contract's creation writes (seq 0).
const EvContractCreated = "ContractCreated"

var (
	errInvalidDebtorKey  = errs.E(errs.Invalid, "invalid_debtor_key", "debtorKey must be 16 lower-case hex characters")
	errInvalidContractID = errs.E(errs.Invalid, "invalid_contract_id", "contractId must be 1-64 of A-Z a-z 0-9 - _ .")
	errDebtorNotFound    = errs.E(errs.NotFound, "debtor_not_found", "debtor not found")
	errNotFound          = errs.E(errs.NotFound, "contract_not_found", "contract not found")
	errDebtorChanged     = errs.E(errs.Conflict, "debtor_changed", "the debtor's state changed while the contract was being created; retry the request")
)
