// Package egress is the engine's outbound URL policy against server-side
// request forgery: every URL a tenant can set (its events and messaging
// webhooks, its PSP's base and token URLs) is checked when it is set, and
// every connection to one is checked again on the address actually
// dialled, so a name that resolves to the metadata service or to loopback
// only after it was accepted (DNS rebinding) is still refused.
//
// The policy: https only; no userinfo; no host named localhost or
// *.localhost; no address that is loopback, private (RFC 1918, fc00::/7),
// link-local (169.254/16 with the cloud metadata address, fe80::/10),
// unspecified, in 0.0.0.0/8, shared (CGNAT 100.64/10), multicast or the
// broadcast address, in any IPv4-mapped or -compatible IPv6 spelling. An
// operator may allow CIDRs, and loopback, for development
// (LASTRO_EGRESS_ALLOW); plain http is accepted only to a loopback host
// and only when loopback is allowed (ADR 0055).
//
// A nil *Policy is the strict policy: a caller that was given none refuses
// rather than trusts.
package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"lastro/collections/errs"
)

// Loopback is the allow-list word for 127.0.0.0/8, ::1, localhost names
// and plain http to them.
const Loopback = "loopback"

// Policy is an outbound URL policy: the strict default plus what the
// operator allowed. It is immutable once built, so one is shared by every
// client and setter.
type Policy struct {
	loopback bool
	allow    []netip.Prefix
	lookup   func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Option changes a policy as it is built.
type Option func(*Policy)

// AllowLoopback allows loopback hosts and plain http to them: the
// operator's "loopback" word, and how tests reach httptest servers.
func AllowLoopback() Option { return func(p *Policy) { p.loopback = true } }

// Allow allows the addresses of prefixes (a development network).
func Allow(prefixes ...netip.Prefix) Option {
	return func(p *Policy) {
		for _, pr := range prefixes {
			p.allow = append(p.allow, pr.Masked())
		}
	}
}

// Resolver replaces the system's resolver for host names: tests map a
// name to a loopback address without a DNS server. Addresses it returns
// are checked like any other.
func Resolver(lookup func(ctx context.Context, host string) ([]netip.Addr, error)) Option {
	return func(p *Policy) { p.lookup = lookup }
}

// New returns the strict policy changed by opts.
func New(opts ...Option) *Policy {
	p := &Policy{}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Parse builds a policy from an allow-list as LASTRO_EGRESS_ALLOW spells
// it: comma-separated CIDRs and/or the word loopback; empty is the strict
// policy. opts (a test resolver) apply after the list.
func Parse(list string, opts ...Option) (*Policy, error) {
	var own []Option
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
		case strings.EqualFold(item, Loopback):
			own = append(own, AllowLoopback())
		default:
			pr, err := netip.ParsePrefix(item)
			if err != nil {
				return nil, fmt.Errorf("egress allow-list: %q is neither a CIDR (10.1.0.0/16) nor %q", item, Loopback)
			}
			own = append(own, Allow(pr))
		}
	}
	return New(append(own, opts...)...), nil
}

// String is the allow-list p was built from, for the startup log.
func (p *Policy) String() string {
	if p == nil {
		return "strict"
	}
	var parts []string
	if p.loopback {
		parts = append(parts, Loopback)
	}
	for _, pr := range p.allow {
		parts = append(parts, pr.String())
	}
	if len(parts) == 0 {
		return "strict"
	}
	return strings.Join(parts, ",")
}

// ErrNotAllowed is wrapped by every refusal, at set time and at dial time.
var ErrNotAllowed = errors.New("egress: destination not allowed")

// Code is the error code of a URL the policy refuses.
const Code = "url_not_allowed"

// refuse is a refusal that says why without echoing the URL: it may carry
// a token in its path or query.
func refuse(why string) error {
	return errs.Wrap(errs.Invalid, Code, ErrNotAllowed, "url not allowed: "+why)
}

// CheckURL applies the policy to a URL as a tenant sets it (no DNS): the
// scheme, the userinfo and a host that is an IP literal or a localhost
// name. The error is errs.Invalid with Code, its message free of the URL.
func (p *Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return refuse("it is not an absolute URL")
	}
	return p.checkURL(u)
}

func (p *Policy) checkURL(u *url.URL) error {
	if u.User != nil {
		return refuse("it carries credentials (userinfo)")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return refuse("it has no host")
	}
	addr, literal := parseHost(host)
	loopbackHost := isLocalhostName(host) || (literal && addr.Unmap().IsLoopback())
	switch u.Scheme {
	case "https":
	case "http":
		// Plain http only to this machine, and only when the operator said
		// so: anything in transit on a network must be encrypted, the
		// signatures' secrets and the PSP's credentials above all.
		if !loopbackHost || !p.allowsLoopback() {
			return refuse("it must be https")
		}
	default:
		return refuse("it must be https")
	}
	if isLocalhostName(host) {
		if !p.allowsLoopback() {
			return refuse("its host is this machine")
		}
		return nil
	}
	if literal {
		return p.CheckAddr(addr)
	}
	return nil
}

// parseHost reads host as an IP literal, in every spelling the dialler
// would accept: netip refuses the legacy forms (octal, hex, short "127.1")
// that inet_aton takes, so those are read here too rather than left to
// reach a resolver as names.
func parseHost(host string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.WithZone(""), true
	}
	if a, ok := legacyIPv4(host); ok {
		return a, true
	}
	return netip.Addr{}, false
}

// legacyIPv4 parses inet_aton's forms: 1 to 4 dot-separated parts, each
// decimal, octal (leading 0) or hex (0x), the last filling the remaining
// bytes ("127.1", "0x7f000001", "017700000001").
func legacyIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals []uint64
	for _, part := range parts {
		if part == "" {
			return netip.Addr{}, false
		}
		base, digits := 10, part
		switch {
		case strings.HasPrefix(part, "0x") || strings.HasPrefix(part, "0X"):
			base, digits = 16, part[2:]
		case len(part) > 1 && part[0] == '0':
			base, digits = 8, part[1:]
		}
		if digits == "" && base == 16 {
			return netip.Addr{}, false
		}
		var v uint64
		for _, c := range digits {
			d := strings.IndexRune("0123456789abcdef", c|0x20)
			if d < 0 || d >= base {
				return netip.Addr{}, false
			}
			v = v*uint64(base) + uint64(d)
			if v > 0xffffffff {
				return netip.Addr{}, false
			}
		}
		vals = append(vals, v)
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		n |= v << (24 - 8*i)
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// isLocalhostName reports whether host is localhost or under it (RFC
// 6761: such names resolve to loopback).
func isLocalhostName(host string) bool {
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

func (p *Policy) allowsLoopback() bool { return p != nil && p.loopback }

// forbidden are the ranges no tenant URL may reach unless allowed: this
// machine, private and link-local networks (the metadata service is
// 169.254.169.254), addresses that mean "any" or "this network", shared
// carrier space, multicast and broadcast.
var forbidden = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("224.0.0.0/4"),
	netip.MustParsePrefix("240.0.0.0/4"), // reserved, the broadcast address 255.255.255.255 included
	netip.MustParsePrefix("::/128"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("ff00::/8"),
}

// CheckAddr applies the policy to an address about to be dialled.
func (p *Policy) CheckAddr(a netip.Addr) error {
	if !a.IsValid() {
		return refuse("no address")
	}
	a = a.WithZone("")
	for _, v := range forms(a) {
		if p.allowed(v) {
			return nil
		}
	}
	for _, v := range forms(a) {
		for _, pr := range forbidden {
			if pr.Contains(v) {
				return refuse("its address is loopback, private, link-local or otherwise internal")
			}
		}
	}
	return nil
}

// nat64 is the well-known NAT64 prefix (RFC 6052): a gateway forwards
// 64:ff9b::a.b.c.d to the IPv4 host a.b.c.d.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// forms are a and, for an IPv6 address that embeds an IPv4 one (mapped
// ::ffff:a.b.c.d, the deprecated compatible ::a.b.c.d, NAT64), that
// address too: a stack or a gateway may take either to the IPv4 host.
func forms(a netip.Addr) []netip.Addr {
	out := []netip.Addr{a}
	if a.Is4In6() {
		return append(out, a.Unmap())
	}
	if a.Is6() {
		b := a.As16()
		compatible := [12]byte(b[:12]) == [12]byte{} && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback()
		if compatible || nat64.Contains(a) {
			out = append(out, netip.AddrFrom4([4]byte(b[12:])))
		}
	}
	return out
}

func (p *Policy) allowed(a netip.Addr) bool {
	if p == nil {
		return false
	}
	if p.loopback && a.IsLoopback() {
		return true
	}
	for _, pr := range p.allow {
		if pr.Contains(a) {
			return true
		}
	}
	return false
}

// plainKey marks a request's context as plain http: its connection may
// go to loopback only.
type plainKey struct{}

// Transport returns a transport that applies p: no proxy from the
// environment (a proxy would dial on our behalf, past the check), every
// resolved address checked before a connection is made, every request's
// URL checked before it is sent (a token request included). tlsConfig,
// when set, is the TLS configuration (a client certificate, a PSP's CA).
func (p *Policy) Transport(tlsConfig *tls.Config) http.RoundTripper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = p.dial
	tr.DialTLSContext = nil
	if tlsConfig != nil {
		tr.TLSClientConfig = tlsConfig
	}
	return &guard{p: p, next: tr}
}

// Client returns a client that applies p to every request and redirect,
// with timeout bounding each request.
func (p *Policy) Client(timeout time.Duration) *http.Client {
	return &http.Client{Transport: p.Transport(nil), CheckRedirect: p.CheckRedirect, Timeout: timeout}
}

// maxRedirects is the redirects a client follows, as net/http's default.
const maxRedirects = 10

// CheckRedirect is an http.Client's CheckRedirect applying p to every hop:
// a redirect may not lead where the URL itself could not, nor from https
// down to http.
func (p *Policy) CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errors.New("egress: too many redirects")
	}
	if len(via) > 0 && via[len(via)-1].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return refuse("a redirect from https to http")
	}
	return p.checkURL(req.URL)
}

// guard checks each request's URL before the transport sends it.
type guard struct {
	p    *Policy
	next *http.Transport
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := g.p.checkURL(req.URL); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if req.URL.Scheme == "http" {
		req = req.WithContext(context.WithValue(req.Context(), plainKey{}, true))
	}
	return g.next.RoundTrip(req)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// transport.
func (g *guard) CloseIdleConnections() { g.next.CloseIdleConnections() }

// dial resolves addr itself, checks every address it resolved to, and
// connects to the allowed ones in turn; the dialer's Control checks the
// address once more right before the connect, whatever path it took.
func (p *Policy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	plain, _ := ctx.Value(plainKey{}).(bool)
	var addrs []netip.Addr
	if a, ok := parseHost(host); ok {
		addrs = []netip.Addr{a}
	} else {
		lookup := p.resolver()
		if addrs, err = lookup(ctx, host); err != nil {
			return nil, fmt.Errorf("egress: resolve: %w", err)
		}
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: p.control(plain)}
	var errsSeen []error
	for _, a := range addrs {
		if err := p.checkDial(a, plain); err != nil {
			errsSeen = append(errsSeen, err)
			continue
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.WithZone("").String(), port))
		if err == nil {
			return c, nil
		}
		errsSeen = append(errsSeen, err)
	}
	if len(errsSeen) == 0 {
		return nil, errors.New("egress: the host resolved to no address")
	}
	return nil, errors.Join(errsSeen...)
}

func (p *Policy) resolver() func(ctx context.Context, host string) ([]netip.Addr, error) {
	if p != nil && p.lookup != nil {
		return p.lookup
	}
	return func(ctx context.Context, host string) ([]netip.Addr, error) {
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
}

// checkDial is CheckAddr, and, for plain http, loopback only.
func (p *Policy) checkDial(a netip.Addr, plain bool) error {
	if plain && !(p.allowsLoopback() && a.Unmap().IsLoopback()) {
		return refuse("plain http off this machine")
	}
	return p.CheckAddr(a)
}

// control is the dialer's last check, on the socket's own address.
func (p *Policy) control(plain bool) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return refuse("an address it cannot read")
		}
		return p.checkDial(ap.Addr(), plain)
	}
}
