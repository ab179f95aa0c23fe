package tenant

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/web"
)

// Authenticator sets the request's principal from its bearer token: the
// admin token, or a tenant API key. A request without a token goes on
// unauthenticated (routes that need a role refuse it); a bad token is 401.
func (s *Service) Authenticator(adminToken string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header.Get("Authorization")
			if h == "" {
				return next(c)
			}
			scheme, token, ok := strings.Cut(h, " ") // the scheme is case-insensitive (RFC 7235)
			if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
				return errs.E(errs.Unauth, "unauthenticated", "use Authorization: Bearer <API key>")
			}
			if adminToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(adminToken)) == 1 {
				web.SetPrincipal(c, web.Principal{Role: web.Admin})
				return next(c)
			}
			p, err := s.Authenticate(c.Request().Context(), token)
			if err != nil {
				return err
			}
			web.SetPrincipal(c, p)
			return next(c)
		}
	}
}

// From returns the calling tenant of an authenticated request.
func (s *Service) From(c echo.Context) (*Tenant, error) {
	p, ok := web.PrincipalOf(c)
	if !ok || p.TenantID == "" {
		return nil, errs.E(errs.Permission, "forbidden", "a tenant API key is required")
	}
	return s.Get(c.Request().Context(), p.TenantID)
}

// Info is the answer of GET /v1/tenant.
type Info struct {
	TenantID string   `json:"tenantId"`
	Name     string   `json:"name"`
	TimeZone string   `json:"timezone"`
	Shards   int      `json:"shards"`
	Policies Policies `json:"policies"`
}

// Policies names the current policy versions (null until one exists).
type Policies struct {
	Charges *string `json:"charges"`
	Dunning *string `json:"dunning"`
}

func policyName(v int, name func(int) string) *string {
	if v == 0 {
		return nil
	}
	n := name(v)
	return &n
}

// Routes registers the tenant endpoints.
func (s *Service) Routes(srv *web.Server) {
	allRoles := []web.Role{web.Operator, web.Supervisor, web.Compliance}
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/tenants", Summary: "Create a tenant (admin token); returns its API keys and webhook secret once",
		Roles: []web.Role{web.Admin}, Request: CreateInput{}, Response: Created{}, Status: http.StatusCreated}, s.create)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/tenant", Summary: "The caller's tenant",
		Roles: allRoles, Response: Info{}}, s.info)
}

func (s *Service) create(c echo.Context) error {
	var in CreateInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.Create(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

func (s *Service) info(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, Info{TenantID: t.ID, Name: t.Name, TimeZone: t.TimeZone, Shards: t.Shards,
		Policies: Policies{Charges: policyName(t.ChargesPolicy, keys.ChargesPolicy), Dunning: policyName(t.DunningPolicy, keys.DunningPolicy)}})
}

// Authenticate resolves an API key to its principal; Unauth when the key
// is unknown or malformed.
func (s *Service) Authenticate(ctx context.Context, key string) (web.Principal, error) {
	o, err := s.keyOwner(ctx, key)
	if err != nil {
		return web.Principal{}, err
	}
	return web.Principal{TenantID: o.tenantID, Role: web.Role(o.role)}, nil
}

// keyRoles are the roles a new tenant gets one API key each for.
func keyRoles() []web.Role { return []web.Role{web.Operator, web.Supervisor, web.Compliance} }

// HolidayRoutes registers the calendar endpoints of a tenant.
func (s *Service) HolidayRoutes(srv *web.Server) {
	srv.Handle(web.Doc{Method: http.MethodPut, Path: "/v1/tenant/holidays",
		Summary: "Replace the tenant's extra non-business days (municipal holidays...); national bank holidays are built in",
		Roles:   []web.Role{web.Supervisor}, Request: HolidaysInput{Dates: []string{"2027-01-25"}}, Response: HolidaysInput{}}, s.putHolidays)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/tenant/holidays", Summary: "A year's national bank holidays and the tenant's extra days (?year=)",
		Roles: []web.Role{web.Operator, web.Supervisor, web.Compliance}, Response: HolidaysView{}, Query: []string{"year"}}, s.getHolidays)
}

func (s *Service) putHolidays(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	var in HolidaysInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	if in.Dates == nil { // {} or null would replace every day with none
		return errs.E(errs.Invalid, "missing_field", "dates is required (an empty list clears the tenant's days)")
	}
	dates, err := s.SetHolidays(c.Request().Context(), t, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, HolidaysInput{Dates: dates})
}

func (s *Service) getHolidays(c echo.Context) error {
	t, err := s.From(c)
	if err != nil {
		return err
	}
	year := calendar.Today(s.clock.Now(), t.Location).Year()
	if q := c.QueryParam("year"); q != "" {
		if year, err = strconv.Atoi(q); err != nil || year < 1900 || year > 2199 {
			return errs.E(errs.Invalid, "invalid_year", "year must be 1900-2199")
		}
	}
	out := HolidaysView{Year: year, National: []HolidayView{}, Tenant: []string{}}
	for _, h := range calendar.NationalBankHolidays(year) {
		out.National = append(out.National, HolidayView{Date: h.Date.String(), Name: h.Name})
	}
	for _, d := range t.Holidays {
		if len(d) >= 4 && d[:4] == strconv.Itoa(year) {
			out.Tenant = append(out.Tenant, d)
		}
	}
	return c.JSON(http.StatusOK, out)
}
