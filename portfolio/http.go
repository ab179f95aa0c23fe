package portfolio

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"lastro/collections/web"
)

// Routes registers GET /v1/portfolio.
func (s *Service) Routes(srv *web.Server) {
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/portfolio",
		Summary: "AP05: the contracts of one bucket (?bucket=D001_030|D031_060|D061_090|D091_PLUS), largest balance first, with daysPastDue derived " +
			"from today; ?crossedSince=YYYY-MM-DD keeps those that crossed into the bucket since that date (a filter inside the bucket: pages may " +
			"hold fewer than limit items). One Query on the portfolio index; the bucket's counters only when the stream has kept them",
		Roles: []web.Role{web.Supervisor}, Response: Page{}, Query: []string{"bucket", "crossedSince", "limit", "cursor"}}, s.page)
}

func (s *Service) page(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	limit, err := web.ParseLimit(c.QueryParam("limit"), web.DefaultListLimit)
	if err != nil {
		return err
	}
	out, err := s.Page(c.Request().Context(), t, Params{Bucket: c.QueryParam("bucket"), Limit: limit, Cursor: c.QueryParam("cursor"),
		CrossedSince: c.QueryParam("crossedSince")})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
