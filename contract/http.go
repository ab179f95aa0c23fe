package contract

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"lastro/collections/web"
)

// Routes registers the contract endpoints.
func (s *Service) Routes(srv *web.Server) {
	op := []web.Role{web.Operator}
	list := []string{"limit", "cursor"}
	var idem []echo.MiddlewareFunc
	if s.idem != nil {
		idem = append(idem, s.idem.Middleware())
	}
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/debtors/:debtorKey/contracts",
		Summary: "Sign a contract: header, contract-id lookup entry, instalments and event in one transaction (chunked over 96 instalments, header last); past-due instalments start it delinquent",
		Roles:   op, Request: contractDoc{}, Response: Created{}, Status: http.StatusCreated, Idempotent: s.idem != nil}, s.create, idem...)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/debtors/:debtorKey/contracts/:contractId/installments",
		Summary: "AP02: a contract's instalments, oldest first (?status=open|overdue|paid|renegotiated|cancelled|all, derived from today)", Roles: op,
		Response: InstallmentPage{}, Query: append([]string{"status"}, list...)}, s.installments)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/debtors/:debtorKey/contracts/:contractId/installments/:seq/events",
		Summary: "AP09: the audit trail of one instalment (seq 0: the contract itself), oldest first", Roles: []web.Role{web.Compliance},
		Response: EventPage{}, Query: list}, s.events)
}

func actorOf(c echo.Context) Actor {
	p, _ := web.PrincipalOf(c)
	return Actor{Role: string(p.Role), RequestID: web.RequestID(c)}
}

func (s *Service) create(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	var in Input
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.Create(c.Request().Context(), t, c.Param("debtorKey"), in, actorOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (s *Service) installments(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	limit, err := web.ParseLimit(c.QueryParam("limit"), web.DefaultListLimit)
	if err != nil {
		return err
	}
	out, err := s.Installments(c.Request().Context(), t, c.Param("debtorKey"), c.Param("contractId"), c.QueryParam("status"), limit, c.QueryParam("cursor"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) events(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	limit, err := web.ParseLimit(c.QueryParam("limit"), web.DefaultListLimit)
	if err != nil {
		return err
	}
	out, err := s.Events(c.Request().Context(), t, c.Param("debtorKey"), c.Param("contractId"), c.Param("seq"), limit, c.QueryParam("cursor"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
