package charges

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"lastro/collections/errs"
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
	s.boletoRoutes(srv, mw)
}

// boletoRoutes registers the charge view, the printable slip and QR, and
// the boleto shipping files (docs/adr/0071, 0072).
func (s *Service) boletoRoutes(srv *web.Server, mw []echo.MiddlewareFunc) {
	readers := []web.Role{web.Operator, web.Supervisor}
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/charges/:chargeId",
		Summary: "A charge as issued, with its status (OPEN or CANCELLED) and, for a boleto, its registration with the bank " +
			"(PENDING until a shipping file carries it, SENT, then CONFIRMED or REJECTED with the bank's reasons from its return file)",
		Roles: []web.Role{web.Operator, web.Supervisor, web.Compliance}, Response: View{}}, s.getCharge)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/charges/:chargeId/slip.pdf",
		Summary: "The charge's printable slip (application/pdf): a boleto in FEBRABAN's layout (recibo do pagador and ficha de compensação, bank code with its digit, " +
			"linha digitável, Interleaved 2 of 5 barcode, beneficiary, payer with the masked document, due date, amount, nosso número), or a Pix charge's QR and copia-e-cola. " +
			"422 no_br_code for a Pix charge issued without a PSP",
		Roles: readers, RawResponse: "application/pdf", Errors: []int{http.StatusUnprocessableEntity}}, s.getSlip)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/charges/:chargeId/qr.png",
		Summary: "A Pix charge's BR Code as a QR image (image/png, 512 px); 422 no_br_code for a boleto or a Pix charge issued without a PSP",
		Roles:   readers, RawResponse: "image/png", Errors: []int{http.StatusUnprocessableEntity}}, s.getQR)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/boleto/remessas",
		Summary: "Write the next CNAB 240 shipping file (remessa) for the tenant's bank: every boleto issued (movement 01) or cancelled (02) since the last file, " +
			"oldest first, at most 500; numbered one past the last (409 remessa_conflict when another was written at the same time). " +
			"422 no_pending_registrations, boleto_beneficiary_incomplete or remessa_not_supported. Its bytes: GET /v1/boleto/remessas/{number}",
		Roles: []web.Role{web.Supervisor}, Status: http.StatusCreated, Idempotent: s.idem != nil,
		Response: Remessa{Number: 1, Bank: "001", Titles: 2, Entries: 2, FileName: "CB001000001.REM"}, Errors: []int{http.StatusConflict, http.StatusUnprocessableEntity}},
		s.postRemessa, mw...)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/boleto/remessas", Summary: "The shipping files written for the tenant's bank, newest first",
		Roles: []web.Role{web.Supervisor}, Query: []string{"cursor"}, Response: map[string]any{"items": []Remessa{{Number: 1, Bank: "001"}}, "nextCursor": nil}}, s.listRemessas)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/boleto/remessas/:number",
		Summary: "Shipping file {number} as the bank takes it (text/plain, 240-character records, CR LF): the same bytes every time it is asked for",
		Roles:   []web.Role{web.Supervisor}, RawResponse: "text/plain"}, s.getRemessa)
}

func (s *Service) getCharge(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	v, err := s.Get(c.Request().Context(), t, c.Param("chargeId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

func (s *Service) getSlip(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	raw, err := s.Slip(c.Request().Context(), t, c.Param("chargeId"))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "application/pdf", raw)
}

func (s *Service) getQR(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	raw, err := s.QR(c.Request().Context(), t, c.Param("chargeId"))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "image/png", raw)
}

func (s *Service) postRemessa(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	out, err := s.GenerateRemessa(c.Request().Context(), t)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (s *Service) listRemessas(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	items, next, err := s.Remessas(c.Request().Context(), t, c.QueryParam("cursor"))
	if err != nil {
		return err
	}
	var nc any
	if next != "" {
		nc = next
	}
	return c.JSON(http.StatusOK, map[string]any{"items": items, "nextCursor": nc})
}

func (s *Service) getRemessa(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(c.Param("number"))
	if err != nil {
		return errs.E(errs.Invalid, "invalid_remessa_number", "a shipping file's number is 1-999999")
	}
	r, raw, err := s.RemessaFile(c.Request().Context(), t, n)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", r.FileName))
	h.Set("X-Lastro-Remessa-Sha256", r.SHA256)
	h.Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "text/plain; charset=us-ascii", raw)
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
