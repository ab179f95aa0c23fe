// Package psp is the port through which the engine reaches a tenant's
// Pix payment service provider (PSP): the subset of the Central Bank's
// Pix API (v2) it needs — an immediate charge (cob), a charge with a due
// date that carries its own fine and interest (cobv), reading either back
// to reconcile, removing one, and registering the webhook the PSP posts
// payments to. The wire shapes here are the API's own JSON, shared by the
// client (psp/bacen) and the sandbox (psp/sandbox).
package psp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"lastro/collections/calendar"
)

// Kind is the Pix API collection a charge lives in.
type Kind string

// The two kinds of charge.
const (
	Cob  Kind = "cob"  // immediate: payable for calendario.expiracao seconds
	CobV Kind = "cobv" // with a due date: fine and interest after it
)

// Statuses of a charge (the API's StatusCobranca).
const (
	StatusActive       = "ATIVA"
	StatusPaid         = "CONCLUIDA"
	StatusRemoved      = "REMOVIDA_PELO_USUARIO_RECEBEDOR"
	StatusRemovedByPSP = "REMOVIDA_PELO_PSP"
)

// Modalities of valor.multa and valor.juros in a cobv.
const (
	FinePercent = 2 // multa: percent of valor.original, once
	// InterestMonthlyCalendarDays is juros modality 3, "percentual ao
	// mês (dias corridos)": simple interest, the monthly rate / 30 per
	// calendar day after the due date (ADR 0037).
	InterestMonthlyCalendarDays = 3
)

// CobInput is an immediate charge for an amount.
type CobInput struct {
	TxID              string
	AmountCents       int64
	ExpirationSeconds int
}

// CobVInput is a charge due on DueDate; paid later (up to
// ValidAfterDueDays calendar days), the PSP adds the fine and the interest
// itself, both percentages of the amount.
type CobVInput struct {
	TxID              string
	AmountCents       int64
	DueDate           calendar.Date
	ValidAfterDueDays int
	FinePercent       decimal.Decimal
	InterestMonthly   decimal.Decimal
}

// Charge is a charge as the PSP answers it.
type Charge struct {
	Kind          Kind
	TxID          string
	Status        string
	Revision      int
	AmountCents   int64
	Location      string // without scheme, as in the BR Code
	PixCopiaECola string
	// Payments are the Pix received for the charge (the answer's pix[]),
	// what reconciling a missed webhook applies.
	Payments []Payment
	Raw      *CobPayload // the whole answer, for reconciliation
}

// PSP is a tenant's payment service provider.
type PSP interface {
	// CreateCob creates or overwrites (PUT /cob/{txid}) an immediate charge.
	CreateCob(ctx context.Context, in CobInput) (*Charge, error)
	// CreateCobV creates or overwrites (PUT /cobv/{txid}) a charge with a due date.
	CreateCobV(ctx context.Context, in CobVInput) (*Charge, error)
	// Get reads a charge back (GET /cob|cobv/{txid}).
	Get(ctx context.Context, kind Kind, txid string) (*Charge, error)
	// Cancel removes an unpaid charge (PATCH, status REMOVIDA_PELO_USUARIO_RECEBEDOR).
	Cancel(ctx context.Context, kind Kind, txid string) (*Charge, error)
	// RegisterWebhook points the PSP's payment notices for the tenant's
	// Pix key at url (PUT /webhook/{chave}); the PSP posts to url + "/pix".
	RegisterWebhook(ctx context.Context, url string) error
}

// Errors a PSP returns, to be compared with errors.Is.
var (
	ErrNotFound    = errors.New("psp: charge not found")
	ErrRejected    = errors.New("psp: request rejected")
	ErrUnavailable = errors.New("psp: provider unavailable")
)

// Calendario is the API's calendario object of cob and cobv.
type Calendario struct {
	Criacao                string `json:"criacao,omitempty"`
	Expiracao              int    `json:"expiracao,omitempty"`
	DataDeVencimento       string `json:"dataDeVencimento,omitempty"`
	ValidadeAposVencimento int    `json:"validadeAposVencimento,omitempty"`
}

// Modalidade is a fine or interest of a cobv: a modality and a value
// (percent or amount) with two decimals.
type Modalidade struct {
	Modalidade int    `json:"modalidade"`
	ValorPerc  string `json:"valorPerc"`
}

// Valor is the API's valor object.
type Valor struct {
	Original string      `json:"original"`
	Multa    *Modalidade `json:"multa,omitempty"`
	Juros    *Modalidade `json:"juros,omitempty"`
}

// Loc is the location the PSP serves the charge at.
type Loc struct {
	ID       int64  `json:"id,omitempty"`
	Location string `json:"location,omitempty"`
	TipoCob  string `json:"tipoCob,omitempty"`
}

// CobPayload is the body of PUT /cob/{txid} and /cobv/{txid}, and (with
// the fields the PSP fills) their answers.
type CobPayload struct {
	Calendario    Calendario `json:"calendario"`
	TxID          string     `json:"txid,omitempty"`
	Revisao       int        `json:"revisao,omitempty"`
	Loc           *Loc       `json:"loc,omitempty"`
	Location      string     `json:"location,omitempty"`
	Status        string     `json:"status,omitempty"`
	Valor         Valor      `json:"valor"`
	Chave         string     `json:"chave"`
	PixCopiaECola string     `json:"pixCopiaECola,omitempty"`
	// SolicitacaoPagador is the text shown to the payer.
	SolicitacaoPagador string `json:"solicitacaoPagador,omitempty"`
	// Pix lists the payments received for the charge, in GET answers
	// only (the PSP fills it; a request never carries it).
	Pix []Payment `json:"pix,omitempty"`
}

// Charge is p as the port answers it.
func (p *CobPayload) Charge(kind Kind) (*Charge, error) {
	cents, err := ParseValor(p.Valor.Original)
	if err != nil {
		return nil, fmt.Errorf("%w: valor.original: %v", ErrRejected, err)
	}
	return &Charge{Kind: kind, TxID: p.TxID, Status: p.Status, Revision: p.Revisao, AmountCents: cents, Location: p.Location,
		PixCopiaECola: p.PixCopiaECola, Payments: p.Pix, Raw: p}, nil
}

// WebhookPayload is the body of PUT /webhook/{chave}.
type WebhookPayload struct {
	WebhookURL string `json:"webhookUrl"`
}

// Payment is one entry of the webhook the PSP posts to {url}/pix.
type Payment struct {
	EndToEndID  string `json:"endToEndId"`
	TxID        string `json:"txid,omitempty"`
	Valor       string `json:"valor"`
	Horario     string `json:"horario"`
	Chave       string `json:"chave,omitempty"`
	InfoPagador string `json:"infoPagador,omitempty"`
}

// Notice is the webhook body: {"pix": [...]}.
type Notice struct {
	Pix []Payment `json:"pix"`
}

// FormatValor writes cents as the API's money: "1024.67".
func FormatValor(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

// ParseValor reads the Pix API's money ("valor", a decimal string of
// reais) exactly into cents, never through a float. The API's pattern is
// \d{1,10}\.\d{2}; one digit of fraction is accepted too ("1234.5" is
// 123450: some PSPs drop the trailing zero, and the value is still
// exact). Refused: no point or no digit after it (a bare "1234" could be
// reais or cents), more than two decimals, a sign, an exponent, spaces,
// more than 10 integer digits, and zero. Leading zeros ("01.00") pass, as
// the pattern allows. The settlement webhook and the sandbox share it.
func ParseValor(s string) (int64, error) {
	intPart, frac, ok := strings.Cut(s, ".")
	if !ok || len(intPart) < 1 || len(intPart) > 10 || len(frac) < 1 || len(frac) > 2 || !digits(intPart) || !digits(frac) {
		return 0, ErrValor
	}
	var v int64
	for i := 0; i < len(intPart); i++ {
		v = v*10 + int64(intPart[i]-'0')
	}
	c := int64(frac[0]-'0') * 10
	if len(frac) == 2 {
		c += int64(frac[1] - '0')
	}
	v = v*100 + c // at most 9,999,999,999.99: no overflow
	if v <= 0 {
		return 0, ErrValor
	}
	return v, nil
}

// ErrValor is ParseValor's refusal; it never echoes the input.
var ErrValor = errors.New(`valor must be a positive amount of reais with a point and one or two decimals, such as "1025.00"`)

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatPercent writes a percentage as valorPerc ("2.00"); it refuses one
// with more than two decimals, which the API cannot carry (its pattern is
// \d{1,10}\.\d{2}) and which would be rounded by the PSP otherwise.
func FormatPercent(p decimal.Decimal) (string, error) {
	if p.IsNegative() || !p.Equal(p.Round(2)) {
		return "", fmt.Errorf("percent %s does not fit valorPerc (two decimals)", p.String())
	}
	return p.StringFixed(2), nil
}
