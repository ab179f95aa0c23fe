package web

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"lastro/collections/errs"
)

func newTestServer(logs *bytes.Buffer) *Server {
	s := New(Options{Logger: slog.New(slog.NewJSONHandler(logs, nil)), BodyLimit: 64})
	s.Handle(Doc{Method: http.MethodPost, Path: "/things/:id", Roles: []Role{Operator}}, func(c echo.Context) error {
		var in struct {
			Name string `json:"name"`
		}
		if err := Bind(c, &in); err != nil {
			return err
		}
		switch in.Name {
		case "boom":
			return errors.New("database password is hunter2")
		case "panic":
			panic("kaboom")
		case "rule":
			return errs.E(errs.Rule, "fine_above_cap", "fine above the cap")
		}
		return c.JSON(http.StatusCreated, map[string]string{"id": c.Param("id")})
	})
	s.Echo.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if r := c.Request().Header.Get("X-Role"); r != "" {
				SetPrincipal(c, Principal{TenantID: "t1", Role: Role(r)})
			}
			return next(c)
		}
	})
	return s
}

func TestErrorShapeAndStatuses(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	s := newTestServer(&logs)
	tests := []struct {
		name, method, path, role, body string
		status                         int
		code                           string
	}{
		{"ok", "POST", "/things/1", "operator", `{"name":"a"}`, 201, ""},
		{"no principal", "POST", "/things/1", "", `{"name":"a"}`, 401, "unauthenticated"},
		{"wrong role", "POST", "/things/1", "compliance", `{"name":"a"}`, 403, "forbidden"},
		{"malformed", "POST", "/things/1", "operator", `{"name":`, 400, "invalid_json"},
		{"unknown field", "POST", "/things/1", "operator", `{"nome":"a"}`, 400, "invalid_json"},
		{"trailing data", "POST", "/things/1", "operator", `{"name":"a"} {}`, 400, "invalid_json"},
		{"wrong type", "POST", "/things/1", "operator", `{"name":5}`, 400, "invalid_json"},
		{"too large", "POST", "/things/1", "operator", `{"name":"` + strings.Repeat("a", 100) + `"}`, 400, "body_too_large"},
		{"business rule", "POST", "/things/1", "operator", `{"name":"rule"}`, 422, "fine_above_cap"},
		{"internal", "POST", "/things/1", "operator", `{"name":"boom"}`, 500, "internal"},
		{"panic", "POST", "/things/1", "operator", `{"name":"panic"}`, 500, "internal"},
		{"no route", "GET", "/nothing", "operator", ``, 404, "route_not_found"},
		{"wrong method", "GET", "/things/1", "operator", ``, 400, "method_not_allowed"},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
		req.Header.Set("X-Role", tt.role)
		rec := httptest.NewRecorder()
		s.Echo.ServeHTTP(rec, req)
		if rec.Code != tt.status {
			t.Errorf("%s: status %d, want %d (%s)", tt.name, rec.Code, tt.status, rec.Body)
			continue
		}
		if rec.Header().Get(echo.HeaderXRequestID) == "" {
			t.Errorf("%s: no request id", tt.name)
		}
		if tt.code != "" && !strings.Contains(rec.Body.String(), `"code":"`+tt.code+`"`) {
			t.Errorf("%s: body %s, want code %s", tt.name, rec.Body, tt.code)
		}
		if strings.Contains(rec.Body.String(), "hunter2") || strings.Contains(rec.Body.String(), "kaboom") {
			t.Errorf("%s: internal detail leaked to the client: %s", tt.name, rec.Body)
		}
	}
	// The access log names the route template, never the raw path.
	if !strings.Contains(logs.String(), `"route":"/things/:id"`) {
		t.Errorf("access log lacks the route template: %s", logs.String())
	}
}

func TestDocumentSchemas(t *testing.T) {
	t.Parallel()
	type in struct {
		Name  string  `json:"name"`
		Cents int64   `json:"amountCents"`
		Note  *string `json:"note,omitempty"`
		Tags  []string
	}
	s := New(Options{})
	s.Handle(Doc{Method: http.MethodPost, Path: "/v1/x/:id", Roles: []Role{Supervisor}, Request: in{}, Status: 201, Idempotent: true}, func(c echo.Context) error { return nil })
	doc := s.Document()
	op := doc["paths"].(map[string]any)["/v1/x/{id}"].(map[string]any)["post"].(map[string]any)
	schema := op["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	props := schema["properties"].(map[string]any)
	if props["amountCents"].(map[string]any)["type"] != "integer" || props["Tags"].(map[string]any)["type"] != "array" {
		t.Fatalf("schema: %v", schema)
	}
	req := schema["required"].([]string)
	if strings.Join(req, ",") != "name,amountCents,Tags" {
		t.Fatalf("required: %v", req)
	}
	if _, ok := op["responses"].(map[string]any)["201"]; !ok {
		t.Fatalf("responses: %v", op["responses"])
	}
	if !s.Documented(http.MethodPost, "/v1/x/:id") || s.Documented(http.MethodGet, "/v1/x/:id") {
		t.Fatal("Documented disagrees with registrations")
	}
}
