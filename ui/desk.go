package ui

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"lastro/agenda"
	"lastro/arrangement"
	"lastro/charges"
	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/web"
	"lastro/contactlimit"
	"lastro/contract"
	"lastro/debtor"
	"lastro/portfolio"
	"lastro/tenant"
)

// statusTitle is an HTTP status as the error page's heading says it.
func statusTitle(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return "Dados inválidos"
	case http.StatusForbidden:
		return "Acesso negado"
	case http.StatusNotFound:
		return "Não encontrado"
	case http.StatusConflict:
		return "Conflito"
	case http.StatusTooManyRequests:
		return "Contato não permitido agora"
	case http.StatusRequestEntityTooLarge:
		return "Dados grandes demais"
	}
	if status >= 500 {
		return "Erro no servidor"
	}
	return http.StatusText(status)
}

var debtorKeyShape = regexp.MustCompile(`^[0-9a-f]{16}$`)

type findData struct {
	Query string
}

// find searches a debtor: a debtor key opens the page; a CPF or CNPJ (with
// or without punctuation) goes through the keyed HMAC lookup, never an
// index of documents. A miss answers the form again, with what was typed.
func (u *UI) find(c echo.Context) error {
	q := strings.TrimSpace(c.QueryParam("q"))
	if q == "" {
		q = strings.TrimSpace(c.QueryParam("key")) // the old form's field
	}
	if q == "" {
		return u.render(c, http.StatusOK, "find", u.newView(c, findData{}))
	}
	if debtorKeyShape.MatchString(q) {
		return c.Redirect(http.StatusSeeOther, "/ui/debtors/"+q)
	}
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	found, err := u.d.Debtors.Lookup(c.Request().Context(), t, debtor.LookupInput{Document: q})
	if err != nil {
		status, code, msg := errs.Public(err)
		switch {
		case status >= 500:
			return u.fail(c, err)
		case code == "debtor_not_found":
			msg = "Nenhum devedor cadastrado com este CPF/CNPJ."
		case status == http.StatusBadRequest:
			msg = "Digite um CPF (11 dígitos), um CNPJ (14) ou a chave do devedor (16 caracteres)."
		}
		v := u.newView(c, findData{Query: q})
		v.Problem = msg
		return u.render(c, status, "find", v)
	}
	return c.Redirect(http.StatusSeeOther, "/ui/debtors/"+found.DebtorKey)
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
	View        *debtor.View360
	Contracts   []contractPanel
	Contacts    []map[string]any
	ContactDays int
	Events      []contract.EventView
	EventsOf    string
	Card        *debtor.ContactCard
	Pix         *pixShown
	Form        url.Values // what a refused form held, to fill it again
	FormOf      string     // which form: "promise:<contractId>" or "contact"
}

// Value is a field of the refused form, for refilling it.
func (d debtorData) Value(name string) string { return d.Form.Get(name) }

func (u *UI) debtor(c echo.Context) error { return u.showDebtor(c, http.StatusOK, debtorData{}, "") }

// showDebtor renders the debtor page with extra (a card, a Pix, a refused
// form) and problem.
func (u *UI) showDebtor(c echo.Context, status int, extra debtorData, problem string) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	ctx := c.Request().Context()
	v, err := u.d.Debtors.View(ctx, t, c.Param("debtorKey"), debtor.DefaultViewLimit, "")
	if err != nil {
		return u.fail(c, err)
	}
	since := calendar.MustParse(v.Today).AddDays(-contactDays).String()
	d := extra
	d.View, d.ContactDays, d.Contacts = v, contactDays, recentContacts(v.Contacts, since)
	for _, cv := range v.Contracts {
		p := contractPanel{ContractView: *cv}
		for _, in := range cv.Installments {
			if contract.IsOpen(in.Status) || in.Status == "OVERDUE" {
				p.Open = append(p.Open, in)
			} else {
				p.Done = append(p.Done, in)
			}
		}
		if cv.Status != contract.StatusSettled && cv.Status != contract.StatusWrittenOff {
			if p.Due, err = u.d.Charges.Due(ctx, t, v.DebtorKey, cv.ContractID); err != nil {
				return u.fail(c, err)
			}
		}
		d.Contracts = append(d.Contracts, p)
	}
	if ev := c.QueryParam("events"); ev != "" {
		cid, seq, err := parseEventsParam(ev)
		if err != nil {
			return u.fail(c, err)
		}
		d.EventsOf = ev
		d.Events = instalmentEvents(v, cid, seq)
	}
	view := u.newView(c, d)
	if problem != "" {
		view.Problem = problem
	}
	return u.render(c, status, "debtor", view)
}

func actor(c echo.Context) contract.Actor {
	s := sessionOf(c)
	return contract.Actor{Role: s.Role, RequestID: web.RequestID(c)}
}

// refused answers a form the services refused on the debtor page itself,
// the form filled again with what was typed and the reason in words.
func (u *UI) refused(c echo.Context, formOf string, err error) error {
	status, _, msg := errs.Public(err)
	if status >= 500 || status == http.StatusUnauthorized {
		return u.fail(c, err)
	}
	form, _ := c.FormParams()
	form.Del("csrf")
	return u.showDebtor(c, status, debtorData{Form: form, FormOf: formOf}, msg)
}

func (u *UI) promise(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	cid := c.FormValue("contractId")
	cents, err := parseCents(c.FormValue("amount"))
	if err != nil {
		return u.refused(c, "promise:"+cid, errs.E(errs.Invalid, "invalid_amount", "valor inválido: use reais com até dois decimais, como 150,00"))
	}
	dk := c.Param("debtorKey")
	in := arrangement.PromiseInput{PromisedDate: c.FormValue("promisedDate"), AmountCents: cents}
	if _, err := u.d.Arrangements.MakePromise(c.Request().Context(), t, dk, cid, in, actor(c)); err != nil {
		return u.refused(c, "promise:"+cid, err)
	}
	return c.Redirect(http.StatusSeeOther, "/ui/debtors/"+url.PathEscape(dk)+"?flash=promise")
}

func (u *UI) contact(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	dk := c.Param("debtorKey")
	a := actor(c)
	claim := contactlimit.Claim{DebtorKey: dk, ContractID: c.FormValue("contractId"), Channel: contactlimit.Channel(c.FormValue("channel")),
		Template: c.FormValue("template"), Action: contactlimit.ManualAction, Actor: debtor.Actor(a)}
	ctx := c.Request().Context()
	var at contactlimit.Attempt
	if u.d.Contacts.CanDeliver() {
		at, err = u.d.Contacts.Send(ctx, t, claim)
		var se *contactlimit.SendError
		if errors.As(err, &se) && at.AttemptID != "" {
			err = nil // counted, not delivered: the attempt's evidence says so
		}
	} else {
		at, err = u.d.Contacts.Claim(ctx, t, claim)
	}
	if err != nil {
		return u.refused(c, "contact", err)
	}
	if !at.Allowed {
		return u.refused(c, "contact", errs.E(errs.Limit, "contact_blocked",
			"contato não permitido agora: %s. A tentativa ficou registrada como evidência", label(string(at.Reason))))
	}
	return c.Redirect(http.StatusSeeOther, "/ui/debtors/"+url.PathEscape(dk)+"?flash=contact")
}

// contactCard shows the collector the debtor's name and phone; the
// debtor service writes the audit event before it decrypts them.
func (u *UI) contactCard(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	card, err := u.d.Debtors.RevealContact(c.Request().Context(), t, c.Param("debtorKey"), debtor.Actor(actor(c)))
	if err != nil {
		return u.fail(c, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return u.showDebtor(c, http.StatusOK, debtorData{Card: card}, "")
}

// pix issues a Pix charge for the oldest open instalment of the contract
// (late first), as POST /v1/charges would, and shows its copia-e-cola
// and QR on the page.
func (u *UI) pix(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	ctx := c.Request().Context()
	dk, cid := c.Param("debtorKey"), c.FormValue("contractId")
	due, err := u.d.Charges.Due(ctx, t, dk, cid)
	if err != nil {
		return u.refused(c, "pix", err)
	}
	if len(due.Installments) == 0 {
		return u.refused(c, "pix", errs.E(errs.Rule, "nothing_due", "este contrato não tem parcela em aberto"))
	}
	seq := due.Installments[0].Seq
	ch, err := u.d.Charges.Issue(ctx, t, charges.Input{DebtorKey: dk, ContractID: cid, Seq: seq, Method: charges.PIX})
	if err != nil {
		return u.refused(c, "pix", err)
	}
	p := &pixShown{ContractID: cid, ChargeID: ch.ChargeID, CopiaECola: ch.PixCopiaECola, ExpiresAt: ch.ExpiresAt, Seq: seq, AmountCents: ch.AmountCents}
	return u.showDebtor(c, http.StatusOK, debtorData{Pix: p}, "")
}

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
	// Rolls are the month-over-month roll rates from the monthly exports
	// (none without two months of them); RollChart draws them.
	Rolls      []rollPoint
	RollChart  template.HTML
	RollLinks  []string
	HasExports bool
}

// agendaProgress is today's agenda run as its list shows it.
type agendaProgress struct {
	Date    string
	Pending int
	More    bool
}

func (u *UI) dashboardRows(ctx context.Context, t *tenant.Tenant) (dashboardData, error) {
	today := calendar.Today(u.d.Clock.Now(), t.Location)
	d := dashboardData{Today: today.String(), Total: bucketRow{Name: "Total em atraso", Counted: true}}
	for _, b := range portfolio.Buckets {
		p, err := u.d.Portfolio.Page(ctx, t, portfolio.Params{Bucket: b, Limit: 1})
		if err != nil {
			return d, err
		}
		r := bucketRow{Code: b, Name: bucketName(b)}
		if p.Summary != nil {
			r.Counted, r.Contracts, r.OutstandingCents, r.UpdatedAt = true, p.Summary.Contracts, p.Summary.OutstandingCents, p.Summary.UpdatedAt
		}
		d.Total.Contracts += r.Contracts
		d.Total.OutstandingCents += r.OutstandingCents
		d.Total.Counted = d.Total.Counted && r.Counted
		d.MaxCents = max(d.MaxCents, r.OutstandingCents)
		d.Buckets = append(d.Buckets, r)
	}
	l, err := u.d.Agenda.List(ctx, t, agendaQuery(today), "")
	if err != nil {
		return d, err
	}
	d.Agenda = &agendaProgress{Date: today.String(), Pending: len(l.Items), More: l.NextCursor != nil}
	d.HasExports = exportsDirUsable(u.d.ExportsDir)
	if d.Rolls = rollSeries(u.exports.monthly(u.d.ExportsDir), t.ID); len(d.Rolls) > 0 {
		d.RollChart = rollChart(d.Rolls)
	}
	for _, l := range rollLinks {
		d.RollLinks = append(d.RollLinks, l.Name)
	}
	return d, nil
}

func (u *UI) dashboard(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	d, err := u.dashboardRows(c.Request().Context(), t)
	if err != nil {
		return u.fail(c, err)
	}
	return u.render(c, http.StatusOK, "dashboard", u.newView(c, d))
}

// dashboardCSV is the bucket table for a spreadsheet: codes and cents, so
// it adds up without parsing reais.
func (u *UI) dashboardCSV(c echo.Context) error {
	t, err := u.tenant(c)
	if err != nil {
		return u.fail(c, err)
	}
	d, err := u.dashboardRows(c.Request().Context(), t)
	if err != nil {
		return u.fail(c, err)
	}
	h := c.Response().Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="carteira-%s.csv"`, d.Today))
	h.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(c.Response())
	_ = w.Write([]string{"date", "bucket", "bucketName", "contracts", "outstandingCents"})
	for _, r := range d.Buckets {
		_ = w.Write([]string{d.Today, r.Code, r.Name, strconv.FormatInt(r.Contracts, 10), strconv.FormatInt(r.OutstandingCents, 10)})
	}
	w.Flush()
	return w.Error()
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
