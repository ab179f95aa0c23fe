package httpserve

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestOverloadAnswer: a server given its own Overload answers it past
// every cap, the listener's and the in-flight one, with the 503 and
// Retry-After.
func TestOverloadAnswer(t *testing.T) {
	t.Parallel()
	const body = `{"__type":"x#ThrottlingException","message":"slow down"}`
	l := DefaultLimits()
	l.MaxConns, l.MaxConnsPerAddr = 10, 1
	l.Overload = Overload{ContentType: "application/x-amz-json-1.0", Body: body}
	addr := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), l)
	if resp := roundTrip(t, dialFrom(t, "127.0.0.3", addr)); resp.StatusCode != http.StatusOK {
		t.Fatalf("under the cap: %s", resp.Status)
	}
	resp, err := http.ReadResponse(bufio.NewReader(dialFrom(t, "127.0.0.3", addr)), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		resp.Header.Get("Content-Type") != l.Overload.ContentType || string(got) != body {
		t.Fatalf("past the per-address cap: %s %v %q, want the configured overload answer", resp.Status, resp.Header, got)
	}
	rec := httptest.NewRecorder()
	writeOverloaded(rec, l.Overload.orAPI())
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Content-Type") != l.Overload.ContentType || rec.Body.String() != body {
		t.Fatalf("past the in-flight cap: %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
	// Unset, it is the API's error shape.
	if o := (Overload{}).orAPI(); o.Body != overloaded || o.ContentType != "application/json" {
		t.Fatalf("the default overload answer: %+v", o)
	}
}
