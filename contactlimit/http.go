package contactlimit

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/web"
	"lastro/debtor"
)

// ContactInput is the body of POST /v1/debtors/{dk}/contacts: an
// operator's contact (recorded with action MANUAL).
type ContactInput struct {
	Channel    Channel `json:"channel"`
	Template   string  `json:"template"`
	ContractID string  `json:"contractId"`
}

// BlockedBody is the 429 answer: the engine's error shape plus the reason,
// and the attempt whose evidence was written.
type BlockedBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Reason  Reason `json:"reason"`
	} `json:"error"`
	Attempt Attempt `json:"attempt"`
}

// Routes registers the contact endpoints.
func (g *Gateway) Routes(srv *web.Server) {
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/debtors/:debtorKey/contacts",
		Summary: "AP08: claim one of today's contacts (delivered through the tenant's sender when configured): 201 with the attempt when allowed, " +
			"429 contact_blocked with the reason (LIMIT, WINDOW, HOLIDAY, DISPUTE, OPT_OUT) when not; evidence is written either way",
		Roles: []web.Role{web.Operator}, Request: ContactInput{Channel: SMS, Template: "SMS_D5", ContractID: "C-2026-004512"},
		Response: Attempt{}, Status: http.StatusCreated}, g.postContact)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/debtors/:debtorKey/contacts",
		Summary: "The day's contact attempts (one Query on CONTACT#<date>#) and the LIMIT#<date> counter (?date=YYYY-MM-DD, default today)",
		Roles:   []web.Role{web.Compliance}, Response: DayView{}, Query: []string{"date", "limit", "cursor"}}, g.getDay)
}

func (g *Gateway) postContact(c echo.Context) error {
	if g.tenants == nil {
		return errors.New("contactlimit: routes need Deps.Tenants")
	}
	t, err := g.tenants.From(c)
	if err != nil {
		return err
	}
	var in ContactInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	p, _ := web.PrincipalOf(c)
	claim := Claim{DebtorKey: c.Param("debtorKey"), ContractID: in.ContractID, Channel: in.Channel, Template: in.Template,
		Action: ManualAction, Actor: debtor.Actor{Role: string(p.Role), RequestID: web.RequestID(c)}}
	ctx := c.Request().Context()
	// The contract the contact names must be this debtor's (its header is
	// in the debtor's partition, so another debtor's is not found), and
	// its dispute pauses operators as it pauses the régua.
	if err := g.manual(ctx, t, &claim); err != nil {
		return err
	}
	var a Attempt
	if g.sender != nil && g.addresses != nil {
		a, err = g.Send(ctx, t, claim)
		var se *SendError
		if errors.As(err, &se) && a.AttemptID != "" {
			// Allowed and counted, but not delivered: the attempt (outcome
			// FAILED) is the answer, as its evidence says.
			err = nil
		}
	} else {
		a, err = g.Claim(ctx, t, claim)
	}
	if err != nil {
		return err
	}
	if !a.Allowed {
		var body BlockedBody
		if a.Reason == ReasonNoAddress {
			// Not the day's limit: the debtor has no address for the
			// channel. The attempt was recorded, nothing spent.
			body.Error.Code, body.Error.Reason = "no_contact_address", a.Reason
			body.Error.Message = "the debtor's profile has no address for this channel; the attempt was recorded"
			body.Attempt = a
			return c.JSON(http.StatusUnprocessableEntity, body)
		}
		body.Error.Code, body.Error.Reason = "contact_blocked", a.Reason
		body.Error.Message = "contact not allowed: " + string(a.Reason) + "; the attempt was recorded"
		body.Attempt = a
		return c.JSON(http.StatusTooManyRequests, body)
	}
	return c.JSON(http.StatusCreated, a)
}

func (g *Gateway) getDay(c echo.Context) error {
	if g.tenants == nil {
		return errors.New("contactlimit: routes need Deps.Tenants")
	}
	t, err := g.tenants.From(c)
	if err != nil {
		return err
	}
	limit, err := web.ParseLimit(c.QueryParam("limit"), web.DefaultListLimit)
	if err != nil {
		return err
	}
	date := c.QueryParam("date")
	if date == "" {
		date = calendar.Today(g.clock.Now(), t.Location).String()
	} else if _, err := calendar.Parse(date); err != nil {
		return errs.E(errs.Invalid, "invalid_date", "date must be YYYY-MM-DD")
	}
	out, err := g.Day(c.Request().Context(), t, c.Param("debtorKey"), date, limit, c.QueryParam("cursor"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
