package debtor

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"lastro/collections/web"
	"lastro/tenant"
)

// Routes registers the debtor endpoints.
func (s *Service) Routes(srv *web.Server) {
	op := []web.Role{web.Operator}
	comp := []web.Role{web.Compliance}
	list := []string{"limit", "cursor"}
	// Idempotency-Key is honoured where a retry could create a second
	// thing: contracts. Registration is idempotent by construction (same
	// document, same key, 200) and takes no key, so no idempotency record
	// keeps a hash of a body full of personal data; reveal takes none so
	// the decrypted document is never stored as a replayable response.
	var idem []echo.MiddlewareFunc
	if s.idem != nil {
		idem = append(idem, s.idem.Middleware())
	}
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/debtors",
		Summary: "Register a debtor: 201 with its key, 200 when the document is already registered (naturally idempotent), 409 on a key collision",
		Roles:   op, Request: RegisterInput{Document: "529.982.247-25", Name: "Nome Sintético", Phone: "+55 11 90000-0000", Email: "nome@example.com"},
		Response: Registered{}, Status: http.StatusCreated}, s.register)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/debtors/lookup", Summary: "The debtor key of a document (computed, no index); 404 when not registered",
		Roles: op, Request: LookupInput{Document: "529.982.247-25"}, Response: Found{}}, s.lookup)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/debtors/:debtorKey", Summary: "AP01: the 360 view of a debtor (one Query, cursor-paginated, document masked)",
		Roles: op, Response: View360{}, Query: list}, s.view)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/debtors/:debtorKey/reveal", Summary: "Decrypt the debtor's document (compliance); writes an audit event first. Optional body {reason}",
		Roles: comp, Request: RevealInput{Reason: "LEGAL_REQUEST"}, Response: Revealed{}}, s.reveal)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/debtors/:debtorKey/contracts",
		Summary: "Sign a contract: header, instalments and event in one transaction (chunked over 97 instalments, header last); past-due instalments start it delinquent",
		Roles:   op, Request: contractDoc{}, Response: ContractCreated{}, Status: http.StatusCreated, Idempotent: s.idem != nil}, s.createContract, idem...)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/debtors/:debtorKey/contracts/:contractId/installments",
		Summary: "AP02: a contract's instalments, oldest first (?status=open|overdue|paid|renegotiated|all)", Roles: op,
		Response: InstallmentPage{}, Query: append([]string{"status"}, list...)}, s.installments)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/debtors/:debtorKey/contracts/:contractId/installments/:seq/events",
		Summary: "AP09: the audit trail of one instalment (seq 0: the contract itself), oldest first", Roles: comp,
		Response: EventPage{}, Query: list}, s.events)
}

func actorOf(c echo.Context) Actor {
	p, _ := web.PrincipalOf(c)
	return Actor{Role: string(p.Role), RequestID: web.RequestID(c)}
}

func (s *Service) caller(c echo.Context) (*tenant.Tenant, error) { return s.tenants.From(c) }

func (s *Service) register(c echo.Context) error {
	t, err := s.caller(c)
	if err != nil {
		return err
	}
	var in RegisterInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.Register(c.Request().Context(), t, in, actorOf(c))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if out.Created {
		status = http.StatusCreated
	}
	return c.JSON(status, out)
}

func (s *Service) lookup(c echo.Context) error {
	t, err := s.caller(c)
	if err != nil {
		return err
	}
	var in LookupInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.Lookup(c.Request().Context(), t, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) view(c echo.Context) error {
	t, err := s.caller(c)
	if err != nil {
		return err
	}
	limit, err := ParseLimit(c.QueryParam("limit"), DefaultViewLimit)
	if err != nil {
		return err
	}
	out, err := s.View(c.Request().Context(), t, c.Param("debtorKey"), limit, c.QueryParam("cursor"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) reveal(c echo.Context) error {
	t, err := s.caller(c)
	if err != nil {
		return err
	}
	var in RevealInput
	if c.Request().ContentLength != 0 {
		if err := web.Bind(c, &in); err != nil {
			return err
		}
	}
	out, err := s.Reveal(c.Request().Context(), t, c.Param("debtorKey"), in, actorOf(c))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, out)
}

func (s *Service) createContract(c echo.Context) error {
	t, err := s.caller(c)
	if err != nil {
		return err
	}
	var in ContractInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.CreateContract(c.Request().Context(), t, c.Param("debtorKey"), in, actorOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (s *Service) installments(c echo.Context) error {
	t, err := s.caller(c)
	if err != nil {
		return err
	}
	limit, err := ParseLimit(c.QueryParam("limit"), DefaultListLimit)
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
	t, err := s.caller(c)
	if err != nil {
		return err
	}
	limit, err := ParseLimit(c.QueryParam("limit"), DefaultListLimit)
	if err != nil {
		return err
	}
	out, err := s.Events(c.Request().Context(), t, c.Param("debtorKey"), c.Param("contractId"), c.Param("seq"), limit, c.QueryParam("cursor"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
