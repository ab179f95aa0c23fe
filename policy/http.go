package policy

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"lastro/collections/errs"
	"lastro/collections/web"
	"lastro/tenant"
)

// Routes registers the policy endpoints.
func (s *Service) Routes(srv *web.Server) {
	sup := []web.Role{web.Supervisor}
	all := []web.Role{web.Operator, web.Supervisor, web.Compliance}
	srv.Handle(web.Doc{Method: http.MethodPut, Path: "/v1/policies/charges",
		Summary: "Publish a new charges policy version (201; 200 with the current version when nothing changed). Fine above 2.00 % is 422",
		Roles:   sup, Request: ChargesInput{FinePercent: "2.00", LateInterestMonthlyPercent: "1.00", ImputationOrder: DefaultImputationOrder},
		Response: DefaultCharges().View(), Status: http.StatusCreated}, s.putCharges)
	srv.Handle(web.Doc{Method: http.MethodPut, Path: "/v1/policies/dunning",
		Summary: "Publish a new dunning policy version (régua steps, contact window, optional stricter stateWindows per UF, daily limit, bureau notice days, optional message templates per action)",
		Roles:   sup, Request: DunningInput{Steps: DefaultDunning().Steps, ContactWindow: DefaultDunning().ContactWindow, MaxDailyContacts: 3, BureauNoticeToReportDays: 15,
			StateWindows: map[string]ContactWindow{"RJ": {Weekdays: &Window{"09:00", "18:00"}, Saturday: &Window{"09:00", "12:00"}}},
			Templates:    map[string]string{"SMS_D1": "Contrato {{contractId}}: {{amount}} em aberto desde {{dueDate}}."}},
		Response: DefaultDunning(), Status: http.StatusCreated}, s.putDunning)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/policies/charges", Summary: "The current charges policy, or ?version=N (0 is the built-in default)",
		Roles: all, Response: DefaultCharges().View(), Query: []string{"version"}}, s.getCharges)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/policies/dunning", Summary: "The current dunning policy, or ?version=N (0 is the built-in default)",
		Roles: all, Response: DefaultDunning(), Query: []string{"version"}}, s.getDunning)
}

func status(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

func (s *Service) putCharges(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	var in ChargesInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, created, err := s.PutCharges(c.Request().Context(), t, in)
	if err != nil {
		return err
	}
	return c.JSON(status(created), out)
}

func (s *Service) putDunning(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	var in DunningInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, created, err := s.PutDunning(c.Request().Context(), t, in)
	if err != nil {
		return err
	}
	return c.JSON(status(created), out)
}

func version(c echo.Context, t *tenant.Tenant, kind tenant.PolicyKind) (int, error) {
	q := c.QueryParam("version")
	if q == "" {
		return t.Current(kind), nil
	}
	v, err := strconv.Atoi(q)
	if err != nil || v < 0 || v > 9999 {
		return 0, errs.E(errs.Invalid, "invalid_version", "version must be 0-9999")
	}
	return v, nil
}

func (s *Service) getCharges(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	v, err := version(c, t, tenant.ChargesPolicyKind)
	if err != nil {
		return err
	}
	out, err := s.Charges(c.Request().Context(), t, v)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) getDunning(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	v, err := version(c, t, tenant.DunningPolicyKind)
	if err != nil {
		return err
	}
	out, err := s.Dunning(c.Request().Context(), t, v)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
