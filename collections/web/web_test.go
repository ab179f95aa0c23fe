package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
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
		// encoding/json would keep the last "name" and run the handler.
		{"duplicate field", "POST", "/things/1", "operator", `{"name":"a","name":"boom"}`, 400, "invalid_json"},
		{"too large", "POST", "/things/1", "operator", `{"name":"` + strings.Repeat("a", 100) + `"}`, 413, "body_too_large"},
		{"business rule", "POST", "/things/1", "operator", `{"name":"rule"}`, 422, "fine_above_cap"},
		{"internal", "POST", "/things/1", "operator", `{"name":"boom"}`, 500, "internal"},
		{"panic", "POST", "/things/1", "operator", `{"name":"panic"}`, 500, "internal"},
		{"no route", "GET", "/nothing", "operator", ``, 404, "route_not_found"},
		{"wrong method", "GET", "/things/1", "operator", ``, 405, "method_not_allowed"},
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

// countingBody records how much of a request body was read.
type countingBody struct {
	r    io.Reader
	read int
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += n
	return n, err
}

func (b *countingBody) Close() error { return nil }

// TestHTTPEdge: a known path with another method is 405 with Allow and the
// error shape; a body over the limit is 413 whether its Content-Length
// declares it (refused before a byte is read) or it is chunked and only
// goes over while read — even when the handler swallows the read error.
func TestHTTPEdge(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	s := New(Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), BodyLimit: 64})
	s.Handle(Doc{Method: http.MethodPost, Path: "/raw", Public: true}, func(c echo.Context) error {
		// Like a webhook that reads the raw body and reports any failure
		// its own way.
		if _, err := io.ReadAll(c.Request().Body); err != nil {
			return errs.E(errs.Invalid, "unreadable", "cannot read the body")
		}
		return c.NoContent(http.StatusNoContent)
	})
	s.Handle(Doc{Method: http.MethodPut, Path: "/raw", Public: true}, func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	tests := []struct {
		name, method string
		size         int
		declared     bool // Content-Length set; otherwise chunked (-1)
		status       int
		code, allow  string
		maxRead      int // bytes the server may read of the body
	}{
		{"within the limit", "POST", 64, true, 204, "", "", 64},
		{"chunked within the limit", "POST", 64, false, 204, "", "", 64},
		{"declared over the limit", "POST", 1 << 20, true, 413, "body_too_large", "", 0},
		{"chunked over the limit", "POST", 1 << 20, false, 413, "body_too_large", "", 64 + 4096},
		{"wrong method", "DELETE", 0, true, 405, "method_not_allowed", "OPTIONS, POST, PUT", 0},
		{"wrong method with a body", "PATCH", 10, true, 405, "method_not_allowed", "OPTIONS, POST, PUT", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &countingBody{r: strings.NewReader(strings.Repeat("x", tt.size))}
			req := httptest.NewRequest(tt.method, "/raw", body)
			req.ContentLength = int64(tt.size)
			if !tt.declared {
				req.ContentLength = -1
			}
			rec := httptest.NewRecorder()
			s.Echo.ServeHTTP(rec, req)
			var got ErrorBody
			if tt.code != "" {
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Error.Message == "" {
					t.Fatalf("not the error shape: %s", rec.Body)
				}
			}
			if rec.Code != tt.status || got.Error.Code != tt.code || rec.Header().Get("Allow") != tt.allow {
				t.Fatalf("%d %s Allow=%q, want %d %s Allow=%q", rec.Code, rec.Body, rec.Header().Get("Allow"), tt.status, tt.code, tt.allow)
			}
			if body.read > tt.maxRead {
				t.Fatalf("read %d bytes of the body, at most %d expected", body.read, tt.maxRead)
			}
		})
	}
}
