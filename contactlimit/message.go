package contactlimit

import (
	"slices"
	"strconv"
	"strings"

	"lastro/debtor"
	"lastro/policy"
	"lastro/tenant"
)

// ReasonNoAddress blocks a contact whose channel, and every fallback, has
// no address on the debtor's profile: nothing is sent and no contact of
// the day is spent (ADR 0066).
const ReasonNoAddress Reason = "NO_ADDRESS"

// OutcomeSkippedNoAddress is the outcome of a ReasonNoAddress attempt.
const OutcomeSkippedNoAddress = "SKIPPED_NO_ADDRESS"

// MessageFacts are what a message may say beyond the claim's own facts,
// computed by the caller that knows the contract (the agenda): never
// personal data.
type MessageFacts struct {
	// ContractIDs are every contract the message is about (the claim's
	// own when empty).
	ContractIDs []string
	// AmountDueCents is what is overdue today with its fine and late
	// interest ({{amountDue}}, and {{amount}}, its alias).
	AmountDueCents   int64
	OutstandingCents int64  // the whole open balance ({{outstanding}})
	OldestDueDate    string // the oldest overdue instalment's due date
	PixCopiaECola    string // the open charge's Pix code, when there is one
	PaymentLink      string // the open charge's payment page, when there is one
	ReportDate       string // a bureau notice's: the first day the debt may be reported
}

// route picks the channel a claim goes out on: its own, else the first
// fallback the debtor neither refused nor lacks an address for. It
// answers the reason no channel will do: OPT_OUT when the claim's own
// channel was refused (and no fallback helps), else NO_ADDRESS.
func route(c Claim, prof *debtor.ContactProfile) (Channel, Reason) {
	optedOut := func(ch Channel) bool { return slices.Contains(prof.OptOut, string(ch)) }
	if optedOut(c.Channel) && len(c.Fallbacks) == 0 {
		return c.Channel, ReasonOptOut
	}
	for _, ch := range append([]Channel{c.Channel}, c.Fallbacks...) {
		if !optedOut(ch) && prof.Reaches(string(ch)) {
			return ch, ""
		}
	}
	if optedOut(c.Channel) {
		return c.Channel, ReasonOptOut
	}
	return c.Channel, ReasonNoAddress
}

// defaultText is the message of an action the policy has no template for:
// contract facts only.
const defaultText = "{{tenantName}}: o contrato {{contractIds}} tem {{amountDue}} em atraso desde {{oldestDueDate}}. Regularize ou fale conosco."

// defaultPlainText is defaultText when the claim carries no amount (an
// operator's contact).
const defaultPlainText = "{{tenantName}}: o contrato {{contractIds}} tem pagamento em aberto. Regularize ou fale conosco."

// defaultNoticeText is the bureau notice of a policy without a template
// for it (CDC art. 43 §2, ADR 0067): the creditor, the contract, the
// amount overdue and its due date, the bureau, the date before which the
// debt is not reported, and how to pay or contest.
const defaultNoticeText = "{{tenantName}} comunica: o contrato {{contractIds}} tem {{amountDue}} em atraso, vencido em {{oldestDueDate}}. " +
	"Se não for pago ou contestado até {{reportDate}}, o débito poderá ser incluído no cadastro de inadimplentes {{bureauName}} " +
	"(CDC art. 43, par. 2). Para contestar, responda a esta mensagem ou procure {{tenantName}} pelos canais de atendimento."

// render is the claim's message: the template of its step in pol (the
// policy version the contract was signed under), else the default text
// of its kind, filled with the claim's facts.
func render(t *tenant.Tenant, pol *policy.Dunning, c Claim) string {
	tpl, ok := pol.Template(c.Template)
	if !ok {
		if tpl, ok = pol.Template(c.Action); !ok {
			tpl = defaultFor(c)
		}
	}
	return policy.Render(tpl, vars(t, pol, c))
}

func defaultFor(c Claim) string {
	f := c.Message
	switch {
	case c.Action == policy.BureauNotice:
		tpl := defaultNoticeText
		if f.PaymentLink != "" {
			tpl += " Pague em {{paymentLink}}."
		}
		if f.PixCopiaECola != "" {
			tpl += " Pix copia e cola: {{pixCopiaECola}}"
		}
		return tpl
	case f.AmountDueCents > 0 || c.AmountCents > 0:
		tpl := defaultText
		if f.PaymentLink != "" {
			tpl += " Pague em {{paymentLink}}."
		}
		return tpl
	}
	return defaultPlainText
}

// vars are the placeholders' values (policy.Placeholders): {{amount}} is
// the amount due today, as {{amountDue}} — never the outstanding balance.
func vars(t *tenant.Tenant, pol *policy.Dunning, c Claim) map[string]string {
	f := c.Message
	ids := f.ContractIDs
	if len(ids) == 0 {
		ids = []string{c.ContractID}
	}
	due := c.DueDate
	if f.OldestDueDate != "" {
		due = f.OldestDueDate
	}
	v := map[string]string{"contractId": c.ContractID, "contractIds": strings.Join(ids, ", "), "tenantName": t.Name,
		"dueDate": due, "oldestDueDate": due, "bureauName": pol.Bureau(), "reportDate": f.ReportDate,
		"pixCopiaECola": f.PixCopiaECola, "paymentLink": f.PaymentLink}
	amountDue := f.AmountDueCents
	if amountDue == 0 {
		amountDue = c.AmountCents
	}
	if amountDue > 0 {
		v["amount"], v["amountDue"] = brl(amountDue), brl(amountDue)
	}
	if f.OutstandingCents > 0 {
		v["outstanding"] = brl(f.OutstandingCents)
	}
	if c.DaysPastDue > 0 {
		v["daysPastDue"] = strconv.Itoa(c.DaysPastDue)
	}
	return v
}
