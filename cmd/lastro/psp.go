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
	clientSecret := fs.String("client-secret", os.Getenv("LASTRO_PSP_CLIENT_SECRET"), "OAuth2 client secret it accepts; generated and printed when empty (LASTRO_PSP_CLIENT_SECRET)")
	operator := fs.String("operator-token", os.Getenv("LASTRO_PSP_OPERATOR_TOKEN"), "bearer token of /sandbox/pay, pay-batch and redeliver; generated and printed when empty (LASTRO_PSP_OPERATOR_TOKEN)")
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
	for name, v := range map[string]string{"--client-secret": *clientSecret, "--operator-token": *operator} {
		if v != "" && len(v) < minAdminToken {
			return fmt.Errorf("%s is %d characters: use at least %d (or leave it empty to generate one)", name, len(v), minAdminToken)
		}
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	sb := sandbox.New(sandbox.Options{ClientID: *clientID, ClientSecret: *clientSecret, OperatorToken: *operator, WebhookSecret: *secret, Clock: clk})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	sb.SetBaseURL("http://" + ln.Addr().String())
	if *clientSecret == "" || *operator == "" {
		// Generated: printed once, as serve prints a generated admin token.
		log.Warn("sandbox PSP credentials generated", "client_id", *clientID, "client_secret", sb.ClientSecret(), "operator_token", sb.OperatorToken())
	}
	log.Info("sandbox PSP listening", "addr", ln.Addr().String(),
		"warning", "a demo tool that moves money in the engine's books: never point a production tenant at it")
	return httpserve.Run(ctx, ln, accessLog(log, "sandbox", sb.Handler(), sb.Route), lim, 5*time.Second, log)
}

// SandboxPrefix is where serve mounts the in-process sandbox PSP on
// the API's own listener: no other port is opened (ADR 0013, 0038).
const SandboxPrefix = "/psp-sandbox"

// withSandbox mounts the sandbox PSP under SandboxPrefix in front of the
// API and makes it the PSP of every tenant that configured none, signing
// each tenant's notices with its own webhook secret. api is the API's
// listening address. Nothing of it is open (ADR 0054): its OAuth2 client
// secret is random and known only to this process, its money-moving
// routes take the admin token, it posts only to this engine's receiver,
// and every request it answers is logged like the API's.
func (a *app) withSandbox(api net.Addr, h http.Handler) http.Handler {
	base := "http://" + loopback(api)
	// Refunds settle on their own, as a PSP's do within seconds, so a
	// demo's refund reaches DEVOLVIDO and its notice without a step.
	sb := sandbox.New(sandbox.Options{Clock: a.Clock, SecretFor: a.PSPs.SecretFor, OperatorToken: a.admin,
		WebhookPrefix: base + "/v1/webhooks/", AutoSettleRefunds: true})
	sb.SetBaseURL(base + SandboxPrefix)
	a.PSPs.UseSandbox(tenantpsp.Sandbox{URL: base + SandboxPrefix, ClientID: sandbox.DefaultClientID, ClientSecret: sb.ClientSecret(),
		WebhookBase: base})
	mux := http.NewServeMux()
	mux.Handle(SandboxPrefix+"/", http.StripPrefix(SandboxPrefix, accessLog(a.log, "sandbox", sb.Handler(), sb.Route)))
	mux.Handle("/", h)
	return mux
}

// accessLog logs one line per request h answers: the route pattern
// route names (never the path: a Pix key can be a CPF), the status and
// the time taken, as the API's access log does.
func accessLog(log *slog.Logger, component string, h http.Handler, route func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		route := route(r)
		if route == "" {
			route = r.Method + " (unmatched)"
		}
		log.Info("request", "component", component, "route", route, "status", rec.status,
			"duration_ms", float64(time.Since(start).Microseconds())/1000)
	})
}

// statusRecorder remembers the status an answer was written with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// loopback is addr as the in-process sandbox reaches it: an unspecified
// host (0.0.0.0, ::) is reached on the loopback.
func loopback(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return addr.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}
