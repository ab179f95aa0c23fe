package idem_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"lastro/collections/clock"
	"lastro/collections/idem"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/collections/web"
	"lastro/ddblocal/ddbtest"
)

// app is an echo server with one idempotent POST whose handler counts its
// executions and can be held open.
type app struct {
	srv   *web.Server
	calls atomic.Int32
	hold  chan struct{}
}

func newApp(t *testing.T) *app {
	t.Helper()
	db := ddbtest.New(t)
	if _, err := table.Ensure(context.Background(), db, "lastro"); err != nil {
		t.Fatal(err)
	}
	a := &app{srv: web.New(web.Options{}), hold: make(chan struct{})}
	close(a.hold)
	store := idem.New(kit.New(db, "lastro"), clock.NewManual(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)))
	a.srv.Echo.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			web.SetPrincipal(c, web.Principal{TenantID: c.Request().Header.Get("X-Test-Tenant"), Role: web.Operator})
			return next(c)
		}
	})
	a.srv.Handle(web.Doc{Method: http.MethodPost, Path: "/v1/things", Roles: []web.Role{web.Operator}, Idempotent: true}, func(c echo.Context) error {
		n := a.calls.Add(1)
		<-a.hold
		if strings.Contains(c.Request().Header.Get("X-Fail"), "yes") {
			return c.JSON(http.StatusBadRequest, map[string]any{"n": n})
		}
		return c.JSON(http.StatusCreated, map[string]any{"n": n})
	}, store.Middleware())
	return a
}

func (a *app) post(tenant, key, body string, fail bool) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/v1/things", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test-Tenant", tenant)
	if key != "" {
		req.Header.Set(idem.Header, key)
	}
	if fail {
		req.Header.Set("X-Fail", "yes")
	}
	rec := httptest.NewRecorder()
	a.srv.Echo.ServeHTTP(rec, req)
	return rec
}

func TestSameKeySameBodyReplaysTheFirstResponse(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	first := a.post("t1", "k-1", `{"x":1}`, false)
	again := a.post("t1", "k-1", `{"x":1}`, false)
	if first.Code != 201 || again.Code != 201 || first.Body.String() != again.Body.String() {
		t.Fatalf("replay differs: %d %s / %d %s", first.Code, first.Body, again.Code, again.Body)
	}
	if again.Header().Get(idem.ReplayedHeader) != "true" || a.calls.Load() != 1 {
		t.Fatalf("handler ran %d times, replay header %q", a.calls.Load(), again.Header().Get(idem.ReplayedHeader))
	}
	if ct := again.Header().Get("Content-Type"); ct != first.Header().Get("Content-Type") {
		t.Fatalf("replay Content-Type %q, first %q", ct, first.Header().Get("Content-Type"))
	}
	// Keys are per tenant: the same key in another tenant is a new request.
	if other := a.post("t2", "k-1", `{"x":1}`, false); other.Code != 201 || a.calls.Load() != 2 {
		t.Fatalf("another tenant's key collided: %d, %d calls", other.Code, a.calls.Load())
	}
}

func TestSameKeyOtherBodyIs422(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.post("t1", "k-1", `{"x":1}`, false)
	rec := a.post("t1", "k-1", `{"x":2}`, false)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "idempotency_key_reused") {
		t.Fatalf("got %d %s", rec.Code, rec.Body)
	}
}

func TestConcurrentDuplicateInProgressIs409(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.hold = make(chan struct{})
	var wg sync.WaitGroup
	var first *httptest.ResponseRecorder
	wg.Go(func() { first = a.post("t1", "k-1", `{}`, false) })
	for a.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	dup := a.post("t1", "k-1", `{}`, false)
	close(a.hold)
	wg.Wait()
	if dup.Code != http.StatusConflict || first.Code != 201 || a.calls.Load() != 1 {
		t.Fatalf("duplicate %d, first %d, calls %d", dup.Code, first.Code, a.calls.Load())
	}
}

func TestFailedRequestReleasesTheKey(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	if rec := a.post("t1", "k-1", `{}`, true); rec.Code != 400 {
		t.Fatalf("failing request: %d", rec.Code)
	}
	if rec := a.post("t1", "k-1", `{}`, false); rec.Code != 201 || a.calls.Load() != 2 {
		t.Fatalf("retry after failure: %d, %d calls", rec.Code, a.calls.Load())
	}
}

func TestOverlongKeyIsRejected(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	if rec := a.post("t1", strings.Repeat("k", 129), `{}`, false); rec.Code != 400 || a.calls.Load() != 0 {
		t.Fatalf("got %d, %d calls", rec.Code, a.calls.Load())
	}
}
