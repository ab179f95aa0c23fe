package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"lastro/collections/clock"
	"lastro/collections/httpserve"
	"lastro/psp/sandbox"
	"lastro/psp/tenantpsp"
)

// pspCmd runs lastro psp sandbox: the sandbox PSP alone, signing its
// webhooks with one webhook secret (a tenant's, from its creation).
func pspCmd(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "sandbox" {
		fmt.Fprint(stderr, "usage: lastro psp sandbox --addr 127.0.0.1:8090 --webhook-secret whsec_...\n")
		if len(args) > 0 && isHelp(args[0]) {
			return flag.ErrHelp
		}
		return errors.New("unknown psp command (lastro psp sandbox -h lists its flags)")
	}
	fs := newFlagSet("psp sandbox", "[flags]", stderr)
	addr := fs.String("addr", "127.0.0.1:8090", "listen address")
	secret := fs.String("webhook-secret", os.Getenv("LASTRO_PSP_WEBHOOK_SECRET"), "the tenant's webhook secret the payment notices are signed with (LASTRO_PSP_WEBHOOK_SECRET)")
	clientID := fs.String("client-id", sandbox.DefaultClientID, "OAuth2 client id it accepts")
	clientSecret := fs.String("client-secret", sandbox.DefaultClientSecret, "OAuth2 client secret it accepts")
	now := fs.String("now", os.Getenv("LASTRO_NOW"), "freeze the clock at this RFC 3339 instant, as the engine's (LASTRO_NOW)")
	limits := addLimitFlags(fs, os.Getenv)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (lastro psp sandbox -h lists the flags)", fs.Arg(0))
	}
	lim, err := limits()
	if err != nil {
		return err
	}
	if *secret == "" {
		return errors.New("--webhook-secret is required: the engine refuses unsigned payment notices")
	}
	clk, _, err := clock.FromEnv(*now)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	sb := sandbox.New(sandbox.Options{ClientID: *clientID, ClientSecret: *clientSecret, WebhookSecret: *secret, Clock: clk})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	sb.SetBaseURL("http://" + ln.Addr().String())
	log.Info("sandbox PSP listening", "addr", ln.Addr().String())
	return httpserve.Run(ctx, ln, sb.Handler(), lim, 5*time.Second, log)
}

// SandboxPrefix is where serve mounts the in-process sandbox PSP on
// the API's own listener: no other port is opened (ADR 0013, 0038).
const SandboxPrefix = "/psp-sandbox"

// withSandbox mounts the sandbox PSP under SandboxPrefix in front of the
// API and makes it the PSP of every tenant that configured none, signing
// each tenant's notices with its own webhook secret. api is the API's
// listening address.
func (a *app) withSandbox(api net.Addr, h http.Handler) http.Handler {
	base := "http://" + loopback(api)
	sb := sandbox.New(sandbox.Options{Clock: a.Clock, SecretFor: a.PSPs.SecretFor})
	sb.SetBaseURL(base + SandboxPrefix)
	a.PSPs.UseSandbox(tenantpsp.Sandbox{URL: base + SandboxPrefix, ClientID: sandbox.DefaultClientID, ClientSecret: sandbox.DefaultClientSecret,
		WebhookBase: base})
	mux := http.NewServeMux()
	mux.Handle(SandboxPrefix+"/", http.StripPrefix(SandboxPrefix, sb.Handler()))
	mux.Handle("/", h)
	return mux
}

// loopback is addr as the in-process sandbox reaches it: an unspecified
// host (0.0.0.0, ::) is reached on the loopback.
func loopback(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return addr.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}
