package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
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

// startSandbox runs the sandbox PSP in process on a loopback port, as
// the PSP of every tenant that configured none (ADR 0038), signing each
// tenant's notices with its own webhook secret. apiURL is the engine's.
func (a *app) startSandbox(ctx context.Context, api net.Addr) (string, func(), error) {
	apiURL := "http://" + loopback(api)
	ln, err := net.Listen("tcp", a.cfg.PSPSandboxAddr)
	if err != nil {
		return "", nil, fmt.Errorf("sandbox PSP listen on %s: %w", a.cfg.PSPSandboxAddr, err)
	}
	url := "http://" + ln.Addr().String()
	sb := sandbox.New(sandbox.Options{Clock: a.Clock, SecretFor: a.PSPs.SecretFor})
	sb.SetBaseURL(url)
	srv := httpserve.NewServer(sb.Handler(), a.cfg.Limits, a.log)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	a.PSPs.UseSandbox(tenantpsp.Sandbox{URL: url, ClientID: sandbox.DefaultClientID, ClientSecret: sandbox.DefaultClientSecret, WebhookBase: apiURL})
	stop := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
	}
	return url, stop, nil
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
