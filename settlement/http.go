package settlement

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/labstack/echo/v4"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/signature"
	"lastro/collections/web"
	"lastro/tenant"
)

// Routes registers the webhook and the suspense list.
func (s *Service) Routes(srv *web.Server) {
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/webhooks/:tenantId/settlements",
		Summary: "Settlement webhook (no API key: X-Lastro-Timestamp and X-Lastro-Signature v1=HMAC-SHA256(webhookSecret, timestamp.body), 300 s window; " +
			"during a secret rotation's overlap the old secret verifies too). Missing, malformed or stale signature headers and an unknown tenant are refused before the body is read; " +
			"a body over 4096 bytes is 413, which is no failed signature. An address with too many failed signatures or unknown tenants gets 429 with Retry-After. " +
			"Applies the payment exactly once: applied, already_applied (with the first outcome) or unmatched (recorded for reconciliation); 503 asks the provider to retry",
		Public: true, Request: webhookDoc{SettlementID: "stl-20260924-0001", ChargeID: "E9f2c1a7e4b0d3e61A7bX2kQ9mZ4pL8", AmountCents: 102500, PaidAt: "2026-09-24T10:15:00-03:00"},
		Response: Outcome{}, Errors: []int{http.StatusUnauthorized, http.StatusConflict, http.StatusTooManyRequests},
		Headers: []web.Header{
			{Name: signature.TimestampHeader, Required: true, Description: "unix seconds of the signature; refused more than 300 s away from now"},
			{Name: signature.SignatureHeader, Required: true, Description: "v1=<hex HMAC-SHA256(webhookSecret, timestamp + \".\" + raw body)>"},
		}}, s.webhook, s.tenants.LimitFailures("tenantId"))
	s.pixRoutes(srv)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/settlements/unmatched",
		Summary: "Suspense: settlements whose charge was unknown, oldest first (one Query on the tenant's suspense partition)",
		Roles:   []web.Role{web.Supervisor}, Response: UnmatchedPage{}, Query: []string{"limit", "cursor"}}, s.listUnmatched)
	s.resolveRoute(srv)
	s.reconcileRoute(srv)
	s.refundRoute(srv)
	srv.Handle(web.Doc{Method: http.MethodGet, Path: "/v1/settlements/reversals",
		Summary: "Reversals to review, oldest first: Pix refunds that could not be taken back by rule (money in suspense, renegotiated instalments, credit since spent), " +
			"with the cents not reversed (one Query on the tenant's suspense partition; ADR 0040)",
		Roles: []web.Role{web.Supervisor}, Response: ReviewPage{}, Query: []string{"limit", "cursor"}}, s.listReviews)
}

// Review is a reversal awaiting review.
type Review struct {
	SettlementID    string `json:"settlementId"`
	RtrID           string `json:"rtrId"`
	AmountCents     int64  `json:"amountCents"`
	UnreversedCents int64  `json:"unreversedCents"`
	ReceivedAt      string `json:"receivedAt"`
	Reason          string `json:"reason"`
}

// ReviewPage is a page of reversals to review.
type ReviewPage struct {
	Items      []Review `json:"items"`
	NextCursor *string  `json:"nextCursor"`
}

// ListReviews pages through the reversals awaiting review, oldest first:
// one Query on the suspense partition, no Scan, no index.
func (s *Service) ListReviews(ctx context.Context, t *tenant.Tenant, limit int32, cursor string) (*ReviewPage, error) {
	ctx = kit.Within(ctx, "settlement.reviews")
	items, next, err := suspensePage(ctx, s, t, keys.ReversalReviewPrefix, limit, cursor, func(r reviewItem) Review {
		return Review{SettlementID: r.SettlementID, RtrID: r.RtrID, AmountCents: r.AmountCents,
			UnreversedCents: r.UnreversedCents, ReceivedAt: r.ReceivedAt, Reason: r.Reason}
	})
	if err != nil {
		return nil, err
	}
	return &ReviewPage{Items: items, NextCursor: next}, nil
}

func (s *Service) listReviews(c echo.Context) error { return listPage(c, s, s.ListReviews) }

// suspensePage is one page of the tenant's suspense partition under
// prefix, oldest first, each item decoded as I and shown as O: one
// Query, no Scan, no index. The items are never nil, so a page with none
// is [] in JSON.
func suspensePage[I, O any](ctx context.Context, s *Service, t *tenant.Tenant, prefix string, limit int32, cursor string,
	show func(I) O) ([]O, *string, error) {
	page, err := s.db(t).QueryPage(ctx, kit.Query{Partition: keys.Suspense(t.ID), Sort: kit.BeginsWith(prefix), Limit: limit}, cursor)
	if err != nil {
		return nil, nil, err
	}
	out := make([]O, 0, len(page.Items))
	for _, it := range page.Items {
		var in I
		if err := attributevalue.UnmarshalMap(it, &in); err != nil {
			return nil, nil, err
		}
		out = append(out, show(in))
	}
	var next *string
	if page.Next != "" {
		next = &page.Next
	}
	return out, next, nil
}

// listPage serves a paged list of the caller's tenant: ?limit= and
// ?cursor= passed to list.
func listPage[P any](c echo.Context, s *Service, list func(context.Context, *tenant.Tenant, int32, string) (P, error)) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	limit, err := web.ParseLimit(c.QueryParam("limit"), web.DefaultListLimit)
	if err != nil {
		return err
	}
	out, err := list(c.Request().Context(), t, limit, c.QueryParam("cursor"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// webhookDoc documents the webhook body for OpenAPI.
type webhookDoc struct {
	SettlementID string `json:"settlementId"`
	ChargeID     string `json:"chargeId"`
	AmountCents  int64  `json:"amountCents"`
	PaidAt       string `json:"paidAt"`
}

var errTenantNotFound = errs.E(errs.NotFound, "tenant_not_found", "tenant not found")

// errBodyTooLarge is the 413 of a webhook body over the route's limit.
// It is not an authentication failure: a provider that signs correctly
// learns its body is the problem, and its address's failure budget
// (tenant.LimitFailures) is left alone.
func errBodyTooLarge(limit int64) error {
	return errs.E(errs.TooLarge, "body_too_large", "webhook body over the %d bytes this route takes", limit)
}

// errBodyIncomplete is the answer when the body stopped short: cut at
// the webhooks' body deadline (LASTRO_WEBHOOK_BODY_TIMEOUT), or the
// client went away.
var errBodyIncomplete = errs.E(errs.Invalid, "body_incomplete", "the webhook body did not arrive whole in time")

// signedBody reads a webhook call for the tenant of the path,
// authenticated by the tenant's webhook signature before anything parses
// the body. Everything that needs no body is checked before a byte of it
// is read, so a caller with no credential cannot keep the server waiting
// on a body: the tenant id's form, the signature headers (CheckHeaders,
// 401), the tenant (cached, found or not) and a declared length over
// limit (413, before the signature, which a cut body could never match).
// An undeclared (chunked) body is read up to limit+1 bytes: one more is
// 413 too.
func (s *Service) signedBody(c echo.Context, limit int64) (*tenant.Tenant, []byte, error) {
	r := c.Request()
	id := c.Param("tenantId")
	if !tenant.ValidID(id) {
		return nil, nil, errTenantNotFound
	}
	now := s.clock.Now()
	sig, err := signature.CheckHeaders(r.Header.Get(signature.TimestampHeader), r.Header.Get(signature.SignatureHeader), now)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.tenants.Get(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	if r.ContentLength > limit {
		return nil, nil, errBodyTooLarge(limit)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, nil, errBodyTooLarge(min(limit, mbe.Limit))
		}
		return nil, nil, errBodyIncomplete
	}
	if int64(len(body)) > limit {
		return nil, nil, errBodyTooLarge(limit)
	}
	if err := sig.Verify(t.WebhookSecrets(now), body); err != nil {
		return nil, nil, err
	}
	return t, body, nil
}

// webhook authenticates the provider by signature, decodes the body
// strictly and applies it. Order matters: the body is not decoded, let
// alone applied, before its signature is checked.
func (s *Service) webhook(c echo.Context) error {
	t, body, err := s.signedBody(c, MaxBodyBytes)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
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
	items, next, err := suspensePage(ctx, s, t, keys.UnmatchedPrefix, limit, cursor, func(si suspenseItem) Unmatched {
		return Unmatched{SettlementID: si.SettlementID, ChargeID: si.ChargeID, AmountCents: si.AmountCents,
			PaidAt: si.PaidAt, ReceivedAt: si.ReceivedAt, Reason: si.Reason}
	})
	if err != nil {
		return nil, err
	}
	return &UnmatchedPage{Items: items, NextCursor: next}, nil
}

func (s *Service) listUnmatched(c echo.Context) error { return listPage(c, s, s.ListUnmatched) }

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

// pixPaths are where the Pix API webhook is received. A PSP posts to the
// URL registered with it plus "/pix" (PUT /webhook/{chave}): registered
// as .../v1/webhooks/{tenantId}, calls land on .../{tenantId}/pix;
// registered as .../v1/webhooks/{tenantId}/pix, on .../pix/pix. Both
// are served, identically.
var pixPaths = []string{"/v1/webhooks/:tenantId/pix", "/v1/webhooks/:tenantId/pix/pix"}

// pixDoc documents the Pix webhook body for OpenAPI (BACEN's Pix API).
type pixDoc struct {
	Pix []pixPaymentDoc `json:"pix"`
}

type pixPaymentDoc struct {
	EndToEndID string         `json:"endToEndId"`
	TxID       string         `json:"txid,omitempty"`
	Valor      string         `json:"valor"`
	Horario    string         `json:"horario"`
	Devolucoes []pixRefundDoc `json:"devolucoes,omitempty"`
}

type pixRefundDoc struct {
	ID      string `json:"id"`
	RtrID   string `json:"rtrId"`
	Valor   string `json:"valor"`
	Horario struct {
		Solicitacao string `json:"solicitacao"`
		Liquidacao  string `json:"liquidacao,omitempty"`
	} `json:"horario"`
	Status string `json:"status"`
}

func (s *Service) pixRoutes(srv *web.Server) {
	example := pixDoc{Pix: []pixPaymentDoc{{EndToEndID: "E12345678202609241315abcdefghijk", TxID: "E9f2c1a7e4b0d3e61A7bX2kQ9mZ4pL8",
		Valor: "1024.67", Horario: "2026-09-24T13:15:00.000Z"}}}
	for i, path := range pixPaths {
		summary := "Pix API webhook (BACEN's format; the PSP posts to the registered webhookUrl + \"/pix\"). Authenticated by the tenant's webhook credential: " +
			"mutual TLS terminated in front, and X-Lastro-Timestamp and X-Lastro-Signature v1=HMAC-SHA256(webhookSecret, timestamp.body) as for /settlements " +
			"(headers and tenant checked before the body is read; a body over 256 KiB is 413). " +
			"The whole body is validated before any payment is applied (400: nothing applied). Each payment is applied exactly once by its endToEndId " +
			"(txid = chargeId, valor a decimal string of reais parsed exactly, horario = paidAt); each DEVOLVIDO refund (devolucoes) is recorded once by its rtrId " +
			"as a SettlementReversed event that reopens what the payment paid. 200: every payment processed (duplicates included); " +
			"503 with Retry-After: some payment failed transiently, deliver the call again; 409: an id came back with other facts"
		if i == 1 {
			summary = "The Pix API webhook registered with \"/pix\" in its URL (a PSP appends \"/pix\" again): the same as POST /v1/webhooks/{tenantId}/pix"
		}
		srv.Handle(web.Doc{Method: http.MethodPost, Path: path, Summary: summary, Public: true, Request: example, Response: PixAnswer{},
			Errors: []int{http.StatusUnauthorized, http.StatusConflict, http.StatusTooManyRequests, http.StatusServiceUnavailable},
			Headers: []web.Header{
				{Name: signature.TimestampHeader, Required: true, Description: "unix seconds of the signature; refused more than 300 s away from now"},
				{Name: signature.SignatureHeader, Required: true, Description: "v1=<hex HMAC-SHA256(webhookSecret, timestamp + \".\" + raw body)>"},
			}}, s.pixWebhook, s.tenants.LimitFailures("tenantId"))
	}
}

// pixWebhook authenticates, decodes the whole body and applies it. The
// status code is what a PSP looks at: 200 when every payment was
// processed, 409 when one contradicts its record, 503 (Retry-After) when
// one failed and a redelivery is owed; the body has every payment's
// outcome either way.
func (s *Service) pixWebhook(c echo.Context) error {
	t, body, err := s.signedBody(c, MaxPixBodyBytes)
	if err != nil {
		return err
	}
	return s.applyPixBody(c, t, body)
}

// MutualTLSRoutes registers the Pix API webhook on the mutual-TLS
// listener's server (docs/adr/0070): the same paths and body as the
// signed route, authenticated by the client certificate the TLS
// handshake received instead of the HMAC headers. The path names the
// tenant; the certificate must be one the tenant's webhook TLS setting trusts
// (tenant.VerifyWebhookClient), so a certificate another tenant trusts
// opens nothing here.
func (s *Service) MutualTLSRoutes(srv *web.Server) {
	example := pixDoc{Pix: []pixPaymentDoc{{EndToEndID: "E12345678202609241315abcdefghijk", TxID: "E9f2c1a7e4b0d3e61A7bX2kQ9mZ4pL8",
		Valor: "1024.67", Horario: "2026-09-24T13:15:00.000Z"}}}
	for _, path := range pixPaths {
		srv.Handle(web.Doc{Method: http.MethodPost, Path: path,
			Summary: "Pix API webhook over mutual TLS (the PSP posts to the registered webhookUrl + \"/pix\"), authenticated by the PSP's client certificate: " +
				"it must chain to a CA of the tenant's webhook TLS settings, or be pinned there (PUT /v1/tenant/psp/webhook-tls), and be within its validity; " +
				"no HMAC headers. The body and answers are those of the signed route: validated whole, each payment applied exactly once by its endToEndId",
			Public: true, Request: example, Response: PixAnswer{},
			Errors: []int{http.StatusUnauthorized, http.StatusConflict, http.StatusTooManyRequests, http.StatusServiceUnavailable}},
			s.mutualTLSPixWebhook, s.tenants.LimitFailures("tenantId"))
	}
}

var errClientCertificate = errs.E(errs.Unauth, "client_certificate_required", "this listener takes only calls with a client certificate")

// mutualTLSPixWebhook is pixWebhook authenticated by the client
// certificate: everything that needs no body (the tenant, the
// certificate, a declared length) is checked before a byte of it is read.
func (s *Service) mutualTLSPixWebhook(c echo.Context) error {
	r := c.Request()
	id := c.Param("tenantId")
	if !tenant.ValidID(id) {
		return errTenantNotFound
	}
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return errClientCertificate
	}
	t, err := s.tenants.Get(r.Context(), id)
	if err != nil {
		return err
	}
	if err := t.VerifyWebhookClient(r.TLS.PeerCertificates, s.clock.Now()); err != nil {
		return err
	}
	if r.ContentLength > MaxPixBodyBytes {
		return errBodyTooLarge(MaxPixBodyBytes)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxPixBodyBytes+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errBodyTooLarge(min(MaxPixBodyBytes, mbe.Limit))
		}
		return errBodyIncomplete
	}
	if int64(len(body)) > MaxPixBodyBytes {
		return errBodyTooLarge(MaxPixBodyBytes)
	}
	return s.applyPixBody(c, t, body)
}

// applyPixBody decodes an authenticated Pix webhook body whole and
// applies it, answering as pixWebhook says.
func (s *Service) applyPixBody(c echo.Context, t *tenant.Tenant, body []byte) error {
	ctx := c.Request().Context()
	payments, err := DecodePix(body)
	if err != nil {
		return pixError(err)
	}
	ans, err := s.ApplyPix(ctx, t, payments)
	if err != nil {
		return err
	}
	switch {
	case ans.Failed():
		c.Response().Header().Set("Retry-After", "1")
		return c.JSON(http.StatusServiceUnavailable, pixFailure{Error: ResultError{Code: "pix_partially_applied",
			Message: "some payments could not be processed now; the others are recorded: deliver the call again"}, Pix: ans.Pix})
	case ans.Conflicted():
		return c.JSON(http.StatusConflict, pixFailure{Error: ResultError{Code: "pix_conflict",
			Message: "an endToEndId or rtrId was already recorded with other facts; nothing was changed for it"}, Pix: ans.Pix})
	}
	return c.JSON(http.StatusOK, ans)
}

// pixFailure is a Pix webhook's answer when not every payment was
// processed: the engine's error shape, with every payment's outcome.
type pixFailure struct {
	Error ResultError `json:"error"`
	Pix   []PixResult `json:"pix"`
}

// pixError says which payment (and refund) of the body was refused,
// by position only: the input is never echoed.
func pixError(err error) error {
	var pe *PixError
	if !errors.As(err, &pe) {
		return err
	}
	_, code, msg := errs.Public(pe.Err)
	where := fmt.Sprintf("pix[%d]", pe.Index)
	if pe.Refund >= 0 {
		where += fmt.Sprintf(".devolucoes[%d]", pe.Refund)
	}
	return errs.E(errs.Invalid, code, "%s: %s; nothing was applied", where, msg)
}

func (s *Service) reconcileRoute(srv *web.Server) {
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/charges/:chargeId/reconcile",
		Summary: "Reconcile a Pix charge with its PSP: GET /cob|cobv/{txid} at the tenant's PSP, then every payment it lists (pix[]) applied exactly once " +
			"as its webhook would (endToEndId = settlementId): applied, or already_applied when the webhook (or an earlier reconcile) got it. " +
			"Answers the PSP status and each payment's outcome; 503 with Retry-After when one failed transiently, 409 when an endToEndId was recorded with other facts; " +
			"422 for a charge not at a PSP",
		Roles: []web.Role{web.Supervisor}, Errors: []int{http.StatusConflict, http.StatusUnprocessableEntity, http.StatusServiceUnavailable},
		Response: Reconciled{ChargeID: "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF", PSPStatus: "CONCLUIDA",
			Payments: []PixResult{{EndToEndID: "E12345678202609241315abcdefghijk", Status: StatusApplied}}}}, s.reconcile)
}

// reconcile answers like the Pix webhook: 200 when every listed payment
// was processed, 409 or 503 (with every outcome) otherwise.
func (s *Service) reconcile(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	out, err := s.Reconcile(c.Request().Context(), t, c.Param("chargeId"))
	if err != nil {
		return err
	}
	ans := PixAnswer{Pix: out.Payments}
	switch {
	case ans.Failed():
		c.Response().Header().Set("Retry-After", "1")
		return c.JSON(http.StatusServiceUnavailable, reconcileFailure{Error: ResultError{Code: "reconcile_partially_applied",
			Message: "some payments could not be processed now; the others are recorded: reconcile again"}, Reconciled: out})
	case ans.Conflicted():
		return c.JSON(http.StatusConflict, reconcileFailure{Error: ResultError{Code: "reconcile_conflict",
			Message: "an endToEndId was already recorded with other facts; nothing was changed for it"}, Reconciled: out})
	}
	return c.JSON(http.StatusOK, out)
}

// reconcileFailure is reconcile's answer when not every payment was
// processed: the engine's error shape, with the whole reconciliation.
type reconcileFailure struct {
	Error ResultError `json:"error"`
	*Reconciled
}

func (s *Service) refundRoute(srv *web.Server) {
	srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/settlements/:settlementId/refunds",
		Summary: "Refund (devolução) part or all of a Pix payment to its payer through the tenant's PSP (PUT /pix/{e2eid}/devolucao/{refundId}): " +
			"exactly once by the refundId the caller gives (the same id again answers the same refund, alreadyRequested; with another amount 409); " +
			"the refunds asked of a payment never exceed it (422 refund_exceeds_payment). Answers REQUESTED, EM_PROCESSAMENTO or DEVOLVIDO; " +
			"once the PSP says DEVOLVIDO (here, or in the webhook's devolucoes) the balance is reopened through the reversal path, once (ADR 0069)",
		Roles: []web.Role{web.Supervisor}, Request: RefundInput{RefundID: "rf20260924a", AmountCents: 50000, Description: "estorno"},
		Response: Refunded{SettlementID: "E12345678202609241315abcdefghijk", RefundID: "rf20260924a", AmountCents: 50000, Status: RefundProcessing},
		Errors:   []int{http.StatusConflict, http.StatusUnprocessableEntity, http.StatusServiceUnavailable}}, s.refund)
}

func (s *Service) refund(c echo.Context) error {
	t, err := s.tenants.From(c)
	if err != nil {
		return err
	}
	var in RefundInput
	if err := web.Bind(c, &in); err != nil {
		return err
	}
	out, err := s.Refund(c.Request().Context(), t, c.Param("settlementId"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
