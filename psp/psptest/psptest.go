// Package psptest checks Pix API traffic against the Central Bank's own
// OpenAPI document (the reference copy beside the repository, never
// copied into it): a request the engine's client sends, an answer a PSP
// gives, a webhook notice. Strict wraps a PSP's handler as a recording
// PSP that refuses, the way a strict PSP does (400 with violacoes), every
// request the document's schemas refuse, and fails the test on any answer
// they refuse. Tests that cannot find the document skip, saying where it
// was looked for.
package psptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// SpecFile is where the document is, from the module's root: the shared
// reference folder beside the repository (CI lays it there too).
const SpecFile = "../shared/reference/bacen-pix-api/openapi.yaml"

// Spec is the loaded document and how its schemas are read.
type Spec struct {
	doc  *openapi3.T
	opts *openapi3filter.Options
	// scopes maps each bearer token Strict saw issued to its scopes.
	mu     sync.Mutex
	scopes map[string][]string
}

// Load reads the document, or skips t when it is absent.
func Load(t testing.TB) *Spec {
	t.Helper()
	path, err := specPath()
	if err != nil {
		t.Skipf("psptest: the Central Bank's Pix API document is not at %s from the module root (%v); CI lays it there", SpecFile, err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		t.Fatalf("psptest: load %s: %v", SpecFile, err)
	}
	s := &Spec{doc: doc, scopes: map[string][]string{}}
	s.opts = &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true, AuthenticationFunc: s.authenticate,
		RegexCompiler: compilePattern,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.EnableFormatValidation(),
			openapi3.SetSchemaRegexCompiler(compilePattern)}}
	return s
}

// specPath finds SpecFile from the module root above the working
// directory (a package's tests run in its own folder).
func specPath() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, filepath.FromSlash(SpecFile))
			_, err := os.Stat(p)
			return p, err
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
}

// compilePattern reads the document's patterns as its authors mean them
// (the reference folder's README says so): a JavaScript literal
// ("/^\d{11}$/", the CPF's) is the expression between its slashes, and a
// pattern is anchored at both ends ("\d{1,10}\.\d{2}" does not accept
// "1.234").
func compilePattern(expr string) (openapi3.RegexMatcher, error) {
	if len(expr) > 1 && strings.HasPrefix(expr, "/") && strings.HasSuffix(expr, "/") {
		expr = expr[1 : len(expr)-1]
	}
	return regexp.Compile(`^(?:` + strings.TrimSuffix(strings.TrimPrefix(expr, "^"), "$") + `)$`)
}

// authenticate checks the OAuth2 scopes an operation names against those
// of the request's bearer token, when Strict saw the token issued.
func (s *Spec) authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	tok, ok := strings.CutPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return in.NewError(errors.New("no bearer token"))
	}
	s.mu.Lock()
	granted, known := s.scopes[tok]
	s.mu.Unlock()
	if !known {
		return nil // issued elsewhere: the PSP itself judges it
	}
	for _, want := range in.Scopes {
		if !slices.Contains(granted, want) {
			return in.NewError(fmt.Errorf("the token's scopes %v lack %s", granted, want))
		}
	}
	return nil
}

// route finds the operation of method and path (the API's path, after
// its base), nil when the document has none: the template with the most
// literal segments wins, and between equals the one not named after a
// location's access token (GET /cobv/{txid} is a charge, not a payload).
func (s *Spec) route(method, path string) (*routers.Route, map[string]string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best *routers.Route
	var bestParams map[string]string
	bestScore := -1
	for tmpl, item := range s.doc.Paths.Map() {
		op := item.GetOperation(method)
		if op == nil {
			continue
		}
		parts := strings.Split(strings.Trim(tmpl, "/"), "/")
		if len(parts) != len(segs) {
			continue
		}
		params, score := map[string]string{}, 0
		ok := true
		for i, p := range parts {
			if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
				v, err := url.PathUnescape(segs[i])
				if err != nil {
					ok = false
					break
				}
				params[p[1:len(p)-1]] = v
				continue
			}
			if p != segs[i] {
				ok = false
				break
			}
			score += 2
		}
		if !ok {
			continue
		}
		if !strings.Contains(tmpl, "AccessToken}") {
			score++
		}
		if score > bestScore {
			best, bestParams, bestScore = &routers.Route{Spec: s.doc, Path: tmpl, PathItem: item, Method: method, Operation: op}, params, score
		}
	}
	return best, bestParams
}

// ErrNotInDocument is CheckRequest's answer for a route the document does
// not describe (a sandbox's own /sandbox/pay, the token endpoint).
var ErrNotInDocument = errors.New("psptest: the route is not in the Pix API document")

// CheckRequest validates a request to the API (path relative to the API's
// base) and its body against the document.
func (s *Spec) CheckRequest(r *http.Request, path string, body []byte) error {
	in, err := s.input(r, path, body)
	if err != nil {
		return err
	}
	return openapi3filter.ValidateRequest(r.Context(), in)
}

func (s *Spec) input(r *http.Request, path string, body []byte) (*openapi3filter.RequestValidationInput, error) {
	route, params := s.route(r.Method, path)
	if route == nil {
		return nil, ErrNotInDocument
	}
	req := r.Clone(r.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	return &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: s.opts}, nil
}

// CheckResponse validates the answer (status, headers, body) to a request
// of the API.
func (s *Spec) CheckResponse(r *http.Request, path string, body []byte, status int, header http.Header, answer []byte) error {
	in, err := s.input(r, path, body)
	if err != nil {
		return err
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: s.opts}
	return openapi3filter.ValidateResponse(r.Context(), out.SetBodyBytes(answer))
}

// CheckNotice validates a webhook notice ({"pix": [...]}, what a PSP
// posts to the registered URL + "/pix") against the callback of PUT
// /webhook/{chave}.
func (s *Spec) CheckNotice(body []byte) error {
	item := s.doc.Paths.Find("/webhook/{chave}")
	if item == nil || item.Put == nil {
		return errors.New("psptest: the document has no PUT /webhook/{chave}")
	}
	cb := item.Put.Callbacks["listaPix"]
	if cb == nil || cb.Value == nil {
		return errors.New("psptest: PUT /webhook/{chave} has no listaPix callback")
	}
	for _, p := range cb.Value.Map() {
		if p.Post == nil || p.Post.RequestBody == nil || p.Post.RequestBody.Value == nil {
			continue
		}
		mt := p.Post.RequestBody.Value.Content.Get("application/json")
		if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
			continue
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return fmt.Errorf("psptest: the notice is not JSON: %w", err)
		}
		return mt.Schema.Value.VisitJSON(v, openapi3.MultiErrors(), openapi3.VisitAsRequest(), openapi3.EnableFormatValidation(),
			openapi3.SetSchemaRegexCompiler(compilePattern))
	}
	return errors.New("psptest: the listaPix callback has no JSON body")
}

// Exchange is one call a Strict PSP handled.
type Exchange struct {
	Method, Path string // Path relative to the API's base
	Body         []byte
	Status       int
	Answer       []byte
	// Refused says why the document refused the request (the PSP then
	// answered 400 without passing it on); empty when it passed.
	Refused string
	// Checked is false for a route the document does not describe.
	Checked bool
}

// Recorder is a recording PSP: Strict's handler.
type Recorder struct {
	t      testing.TB
	spec   *Spec
	prefix string
	next   http.Handler
	mu     sync.Mutex
	calls  []Exchange
}

// Strict wraps next, a PSP's handler serving the API under prefix ("" at
// the root), into a recording PSP: each request is checked against the
// document and, when refused, answered 400 with the API's Problema and
// its violacoes (next never sees it); each answer of next to a route of
// the document is checked, and one the document refuses fails t. Token
// requests are watched so each call's scopes are checked too.
func (s *Spec) Strict(t testing.TB, prefix string, next http.Handler) *Recorder {
	return &Recorder{t: t, spec: s, prefix: strings.TrimSuffix(prefix, "/"), next: next}
}

// ServeHTTP implements http.Handler.
func (rec *Recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "reading the body", http.StatusBadRequest)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, rec.prefix)
	ex := Exchange{Method: r.Method, Path: path, Body: body}
	inner := r.Clone(r.Context())
	inner.Body = io.NopCloser(bytes.NewReader(body))
	in, err := rec.spec.input(r, path, body)
	if err == nil {
		ex.Checked = true
		if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
			ex.Refused, ex.Status = err.Error(), http.StatusBadRequest
			ex.Answer = refusal(err)
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write(ex.Answer)
			rec.add(ex)
			return
		}
	}
	out := httptest.NewRecorder()
	rec.next.ServeHTTP(out, inner)
	ex.Status, ex.Answer = out.Code, out.Body.Bytes()
	if ex.Checked {
		if err := rec.spec.CheckResponse(r, path, body, out.Code, out.Header(), ex.Answer); err != nil {
			rec.t.Errorf("psptest: the PSP's answer to %s %s (%d) is not what the Pix API document allows: %v\n%s", r.Method, path, out.Code, err, ex.Answer)
		}
	} else if r.Method == http.MethodPost && strings.HasSuffix(path, "/oauth/token") && out.Code == http.StatusOK {
		rec.spec.granted(inner, ex.Answer)
	}
	for k, vs := range out.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(out.Code)
	_, _ = w.Write(ex.Answer)
	rec.add(ex)
}

// granted records the scopes a token answer was issued for: those asked
// for in the form (the token endpoint's own answer may omit them).
func (s *Spec) granted(req *http.Request, answer []byte) {
	var tok struct {
		AccessToken string `json:"access_token"`
		Scope       string `json:"scope"`
	}
	if json.Unmarshal(answer, &tok) != nil || tok.AccessToken == "" {
		return
	}
	scope := tok.Scope
	if scope == "" {
		_ = req.ParseForm()
		scope = req.PostForm.Get("scope")
	}
	s.mu.Lock()
	s.scopes[tok.AccessToken] = strings.Fields(scope)
	s.mu.Unlock()
}

// refusal is the API's Problema for a request the document refuses, with
// one violation per schema error.
func refusal(err error) []byte {
	type violacao struct {
		Razao       string `json:"razao"`
		Propriedade string `json:"propriedade,omitempty"`
	}
	var vs []violacao
	var me openapi3.MultiError
	var se *openapi3.SchemaError
	var re *openapi3filter.RequestError
	switch {
	case errors.As(err, &re) && errors.As(re.Err, &me):
		for _, e := range me {
			if errors.As(e, &se) {
				vs = append(vs, violacao{Razao: se.Reason, Propriedade: strings.Join(se.JSONPointer(), ".")})
			} else {
				vs = append(vs, violacao{Razao: e.Error()})
			}
		}
	case errors.As(err, &se):
		vs = append(vs, violacao{Razao: se.Reason, Propriedade: strings.Join(se.JSONPointer(), ".")})
	default:
		vs = append(vs, violacao{Razao: err.Error()})
	}
	raw, _ := json.Marshal(map[string]any{"type": "https://pix.bcb.gov.br/api/v2/error/RequisicaoInvalida", "title": "Requisição inválida",
		"status": http.StatusBadRequest, "detail": "the request does not follow the Pix API's schemas", "violacoes": vs})
	return raw
}

func (rec *Recorder) add(ex Exchange) {
	rec.mu.Lock()
	rec.calls = append(rec.calls, ex)
	rec.mu.Unlock()
}

// Calls are the exchanges so far, in order.
func (rec *Recorder) Calls() []Exchange {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.calls)
}

// Count is how many calls matched method and a path with prefix.
func (rec *Recorder) Count(method, pathPrefix string) int {
	n := 0
	for _, c := range rec.Calls() {
		if c.Method == method && strings.HasPrefix(c.Path, pathPrefix) {
			n++
		}
	}
	return n
}

// Refused are the calls the document refused.
func (rec *Recorder) Refused() []Exchange {
	var out []Exchange
	for _, c := range rec.Calls() {
		if c.Refused != "" {
			out = append(out, c)
		}
	}
	return out
}

// LoadIfPresent is Load for a fixture that also runs without the
// document: nil (logged) when it is absent, so the fixture's other
// checks still run and only the document's are left out.
func LoadIfPresent(t testing.TB) *Spec {
	t.Helper()
	if _, err := specPath(); err != nil {
		t.Logf("psptest: the Central Bank's Pix API document is not at %s from the module root (%v): traffic is not checked against it", SpecFile, err)
		return nil
	}
	return Load(t)
}
