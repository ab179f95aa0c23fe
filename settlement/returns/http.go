package returns

import (
	"bytes"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"lastro/boleto"
	"lastro/collections/errs"
	"lastro/collections/web"
)

// Routes registers the return-file import.
func (s *Service) Routes(srv *web.Server) {
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/boletos/returns",
		Summary: "Import a bank's CNAB 240 cobrança return file (the raw file as the body, CRLF or LF, at most 4096 lines). " +
			"The whole file is validated first: a malformed one is refused with 400 invalid_return_file naming the line, and nothing is applied. " +
			"Each liquidation (movement 06 or 17) is then applied once as settlement BOL-<bank>-<convênio>-<sequence> to the charge whose id is its nosso número, " +
			"paid at 23:59:59 of its payment date in the tenant's zone; unknown ones go to suspense. Importing the same file again applies nothing and counts repeats",
		Roles: []web.Role{web.Supervisor}, RawBody: "text/plain", Response: Result{Items: []Item{{Line: 3, SettlementID: "BOL-001-1234567-0000000001",
			ChargeID: "12345670000000001", AmountCents: 102467, PaidAt: "2026-09-24T23:59:59-03:00", Status: StatusApplied, Outcome: "APPLIED"}}}}, s.importFile)
}

func (s *Service) importFile(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	// Bounded before parsing: a file over MaxReturnBytes is refused
	// without being read further.
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, boleto.MaxReturnBytes+1))
	if err != nil {
		return errs.E(errs.TooLarge, "body_too_large", "request body too large")
	}
	if len(body) > boleto.MaxReturnBytes {
		return errs.E(errs.TooLarge, "body_too_large", "a return file has at most %d bytes", boleto.MaxReturnBytes)
	}
	out, err := s.Import(c.Request().Context(), t, bytes.NewReader(body))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
