package charges

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/boleto"
	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/idem"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/contract"
	"lastro/debtor"
	"lastro/policy"
	"lastro/psp"
	"lastro/tenant"
)

// Payment methods.
const (
	PIX    = "PIX"
	BOLETO = "BOLETO"
)

// Service issues charges.
type Service struct {
	kit      *kit.Kit
	tenants  *tenant.Service
	policies *policy.Service
	clock    clock.Clock
	idem     *idem.Store
	psps     Provider
	debtors  *debtor.Service // opens payers for shipping files and slips (registration.go)
	sealer   pii.Sealer      // seals shipping files (registration.go)
	payers   Payers
	// newID generates a charge id; tests replace it to force a collision.
	newID func(method string) string
}

// Deps are what the service needs.
type Deps struct {
	Kit      *kit.Kit
	Tenants  *tenant.Service
	Policies *policy.Service
	Clock    clock.Clock
	Idem     *idem.Store // Idempotency-Key on POST /v1/charges; nil disables it
	// PSPs gives each tenant's Pix PSP; nil (or a nil PSP for a tenant):
	// Pix charges are issued without a BR Code, as a txid and an amount.
	PSPs Provider
	// Debtors and Sealer serve boleto registration and slips: the payer
	// read from the sealed profile, the shipping files kept sealed. Nil:
	// no shipping file is written.
	Debtors *debtor.Service
	Sealer  pii.Sealer
	// Payers gives the devedor a cobv names; nil: every Pix charge at a
	// PSP is a cob (the API refuses a cobv without its debtor).
	Payers Payers
}

// Payers opens the debtor a charge is addressed to (debtor.Service.Payer,
// adapted by the engine): CPF or CNPJ and name, in process, for the one
// request to the PSP. Nil with no error when the debtor cannot be named.
type Payers interface {
	Payer(ctx context.Context, t *tenant.Tenant, debtorKey string) (*psp.Devedor, error)
}

// Provider resolves a tenant's Pix PSP (psp/tenantpsp); nil when it has none.
type Provider interface {
	For(ctx context.Context, t *tenant.Tenant) (psp.PSP, error)
}

// NewService returns the charges service.
func NewService(d Deps) *Service {
	return &Service{kit: d.Kit, tenants: d.Tenants, policies: d.Policies, clock: d.Clock, idem: d.Idem, psps: d.PSPs, debtors: d.Debtors,
		sealer: d.Sealer, payers: d.Payers, newID: NewChargeID}
}

func (s *Service) db(t *tenant.Tenant) *kit.Tenant { return s.kit.Tenant(t.ID, t.CursorKey()) }

// Input is the body of POST /v1/charges.
type Input struct {
	DebtorKey  string `json:"debtorKey"`
	ContractID string `json:"contractId"`
	Seq        int    `json:"seq"`
	Method     string `json:"method"`
	// PixType chooses the Pix charge: "cob" (immediate, today's amount for
	// 24 hours) or "cobv" (due date, the PSP adds the policy's fine and
	// interest when paid late); empty: cobv for an instalment not yet
	// late, cob otherwise (ADR 0037).
	PixType string `json:"pixType,omitempty"`
}

// Issued is a charge as the API answers it.
type Issued struct {
	ChargeID      string     `json:"chargeId"`
	Method        string     `json:"method"`
	ContractID    string     `json:"contractId"`
	Seq           int        `json:"seq"`
	AmountCents   int64      `json:"amountCents"`
	ExpiresAt     string     `json:"expiresAt"`   // RFC 3339 in the tenant's offset: the last instant the quote is honoured
	Validity      Validity   `json:"validity"`    // which rule gave ExpiresAt
	ComputedFor   string     `json:"computedFor"` // the civil date the amount is computed for
	DueDate       string     `json:"dueDate"`     // the instalment's due date
	DaysLate      int        `json:"daysLate"`
	Breakdown     Components `json:"breakdown"`
	ChargesPolicy string     `json:"chargesPolicy"`
	// A boleto's barcode (44 digits) and linha digitável (as printed), due
	// on ComputedFor for AmountCents under the tenant's boleto settings.
	Barcode        string `json:"barcode,omitempty"`
	LinhaDigitavel string `json:"linhaDigitavel,omitempty"`
	// The PSP's charge (Pix with a PSP): cob or cobv, the BR Code a
	// debtor pastes into a banking app and the location it points at.
	PixType       string `json:"pixType,omitempty"`
	PixCopiaECola string `json:"pixCopiaECola,omitempty"`
	Location      string `json:"location,omitempty"`
	// Registration is a boleto's standing with its bank (registration.go).
	Registration *Registration `json:"registration,omitempty"`
	// CobFallback says why an instalment not yet late got a cob (today's
	// quote for 24 hours) instead of a cobv: TENANT_SETTING (its PSP
	// settings say cobvDisabled), PSP_REFUSED_COBV (the PSP answered that
	// it takes no cobv) or NO_DEBTOR (no document and name to name the
	// devedor with). Empty otherwise.
	CobFallback string `json:"cobFallback,omitempty"`
}

// Why a cob was issued where a cobv would have been.
const (
	FallbackTenantSetting = "TENANT_SETTING"
	FallbackPSPRefused    = "PSP_REFUSED_COBV"
	FallbackNoDebtor      = "NO_DEBTOR"
)

// Validity says how long a charge is payable for its quoted amount: a Pix
// cob for Seconds after it was created (the Central Bank's cob
// calendario.expiracao, 24 hours by default), a boleto or a Pix cobv
// until the end of its due date's civil day in the tenant's time zone. A
// cobv stays payable DaysAfterDue days more (validadeAposVencimento),
// for the amount the PSP computes with the fine and interest it carries.
type Validity struct {
	Rule         string `json:"rule" dynamodbav:"rule"`                                     // PIX_EXPIRATION | BOLETO_DUE_DATE | PIX_DUE_DATE
	Seconds      int    `json:"seconds,omitempty" dynamodbav:"seconds,omitempty"`           // PIX_EXPIRATION
	DueDate      string `json:"dueDate,omitempty" dynamodbav:"dueDate,omitempty"`           // BOLETO_DUE_DATE, PIX_DUE_DATE
	DaysAfterDue int    `json:"daysAfterDue,omitempty" dynamodbav:"daysAfterDue,omitempty"` // PIX_DUE_DATE
}

// Validity rules.
const (
	RulePixExpiration = "PIX_EXPIRATION"
	RuleBoletoDueDate = "BOLETO_DUE_DATE"
	RulePixDueDate    = "PIX_DUE_DATE"
)

// PixDaysAfterDue is a cobv's validadeAposVencimento: the Pix API's
// default of 30 calendar days.
const PixDaysAfterDue = 30

// PixExpiration is a Pix charge's default validity (cob
// calendario.expiracao = 86400 s).
const PixExpiration = 24 * time.Hour

// chargeItem is the charge in the debtor's collection.
type chargeItem struct {
	PK            string     `dynamodbav:"PK"`
	SK            string     `dynamodbav:"SK"`
	Type          string     `dynamodbav:"type"`
	ChargeID      string     `dynamodbav:"chargeId"`
	Method        string     `dynamodbav:"method"`
	ContractID    string     `dynamodbav:"contractId"`
	Seq           int        `dynamodbav:"seq"`
	AmountCents   int64      `dynamodbav:"amountCents"`
	ComputedFor   string     `dynamodbav:"computedFor"`
	DaysLate      int        `dynamodbav:"daysLate"`
	Breakdown     Components `dynamodbav:"breakdown"`
	ChargesPolicy string     `dynamodbav:"chargesPolicy"`
	ExpiresAt     string     `dynamodbav:"expiresAt"` // a string: the table's TTL ignores it (ADR 0009)
	Validity      Validity   `dynamodbav:"validity"`
	CreatedAt     string     `dynamodbav:"createdAt"`
	Barcode       string     `dynamodbav:"barcode,omitempty"` // a boleto's 44 digits
	PixType       string     `dynamodbav:"pixType,omitempty"`
	PixCopiaECola string     `dynamodbav:"pixCopiaECola,omitempty"`
	Location      string     `dynamodbav:"location,omitempty"`
	// Status is "" while the charge is payable at its PSP and
	// StatusCancelled once removed there (cancel.go); a payment still
	// arriving for a cancelled charge is applied all the same (ADR 0048).
	Status       string `dynamodbav:"status,omitempty"`
	CancelledAt  string `dynamodbav:"cancelledAt,omitempty"`
	CancelReason string `dynamodbav:"cancelReason,omitempty"`
	Version      int    `dynamodbav:"version"`
}

// Lookup is the charge lookup item, PK T#<t>#CHG#<id>, SK CHG: what a
// settlement needs to find the contract, read with a strongly consistent
// GetItem (AP06).
type Lookup struct {
	PK          string `dynamodbav:"PK"`
	SK          string `dynamodbav:"SK"`
	Type        string `dynamodbav:"type"`
	ChargeID    string `dynamodbav:"chargeId"`
	Method      string `dynamodbav:"method"`
	DebtorKey   string `dynamodbav:"debtorKey"`
	ContractID  string `dynamodbav:"contractId"`
	Seq         int    `dynamodbav:"seq"`
	AmountCents int64  `dynamodbav:"amountCents"`
	ExpiresAt   string `dynamodbav:"expiresAt"`
	CreatedAt   string `dynamodbav:"createdAt"`
	// The quote: what the amount pays in full when paid within its
	// validity (docs/design.md#charges-are-quotes).
	ComputedFor string     `dynamodbav:"computedFor,omitempty"`
	Breakdown   Components `dynamodbav:"breakdown"`
	Version     int        `dynamodbav:"version"`
}

// Quote is the amount the lookup's charge quoted, what it covered and
// until when.
func (l *Lookup) Quote() (computedFor calendar.Date, expires, created time.Time, err error) {
	if computedFor, err = calendar.Parse(l.ComputedFor); err != nil {
		return
	}
	if expires, err = time.Parse(time.RFC3339, l.ExpiresAt); err != nil {
		return
	}
	created, err = time.Parse(time.RFC3339Nano, l.CreatedAt)
	return
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func randomFrom(alphabet string, n int) string {
	b := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range b {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(err) // crypto/rand does not fail on supported platforms
		}
		b[i] = alphabet[v.Int64()]
	}
	return string(b)
}

// NewChargeID generates a charge id: a Pix txid of 32 alphanumerics (the
// Central Bank allows 26 to 35) or a 17-digit boleto nosso número (Issue
// puts the tenant's convênio in its first 7 digits: boletoID).
func NewChargeID(method string) string {
	if method == BOLETO {
		return randomFrom("123456789", 1) + randomFrom("0123456789", 16)
	}
	return randomFrom(alnum, 32)
}

var (
	errContractNotFound = errs.E(errs.NotFound, "contract_not_found", "contract not found")
	errInstNotFound     = errs.E(errs.NotFound, "installment_not_found", "instalment not found")
	errNotOpen          = errs.E(errs.Rule, "installment_not_open", "the instalment is paid or renegotiated")
	errNothingDue       = errs.E(errs.Rule, "nothing_due", "nothing is due on the instalment")
)

func (in Input) validate() error {
	if !keys.ValidDebtorKey(in.DebtorKey) {
		return errs.E(errs.Invalid, "invalid_debtor_key", "debtorKey must be 16 lower-case hex characters")
	}
	if !keys.ValidIdentifier(in.ContractID) {
		return errs.E(errs.Invalid, "invalid_contract_id", "contractId must be 1-64 of A-Z a-z 0-9 - _ .")
	}
	if in.Seq < 1 || in.Seq > contract.MaxInstallments {
		return errs.E(errs.Invalid, "invalid_seq", "seq must be 1-%d", contract.MaxInstallments)
	}
	if in.Method != PIX && in.Method != BOLETO {
		return errs.E(errs.Invalid, "invalid_method", "method must be PIX or BOLETO")
	}
	if in.PixType != "" && (in.Method != PIX || (in.PixType != string(psp.Cob) && in.PixType != string(psp.CobV))) {
		return errs.E(errs.Invalid, "invalid_pix_type", "pixType is cob or cobv, on a PIX charge only")
	}
	return nil
}

// Issue creates a charge for what an instalment owes: a Pix charge
// quoting today's amount, payable for 24 hours (PixExpiration); a boleto
// quoting the amount on its due date, the first business day from today
// (a boleto is paid through clearing, on business days), payable until
// the end of that day in the tenant's time zone. Each is computed with the
// charges policy version the contract was signed under. With a PSP, a Pix
// charge is first created there under its txid — a cob for today's quote,
// or a cobv carrying the policy's fine and interest for an instalment not
// yet late (ADR 0037) — and answers its BR Code. The charge item and its
// lookup are written in one transaction, so a webhook can never see one
// without the other.
func (s *Service) Issue(ctx context.Context, t *tenant.Tenant, in Input) (*Issued, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "charge.issue")
	c, err := contract.Load(ctx, s.db(t), t.ID, in.DebtorKey, in.ContractID)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errContractNotFound
	}
	if c.Header.Status == contract.StatusSettled || c.Header.Status == contract.StatusWrittenOff {
		return nil, errs.E(errs.Rule, "contract_closed", "the contract is %s", c.Header.Status)
	}
	inst := c.Installment(in.Seq)
	if inst == nil {
		return nil, errInstNotFound
	}
	if !inst.Open() {
		return nil, errNotOpen
	}
	v, err := contract.PolicyVersion(c.Header.ChargesPolicy)
	if err != nil {
		return nil, err
	}
	p, err := s.policies.Charges(ctx, t, v)
	if err != nil {
		return nil, err
	}
	st := StateOf(inst)
	now := s.clock.Now()
	cal := c.Header.Calendar(t)
	payDate := calendar.Today(now, t.Location)
	if in.Method == BOLETO {
		payDate = cal.Adjust(payDate)
	}
	a, owed := AmountDue(p, cal, st, payDate)
	if owed.Total() == 0 {
		return nil, errNothingDue
	}
	var provider psp.PSP
	if in.Method == PIX && s.psps != nil {
		if provider, err = s.psps.For(ctx, t); err != nil {
			return nil, pspError(err)
		}
	}
	kind, fallback, err := pixKind(in, provider, p, st, a, owed, t.PSP())
	if err != nil {
		return nil, err
	}
	var debtor *psp.Devedor
	if kind == psp.CobV {
		if debtor, err = s.payer(ctx, t, in.DebtorKey); err != nil {
			return nil, err
		}
		if debtor == nil {
			// No devedor, no cobv (the API requires it): today's quote.
			if in.PixType == string(psp.CobV) {
				return nil, errs.E(errs.Rule, "cobv_not_applicable", "a cobv names its debtor (CPF or CNPJ and name), and this debtor has none on file; issue a cob")
			}
			kind, fallback = psp.Cob, FallbackNoDebtor
		}
	}
	out := &Issued{Method: in.Method, ContractID: in.ContractID, Seq: in.Seq, AmountCents: owed.Total(),
		ComputedFor: payDate.String(), DueDate: inst.DueDate, DaysLate: a.DaysLate, Breakdown: owed, ChargesPolicy: c.Header.ChargesPolicy,
		PixType: string(kind), CobFallback: fallback}
	validity := func() (Validity, string) {
		var v Validity
		var expires time.Time
		switch {
		case in.Method == BOLETO:
			v = Validity{Rule: RuleBoletoDueDate, DueDate: payDate.String()}
			expires = payDate.AddDays(1).Midnight(t.Location).Add(-time.Second)
		case psp.Kind(out.PixType) == psp.CobV:
			// The quote (no charges) holds through the due date; later the
			// PSP asks for the fine and interest, which the settlement
			// assesses the same way on the payment date (ADR 0037).
			v = Validity{Rule: RulePixDueDate, DueDate: a.PayableUntil.String(), DaysAfterDue: PixDaysAfterDue}
			expires = a.PayableUntil.AddDays(1).Midnight(t.Location).Add(-time.Second)
		default:
			v = Validity{Rule: RulePixExpiration, Seconds: int(PixExpiration / time.Second)}
			expires = now.Add(PixExpiration).Truncate(time.Second)
		}
		return v, expires.In(t.Location).Format(time.RFC3339)
	}
	ts := keys.Timestamp(now)
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	for attempt := 0; attempt < 3; attempt++ {
		out.ChargeID = s.newID(in.Method)
		if in.Method == BOLETO {
			if out.ChargeID, err = boletoID(t, out.ChargeID); err != nil {
				return nil, err
			}
			if out.Barcode, out.LinhaDigitavel, err = barcode(t, out.ChargeID, payDate, out.AmountCents); err != nil {
				return nil, err
			}
		}
		// The PSP's charge first, under the txid we chose: the PUT is an
		// idempotent overwrite, and a charge item without a payable code
		// would be worse than a PSP charge nobody was shown.
		if provider != nil {
			if err := s.createAtPSP(ctx, provider, in.PixType == "", out, p, a.PayableUntil, debtor); err != nil {
				return nil, err
			}
			kind = psp.Kind(out.PixType)
		}
		out.Validity, out.ExpiresAt = validity()
		exp := out.ExpiresAt
		item, err := attributevalue.MarshalMap(chargeItem{PK: keys.Debtor(t.ID, in.DebtorKey), SK: keys.ContractCharge(in.ContractID, out.ChargeID),
			Type: ItemType, ChargeID: out.ChargeID, Method: in.Method, ContractID: in.ContractID, Seq: in.Seq, AmountCents: out.AmountCents,
			ComputedFor: out.ComputedFor, DaysLate: a.DaysLate, Breakdown: owed, ChargesPolicy: c.Header.ChargesPolicy, ExpiresAt: exp,
			Validity: out.Validity, CreatedAt: ts, Barcode: out.Barcode, PixType: out.PixType, PixCopiaECola: out.PixCopiaECola, Location: out.Location, Version: 1})
		if err != nil {
			return nil, err
		}
		lookup, err := attributevalue.MarshalMap(Lookup{PK: keys.Charge(t.ID, out.ChargeID), SK: keys.ChargeSK, Type: "CHARGE_LOOKUP",
			ChargeID: out.ChargeID, Method: in.Method, DebtorKey: in.DebtorKey, ContractID: in.ContractID, Seq: in.Seq,
			AmountCents: out.AmountCents, ExpiresAt: exp, CreatedAt: ts, ComputedFor: out.ComputedFor, Breakdown: owed, Version: 1})
		if err != nil {
			return nil, err
		}
		actions := []kit.Action{kit.PutAction(lookup, &notExists)}
		if in.Method == BOLETO {
			// Registered with the bank by the next shipping file: the
			// pending entry is written with the charge (ADR 0072).
			reg, pending, err := registrationFor(t, out, in.DebtorKey, p, now)
			if err != nil {
				return nil, err
			}
			if item["registration"], err = attributevalue.Marshal(reg); err != nil {
				return nil, err
			}
			out.Registration = reg
			actions = append(actions, kit.PutAction(pending, &notExists))
		}
		actions = append(actions, kit.PutAction(item, &notExists))
		if provider != nil {
			// Its reconcile check, in the same commit: no charge at a PSP
			// escapes the scheduled reconcile (docs/adr/0070).
			check, err := pixCheckAction(t.ID, out.ChargeID, out.PixType, now, out.Validity, exp, t.Location)
			if err != nil {
				return nil, err
			}
			actions = append(actions, check)
		}
		err = s.db(t).Transact(ctx, actions...)
		if err == nil {
			return out, nil
		}
		// A generated id already taken (astronomically rare): draw again,
		// after removing the PSP charge made under it (best effort: the
		// code was never shown, so nobody can pay it).
		if provider != nil {
			_, _ = provider.Cancel(ctx, kind, out.ChargeID)
		}
		if !errors.Is(err, kit.ErrConditionFailed) {
			return nil, fmt.Errorf("issue charge: %w", err)
		}
	}
	return nil, errs.E(errs.Transient, "charge_id_collision", "could not allocate a charge id; retry")
}

// boletoID makes a generated 17-digit number a nosso número of the
// tenant's agreement: the convênio, then the number's last digits (a
// sequence the bank leaves to the beneficiary). The charge id is the
// nosso número, so a return file's liquidation finds its charge by it.
func boletoID(t *tenant.Tenant, generated string) (string, error) {
	l, err := t.Boleto().Layout()
	if err != nil {
		return "", err
	}
	// The bank's layout says how much of the number is the agreement's
	// (Banco do Brasil: a convênio of 7 or 8 digits, then the sequence).
	id, err := l.NossoNumero(generated)
	if err != nil {
		return "", fmt.Errorf("boleto nosso número: %w", err)
	}
	return id, nil
}

// barcode lays out the boleto of nosso número nn due on due for cents
// under the tenant's settings.
func barcode(t *tenant.Tenant, nn string, due calendar.Date, cents int64) (bars, line string, err error) {
	set := t.Boleto()
	l, err := set.Layout()
	if err != nil {
		return "", "", err
	}
	free, err := l.FreeField(nn)
	if err != nil {
		return "", "", fmt.Errorf("boleto free field: %w", err)
	}
	if cents > boleto.MaxAmountCents {
		return "", "", errs.E(errs.Rule, "amount_too_large_for_boleto", "a boleto holds at most R$ 99,999,999.99; use Pix")
	}
	b, err := boleto.New(l.Bank(), due, cents, free)
	if err != nil {
		return "", "", fmt.Errorf("boleto: %w", err)
	}
	return b.Barcode(), b.Line(), nil
}

// pixKind decides the PSP charge of a Pix charge ("" without a PSP, or
// for a boleto): the one asked for, or cobv when the instalment is not
// late yet and the policy's rates fit the Pix API (two decimals) — then
// the PSP itself charges the fine and interest of a late payment — and
// cob, today's quote for 24 hours, otherwise (ADR 0037); also a cob, with
// the fallback's reason, when the tenant's PSP settings say it takes no
// cobv (ADR 0069).
func pixKind(in Input, provider psp.PSP, p *policy.Charges, st State, a Assessment, owed Components, set *tenant.PSPSettings) (psp.Kind, string, error) {
	if in.Method != PIX {
		return "", "", nil
	}
	if provider == nil {
		if in.PixType != "" {
			return "", "", errs.E(errs.Rule, "psp_not_configured", "pixType needs a PSP: configure one with PUT /v1/tenant/psp")
		}
		return "", "", nil
	}
	_, fineErr := psp.FormatPercent(p.FinePercent)
	_, interestErr := psp.FormatPercent(p.LateInterestMonthlyPercent)
	cobv := a.DaysLate == 0 && st.ChargedThrough.IsZero() && owed.Fine == 0 && owed.LateInterest == 0 && fineErr == nil && interestErr == nil
	disabled := set != nil && set.CobVDisabled
	switch psp.Kind(in.PixType) {
	case psp.Cob:
		return psp.Cob, "", nil
	case psp.CobV:
		if disabled {
			return "", "", errs.E(errs.Rule, "cobv_not_applicable", "the tenant's PSP settings say it takes no cobv (cobvDisabled); issue a cob")
		}
		if !cobv {
			return "", "", errs.E(errs.Rule, "cobv_not_applicable",
				"a cobv is for an instalment not yet late, with no charges assessed, under rates of at most two decimals; issue a cob")
		}
		return psp.CobV, "", nil
	}
	switch {
	case cobv && disabled:
		return psp.Cob, FallbackTenantSetting, nil
	case cobv:
		return psp.CobV, "", nil
	}
	return psp.Cob, "", nil
}

// payer is the devedor of a cobv for debtor dk, nil when there is none
// to name (no profile, or no Payers wired).
func (s *Service) payer(ctx context.Context, t *tenant.Tenant, dk string) (*psp.Devedor, error) {
	if s.payers == nil {
		return nil, nil
	}
	d, err := s.payers.Payer(ctx, t, dk)
	if err != nil {
		return nil, fmt.Errorf("charges: the debtor to name on the cobv: %w", err)
	}
	return d, nil
}

// refusesCobV reports whether a PSP's refusal of a cobv says it takes
// none (the receiver's contract lacks it: 403 AcessoNegado; or the
// route is not there: 404, 405, 501), as opposed to refusing this one
// (400 with its violations), which is shown to the operator instead.
func refusesCobV(err error) bool {
	var re *psp.RejectedError
	if errors.As(err, &re) {
		switch re.Status {
		case http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
			return true
		}
	}
	return errors.Is(err, psp.ErrNotFound)
}

// createAtPSP creates the PSP charge of out under its txid and records
// the code and location it answers. A cobv the PSP answers it cannot take
// becomes a cob for today's quote when mayFallBack (the caller did not
// ask for a cobv by name): out.PixType and CobFallback say so. The
// devedor goes only on a cobv, which requires it: a cob is paid without
// the PSP learning the debtor's document.
func (s *Service) createAtPSP(ctx context.Context, provider psp.PSP, mayFallBack bool, out *Issued, p *policy.Charges, due calendar.Date,
	debtor *psp.Devedor) error {
	var ch *psp.Charge
	var err error
	if psp.Kind(out.PixType) == psp.CobV {
		ch, err = provider.CreateCobV(ctx, psp.CobVInput{TxID: out.ChargeID, AmountCents: out.AmountCents, DueDate: due,
			ValidAfterDueDays: PixDaysAfterDue, FinePercent: p.FinePercent, InterestMonthly: p.LateInterestMonthlyPercent, Debtor: debtor})
		if err != nil && mayFallBack && refusesCobV(err) {
			out.PixType, out.CobFallback = string(psp.Cob), FallbackPSPRefused
		}
	}
	if psp.Kind(out.PixType) == psp.Cob {
		ch, err = provider.CreateCob(ctx, psp.CobInput{TxID: out.ChargeID, AmountCents: out.AmountCents,
			ExpirationSeconds: int(PixExpiration / time.Second)})
	}
	if err != nil {
		return pspError(err)
	}
	if ch.PixCopiaECola == "" || ch.AmountCents != out.AmountCents {
		return errs.E(errs.Transient, "psp_bad_answer", "the PSP answered a charge without a BR Code or with another amount; retry")
	}
	out.PixCopiaECola, out.Location = ch.PixCopiaECola, ch.Location
	return nil
}

// pspError maps a PSP failure to the API: a refusal is the tenant's
// configuration or our request (422), anything else a dependency down (503).
func pspError(err error) error {
	if errors.Is(err, psp.ErrRejected) || errors.Is(err, psp.ErrNotFound) {
		return errs.Wrap(errs.Rule, "psp_rejected", err, "the tenant's PSP refused the charge: "+err.Error())
	}
	return errs.Wrap(errs.Transient, "psp_unavailable", err, "the tenant's PSP is unavailable; retry")
}
