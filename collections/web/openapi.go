package web

import (
	"net/http"
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
		op := map[string]any{
			"summary": d.Summary,
			"responses": map[string]any{
				itoa(status): response("Success", d.Response),
				"default":    map[string]any{"description": "Error", "content": jsonContent(map[string]any{"$ref": "#/components/schemas/Error"})},
			},
		}
		var ps []map[string]any
		for _, name := range params {
			ps = append(ps, map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, name := range d.Query {
			ps = append(ps, map[string]any{"name": name, "in": "query", "schema": map[string]any{"type": "string"}})
		}
		if d.Idempotent {
			ps = append(ps, map[string]any{"name": "Idempotency-Key", "in": "header", "schema": map[string]any{"type": "string", "maxLength": 128}})
		}
		if ps != nil {
			op["parameters"] = ps
		}
		if d.Request != nil {
			op["requestBody"] = map[string]any{"required": true, "content": jsonContent(schemaOf(d.Request))}
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
		"openapi":  "3.1.0",
		"info":     map[string]any{"title": o.title, "version": o.version},
		"paths":    ordered,
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
