package ui

import (
	"slices"
	"strconv"
	"strings"

	"lastro/collections/calendar"
)

// The pages speak Portuguese first (ADR 0080, 0086): the words below are
// the labels of codes the API answers as is (statuses, buckets, events),
// so the API stays stable and the pages read as a Brazilian collector
// says. Each word is a message id: englishTexts (words_en.go) has its
// English.

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
	"NO_ADDRESS": "sem endereço no canal", // SKIPPED_NO_ADDRESS's reason, on the dashboard (ADR 0085)
	// call outcomes
	"REACHED": "falou com o devedor", "NO_ANSWER": "não atendeu", "WRONG_NUMBER": "número errado", "REFUSED": "recusou-se a falar",
	"PROMISE": "promessa de pagamento", "CALLBACK": "pediu retorno",
	// a CALL attempt once its outcome is recorded (ADR 0085)
	"CALLED": "ligação registrada",
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

// bucketName is a bucket in words, in Portuguese: the message id a page
// translates with {{t}} ("" for none).
func bucketName(code any) string { return portuguese.bucket(code) }

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

// details renders an event's details as words a collector reads, in l:
// amounts in reais, dates as dates, codes as labels.
func (l lang) details(details map[string]any) string {
	var parts []string
	for _, k := range sortedKeys(details) {
		v := details[k]
		name := k
		val := ""
		switch x := v.(type) {
		case float64:
			val = strconv.FormatFloat(x, 'f', -1, 64)
			if strings.HasSuffix(k, "Cents") {
				name, val = strings.TrimSuffix(k, "Cents"), l.money(int64(x))
			}
		case string:
			val = l.label(x)
			if _, err := calendar.Parse(x); err == nil {
				val = l.date(x)
			}
		case bool:
			val = l.T("não")
			if x {
				val = l.T("sim")
			}
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
