package arrangement

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"lastro/collections/web"
	"lastro/contract"
)

// Routes registers the promise, dispute and write-off endpoints.
func (s *Service) Routes(srv *web.Server) {
	op := []web.Role{web.Operator}
	sup := []web.Role{web.Supervisor}
	var idem []echo.MiddlewareFunc
	if s.idem != nil {
		idem = append(idem, s.idem.Middleware())
	}
	base := "/v1/debtors/:debtorKey/contracts/:contractId"
	srv.Handle(web.Doc{Method: http.MethodPost, Path: base + "/promises",
		Summary: "A payment promise: PROMISE item, the régua paused until PROMISE_CHECK on the date; KEPT by the payments that reach its amount by then, else BROKEN",
		Roles:   op, Request: PromiseInput{PromisedDate: "2026-10-02", AmountCents: 100000}, Response: Promise{}, Status: http.StatusCreated,
		Idempotent: s.idem != nil}, s.postPromise, idem...)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: base + "/agreements",
		Summary: "An agreement: the overdue instalments RENEGOTIATED (late charges made fact today) into a down payment and new instalments; IN_AGREEMENT, with the down payment's Pix charge",
		Roles:   op, Request: AgreementInput{DownPaymentCents: 50000, Installments: 12, FirstDueDate: "2026-11-10"}, Response: Agreement{}, Status: http.StatusCreated,
		Idempotent: s.idem != nil}, s.postAgreement, idem...)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: base + "/agreements/:agreementId",
		Summary: "An agreement: its terms, the computation, the schedule with each instalment's status, and its status",
		Roles:   op, Response: Agreement{}}, s.getAgreement)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: base + "/disputes",
		Summary: "Open a dispute (reason code): the régua, its contacts and bureau reporting pause until it is resolved",
		Roles:   op, Request: DisputeInput{Reason: "NOT_RECOGNISED"}, Response: Dispute{}, Status: http.StatusCreated,
		Idempotent: s.idem != nil}, s.postDispute, idem...)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: base + "/disputes/:disputeId/resolve",
		Summary: "Resolve a dispute (outcome code): the régua resumes at the step the contract is owed",
		Roles:   sup, Request: ResolveInput{Outcome: "DEBT_CONFIRMED"}, Response: Dispute{}}, s.postResolve)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: base + "/write-off",
		Summary: "Write the contract off (reason code): WRITTEN_OFF, out of the agenda and the portfolio in one commit, history kept",
		Roles:   sup, Request: WriteOffInput{Reason: "UNCOLLECTIBLE"}, Response: WriteOffResult{}}, s.postWriteOff)
}

func actorOf(c echo.Context) contract.Actor {
	p, _ := web.PrincipalOf(c)
	return contract.Actor{Role: string(p.Role), RequestID: web.RequestID(c)}
}

func (s *Service) postPromise(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	var in PromiseInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.MakePromise(c.Request().Context(), t, c.Param("debtorKey"), c.Param("contractId"), in, actorOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (s *Service) postDispute(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	var in DisputeInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.OpenDispute(c.Request().Context(), t, c.Param("debtorKey"), c.Param("contractId"), in, actorOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (s *Service) postResolve(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	var in ResolveInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.ResolveDispute(c.Request().Context(), t, c.Param("debtorKey"), c.Param("contractId"), c.Param("disputeId"), in, actorOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) postWriteOff(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	var in WriteOffInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.WriteOff(c.Request().Context(), t, c.Param("debtorKey"), c.Param("contractId"), in, actorOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) postAgreement(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	var in AgreementInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.MakeAgreement(c.Request().Context(), t, c.Param("debtorKey"), c.Param("contractId"), in, actorOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (s *Service) getAgreement(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	out, err := s.GetAgreement(c.Request().Context(), t, c.Param("debtorKey"), c.Param("contractId"), c.Param("agreementId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
