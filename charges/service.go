package charges

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
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
	"lastro/contract"
	"lastro/policy"
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
}

// NewService returns the charges service.
func NewService(d Deps) *Service {
	return &Service{kit: d.Kit, tenants: d.Tenants, policies: d.Policies, clock: d.Clock, idem: d.Idem, newID: NewChargeID}
}

func (s *Service) db(t *tenant.Tenant) *kit.Tenant { return s.kit.Tenant(t.ID, t.CursorKey()) }

// Input is the body of POST /v1/charges.
type Input struct {
	DebtorKey  string `json:"debtorKey"`
	ContractID string `json:"contractId"`
	Seq        int    `json:"seq"`
	Method     string `json:"method"`
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
}

// Validity says how long a charge is payable for its quoted amount: a Pix
// charge for Seconds after it was created (the Central Bank's cob
// calendario.expiracao, 24 hours by default), a boleto until the end of
// its due date's civil day in the tenant's time zone.
type Validity struct {
	Rule    string `json:"rule" dynamodbav:"rule"`                           // PIX_EXPIRATION | BOLETO_DUE_DATE
	Seconds int    `json:"seconds,omitempty" dynamodbav:"seconds,omitempty"` // PIX_EXPIRATION
	DueDate string `json:"dueDate,omitempty" dynamodbav:"dueDate,omitempty"` // BOLETO_DUE_DATE
}

// Validity rules.
const (
	RulePixExpiration = "PIX_EXPIRATION"
	RuleBoletoDueDate = "BOLETO_DUE_DATE"
)

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
	Version       int        `dynamodbav:"version"`
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
	return nil
}

// Issue creates a charge for what an instalment owes: a Pix charge
// quoting today's amount, payable for 24 hours (PixExpiration); a boleto
// quoting the amount on its due date, the first business day from today
// (a boleto is paid through clearing, on business days), payable until
// the end of that day in the tenant's time zone. Each is computed with the
// charges policy version the contract was signed under. The charge item
// and its lookup are written in one transaction, so a webhook can never
// see one without the other.
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
	cal := t.Calendar()
	payDate := calendar.Today(now, t.Location)
	var validity Validity
	var expires time.Time
	if in.Method == BOLETO {
		payDate = cal.Adjust(payDate)
		validity = Validity{Rule: RuleBoletoDueDate, DueDate: payDate.String()}
		expires = payDate.AddDays(1).Midnight(t.Location).Add(-time.Second)
	} else {
		validity = Validity{Rule: RulePixExpiration, Seconds: int(PixExpiration / time.Second)}
		expires = now.Add(PixExpiration).Truncate(time.Second)
	}
	a, owed := AmountDue(p, cal, st, payDate)
	if owed.Total() == 0 {
		return nil, errNothingDue
	}
	exp := expires.In(t.Location).Format(time.RFC3339)
	out := &Issued{Method: in.Method, ContractID: in.ContractID, Seq: in.Seq, AmountCents: owed.Total(), ExpiresAt: exp, Validity: validity,
		ComputedFor: payDate.String(), DueDate: inst.DueDate, DaysLate: a.DaysLate, Breakdown: owed, ChargesPolicy: c.Header.ChargesPolicy}
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
		item, err := attributevalue.MarshalMap(chargeItem{PK: keys.Debtor(t.ID, in.DebtorKey), SK: keys.ContractCharge(in.ContractID, out.ChargeID),
			Type: "CHARGE", ChargeID: out.ChargeID, Method: in.Method, ContractID: in.ContractID, Seq: in.Seq, AmountCents: out.AmountCents,
			ComputedFor: out.ComputedFor, DaysLate: a.DaysLate, Breakdown: owed, ChargesPolicy: c.Header.ChargesPolicy, ExpiresAt: exp,
			Validity: validity, CreatedAt: ts, Barcode: out.Barcode, Version: 1})
		if err != nil {
			return nil, err
		}
		lookup, err := attributevalue.MarshalMap(Lookup{PK: keys.Charge(t.ID, out.ChargeID), SK: keys.ChargeSK, Type: "CHARGE_LOOKUP",
			ChargeID: out.ChargeID, Method: in.Method, DebtorKey: in.DebtorKey, ContractID: in.ContractID, Seq: in.Seq,
			AmountCents: out.AmountCents, ExpiresAt: exp, CreatedAt: ts, ComputedFor: out.ComputedFor, Breakdown: owed, Version: 1})
		if err != nil {
			return nil, err
		}
		err = s.db(t).Transact(ctx, kit.PutAction(lookup, &notExists), kit.PutAction(item, &notExists))
		if err == nil {
			return out, nil
		}
		// A generated id already taken (astronomically rare): draw again.
		if !errors.Is(err, kit.ErrConditionFailed) {
			return nil, fmt.Errorf("issue charge: %w", err)
		}
	}
	return nil, errs.E(errs.Transient, "charge_id_collision", "could not allocate a charge id; retry")
}

// boletoID makes a generated 17-digit number a nosso número of the
// tenant's convênio: the convênio's 7 digits, then the number's last 10
// (a sequence the bank leaves to the beneficiary). The charge id is the
// nosso número, so a return file's liquidation finds its charge by it.
func boletoID(t *tenant.Tenant, generated string) (string, error) {
	set := t.Boleto()
	if _, err := set.Layout(); err != nil {
		return "", err
	}
	return set.Convenio + generated[len(generated)-10:], nil
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
