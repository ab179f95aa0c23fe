package web

import (
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
)

// Doc documents one route for the OpenAPI document.
type Doc struct {
	Method, Path string
	Summary      string
	Roles        []Role // who may call it (empty with Public)
	Public       bool   // no API key (health, webhooks with their own signature)
	Request      any    // example request body (a JSON schema is derived from it)
	Response     any    // example 2xx response body
	Status       int    // success status; default 200
	Idempotent   bool   // accepts an Idempotency-Key header
	Query        []string
	// RawBody is the media type of a request body that is not JSON (a
	// bank's text file: "text/plain"); it is documented as a string.
	RawBody string
	// RawResponse is the media type of a success body that is not JSON
	// (a PDF, a PNG, a bank's text file); it is documented as binary.
	RawResponse string
	// OperationID names the operation; "" derives it from the method and
	// the path (OperationID), which is unique because routes are.
	OperationID string
	// Headers are request headers the route reads (a webhook's signature).
	Headers []Header
	// Errors are the 4xx statuses the route answers besides those every
	// route of its kind may (see errorStatuses).
	Errors []int
}

// Header documents one request header.
type Header struct {
	Name, Description string
	Required          bool
}

// OperationID derives an operation id from a method and an echo path:
// the method in lower case, then each literal segment in title case and
// each parameter as By<Param>, the version segment left out
// (GET /v1/debtors/:debtorKey → getDebtorsByDebtorKey).
func OperationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.Split(path, "/") {
		switch {
		case seg == "" || seg == "v1":
			continue
		case strings.HasPrefix(seg, ":"):
			b.WriteString("By")
			seg = seg[1:]
		}
		for _, word := range strings.FieldsFunc(seg, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
	}
	return b.String()
}

// errorStatuses are the 4xx answers of a route: 400 for any (a bad query,
// path or body), 401 and 403 for one behind an API key, 404 for one with
// path parameters, 413 for one with a body, then the route's own.
func errorStatuses(d Doc, params []string) []int {
	out := []int{http.StatusBadRequest}
	if !d.Public {
		out = append(out, http.StatusUnauthorized, http.StatusForbidden)
	}
	if len(params) > 0 {
		out = append(out, http.StatusNotFound)
	}
	if d.Request != nil || d.RawBody != "" {
		out = append(out, http.StatusRequestEntityTooLarge)
	}
	if d.Idempotent {
		out = append(out, http.StatusConflict, http.StatusUnprocessableEntity)
	}
	for _, st := range d.Errors {
		if !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	slices.Sort(out)
	return out
}

type openAPI struct {
	mu             sync.Mutex
	title, version string
	docs           []Doc
}

func newOpenAPI(title, version string) *openAPI {
	if title == "" {
		title = "Lastro"
	}
	if version == "" {
		version = "1"
	}
	return &openAPI{title: title, version: version}
}

func (o *openAPI) add(d Doc) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.docs = append(o.docs, d)
}

// Handle registers a documented route.
func (s *Server) Handle(d Doc, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) {
	if !d.Public && len(d.Roles) > 0 {
		mw = append([]echo.MiddlewareFunc{Require(d.Roles...)}, mw...)
	}
	s.Echo.Add(d.Method, d.Path, h, mw...)
	s.doc.add(d)
}

// Documented reports whether method and echo path have a Doc.
func (s *Server) Documented(method, path string) bool {
	s.doc.mu.Lock()
	defer s.doc.mu.Unlock()
	for _, d := range s.doc.docs {
		if d.Method == method && d.Path == path {
			return true
		}
	}
	return false
}

// openAPIPath turns echo's :param into OpenAPI's {param}.
func openAPIPath(p string) (string, []string) {
	var params []string
	parts := strings.Split(p, "/")
	for i, part := range parts {
		if strings.HasPrefix(part, ":") {
			params = append(params, part[1:])
			parts[i] = "{" + part[1:] + "}"
		}
	}
	return strings.Join(parts, "/"), params
}

// Document returns the OpenAPI 3.1 document.
func (s *Server) Document() map[string]any {
	o := s.doc
	o.mu.Lock()
	defer o.mu.Unlock()
	paths := map[string]map[string]any{}
	for _, d := range o.docs {
		p, params := openAPIPath(d.Path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		status := d.Status
		if status == 0 {
			status = http.StatusOK
		}
		success := response("Success", d.Response)
		if d.RawResponse != "" {
			success = map[string]any{"description": "Success", "content": map[string]any{
				d.RawResponse: map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}}}
		}
		responses := map[string]any{
			itoa(status): success,
			"default":    errorResponse("Error"),
		}
		for _, st := range errorStatuses(d, params) {
			responses[itoa(st)] = errorResponse(http.StatusText(st))
		}
		id := d.OperationID
		if id == "" {
			id = OperationID(d.Method, d.Path)
		}
		op := map[string]any{"operationId": id, "summary": d.Summary, "responses": responses}
		var ps []map[string]any
		for _, name := range params {
			ps = append(ps, map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, name := range d.Query {
			ps = append(ps, map[string]any{"name": name, "in": "query", "schema": map[string]any{"type": "string"}})
		}
		for _, h := range d.Headers {
			ps = append(ps, map[string]any{"name": h.Name, "in": "header", "required": h.Required, "description": h.Description,
				"schema": map[string]any{"type": "string"}})
		}
		if d.Idempotent {
			ps = append(ps, map[string]any{"name": "Idempotency-Key", "in": "header", "schema": map[string]any{"type": "string", "maxLength": 128}})
		}
		if ps != nil {
			op["parameters"] = ps
		}
		if d.Request != nil {
			op["requestBody"] = map[string]any{"required": true, "content": jsonContent(schemaOf(d.Request))}
		} else if d.RawBody != "" {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{d.RawBody: map[string]any{"schema": map[string]any{"type": "string"}}}}
		}
		if d.Public {
			op["security"] = []any{}
		} else {
			roles := make([]string, len(d.Roles))
			for i, r := range d.Roles {
				roles[i] = string(r)
			}
			op["x-roles"] = roles
		}
		paths[p][strings.ToLower(d.Method)] = op
	}
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ordered := map[string]any{}
	for _, k := range keys {
		ordered[k] = paths[k]
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info":    map[string]any{"title": o.title, "version": o.version},
		"paths":   ordered,
		// Relative: the document is served by the engine it describes.
		"servers":  []any{map[string]any{"url": "/", "description": "this engine"}},
		"security": []any{map[string]any{"apiKey": []any{}}},
		"components": map[string]any{
			"securitySchemes": map[string]any{"apiKey": map[string]any{"type": "http", "scheme": "bearer"}},
			"schemas": map[string]any{"Error": map[string]any{
				"type": "object", "required": []string{"error"},
				"properties": map[string]any{"error": map[string]any{"type": "object", "required": []string{"code", "message"},
					"properties": map[string]any{"code": map[string]any{"type": "string"}, "message": map[string]any{"type": "string"}}}},
			}},
		},
	}
}

func (s *Server) serveOpenAPI(c echo.Context) error { return c.JSON(http.StatusOK, s.Document()) }

func response(desc string, example any) map[string]any {
	r := map[string]any{"description": desc}
	if example != nil {
		r["content"] = jsonContent(schemaOf(example))
	}
	return r
}

func errorResponse(desc string) map[string]any {
	return map[string]any{"description": desc, "content": jsonContent(map[string]any{"$ref": "#/components/schemas/Error"})}
}

func jsonContent(schema any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}
