package ui

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"lastro/collections/calendar"
)

// The pages speak Portuguese first (ADR 0080): the words below are the
// labels of codes the API answers as is (statuses, buckets, events), so
// the API stays stable and the pages read as a Brazilian collector says.

// bucketNames are the portfolio buckets as a collector says them.
var bucketNames = map[string]string{
	"D001_030":  "1–30 dias",
	"D031_060":  "31–60 dias",
	"D061_090":  "61–90 dias",
	"D091_PLUS": "mais de 90 dias",
}

// labels are the statuses, channels and reasons the pages show.
var labels = map[string]string{
	// instalments and contracts
	"OPEN": "Em aberto", "OVERDUE": "Vencida", "PAID": "Paga", "RENEGOTIATED": "Renegociada",
	"ACTIVE": "Ativo", "IN_COLLECTION": "Em cobrança", "IN_AGREEMENT": "Em acordo", "SETTLED": "Quitado", "WRITTEN_OFF": "Baixado como perda",
	// promises, charges, disputes
	"PENDING": "Pendente", "KEPT": "Cumprida", "BROKEN": "Quebrada", "CANCELLED": "Cancelada", "ISSUED": "Emitida",
	"EXPIRED": "Expirada",
	// channels
	"SMS": "SMS", "EMAIL": "E-mail", "WHATSAPP": "WhatsApp", "CALL": "Ligação", "LETTER": "Carta",
	// contact gateway reasons
	"LIMIT": "limite diário de contatos atingido", "WINDOW": "fora do horário permitido", "HOLIDAY": "feriado",
	"OPT_OUT": "o devedor pediu para não ser contatado por este canal", "DISPUTE": "contestação em aberto",
	// call outcomes
	"REACHED": "falou com o devedor", "NO_ANSWER": "não atendeu", "WRONG_NUMBER": "número errado", "REFUSED": "recusou-se a falar",
	"PROMISE": "promessa de pagamento", "CALLBACK": "pediu retorno",
	// roles
	"operator": "operador(a)", "supervisor": "supervisor(a)", "compliance": "compliance",
}

// eventNames are the audit events in words.
var eventNames = map[string]string{
	"ContractCreated": "Contrato cadastrado", "DebtorRegistered": "Devedor cadastrado",
	"SettlementApplied": "Pagamento aplicado", "SettlementResolved": "Pagamento pendente atribuído", "SettlementReversed": "Pagamento estornado",
	"PromiseMade": "Promessa registrada", "PromiseKept": "Promessa cumprida", "PromiseBroken": "Promessa quebrada",
	"ContactRevealed": "Contato revelado a um cobrador", "DocumentRevealed": "Documento revelado (compliance)",
	"AgreementSigned": "Acordo assinado", "AgreementEffective": "Acordo em vigor", "AgreementLapsed": "Acordo caducou",
	"AgreementBroken": "Acordo quebrado", "InstallmentRenegotiated": "Parcela renegociada", "InstallmentRestored": "Parcela restabelecida",
	"DisputeOpened": "Contestação aberta", "DisputeResolved": "Contestação resolvida", "WrittenOff": "Baixado como perda",
	"StepExecuted": "Ação da régua executada", "StepBlocked": "Ação da régua bloqueada", "CreditApplied": "Crédito aplicado",
	"BureauReported": "Negativado no birô", "BureauRemoved": "Negativação retirada", "NoticeDelivered": "Notificação prévia entregue",
}

// label is the word for code, or code itself when it has none.
func label(code string) string {
	if l, ok := labels[code]; ok {
		return l
	}
	return code
}

// bucketName is a bucket in words ("" for none).
func bucketName(code any) string {
	s := deref(code)
	if n, ok := bucketNames[s]; ok {
		return n
	}
	return s
}

// eventName is an audit event in words.
func eventName(code string) string {
	if n, ok := eventNames[code]; ok {
		return n
	}
	return code
}

// brDate writes an ISO civil date as 29/09/2026 (as is when it is not one).
func brDate(v any) string {
	s := deref(v)
	d, err := calendar.Parse(s)
	if err != nil {
		return s
	}
	return d.Midnight(time.UTC).Format("02/01/2006")
}

// deref reads a string or a *string (the view's optional fields).
func deref(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case *string:
		if s != nil {
			return *s
		}
	}
	return ""
}

// brTime writes an RFC 3339 instant in loc as 29/09/2026 14:05.
func brTime(loc *time.Location, v any) string {
	s := deref(v)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("02/01/2006 15:04")
}

// detailText renders an event's details as words a collector reads:
// amounts in reais, dates as dates, codes as labels.
func detailText(details map[string]any) string {
	var parts []string
	for _, k := range sortedKeys(details) {
		v := details[k]
		name := k
		val := ""
		switch x := v.(type) {
		case float64:
			val = strconv.FormatFloat(x, 'f', -1, 64)
			if strings.HasSuffix(k, "Cents") {
				name, val = strings.TrimSuffix(k, "Cents"), money(int64(x))
			}
		case string:
			val = label(x)
			if _, err := calendar.Parse(x); err == nil {
				val = brDate(x)
			}
		case bool:
			val = map[bool]string{true: "sim", false: "não"}[x]
		default:
			continue
		}
		parts = append(parts, name+": "+val)
	}
	return strings.Join(parts, " · ")
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
