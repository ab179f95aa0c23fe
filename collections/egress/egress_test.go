package egress_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lastro/collections/egress"
	"lastro/collections/errs"
)

// TestCheckAddr: every forbidden range, in each spelling, is refused by
// the strict policy; public addresses pass; the allow-list and the
// loopback word open exactly what they name.
func TestCheckAddr(t *testing.T) {
	t.Parallel()
	strict := egress.New()
	loop := egress.New(egress.AllowLoopback())
	lan, err := egress.Parse("10.1.0.0/16, loopback")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr                string
		strict, loop, lanOK bool
	}{
		// Public literals.
		{"8.8.8.8", true, true, true},
		{"200.160.2.3", true, true, true},
		{"2001:4860:4860::8888", true, true, true},
		{"::ffff:8.8.8.8", true, true, true},
		// Loopback, in every form.
		{"127.0.0.1", false, true, true},
		{"127.255.255.254", false, true, true},
		{"::1", false, true, true},
		{"::ffff:127.0.0.1", false, true, true},
		{"::127.0.0.1", false, true, true},     // IPv4-compatible
		{"64:ff9b::7f00:1", false, true, true}, // NAT64 of 127.0.0.1
		// RFC 1918 and unique local.
		{"10.0.0.1", false, false, false},
		{"10.1.2.3", false, false, true},
		{"::ffff:10.1.2.3", false, false, true},
		{"172.16.0.1", false, false, false},
		{"172.31.255.255", false, false, false},
		{"172.32.0.1", true, true, true},
		{"192.168.1.1", false, false, false},
		{"::ffff:192.168.1.1", false, false, false},
		{"fc00::1", false, false, false},
		{"fd12:3456::1", false, false, false},
		// Link-local and the metadata service.
		{"169.254.169.254", false, false, false},
		{"::ffff:169.254.169.254", false, false, false},
		{"::169.254.169.254", false, false, false},
		{"64:ff9b::a9fe:a9fe", false, false, false},
		{"169.254.0.1", false, false, false},
		{"fe80::1", false, false, false},
		{"fe80::1%eth0", false, false, false},
		// Unspecified and this network.
		{"0.0.0.0", false, false, false},
		{"0.1.2.3", false, false, false},
		{"::", false, false, false},
		{"::ffff:0.0.0.0", false, false, false},
		// Shared (CGNAT) space.
		{"100.64.0.1", false, false, false},
		{"100.127.255.255", false, false, false},
		{"100.128.0.1", true, true, true},
		// Multicast, reserved and broadcast.
		{"224.0.0.1", false, false, false},
		{"239.255.255.250", false, false, false},
		{"ff02::1", false, false, false},
		{"240.0.0.1", false, false, false},
		{"255.255.255.255", false, false, false},
		{"::ffff:255.255.255.255", false, false, false},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		for _, c := range []struct {
			name string
			p    *egress.Policy
			ok   bool
		}{{"strict", strict, tt.strict}, {"nil", nil, tt.strict}, {"loopback", loop, tt.loop}, {"lan", lan, tt.lanOK}} {
			err := c.p.CheckAddr(a)
			if (err == nil) != c.ok {
				t.Errorf("%s: %s: err %v, want allowed %v", c.name, tt.addr, err, c.ok)
			}
			if err != nil && (!errors.Is(err, egress.ErrNotAllowed) || !errs.Is(err, errs.Invalid)) {
				t.Errorf("%s: %s: %v is not an Invalid ErrNotAllowed", c.name, tt.addr, err)
			}
		}
	}
}

// TestCheckURL: the set-time rules, on the URL alone.
func TestCheckURL(t *testing.T) {
	t.Parallel()
	strict := egress.New()
	loop := egress.New(egress.AllowLoopback())
	tests := []struct {
		url          string
		strict, loop bool
	}{
		{"https://bank.example/events", true, true},
		{"https://8.8.8.8/hook", true, true},
		{"https://[2001:db8::1]:8443/hook", true, true},
		{"http://bank.example/events", false, false},
		{"http://8.8.8.8/hook", false, false},
		{"ftp://bank.example/x", false, false},
		{"https://user:pw@bank.example/", false, false},
		{"https://user@bank.example/", false, false},
		{"https://127.0.0.1/hook", false, true},
		{"https://127.1/hook", false, true}, // inet_aton's short form
		{"https://0x7f000001/hook", false, true},
		{"https://2130706433/hook", false, true},
		{"https://0177.0.0.1/hook", false, true},
		{"https://[::1]/hook", false, true},
		{"https://[::ffff:127.0.0.1]/hook", false, true},
		{"https://localhost/hook", false, true},
		{"https://LOCALHOST./hook", false, true},
		{"https://api.localhost:8443/hook", false, true},
		{"http://127.0.0.1:9/hook", false, true},
		{"http://[::1]:9/hook", false, true},
		{"http://localhost:9/hook", false, true},
		{"http://user:pw@127.0.0.1:9/hook", false, false},
		{"https://169.254.169.254/latest/meta-data/", false, false},
		{"https://0xa9fea9fe/latest/meta-data/", false, false},
		{"https://[::ffff:169.254.169.254]/", false, false},
		{"https://10.0.0.1/", false, false},
		{"https://0.0.0.0/", false, false},
		{"https://[::]/", false, false},
		{"https://[fe80::1%25eth0]/", false, false},
		{"http://10.0.0.1/", false, false},
		{"not a url", false, false},
		{"https:///path", false, false},
		{"//bank.example/x", false, false},
	}
	for _, tt := range tests {
		for _, c := range []struct {
			name string
			p    *egress.Policy
			ok   bool
		}{{"strict", strict, tt.strict}, {"loopback", loop, tt.loop}} {
			err := c.p.CheckURL(tt.url)
			if (err == nil) != c.ok {
				t.Errorf("%s: %q: err %v, want allowed %v", c.name, tt.url, err, c.ok)
				continue
			}
			if err == nil {
				continue
			}
			status, code, msg := errs.Public(err)
			if status != http.StatusBadRequest || code != egress.Code || strings.Contains(msg, "pw") || strings.Contains(msg, "meta-data") {
				t.Errorf("%s: %q: answered %d %s %q", c.name, tt.url, status, code, msg)
			}
		}
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"", "strict", true},
		{"loopback", "loopback", true},
		{" Loopback , 10.1.0.0/16,fd00::/8", "loopback,10.1.0.0/16,fd00::/8", true},
		{"10.1.2.3/16", "10.1.0.0/16", true}, // masked
		{"10.0.0.1", "", false},              // an address, not a CIDR
		{"everything", "", false},
		{"10.0.0.0/33", "", false},
	} {
		p, err := egress.Parse(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if err == nil && p.String() != tt.want {
			t.Errorf("%q: %s, want %s", tt.in, p, tt.want)
		}
	}
}

// resolveTo is a test resolver: every name is addrs, and no DNS server
// is ever asked.
func resolveTo(addrs ...string) egress.Option {
	return egress.Resolver(func(context.Context, string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range addrs {
			out = append(out, netip.MustParseAddr(a))
		}
		return out, nil
	})
}

// counting is a loopback server that counts the requests it received.
func counting(t *testing.T, tls bool, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	f := func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if h != nil {
			h(w, r)
		}
	}
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(http.HandlerFunc(f))
	} else {
		srv = httptest.NewServer(http.HandlerFunc(f))
	}
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestClientRefusesANameThatResolvesToLoopback: a name that passed the
// set-time check (it is no IP literal) but resolves to loopback when
// dialled (DNS rebinding) is refused before any connection; with
// loopback allowed the same request reaches the server.
func TestClientRefusesANameThatResolvesToLoopback(t *testing.T) {
	t.Parallel()
	srv, hits := counting(t, false, nil)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	for _, addrs := range [][]string{{"127.0.0.1"}, {"::ffff:127.0.0.1"}, {"169.254.169.254", "127.0.0.1"}} {
		p := egress.New(resolveTo(addrs...))
		if err := p.CheckURL("https://rebind.example:" + port + "/x"); err != nil {
			t.Fatalf("set time: %v", err)
		}
		_, err := p.Client(5 * time.Second).Get("https://rebind.example:" + port + "/x")
		if !errors.Is(err, egress.ErrNotAllowed) {
			t.Errorf("%v: dialled: %v", addrs, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the server got %d requests", hits.Load())
	}
	// Allowed loopback, plain http to it: the same name now connects.
	p := egress.New(egress.AllowLoopback(), resolveTo("127.0.0.1"))
	resp, err := p.Client(5 * time.Second).Get("http://localhost:" + port + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatalf("hits %d, want 1", hits.Load())
	}
	// Plain http to a name is refused even with loopback allowed: only a
	// loopback host may take it. And a name that resolves to a private
	// address is refused at dial time, before any packet is sent.
	if _, err := p.Client(5 * time.Second).Get("http://rebind.example:" + port + "/x"); !errors.Is(err, egress.ErrNotAllowed) {
		t.Fatalf("plain http to a name: %v", err)
	}
	p10 := egress.New(egress.AllowLoopback(), resolveTo("10.0.0.1"))
	if _, err := p10.Client(5 * time.Second).Get("https://rebind.example:" + port + "/x"); !errors.Is(err, egress.ErrNotAllowed) {
		t.Fatalf("a name resolving to 10.0.0.1: %v", err)
	}
}

// TestClientRefusesForbiddenURLsBeforeDialling: a request to a URL the
// policy refuses fails in the transport, before any dial, so even a
// client handed such a URL sends nothing (forbidden addresses are only
// ever refused, never connected to).
func TestClientRefusesForbiddenURLsBeforeDialling(t *testing.T) {
	t.Parallel()
	c := egress.New().Client(5 * time.Second)
	for _, u := range []string{"http://127.0.0.1:9/", "https://127.0.0.1:9/", "https://[::1]:9/", "https://169.254.169.254/latest/meta-data/",
		"https://10.0.0.1/", "https://localhost:9/", "https://u:p@bank.example/", "http://bank.example/"} {
		if _, err := c.Get(u); !errors.Is(err, egress.ErrNotAllowed) {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// TestRedirectsFollowThePolicy: from an allowed loopback server, a
// redirect to a forbidden target (the metadata service, a private
// address, a name that resolves to one, https down to http) is not
// followed; a redirect to an allowed target is.
func TestRedirectsFollowThePolicy(t *testing.T) {
	t.Parallel()
	target, targetHits := counting(t, false, nil)
	for _, to := range []string{"https://169.254.169.254/latest/meta-data/", "https://10.0.0.1/", "https://[::ffff:10.0.0.1]/",
		"https://internal.example/", "http://internal.example/", "https://u:p@bank.example/"} {
		from, _ := counting(t, false, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) })
		p := egress.New(egress.AllowLoopback(), resolveTo("10.0.0.1"))
		if _, err := p.Client(5 * time.Second).Get(from.URL); !errors.Is(err, egress.ErrNotAllowed) {
			t.Errorf("redirect to %s followed: %v", to, err)
		}
	}
	// https to http, even to an allowed loopback host, is a downgrade.
	tlsFrom, _ := counting(t, true, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, target.URL, http.StatusFound) })
	p := egress.New(egress.AllowLoopback())
	c := p.Client(5 * time.Second)
	c.Transport = p.Transport(tlsFrom.Client().Transport.(*http.Transport).TLSClientConfig)
	if _, err := c.Get(tlsFrom.URL); !errors.Is(err, egress.ErrNotAllowed) {
		t.Errorf("https to http followed: %v", err)
	}
	if targetHits.Load() != 0 {
		t.Fatalf("the downgrade target got %d requests", targetHits.Load())
	}
	// A redirect between allowed loopback URLs is followed.
	from, _ := counting(t, false, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/next", http.StatusFound)
	})
	resp, err := p.Client(5 * time.Second).Get(from.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || targetHits.Load() != 1 {
		t.Fatalf("allowed redirect: %d, target hits %d", resp.StatusCode, targetHits.Load())
	}
}
