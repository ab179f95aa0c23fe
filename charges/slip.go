package charges

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/boleto"
	"lastro/boleto/slip"
	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/psp"
	"lastro/tenant"
)

// View is a charge as GET /v1/charges/{chargeId} answers it: what was
// issued, whether it was cancelled, and a boleto's registration.
type View struct {
	Issued
	DebtorKey    string `json:"debtorKey"`
	Status       string `json:"status"` // OPEN | CANCELLED
	CreatedAt    string `json:"createdAt"`
	CancelledAt  string `json:"cancelledAt,omitempty"`
	CancelReason string `json:"cancelReason,omitempty"`
}

// QRSize is the side of the QR image, in pixels.
const QRSize = 512

// view reads a charge's item through its lookup, strongly consistent.
func (s *Service) view(ctx context.Context, t *tenant.Tenant, chargeID string) (*View, *chargeItem, error) {
	if !keys.ValidIdentifier(chargeID) {
		return nil, nil, errs.E(errs.Invalid, "invalid_charge_id", "chargeId must be 1-64 of A-Z a-z 0-9 - _ .")
	}
	it, err := s.db(t).Get(ctx, kit.Key{PK: keys.Charge(t.ID, chargeID), SK: keys.ChargeSK}, true)
	if err != nil {
		return nil, nil, fmt.Errorf("charges: read lookup: %w", err)
	}
	if it == nil {
		return nil, nil, errChargeNotFound
	}
	var lk Lookup
	if err := attributevalue.UnmarshalMap(it, &lk); err != nil {
		return nil, nil, fmt.Errorf("charges: decode lookup: %w", err)
	}
	raw, err := s.db(t).Get(ctx, kit.Key{PK: keys.Debtor(t.ID, lk.DebtorKey), SK: keys.ContractCharge(lk.ContractID, chargeID)}, true)
	if err != nil {
		return nil, nil, fmt.Errorf("charges: read charge: %w", err)
	}
	if raw == nil {
		return nil, nil, errChargeNotFound
	}
	var item chargeItem
	var reg struct {
		Registration *Registration `dynamodbav:"registration"`
	}
	if err := attributevalue.UnmarshalMap(raw, &item); err != nil {
		return nil, nil, fmt.Errorf("charges: decode charge: %w", err)
	}
	if err := attributevalue.UnmarshalMap(raw, &reg); err != nil {
		return nil, nil, fmt.Errorf("charges: decode registration: %w", err)
	}
	v := &View{Issued: Issued{ChargeID: item.ChargeID, Method: item.Method, ContractID: item.ContractID, Seq: item.Seq, AmountCents: item.AmountCents,
		ExpiresAt: item.ExpiresAt, Validity: item.Validity, ComputedFor: item.ComputedFor, DaysLate: item.DaysLate, Breakdown: item.Breakdown,
		ChargesPolicy: item.ChargesPolicy, Barcode: item.Barcode, PixType: item.PixType, PixCopiaECola: item.PixCopiaECola, Location: item.Location,
		Registration: reg.Registration}, DebtorKey: lk.DebtorKey, Status: "OPEN", CreatedAt: item.CreatedAt, CancelledAt: item.CancelledAt,
		CancelReason: item.CancelReason}
	if item.Status == StatusCancelled {
		v.Status = StatusCancelled
	}
	if item.Barcode != "" {
		if b, err := boleto.Parse(item.Barcode); err == nil {
			v.LinhaDigitavel = b.Line()
		}
	}
	return v, &item, nil
}

// Get answers a charge, a boleto's registration included.
func (s *Service) Get(ctx context.Context, t *tenant.Tenant, chargeID string) (*View, error) {
	v, _, err := s.view(kit.Within(ctx, "charge.get"), t, chargeID)
	return v, err
}

// docNumber is a boleto's número do documento (seu número): its contract
// and instalment, within the 15 characters the bank keeps.
func docNumber(contractID string, seq int) string { return fmt.Sprintf("%.11s/%03d", contractID, seq) }

// formatCNPJ prints 14 digits as 11.222.333/0001-81; anything else as is.
func formatCNPJ(d string) string {
	if len(d) != 14 {
		return d
	}
	return d[0:2] + "." + d[2:5] + "." + d[5:8] + "/" + d[8:12] + "-" + d[12:]
}

func (s *Service) payerParty(ctx context.Context, t *tenant.Tenant, dk string) (slip.Party, error) {
	if s.debtors == nil {
		return slip.Party{}, errs.E(errs.Rule, "slip_not_configured", "this engine was built without the payer reader")
	}
	p, err := s.debtors.BoletoPayer(ctx, t, dk)
	if err != nil {
		return slip.Party{}, err
	}
	// The masked document: whoever prints the slip sees no more of it
	// than the 360 view shows (revealing it is compliance's, ADR 0071).
	return slip.Party{Name: p.Name, Document: p.MaskedDocument}, nil
}

// Slip renders a charge's printable slip: a boleto's FEBRABAN slip with
// its barcode, or a Pix charge's QR and copia-e-cola. A Pix charge issued
// without a PSP has no code to print (422 no_br_code).
func (s *Service) Slip(ctx context.Context, t *tenant.Tenant, chargeID string) ([]byte, error) {
	ctx = kit.Within(ctx, "charge.slip")
	v, item, err := s.view(ctx, t, chargeID)
	if err != nil {
		return nil, err
	}
	created, _ := time.Parse(time.RFC3339Nano, item.CreatedAt)
	payer, err := s.payerParty(ctx, t, v.DebtorKey)
	if err != nil {
		return nil, err
	}
	set := t.Boleto()
	ben := slip.Party{Name: set.BeneficiaryName, Document: formatCNPJ(set.BeneficiaryDocument)}
	if item.Method == PIX {
		if item.PixCopiaECola == "" {
			return nil, errNoBRCode
		}
		pv := slip.Pix{AmountCents: item.AmountCents, ValidUntil: item.ExpiresAt, Code: item.PixCopiaECola, Beneficiary: ben, Payer: payer,
			CreatedAt: created}
		if item.PixType == string(psp.CobV) {
			pv.DueDate, _ = calendar.Parse(item.Validity.DueDate)
		}
		return slip.PixPDF(pv)
	}
	b, err := boleto.Parse(item.Barcode)
	if err != nil {
		return nil, fmt.Errorf("charges: stored barcode: %w", err)
	}
	bank, ok := boleto.BankOf(b.Bank)
	if !ok {
		return nil, fmt.Errorf("charges: stored barcode of an unknown bank")
	}
	due, _ := calendar.Parse(item.ComputedFor)
	issued := calendar.Today(created, t.Location)
	var instructions []string
	if pv, err := contract.PolicyVersion(item.ChargesPolicy); err == nil {
		if p, err := s.policies.Charges(ctx, t, pv); err == nil {
			instructions = append(instructions, fmt.Sprintf("Após o vencimento, multa de %s%% e juros de %s%% ao mês.",
				p.FinePercent.StringFixed(2), p.LateInterestMonthlyPercent.StringFixed(2)))
		}
	}
	instructions = append(instructions, "Parcela "+docNumber(item.ContractID, item.Seq)+".", "Não receber após 60 dias do vencimento.")
	return slip.BoletoPDF(slip.Boleto{Bank: bank, Boleto: b, DueDate: due, NossoNumero: item.ChargeID, DocNumber: docNumber(item.ContractID, item.Seq),
		Carteira: set.Carteira, AgencyCode: agencyCode(set), IssuedOn: issued, Beneficiary: ben, Payer: payer, Instructions: instructions,
		CreatedAt: created})
}

func agencyCode(set tenant.BoletoSettings) string {
	ag, ct := set.Agencia, set.Conta
	if set.AgenciaDV != "" {
		ag += "-" + set.AgenciaDV
	}
	if set.ContaDV != "" {
		ct += "-" + set.ContaDV
	}
	return ag + " / " + ct
}

var errNoBRCode = errs.E(errs.Rule, "no_br_code", "the charge has no BR Code: it is a boleto, or a Pix charge issued without a PSP")

// QR renders a Pix charge's BR Code as a QR image (PNG).
func (s *Service) QR(ctx context.Context, t *tenant.Tenant, chargeID string) ([]byte, error) {
	_, item, err := s.view(kit.Within(ctx, "charge.qr"), t, chargeID)
	if err != nil {
		return nil, err
	}
	if item.Method != PIX || item.PixCopiaECola == "" {
		return nil, errNoBRCode
	}
	return slip.QRPNG(item.PixCopiaECola, QRSize)
}
