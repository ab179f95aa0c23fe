// Package web is the HTTP plumbing every domain shares: the echo server
// with request ids, JSON access logs without personal data, the error shape
// of docs/design.md#errors-and-bad-input, the caller's identity, role checks and the OpenAPI
// document built from the routes as they are registered.
package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"lastro/collections/errs"
	"lastro/collections/strictjson"
)

// Role is what an API key may do.
type Role string

// The roles of docs/design.md#roles-and-authentication; Admin is the operator of the service itself.
const (
	Operator   Role = "operator"
	Supervisor Role = "supervisor"
	Compliance Role = "compliance"
	Admin      Role = "admin"
)

// Principal is the authenticated caller.
type Principal struct {
	TenantID string // empty for the admin
	Role     Role
}

const principalKey = "lastro.principal"

// SetPrincipal records the authenticated caller on the request.
func SetPrincipal(c echo.Context, p Principal) { c.Set(principalKey, p) }

// PrincipalOf returns the caller; ok is false when unauthenticated.
func PrincipalOf(c echo.Context) (Principal, bool) {
	p, ok := c.Get(principalKey).(Principal)
	return p, ok
}

// ErrorBody is the error shape of every non-2xx answer.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// WriteError answers err in the error shape. Unclassified errors are
// logged and answered as a generic 500: their text may hold anything.
func WriteError(c echo.Context, log *slog.Logger, err error) {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		err = fromEcho(he)
	}
	// A body that went over the limit is the answer, whatever the handler
	// made of the failed read (a domain package may not say why).
	if lb, ok := c.Get(bodyKey).(*limitedBody); ok && lb.over.Load() {
		err = errTooLarge
	}
	status, code, msg := errs.Public(err)
	if status >= 500 {
		// A client that went away, or a store asking us to back off, is
		// not the engine failing: WARN, so ERROR stays for bugs.
		level := slog.LevelError
		if status == http.StatusServiceUnavailable || errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil {
			level = slog.LevelWarn
		}
		log.Log(c.Request().Context(), level, "request failed", "request_id", RequestID(c), "route", c.Path(), "error", err.Error())
	}
	var body ErrorBody
	body.Error.Code, body.Error.Message = code, msg
	if c.Response().Committed {
		return
	}
	c.JSON(status, body)
}

func fromEcho(he *echo.HTTPError) error {
	msg, _ := he.Message.(string)
	switch he.Code {
	case http.StatusNotFound:
		return errs.E(errs.NotFound, "route_not_found", "no such route")
	case http.StatusMethodNotAllowed:
		// echo has set Allow to the path's methods.
		return errs.E(errs.Method, "method_not_allowed", "method not allowed on this route (see the Allow header)")
	case http.StatusRequestEntityTooLarge:
		return errTooLarge
	case http.StatusUnsupportedMediaType:
		return errs.E(errs.Invalid, "unsupported_media_type", "send application/json")
	}
	if he.Code >= 400 && he.Code < 500 {
		if msg == "" {
			msg = http.StatusText(he.Code)
		}
		return errs.E(errs.Invalid, "bad_request", "%s", msg)
	}
	return he
}

// RequestID returns the request's id.
func RequestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}

// Options configure the server.
type Options struct {
	Logger    *slog.Logger
	BodyLimit int64 // bytes; default 1 MiB
	Title     string
	Version   string
	// TrustedProxies are the peers whose X-Forwarded-For is believed
	// (LASTRO_TRUSTED_PROXIES): behind them a request's client address is
	// the nearest one they did not add. Empty: the peer's address, so no
	// client can pick its own.
	TrustedProxies []netip.Prefix
}

// Server is the echo instance and the OpenAPI document of its routes.
type Server struct {
	Echo *echo.Echo
	log  *slog.Logger
	doc  *openAPI
}

// New returns a server with the shared middleware installed.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.BodyLimit == 0 {
		opts.BodyLimit = 1 << 20
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	if len(opts.TrustedProxies) > 0 {
		trust := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
		for _, p := range opts.TrustedProxies {
			trust = append(trust, echo.TrustIPRange(prefixNet(p)))
		}
		e.IPExtractor = echo.ExtractIPFromXFFHeader(trust...)
	}
	s := &Server{Echo: e, log: opts.Logger, doc: newOpenAPI(opts.Title, opts.Version)}
	e.HTTPErrorHandler = func(err error, c echo.Context) { WriteError(c, s.log, err) }
	e.Use(s.requestID, s.recoverPanic, s.accessLog, s.limitBody(opts.BodyLimit))
	e.GET("/openapi.json", s.serveOpenAPI)
	s.doc.add(Doc{Method: http.MethodGet, Path: "/openapi.json", Summary: "This OpenAPI document", Public: true})
	return s
}

// prefixNet is p as the *net.IPNet echo's trust options take.
func prefixNet(p netip.Prefix) *net.IPNet {
	p = p.Masked()
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// ParsePrefixes reads a comma-separated list of CIDRs or addresses (an
// address is its own /32 or /128), as LASTRO_TRUSTED_PROXIES is written.
func ParsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p)
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR or an IP address", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// Logger is the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

func (s *Server) requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if !SafeRequestID(id) {
			id = uuid.NewString()
		}
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

// SafeRequestID reports whether a client's X-Request-ID may be kept: the
// id is written into every log line and audit event of the request, so
// only a UUID or 8-64 of [A-Za-z0-9-] with at least one letter passes.
// Requiring a letter refuses a bare CPF, CNPJ or phone number sent as the
// id; punctuation refuses their formatted forms.
func SafeRequestID(id string) bool {
	if _, err := uuid.Parse(id); err == nil && len(id) == 36 {
		return true
	}
	if len(id) < 8 || len(id) > 64 {
		return false
	}
	letter := false
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			letter = true
		case r >= '0' && r <= '9', r == '-':
		default:
			return false
		}
	}
	return letter
}

func (s *Server) recoverPanic(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic", "request_id", RequestID(c), "route", c.Path(), "panic", p)
				err = errors.New("panic serving request")
			}
		}()
		return next(c)
	}
}

// accessLog writes one line per request: route template (never the raw
// path, which may hold identifiers), status, latency, tenant and role.
func (s *Server) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		attrs := []any{"request_id", RequestID(c), "method", c.Request().Method, "route", c.Path(),
			"status", c.Response().Status, "ms", float64(time.Since(start).Microseconds()) / 1000}
		if p, ok := PrincipalOf(c); ok {
			attrs = append(attrs, "tenant", p.TenantID, "role", string(p.Role))
		}
		s.log.Info("http", attrs...)
		return nil
	}
}

var errTooLarge = errs.E(errs.TooLarge, "body_too_large", "request body too large")

const bodyKey = "lastro.body"

// limitedBody is a request body cut at the limit that remembers whether
// the client sent more (a chunked body declares no length).
type limitedBody struct {
	io.ReadCloser
	over atomic.Bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		b.over.Store(true)
	}
	return n, err
}

// limitBody refuses a declared Content-Length over limit before reading
// anything, and cuts an undeclared (chunked) body at limit: either way the
// answer is 413 body_too_large.
func (s *Server) limitBody(limit int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.ContentLength > limit {
				return errTooLarge
			}
			lb := &limitedBody{ReadCloser: http.MaxBytesReader(c.Response(), r.Body, limit)}
			r.Body = lb
			c.Set(bodyKey, lb)
			return next(c)
		}
	}
}

// Require lets the request through only for the given roles.
func Require(roles ...Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p, ok := PrincipalOf(c)
			if !ok {
				return errs.E(errs.Unauth, "unauthenticated", "missing or invalid API key")
			}
			for _, r := range roles {
				if p.Role == r {
					return next(c)
				}
			}
			return errs.E(errs.Permission, "forbidden", "the %s role may not do this", p.Role)
		}
	}
}

// Bind decodes a JSON body strictly into v: exactly one JSON value, no
// unknown fields, no field twice in any object (strictjson.NoDuplicateFields),
// nothing but whitespace after it. The trailing check
// reads one more token and wants io.EOF: Decoder.More alone reports false
// before a stray ']' or '}', which let `{...}]` through.
func Bind(c echo.Context, v any) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errTooLarge
		}
		return errs.E(errs.Invalid, "invalid_json", "the body could not be read")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	// The body is all in memory now: only the read above can meet the
	// size limit, the decoder cannot.
	if err := dec.Decode(v); err != nil {
		return errs.E(errs.Invalid, "invalid_json", "malformed JSON body: %s", jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errs.E(errs.Invalid, "invalid_json", "malformed JSON body: trailing data")
	}
	// After the decode, so a malformed body keeps its precise message.
	return strictjson.NoDuplicateFields(body)
}

// jsonProblem describes a decoding error without echoing the input.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "syntax error"
	case errors.As(err, &te):
		return "field " + te.Field + " has the wrong type"
	case err.Error() == "EOF":
		return "empty body"
	}
	msg := err.Error()
	if len(msg) > 80 {
		msg = msg[:80]
	}
	return msg
}
