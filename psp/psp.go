// Package psp is the port through which the engine reaches a tenant's
// Pix payment service provider (PSP): the subset of the Central Bank's
// Pix API (v2) it needs — an immediate charge (cob), a charge with a due
// date that carries its own fine and interest (cobv), reading either back
// to reconcile, removing one, refunding a payment (devolução) and
// registering the webhook the PSP posts payments to. The wire shapes here
// are the API's own JSON, shared by the client (psp/bacen) and the
// sandbox (psp/sandbox); requests and answers are distinct types because
// the API's schemas differ (an answer's revisao, loc and recebedor are
// the PSP's to fill, never ours to send).
package psp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// CobInput is an immediate charge for an amount. Debtor is optional on a
// cob (the API allows one without it).
type CobInput struct {
	TxID              string
	AmountCents       int64
	ExpirationSeconds int
	Debtor            *Devedor
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
	// Debtor is required: the API refuses a cobv without devedor.
	Debtor *Devedor
}

// Devedor is the person or company a charge is addressed to: a CPF (11
// digits) or a CNPJ (14 characters), never both, and the name. It is
// personal data: it comes from the debtor's sealed profile, is decrypted
// in process for the one request, and never reaches a log, an error or
// an event — String and LogValue print nothing of it.
type Devedor struct {
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
	Nome string `json:"nome"`
}

// String hides the debtor: a Devedor printed with %v says only which
// document it holds.
func (d Devedor) String() string {
	if d.CNPJ != "" {
		return "devedor{cnpj}"
	}
	return "devedor{cpf}"
}

// GoString hides the debtor from %#v too.
func (d Devedor) GoString() string { return d.String() }

// LogValue hides the debtor from slog.
func (d Devedor) LogValue() slog.Value { return slog.StringValue(d.String()) }

// Recebedor is the receiver a PSP names in a cobv's answer: its name,
// document and address (the API requires logradouro, cidade, uf, cep).
type Recebedor struct {
	CNPJ       string `json:"cnpj,omitempty"`
	CPF        string `json:"cpf,omitempty"`
	Nome       string `json:"nome"`
	Logradouro string `json:"logradouro"`
	Cidade     string `json:"cidade"`
	UF         string `json:"uf"`
	CEP        string `json:"cep"`
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
	// Refund asks the PSP to return part or all of a payment to its payer
	// (PUT /pix/{e2eid}/devolucao/{id}); the id is ours, so asking again
	// with the same id answers the same refund instead of a second one.
	Refund(ctx context.Context, in RefundInput) (*Refund, error)
	// GetRefund reads a refund back (GET /pix/{e2eid}/devolucao/{id}).
	GetRefund(ctx context.Context, endToEndID, id string) (*Refund, error)
}

// Errors a PSP returns, to be compared with errors.Is.
var (
	ErrNotFound    = errors.New("psp: charge not found")
	ErrRejected    = errors.New("psp: request rejected")
	ErrUnavailable = errors.New("psp: provider unavailable")
)

// RejectedError is a refusal the PSP explained (RFC 7807 with the Pix
// API's violacoes): what the engine shows the operator so a refused
// charge says why. It unwraps to ErrRejected. Only the problem's type,
// each violation's razao and propriedade are kept, never its valor (the
// value refused, which may be a CPF or a name), and every text is
// scrubbed of anything that looks like a document, a phone or an e-mail.
type RejectedError struct {
	Status     int         // the HTTP status, 4xx
	Type       string      // the last segment of the problem's type URI (CobVOperacaoInvalida...)
	Route      string      // the route called (PUT /cobv/{txid}), never the path
	Violations []Violation // what the PSP refused
}

// Violation is one entry of a problem's violacoes.
type Violation struct {
	Razao       string `json:"razao,omitempty"`
	Propriedade string `json:"propriedade,omitempty"`
}

func (e *RejectedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s answered %d", ErrRejected.Error(), e.Route, e.Status)
	if e.Type != "" {
		b.WriteString(" " + e.Type)
	}
	for i, v := range e.Violations {
		if i == 0 {
			b.WriteString(":")
		} else {
			b.WriteString(";")
		}
		if v.Propriedade != "" {
			b.WriteString(" " + v.Propriedade)
		}
		if v.Razao != "" {
			b.WriteString(" (" + v.Razao + ")")
		}
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrRejected) hold.
func (e *RejectedError) Unwrap() error { return ErrRejected }

// Scrub bounds a PSP's free text and blanks what could be personal data
// in it: a run of 8 or more digits (punctuation between them included: a
// CPF, a CNPJ, a phone) and any word with an @ (an e-mail). A PSP's
// violation text may quote what it refused.
func Scrub(s string, max int) string {
	words := strings.Fields(s)
	for i, w := range words {
		digits := 0
		for _, r := range w {
			if r >= '0' && r <= '9' {
				digits++
			}
		}
		if strings.Contains(w, "@") || digits >= 8 {
			words[i] = "[redacted]"
			continue
		}
		words[i] = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return -1
			}
			return r
		}, w)
	}
	out := strings.Join(words, " ")
	if len(out) > max {
		cut := max
		for cut > 0 && out[cut]&0xc0 == 0x80 { // never split a UTF-8 sequence
			cut--
		}
		out = out[:cut]
	}
	return out
}

// RefundInput is a devolução of a payment: Amount cents of the Pix
// EndToEndID, under our refund ID (1-35 letters and digits).
type RefundInput struct {
	EndToEndID  string
	ID          string
	AmountCents int64
	// Description is shown to the payer (descricao, at most 140
	// characters); never personal data.
	Description string
}

// Refund is a devolução as the PSP answers it.
type Refund struct {
	ID          string
	RtrID       string
	AmountCents int64
	Status      string // EM_PROCESSAMENTO | DEVOLVIDO | NAO_REALIZADO
	RequestedAt string // horario.solicitacao, RFC 3339
	SettledAt   string // horario.liquidacao, once DEVOLVIDO
}

// Refund statuses (the API's Devolucao.status).
const (
	RefundInProcess = "EM_PROCESSAMENTO"
	RefundReturned  = "DEVOLVIDO"
	RefundNotDone   = "NAO_REALIZADO"
)

// DevolucaoRequest is the body of PUT /pix/{e2eid}/devolucao/{id}.
type DevolucaoRequest struct {
	Valor     string `json:"valor"`
	Natureza  string `json:"natureza,omitempty"`
	Descricao string `json:"descricao,omitempty"`
}

// DevolucaoHorario is a devolução's horario.
type DevolucaoHorario struct {
	Solicitacao string `json:"solicitacao,omitempty"`
	Liquidacao  string `json:"liquidacao,omitempty"`
}

// Devolucao is a devolução as the API shows it: the answer of PUT and
// GET /pix/{e2eid}/devolucao/{id}, and an entry of a payment's devolucoes.
type Devolucao struct {
	ID        string           `json:"id"`
	RtrID     string           `json:"rtrId"`
	Valor     string           `json:"valor"`
	Natureza  string           `json:"natureza,omitempty"`
	Descricao string           `json:"descricao,omitempty"`
	Horario   DevolucaoHorario `json:"horario"`
	Status    string           `json:"status"`
	Motivo    string           `json:"motivo,omitempty"`
}

// Refund is d as the port answers it.
func (d *Devolucao) Refund() (*Refund, error) {
	cents, err := ParseValor(d.Valor)
	if err != nil {
		return nil, fmt.Errorf("%w: devolucao valor: %v", ErrUnavailable, err)
	}
	switch d.Status {
	case RefundInProcess, RefundReturned, RefundNotDone:
	default:
		return nil, fmt.Errorf("%w: devolucao status is not one of the API's", ErrUnavailable)
	}
	return &Refund{ID: d.ID, RtrID: d.RtrID, AmountCents: cents, Status: d.Status, RequestedAt: d.Horario.Solicitacao,
		SettledAt: d.Horario.Liquidacao}, nil
}

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

// Loc is the location the PSP serves the charge at, as its answers show
// it (the API requires id, txid, tipoCob and criacao).
type Loc struct {
	ID       int64  `json:"id"`
	TxID     string `json:"txid,omitempty"`
	Location string `json:"location,omitempty"`
	TipoCob  string `json:"tipoCob"`
	Criacao  string `json:"criacao,omitempty"`
}

// CobRequest is the body of PUT /cob/{txid} (CobSolicitada) and
// /cobv/{txid} (CobVSolicitada): what the receiver sends. A cobv needs
// Devedor; a cob may carry one.
type CobRequest struct {
	Calendario Calendario `json:"calendario"`
	Devedor    *Devedor   `json:"devedor,omitempty"`
	Valor      Valor      `json:"valor"`
	Chave      string     `json:"chave"`
	// SolicitacaoPagador is the text shown to the payer.
	SolicitacaoPagador string `json:"solicitacaoPagador,omitempty"`
}

// PatchRequest is the body of PATCH /cob|cobv/{txid} the engine sends:
// only the status, to remove the charge.
type PatchRequest struct {
	Status string `json:"status"`
}

// CobPayload is a cob or cobv as the PSP answers it (CobGerada,
// CobVGerada, and with pix[] CobCompleta, CobVCompleta). revisao is
// always present, starting at 0.
type CobPayload struct {
	Calendario    Calendario `json:"calendario"`
	TxID          string     `json:"txid"`
	Revisao       int        `json:"revisao"`
	Loc           *Loc       `json:"loc,omitempty"`
	Location      string     `json:"location,omitempty"`
	Status        string     `json:"status"`
	Devedor       *Devedor   `json:"devedor,omitempty"`
	Recebedor     *Recebedor `json:"recebedor,omitempty"`
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
	// Devolucoes are the payment's refunds, in a notice sent when one
	// reached a final status and in GET answers.
	Devolucoes []Devolucao `json:"devolucoes,omitempty"`
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
