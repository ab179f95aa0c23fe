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
	"strconv"
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
	Raw           *CobPayload // the whole answer, for reconciliation
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
}

// Charge is p as the port answers it.
func (p *CobPayload) Charge(kind Kind) (*Charge, error) {
	cents, err := ParseValor(p.Valor.Original)
	if err != nil {
		return nil, fmt.Errorf("%w: valor.original: %v", ErrRejected, err)
	}
	return &Charge{Kind: kind, TxID: p.TxID, Status: p.Status, Revision: p.Revisao, AmountCents: cents, Location: p.Location,
		PixCopiaECola: p.PixCopiaECola, Raw: p}, nil
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

// ParseValor reads the API's money exactly into cents: digits, a dot and
// two decimals ("0.10", "1234.50"); a missing or single decimal is
// accepted from lenient providers ("1234", "1234.5"), anything else —
// exponents, signs, a third decimal — is refused. No float decides a cent.
func ParseValor(s string) (int64, error) {
	whole, frac, dot := strings.Cut(s, ".")
	ok := whole != "" && len(whole) <= 13 && len(frac) <= 2 && !(dot && frac == "")
	for _, part := range []string{whole, frac} {
		for i := 0; i < len(part); i++ {
			ok = ok && part[i] >= '0' && part[i] <= '9'
		}
	}
	if !ok {
		return 0, fmt.Errorf("valor %q is not a decimal like 123.45", s)
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
	}
	return w*100 + f, nil
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
