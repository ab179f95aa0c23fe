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
	// No Idempotency-Key here: registration is idempotent by construction
	// (same document, same key, 200), so no idempotency record keeps a hash
	// of a body full of personal data; reveal takes none so the decrypted
	// document is never stored as a replayable response.
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/debtors",
		Summary: "Register a debtor: 201 with its key, 200 when the document is already registered (naturally idempotent), 409 on a key collision",
		Roles:   op, Request: RegisterInput{Document: "529.982.247-25", Name: "Nome Sintético", Phone: "+55 11 90000-0000", Email: "nome@example.com"},
		Response: Registered{}, Status: http.StatusCreated}, s.register)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/debtors/lookup",
		Summary: "Find debtors by exactly one of document (its debtor key, computed), phone (Brazilian or E.164; its HMAC's lookup partition) or contractId (its lookup partition): keyed reads, strongly consistent, no index; every match masked, debtorKey when exactly one; 404 when none",
		Roles:   op, Request: LookupInput{Document: "529.982.247-25"}, Response: Found{Matches: []Match{{}}}}, s.lookup)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/debtors/:debtorKey", Summary: "AP01: the 360 view of a debtor (one Query, cursor-paginated, document masked)",
		Roles: op, Response: View360{}, Query: []string{"limit", "cursor"}}, s.view)
	sp, uf, zone := "+55 11 90000-0001", "AM", "America/Manaus"
	srv.Handle(web.Doc{Method: http.MethodPatch, Path: "/v1/debtors/:debtorKey",
		Summary: "Change the debtor's phone, e-mail, postal address (sealed), UF, time zone or per-channel opt-outs, conditioned on the profile's version (409 when it moved); records a DebtorProfileChanged event naming the fields, never their values. Empty strings (and an empty address) remove",
		Roles:   op, Request: PatchInput{Version: 1, Phone: &sp, UF: &uf, TimeZone: &zone, OptOut: map[string]bool{"WHATSAPP": true},
			Address: &Address{Street: "Rua Sintética, 100", City: "Manaus", UF: "AM", PostalCode: "69000-000"}},
		Response: ProfileView{}, Errors: []int{http.StatusConflict, http.StatusUnprocessableEntity}}, s.patch)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/debtors/:debtorKey/reveal", Summary: "Decrypt the debtor's document (compliance); writes an audit event first. Optional body {reason}",
		Roles: comp, Request: RevealInput{Reason: "LEGAL_REQUEST"}, Response: Revealed{}}, s.reveal)
	// The debtor's rights (LGPD arts. 18 and 16, docs/adr/0077): the data
	// report decrypts, so it is compliance's and never cached.
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/debtors/:debtorKey/data-report",
		Summary: "LGPD art. 18 II: everything held about the debtor (profile decrypted, contracts, contacts, promises, bureau records, events); writes an audit event first. Optional ?reason=",
		Roles:   comp, Response: DataReport{}, Query: []string{"reason"}}, s.dataReport)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/debtors/:debtorKey/erasure",
		Summary: "LGPD art. 16: erase the debtor's personal data once the retention is over (422 while contracts are open or the period runs); financial and audit records stay",
		Roles:   comp, Request: EraseInput{Reason: ReasonRetentionElapsed}, Response: Erased{}}, s.erase)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/retention", Summary: "The tenant's personal-data retention policy",
		Roles: comp, Response: Retention{}}, s.retention)
	srv.Handle(web.Doc{Method: http.MethodPut, Path: "/v1/retention", Summary: "Change the retention policy (years after the last contract closed, 5-30), conditioned on its version",
		Roles: comp, Request: RetentionInput{YearsAfterClosure: 5}, Response: Retention{}}, s.setRetention)
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/debtors/:debtorKey/contact-card",
		Summary: "Decrypt the debtor's name, phone and e-mail for a collector about to call; writes a ContactRevealed audit event first (the fields shown, never their values)",
		Roles:   []web.Role{web.Operator, web.Supervisor}, Response: ContactCard{}}, s.contactCard)
}

func (s *Service) contactCard(c echo.Context) error {
	t, err := s.caller(c)
	if err != nil {
		return err
	}
	out, err := s.RevealContact(c.Request().Context(), t, c.Param("debtorKey"), actorOf(c))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, out)
}

func (s *Service) dataReport(c echo.Context) error {
	t, err := s.caller(c)
	if err != nil {
		return err
	}
	out, err := s.DataReport(c.Request().Context(), t, c.Param("debtorKey"), c.QueryParam("reason"), actorOf(c))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, out)
}

func (s *Service) erase(c echo.Context) error {
	t, err := s.caller(c)
	if err != nil {
		return err
	}
	var in EraseInput
	if c.Request().ContentLength != 0 {
		if err := web.Bind(c, &in); err != nil {
			return err
		}
	}
	out, err := s.Erase(c.Request().Context(), t, c.Param("debtorKey"), in, actorOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) retention(c echo.Context) error {
	t, err := s.caller(c)
	if err != nil {
		return err
	}
	out, err := s.Retention(c.Request().Context(), t)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) setRetention(c echo.Context) error {
	t, err := s.caller(c)
	if err != nil {
		return err
	}
	var in RetentionInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.SetRetention(c.Request().Context(), t, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
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
	limit, err := web.ParseLimit(c.QueryParam("limit"), DefaultViewLimit)
	if err != nil {
		return err
	}
	out, err := s.View(c.Request().Context(), t, c.Param("debtorKey"), limit, c.QueryParam("cursor"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) patch(c echo.Context) error {
	t, err := s.caller(c)
	if err != nil {
		return err
	}
	var in PatchInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.Patch(c.Request().Context(), t, c.Param("debtorKey"), in, actorOf(c))
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
