// Package returns imports a bank's CNAB 240 return file (boleto.ParseReturn)
// into settlements: each liquidation of a boleto becomes one settlement
// applied exactly once through settlement.Service.Apply, its id derived
// from the bank and the nosso número, so the same file imported twice
// pays nothing twice. A malformed file is refused whole, before any
// settlement is applied (docs/adr/0035).
package returns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"lastro/boleto"
	"lastro/charges"
	"lastro/collections/errs"
	"lastro/collections/kit"
	"lastro/settlement"
	"lastro/tenant"
)

// Service imports return files.
type Service struct {
	tenants     *tenant.Service
	settlements *settlement.Service
	charges     *charges.Service
}

// Deps are what the service needs.
type Deps struct {
	Tenants    *tenant.Service
	Settlement *settlement.Service
	// Charges records the bank's answers to boleto entries (movements 02
	// and 03); nil leaves them counted as ignored.
	Charges *charges.Service
}

// NewService returns the return-file import service.
func NewService(d Deps) *Service {
	return &Service{tenants: d.Tenants, settlements: d.Settlement, charges: d.Charges}
}

// Statuses of an imported liquidation.
const (
	StatusApplied           = settlement.StatusApplied   // applied to its charge's contract now
	StatusUnmatched         = settlement.StatusUnmatched // unknown nosso número: in suspense now
	StatusAlreadyApplied    = "already_applied"          // imported before and applied then
	StatusAlreadyInSuspense = "already_in_suspense"      // imported before and kept in suspense then
	StatusConflict          = "conflict"                 // the settlement id was recorded with other facts
)

// Result counts what an import did, per outcome, and lists every
// liquidation with its line in the file.
type Result struct {
	Bank         string `json:"bank"`         // the file's bank, FEBRABAN code
	Titles       int    `json:"titles"`       // T+U pairs in the file
	Liquidations int    `json:"liquidations"` // of them, movements 06 and 17
	// Registrations are the entries the bank confirmed (02) or rejected
	// (03); each updates its boleto's registration.
	Registrations int `json:"registrations"`
	Ignored       int `json:"ignored"` // other movements (write-offs, fees...): nothing to settle
	// The money of the liquidations as the bank reports it: paid by the
	// payers, the bank's fees, and the net credited.
	PaidCents int64 `json:"paidCents"`
	FeeCents  int64 `json:"feeCents"`
	NetCents  int64 `json:"netCents"`
	// Notes are the file's harmless departures from the layout, with
	// their lines (boleto.Return.Notes).
	Notes    []string `json:"notes"`
	Applied  int      `json:"applied"`
	Suspense int      `json:"suspense"` // unknown charges, recorded for reconciliation
	// AlreadyApplied and AlreadyInSuspense split the repeats by their first
	// outcome: settlement.Apply answers already_applied for both.
	AlreadyApplied    int    `json:"alreadyApplied"`
	AlreadyInSuspense int    `json:"alreadyInSuspense"`
	Repeated          int    `json:"repeated"` // AlreadyApplied + AlreadyInSuspense
	Conflicts         int    `json:"conflicts"`
	Items             []Item `json:"items"`
	// RegistrationItems are the entries' answers, in file order.
	RegistrationItems []RegistrationItem `json:"registrationItems"`
}

// RegistrationItem is one entry confirmed or rejected by the bank.
type RegistrationItem struct {
	Line     int      `json:"line"`
	ChargeID string   `json:"chargeId"` // the nosso número
	Movement string   `json:"movement"` // 02 | 03
	Status   string   `json:"status"`   // CONFIRMED | REJECTED | charge_not_found | not_boleto
	Reasons  []string `json:"reasons,omitempty"`
}

// Item is one liquidation of the file and what became of it.
type Item struct {
	Line         int    `json:"line"` // the line of its segment T
	SettlementID string `json:"settlementId"`
	ChargeID     string `json:"chargeId"` // the nosso número
	AmountCents  int64  `json:"amountCents"`
	PaidAt       string `json:"paidAt"`
	Status       string `json:"status"`            // applied | unmatched | already_applied | already_in_suspense | conflict
	Outcome      string `json:"outcome,omitempty"` // APPLIED | UNMATCHED, as first recorded
	Reason       string `json:"reason,omitempty"`  // why it is in suspense
	Error        string `json:"error,omitempty"`   // the code of a conflict
	// Bank is the rest of what the bank reported: its fee, the interest,
	// discount, rebate and IOF, the net credit and its date; kept on the
	// settlement as first recorded.
	Bank *settlement.BankReport `json:"bank"`
}

// SettlementID is a liquidation's settlement id: "BOL-", the bank, and
// the nosso número, split as convênio-sequence when it is a Banco do
// Brasil convênio-7 one (BOL-001-1234567-0000000001). The nosso número is
// unique per bank and beneficiary and is read from the file itself, never
// from settings that may change between two imports of the same file.
func SettlementID(bank, nossoNumero string) string {
	// The bank's row says whether its nosso número begins with a convênio
	// to split off (Banco do Brasil's 7 of 17).
	if b, ok := boleto.BankOf(bank); ok && b.Return.ConvenioDigits > 0 && len(nossoNumero) == b.Return.NossoNumeroDigits {
		n := b.Return.ConvenioDigits
		return fmt.Sprintf("BOL-%s-%s-%s", bank, nossoNumero[:n], nossoNumero[n:])
	}
	return fmt.Sprintf("BOL-%s-%s", bank, nossoNumero)
}

// PaidAt is the instant a liquidation is recorded as paid: the last
// second of its payment date (the credit date when the bank gave none)
// in the tenant's zone. A return file carries dates, not instants; the
// end of the day keeps a boleto paid on the day it was issued from
// reading as paid before its charge, and one paid on its due date within
// the quote's validity (which ends at 23:59:59 that day).
func PaidAt(t boleto.Title, loc *time.Location) time.Time {
	d := t.PaidOn
	if d.IsZero() {
		d = t.CreditOn
	}
	return d.AddDays(1).Midnight(loc).Add(-time.Second)
}

// Import reads a return file whole, refuses it (400, with the line) when
// it is malformed or from another bank than the tenant's, then applies
// each liquidation in file order. A failure of the store midway (503)
// leaves the liquidations before it applied: importing the file again is
// safe, they answer as repeats.
func (s *Service) Import(ctx context.Context, t *tenant.Tenant, r io.Reader) (*Result, error) {
	ret, err := boleto.ParseReturn(r)
	var re *boleto.ReturnError
	if errors.As(err, &re) {
		return nil, errs.E(errs.Invalid, "invalid_return_file", "%s; nothing was imported", re.Error())
	}
	if err != nil {
		return nil, err
	}
	if set := t.Boleto(); ret.Bank != set.Bank {
		return nil, errs.E(errs.Invalid, "wrong_bank", "the file is from bank %s, the tenant's boletos are issued by %s; nothing was imported", ret.Bank, set.Bank)
	}
	ctx = kit.Within(ctx, "boleto.return")
	out := &Result{Bank: ret.Bank, Titles: len(ret.Titles), Items: []Item{}, RegistrationItems: []RegistrationItem{}, Notes: ret.Notes}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	var payloads []settlement.Payload
	var entries []boleto.Title
	for _, ti := range ret.Titles {
		if (ti.Movement == boleto.MovementEntryConfirmed || ti.Movement == boleto.MovementEntryRejected) && s.charges != nil {
			entries = append(entries, ti)
			continue
		}
		if !ti.Liquidation() {
			out.Ignored++
			continue
		}
		// Checked for the whole file before anything is applied; the
		// amount is on segment U, the line after T.
		if ti.PaidCents > settlement.MaxAmountCents {
			return nil, errs.E(errs.Invalid, "invalid_return_file", "CNAB 240 line %d: the amount paid is over the limit; nothing was imported", ti.Line+1)
		}
		report := &settlement.BankReport{Bank: ret.Bank, Line: ti.Line, Amounts: ti.Amounts}
		if !ti.CreditOn.IsZero() {
			report.CreditOn = ti.CreditOn.String()
		}
		p := settlement.Payload{SettlementID: SettlementID(ret.Bank, ti.NossoNumero), ChargeID: ti.NossoNumero, AmountCents: ti.PaidCents,
			PaidAt: PaidAt(ti, t.Location), Bank: report}
		payloads = append(payloads, p)
		out.Items = append(out.Items, Item{Line: ti.Line, SettlementID: p.SettlementID, ChargeID: p.ChargeID, AmountCents: p.AmountCents,
			PaidAt: p.PaidAt.Format(time.RFC3339), Bank: report})
		out.PaidCents += ti.PaidCents
		out.FeeCents += ti.FeeCents
		out.NetCents += ti.NetCents
	}
	out.Liquidations = len(payloads)
	out.Registrations = len(entries)
	for i, p := range payloads {
		it := &out.Items[i]
		o, err := s.settlements.Apply(ctx, t, p)
		if errs.Is(err, errs.Conflict) {
			var e *errs.Error
			errors.As(err, &e)
			it.Status, it.Error = StatusConflict, e.Code
			out.Conflicts++
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("import return file, line %d: %w", it.Line, err)
		}
		it.Outcome, it.Reason = o.Outcome, o.Reason
		switch {
		case o.Status == settlement.StatusApplied:
			it.Status = StatusApplied
			out.Applied++
		case o.Status == settlement.StatusUnmatched:
			it.Status = StatusUnmatched
			out.Suspense++
		case o.Outcome == settlement.OutcomeUnmatched:
			it.Status = StatusAlreadyInSuspense
			out.AlreadyInSuspense++
		default:
			it.Status = StatusAlreadyApplied
			out.AlreadyApplied++
		}
	}
	// The bank's answers to entries after the money: a failure here
	// leaves every payment applied, and the file imports again safely.
	for _, ti := range entries {
		it := RegistrationItem{Line: ti.Line, ChargeID: ti.NossoNumero, Movement: ti.Movement, Reasons: ti.Reasons}
		reg, err := s.charges.RecordRegistration(ctx, t, ti.NossoNumero, ti.Movement, ti.Reasons)
		var e *errs.Error
		switch {
		case err == nil:
			it.Status = reg.Status
		case errors.As(err, &e) && (e.Code == "charge_not_found" || e.Code == "charge_not_boleto"):
			it.Status = e.Code
		default:
			return nil, fmt.Errorf("import return file, line %d: %w", ti.Line, err)
		}
		out.RegistrationItems = append(out.RegistrationItems, it)
	}
	out.Repeated = out.AlreadyApplied + out.AlreadyInSuspense
	return out, nil
}
