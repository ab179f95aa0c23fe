package settlement

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/web"
	"lastro/tenant"
)

// Routes registers the webhook and the suspense list.
func (s *Service) Routes(srv *web.Server) {
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/webhooks/:tenantId/settlements",
		Summary: "Settlement webhook (no API key: X-Lastro-Timestamp and X-Lastro-Signature v1=HMAC-SHA256(webhookSecret, timestamp.body), 300 s window; " +
			"during a secret rotation's overlap the old secret verifies too). An address with too many failed signatures or unknown tenants gets 429 with Retry-After. " +
			"Applies the payment exactly once: applied, already_applied (with the first outcome) or unmatched (recorded for reconciliation); 503 asks the provider to retry",
		Public: true, Request: webhookDoc{SettlementID: "stl-20260924-0001", ChargeID: "E9f2c1a7e4b0d3e61A7bX2kQ9mZ4pL8", AmountCents: 102500, PaidAt: "2026-09-24T10:15:00-03:00"},
		Response: Outcome{}, Errors: []int{http.StatusConflict, http.StatusTooManyRequests},
		Headers: []web.Header{
			{Name: TimestampHeader, Required: true, Description: "unix seconds of the signature; refused more than 300 s away from now"},
			{Name: SignatureHeader, Required: true, Description: "v1=<hex HMAC-SHA256(webhookSecret, timestamp + \".\" + raw body)>"},
		}}, s.webhook, s.tenants.LimitFailures("tenantId"))
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/settlements/unmatched",
		Summary: "Suspense: settlements whose charge was unknown, oldest first (one Query on the tenant's suspense partition)",
		Roles:   []web.Role{web.Supervisor}, Response: UnmatchedPage{}, Query: []string{"limit", "cursor"}}, s.listUnmatched)
	s.resolveRoute(srv)
}

// webhookDoc documents the webhook body for OpenAPI.
type webhookDoc struct {
	SettlementID string `json:"settlementId"`
	ChargeID     string `json:"chargeId"`
	AmountCents  int64  `json:"amountCents"`
	PaidAt       string `json:"paidAt"`
}

var errTenantNotFound = errs.E(errs.NotFound, "tenant_not_found", "tenant not found")

// webhook authenticates the provider by signature, decodes the body
// strictly and applies it. Order matters: the body is not decoded, let
// alone applied, before its signature is checked.
func (s *Service) webhook(c echo.Context) error {
	id := c.Param("tenantId")
	if !tenant.ValidID(id) {
		return errTenantNotFound
	}
	ctx := c.Request().Context()
	t, err := s.tenants.Get(ctx, id)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, MaxBodyBytes+1))
	if err != nil {
		return errs.E(errs.Invalid, "body_too_large", "webhook body too large")
	}
	now := s.clock.Now()
	h := c.Request().Header
	if err := VerifyAny(t.WebhookSecrets(now), h.Get(TimestampHeader), h.Get(SignatureHeader), body, now); err != nil {
		return err
	}
	p, err := Decode(body)
	if err != nil {
		return err
	}
	out, err := s.Apply(ctx, t, p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// Unmatched is a settlement in suspense.
type Unmatched struct {
	SettlementID string `json:"settlementId"`
	ChargeID     string `json:"chargeId"`
	AmountCents  int64  `json:"amountCents"`
	PaidAt       string `json:"paidAt"`
	ReceivedAt   string `json:"receivedAt"`
	Reason       string `json:"reason"`
}

// UnmatchedPage is a page of the suspense list.
type UnmatchedPage struct {
	Items      []Unmatched `json:"items"`
	NextCursor *string     `json:"nextCursor"`
}

// ListUnmatched pages through the tenant's suspense partition, oldest
// first: one Query, no Scan, no index (ADR 0008).
func (s *Service) ListUnmatched(ctx context.Context, t *tenant.Tenant, limit int32, cursor string) (*UnmatchedPage, error) {
	ctx = kit.Within(ctx, "settlement.unmatched")
	page, err := s.db(t).QueryPage(ctx, kit.Query{Partition: keys.Suspense(t.ID), Sort: kit.BeginsWith(keys.UnmatchedPrefix), Limit: limit}, cursor)
	if err != nil {
		return nil, err
	}
	out := &UnmatchedPage{Items: []Unmatched{}}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	for _, it := range page.Items {
		var si suspenseItem
		if err := attributevalue.UnmarshalMap(it, &si); err != nil {
			return nil, err
		}
		out.Items = append(out.Items, Unmatched{SettlementID: si.SettlementID, ChargeID: si.ChargeID, AmountCents: si.AmountCents,
			PaidAt: si.PaidAt, ReceivedAt: si.ReceivedAt, Reason: si.Reason})
	}
	return out, nil
}

func (s *Service) listUnmatched(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	limit, err := web.ParseLimit(c.QueryParam("limit"), web.DefaultListLimit)
	if err != nil {
		return err
	}
	out, err := s.ListUnmatched(c.Request().Context(), t, limit, c.QueryParam("cursor"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// resolveBody is the body of POST /v1/settlements/unmatched/{id}/resolve.
type resolveBody struct {
	ChargeID string `json:"chargeId"`
}

func (s *Service) resolveRoute(srv *web.Server) {
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/settlements/unmatched/:settlementId/resolve",
		Summary: "Reconciliation: applies a suspended settlement to a charge exactly once (record, suspense entry and payment in one transaction); " +
			"again to the same charge answers the first outcome; 409 when already applied or assigned to another charge",
		Roles: []web.Role{web.Supervisor}, Errors: []int{http.StatusConflict, http.StatusUnprocessableEntity}, Request: resolveBody{ChargeID: "E9f2c1a7e4b0d3e61A7bX2kQ9mZ4pL8"}, Response: Resolution{}}, s.resolve)
}

func (s *Service) resolve(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	var in resolveBody
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	p, _ := web.PrincipalOf(c)
	out, err := s.Resolve(c.Request().Context(), t, c.Param("settlementId"), in.ChargeID, Resolver{Role: string(p.Role), RequestID: web.RequestID(c)})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
