package charges

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"lastro/collections/web"
)

// Routes registers the charge endpoints.
func (s *Service) Routes(srv *web.Server) {
	// Idempotency-Key: a retried creation returns the first charge instead
	// of issuing a second txid for the same instalment.
	var mw []echo.MiddlewareFunc
	if s.idem != nil {
		mw = append(mw, s.idem.Middleware())
	}
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/charges",
		Summary: "Issue a Pix (txid) or boleto (nosso número) charge for what an instalment owes today under its contract's charges policy; the charge and its lookup in one transaction",
		Roles:   []web.Role{web.Operator}, Request: Input{DebtorKey: "9f2c1a7e4b0d3e61", ContractID: "C-2026-004512", Seq: 3, Method: PIX},
		Response: Issued{}, Status: http.StatusCreated, Idempotent: s.idem != nil}, s.issue, mw...)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/debtors/:debtorKey/contracts/:contractId/due",
		Summary: "What the contract owes if paid today: per open instalment the fine, late interest, interest and principal a charge issued now would ask for, " +
			"the overdue total (saldo atualizado of the late instalments) and the whole; nothing is written",
		Roles: []web.Role{web.Operator}, Response: Due{}}, s.due)
	srv.Handle(web.Doc{Method: http.MethodDelete, Path: "/v1/charges/:chargeId",
		Summary: "Cancel a Pix charge at the tenant's PSP (PATCH status REMOVIDA_PELO_USUARIO_RECEBEDOR) and mark it cancelled, so its code can no longer be paid; " +
			"again answers alreadyCancelled. 409 charge_paid_at_psp when the PSP says it was paid (reconcile applies it); 422 for a charge not at a PSP. " +
			"A payment that still arrives for a cancelled charge is applied: cancelling never refuses money (ADR 0048)",
		Roles: []web.Role{web.Supervisor}, Response: Cancelled{ChargeID: "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF", Status: StatusCancelled, Reason: ReasonRequested},
		Errors: []int{http.StatusConflict, http.StatusUnprocessableEntity}}, s.cancelCharge)
}

func (s *Service) cancelCharge(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	out, err := s.Cancel(c.Request().Context(), t, c.Param("chargeId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) issue(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	var in Input
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.Issue(c.Request().Context(), t, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (s *Service) due(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	out, err := s.Due(c.Request().Context(), t, c.Param("debtorKey"), c.Param("contractId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
