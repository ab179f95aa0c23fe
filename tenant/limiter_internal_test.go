package tenant

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

func TestFailureLimiterMemoryIsBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)
	l := newFailureLimiter(2, time.Second, 3)
	for i := range 50 {
		l.fail("10.0.0."+strconv.Itoa(i), now)
		if n := len(l.buckets); n > 3 {
			t.Fatalf("%d buckets after %d addresses, bound 3", n, i+1)
		}
	}
	// The latest address is tracked and limited as usual.
	l.fail("10.0.0.49", now)
	if w := l.wait("10.0.0.49", now); w != time.Second {
		t.Fatalf("wait after two failures: %v, want 1s", w)
	}
	if w := l.wait("10.0.0.49", now.Add(time.Second)); w != 0 {
		t.Fatalf("wait after the refill: %v", w)
	}
	if w := l.wait("192.0.2.1", now); w != 0 {
		t.Fatalf("an unknown address waits %v", w)
	}
}

func TestClientAddress(t *testing.T) {
	t.Parallel()
	e := echo.New()
	for remote, want := range map[string]string{
		"127.0.0.1:5000":                    "127.0.0.1",
		"[::ffff:10.1.2.3]:80":              "10.1.2.3",
		"[2001:db8:1:2:3:4:5:6]:443":        "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff:ffff:ffff:1]:1": "2001:db8:1:2::/64",
	} {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = remote
		req.Header.Set("X-Forwarded-For", "203.0.113.9") // not trusted without an IPExtractor
		if got := ClientAddress(e.NewContext(req, httptest.NewRecorder())); got != want {
			t.Errorf("ClientAddress(%s) = %s, want %s", remote, got, want)
		}
	}
}
