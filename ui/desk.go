package ui

import (
	"context"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"slices"

	"lastro/agenda"
	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/contract"
	"lastro/debtor"
	"lastro/portfolio"
	"lastro/tenant"
	"lastro/worklist"
)

// statusTitle is an HTTP status as the error page's heading says it, in
// Portuguese: the message id the error page translates.
func statusTitle(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return msg("Dados inválidos")
	case http.StatusForbidden:
		return msg("Acesso negado")
	case http.StatusNotFound:
		return msg("Não encontrado")
	case http.StatusConflict:
		return msg("Conflito")
	case http.StatusTooManyRequests:
		return msg("Contato não permitido agora")
	case http.StatusRequestEntityTooLarge:
		return msg("Dados grandes demais")
	}
	if status >= 500 {
		return msg("Erro no servidor")
	}
	return http.StatusText(status)
}

var debtorKeyShape = regexp.MustCompile(`^[0-9a-f]{16}$`)

type findData struct {
	Query   string
	Matches []foundDebtor
	More    bool
}

// foundDebtor is one debtor the search box found, and how.
type foundDebtor struct {
	debtor.Match
	By string // "documento", "telefone", "contrato": a msg, shown through {{t}}
}

// searchResult is what the search box found for what was typed.
type searchResult struct {
	Matches []foundDebtor
	More    bool
	Tried   int    // lookups the text was a valid key for
	Status  int    // with Problem: a refusal worth saying (erased, collision)
	Problem string // in Portuguese
}

// search finds debtors for the search box's text (docs/adr/0084): a CPF
// or CNPJ (with or without punctuation) through the document's keyed
// HMAC lookup, a phone (Brazilian spellings or E.164) through its HMAC's
// lookup partition, a contract id through its own: each tried when the
// text is a valid key of that kind (11 digits may be a CPF, a phone and a
// contract id at once), the matches merged by debtor. Never an index of
// documents, never a Scan.
func search(ctx context.Context, d *debtor.Service, t *tenant.Tenant, q string) (searchResult, error) {
	var res searchResult
	seen := map[string]bool{}
	for _, try := range []struct {
		by string
		in debtor.LookupInput
	}{
		{msg("documento"), debtor.LookupInput{Document: q}},
		{msg("telefone"), debtor.LookupInput{Phone: q}},
		{msg("contrato"), debtor.LookupInput{ContractID: q}},
	} {
		f, err := d.Lookup(ctx, t, try.in)
		status, code, _ := errs.Public(err)
		switch {
		case err == nil:
		case status == http.StatusBadRequest:
			continue // not a key of this kind
		case code == "debtor_not_found":
			res.Tried++
			continue
		case code == "personal_data_erased":
			res.Tried++
			res.Status, res.Problem = status, msg("Os dados pessoais deste devedor foram apagados ao fim da retenção (LGPD); busque pelo número do contrato.")
			continue
		case code == "debtor_key_collision":
			res.Tried++
			res.Status, res.Problem = status, msg("Outro devedor ocupa a chave deste documento; nada foi misturado. Fale com o suporte.")
			continue
		default:
			return res, err
		}
		res.Tried++
		res.More = res.More || f.More
		for _, m := range f.Matches {
			if !seen[m.DebtorKey] {
				seen[m.DebtorKey] = true
				res.Matches = append(res.Matches, foundDebtor{Match: m, By: try.by})
			}
		}
	}
	return res, nil
}

// contractPanel is one contract on the debtor page: its facts, what it
// owes today, and its instalments split into the open and the rest.
type contractPanel struct {
	debtor.ContractView
	Due  *charges.Due
	Open []contract.InstallmentView
	Done []contract.InstallmentView
}

// pixShown is a Pix charge just issued from the page.
type pixShown struct {
	ContractID, ChargeID, CopiaECola, ExpiresAt string
	Seq                                         int
	AmountCents                                 int64
}

type debtorData struct {
	View         *debtor.View360
	Contracts    []contractPanel
	Contacts     []map[string]any
	ContactDays  int
	Events       []contract.EventView
	EventsOf     string
	Card         *debtor.ContactCard
	Pix          *pixShown
	TaskDate     string // the call task being worked (?task=<date>/<contractId>)
	TaskContract string
	Outcomes     []outcomeOption // the tenant's outcome codes, for the call's form
	Form         url.Values      // what a refused form held, to fill it again
	FormOf       string          // which form: "promise:<contractId>" or "contact"
}

// outcomeOption is one of the tenant's outcome codes in the call form's
// select, labelled in the page's language.
type outcomeOption struct{ Code, Label string }

// outcomeOptions are t's outcome codes labelled in l: the English label
// where the page is English and the tenant wrote one, the Portuguese
// otherwise.
func outcomeOptions(t *tenant.Tenant, l lang) []outcomeOption {
	var out []outcomeOption
	for _, c := range t.OutcomeCodes() {
		label := c.LabelPT
		if l == english && c.LabelEN != "" {
			label = c.LabelEN
		}
		out = append(out, outcomeOption{c.Code, label})
	}
	return out
}

// Value is a field of the refused form, for refilling it.
func (d debtorData) Value(name string) string { return d.Form.Get(name) }

// showDebtor renders the debtor page with extra (a card, a Pix, a refused
// form) and problem.
// refused answers a form the services refused on the debtor page itself,
// the form filled again with what was typed and the reason in words.
// contactCard shows the collector the debtor's name and phone; the
// debtor service writes the audit event before it decrypts them.
// pix issues a Pix charge for the oldest open instalment of the contract
// (late first), as POST /v1/charges would, and shows its copia-e-cola
// and QR on the page.
// bucketRow is one bucket on the dashboard: the counters the stream keeps
// and, beside them, the first page's own entries (the same index).
type bucketRow struct {
	Code, Name       string
	Contracts        int64
	OutstandingCents int64
	Counted          bool // the stream's counters exist
	UpdatedAt        string
}

type dashboardData struct {
	Today    string
	MaxCents int64 // the largest bucket's balance: the chart's scale
	Buckets  []bucketRow
	Total    bucketRow
	Agenda   *agendaProgress
	// Calls is today's call list as the collectors worked it.
	Calls callsToday
	// Rolls are the month-over-month roll rates from the monthly exports
	// (none without two months of them); RollChart draws them.
	Rolls      []rollPoint
	RollChart  template.HTML
	RollLinks  []string
	HasExports bool
	// The figures of ADR 0085: promises of today and of the month so far
	// (MonthFrom..Today), the month's cure rate, today's contacts against
	// the cap, each collector's day and the agenda per shard.
	MonthFrom     string
	PromisesToday promiseFigures
	PromisesMonth promiseFigures
	Cure          cureFigures
	Contacts      contactFigures
	Collectors    []collectorRow
	Shards        []agenda.ShardProgress
	ShardTotal    agenda.ShardProgress
	CSVTables     []string
}

// agendaProgress is today's agenda run as its list shows it.
type agendaProgress struct {
	Date    string
	Pending int
	More    bool
}

// bucketRows is the dashboard's bucket table: each bucket's counters (one
// GetItem each), the total and the chart's scale. The CSV needs no more.
func (u *UI) bucketRows(ctx context.Context, t *tenant.Tenant) (dashboardData, error) {
	today := calendar.Today(u.d.Clock.Now(), t.Location)
	d := dashboardData{Today: today.String(), Total: bucketRow{Name: msg("Total em atraso"), Counted: true}}
	for _, b := range portfolio.Buckets {
		sum, err := u.d.Portfolio.Summary(ctx, t, b)
		if err != nil {
			return d, err
		}
		r := bucketRow{Code: b, Name: bucketName(b)}
		if sum != nil {
			r.Counted, r.Contracts, r.OutstandingCents, r.UpdatedAt = true, sum.Contracts, sum.OutstandingCents, sum.UpdatedAt
		}
		d.Total.Contracts += r.Contracts
		d.Total.OutstandingCents += r.OutstandingCents
		d.Total.Counted = d.Total.Counted && r.Counted
		d.MaxCents = max(d.MaxCents, r.OutstandingCents)
		d.Buckets = append(d.Buckets, r)
	}
	return d, nil
}

// dashboardRows is bucketRows and the rest of the dashboard: today's
// agenda and calls, and the roll rates of the monthly exports (the chart
// drawn in lg).
func (u *UI) dashboardRows(ctx context.Context, t *tenant.Tenant, lg lang) (dashboardData, error) {
	d, err := u.bucketRows(ctx, t)
	if err != nil {
		return d, err
	}
	today := calendar.MustParse(d.Today)
	l, err := u.d.Agenda.List(ctx, t, agendaQuery(today), "")
	if err != nil {
		return d, err
	}
	d.Agenda = &agendaProgress{Date: today.String(), Pending: len(l.Items), More: l.NextCursor != nil}
	tasks, err := u.d.Desk.Queue(ctx, t, today.String())
	if err != nil {
		return d, err
	}
	d.Calls = countCalls(tasks)
	d.Collectors = collectors(tasks, keys.Timestamp(u.d.Clock.Now()))
	if err := u.dayFigures(ctx, t, today, &d); err != nil {
		return d, err
	}
	if d.Shards, err = u.d.Agenda.Progress(ctx, t, today); err != nil {
		return d, err
	}
	d.ShardTotal = shardTotals(d.Shards)
	d.HasExports = exportsDirUsable(u.d.ExportsDir)
	if d.Rolls = rollSeries(u.exports.monthly(u.d.ExportsDir), t.ID); len(d.Rolls) > 0 {
		d.RollChart = rollChart(lg, d.Rolls)
	}
	for _, l := range rollLinks {
		d.RollLinks = append(d.RollLinks, l.Name)
	}
	return d, nil
}

// dayFigures fills the promises, the cure rate and today's contacts from
// the month's day counters (one Query, portfolio.Days) and the tenant's
// cap (its dunning policy).
func (u *UI) dayFigures(ctx context.Context, t *tenant.Tenant, today calendar.Date, d *dashboardData) error {
	from := monthStart(today)
	days, err := u.d.Portfolio.Days(ctx, t, from, today)
	if err != nil {
		return err
	}
	capPerDay, err := u.d.Contacts.MaxDailyContacts(ctx, t)
	if err != nil {
		return err
	}
	d.MonthFrom, d.CSVTables = from.String(), csvTables
	d.PromisesToday = sumPromises(days, today.String(), today.String())
	d.PromisesMonth = sumPromises(days, from.String(), today.String())
	d.Cure = cure(days, d.Total.Contracts)
	day := portfolio.DaySummary{Date: today.String()}
	for _, x := range days {
		if x.Date == today.String() {
			day = x
		}
	}
	d.Contacts = contactsOf(day, capPerDay)
	return nil
}

// agendaQuery lists the day's agenda over every shard.
func agendaQuery(day calendar.Date) agenda.ListQuery {
	return agenda.ListQuery{Shard: -1, Limit: 200, Date: day}
}

// barWidth scales cents against the largest value to at most full units
// (a bar chart's length), at least 1 for anything above zero.
func barWidth(cents, largest int64, full int) int {
	if cents <= 0 || largest <= 0 {
		return 0
	}
	return max(1, int(cents*int64(full)/largest))
}

// queueData is the day's call list.
type queueData struct {
	Date  string
	Me    string // this collector's holder id
	Now   string // the engine's instant, to tell running claims
	Tasks []worklist.Task
}

// Mine reports a task this collector holds now.
func (q queueData) Mine(t worklist.Task) bool { return t.ClaimedBy == q.Me && t.ClaimedUntil >= q.Now }

// Taken reports a task another collector holds now.
func (q queueData) Taken(t worklist.Task) bool {
	return t.ClaimedBy != "" && t.ClaimedBy != q.Me && t.ClaimedUntil >= q.Now
}

// callsToday counts the day's call tasks: listed, still to call, waiting
// for a callback, done, and the done ones by outcome.
type callsToday struct {
	Listed, ToCall, Callbacks, Done int
	Outcomes                        []outcomeCount
}

type outcomeCount struct {
	Outcome string
	N       int
}

// outcomeOrder is the order the dashboard lists outcome codes in: the
// built-in kinds first, then the tenant's own codes by name.
func outcomeOrder(by map[string]int) []string {
	out := tenant.OutcomeKinds()
	var more []string
	for o := range by {
		if !slices.Contains(out, o) {
			more = append(more, o)
		}
	}
	slices.Sort(more)
	return append(out, more...)
}

func countCalls(tasks []worklist.Task) callsToday {
	c := callsToday{Listed: len(tasks)}
	by := map[string]int{}
	for _, t := range tasks {
		switch t.Status {
		case worklist.StatusDone:
			c.Done++
			by[t.Outcome]++
		case worklist.StatusCallback:
			c.Callbacks++
		default:
			c.ToCall++
		}
	}
	for _, o := range outcomeOrder(by) {
		if by[o] > 0 {
			c.Outcomes = append(c.Outcomes, outcomeCount{o, by[o]})
		}
	}
	return c
}
