package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"lastro/agenda"
	"lastro/collections/httpserve"
	"lastro/engine"
)

// streamDrainTimeout bounds the stream consumer's drain when serve stops.
const streamDrainTimeout = 10 * time.Second

// serve runs the engine: lastro serve.
func serve(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("serve", "[flags]", stderr)
	pprofAddr := envString(fs, os.Getenv, "LASTRO_PPROF_ADDR", "pprof-addr", "",
		"serve net/http/pprof on this loopback address (e.g. 127.0.0.1:6060) for lastro bench --profile; off when empty")
	cfg, err := loadConfig(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	if *pprofAddr != "" {
		stopProfiling, err := serveProfiling(*pprofAddr, log)
		if err != nil {
			return err
		}
		defer stopProfiling()
	}
	e, err := newApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer e.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	handler := e.Handler()
	switch {
	case cfg.PSPSandboxForced:
		handler = e.withSandbox(ln.Addr(), handler)
		log.Warn("SANDBOX PSP FORCED beside a DynamoDB endpoint: tenants without their own PSP are served by a stand-in that pays "+
			"charges with no bank behind it; whoever holds the admin token can mark their instalments paid. Never do this in production",
			"path", SandboxPrefix, "setting", "LASTRO_PSP_SANDBOX=force")
	case cfg.PSPSandbox:
		handler = e.withSandbox(ln.Addr(), handler)
		log.Info("sandbox PSP mounted on the embedded store: the Pix PSP of tenants without one (PUT /v1/tenant/psp); "+
			"its pay routes take the admin token", "path", SandboxPrefix)
	default:
		log.Info("sandbox PSP not mounted: tenants without their own PSP get Pix charges with no BR Code", "setting", "LASTRO_PSP_SANDBOX")
	}
	// The scheduler stops with ctx, or when the server fails; serve waits
	// for it before the deferred Close stops the store under it.
	schedCtx, stopSched := context.WithCancel(ctx)
	defer stopSched()
	// The scheduled Pix reconcile heals lost webhooks (docs/adr/0070).
	reconcileDone := make(chan struct{})
	if cfg.PixReconcileEvery > 0 {
		rs := e.Settlement.NewReconcileScheduler(cfg.PixReconcileEvery, log)
		go func() { defer close(reconcileDone); rs.Run(schedCtx) }()
		log.Info("Pix reconcile scheduler on", "every", cfg.PixReconcileEvery.String())
	} else {
		close(reconcileDone)
	}
	// The stream consumer, when on, runs beside the API with the local
	// defaults (the events file and dead letter in the data directory);
	// lastro stream is the way to choose publishers or run it apart.
	streamDone := make(chan struct{})
	if cfg.Stream {
		c, closeStream, err := e.consumer(schedCtx, streamOptions{poll: time.Second})
		if err != nil {
			return err
		}
		defer closeStream()
		go func() {
			defer close(streamDone)
			if err := c.Run(schedCtx); err != nil {
				log.Error("stream consumer stopped", "err", err)
			}
			// Stopping, serve drains what the last requests wrote, so a
			// restart days later (past the stream's 24 hours) loses no
			// event: bounded, since a stop must not hang.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), streamDrainTimeout)
			defer cancel()
			rep, err := c.Drain(dctx)
			if err != nil {
				log.Warn("stream consumer not drained at shutdown: the next start goes on from its checkpoint", "err", err)
				return
			}
			log.Info("stream consumer drained", "records", rep.Records, "events", rep.Events)
		}()
		log.Info("stream consumer on")
	} else {
		close(streamDone)
	}
	schedDone := make(chan struct{})
	if cfg.Scheduler {
		sched, err := agenda.NewScheduler(e.Agenda, agenda.SchedulerOptions{Hour: cfg.AgendaHour, Logger: log})
		if err != nil {
			stopSched()
			<-streamDone
			return err
		}
		go func() { defer close(schedDone); sched.Run(schedCtx) }()
		log.Info("agenda scheduler on", "hour", cfg.AgendaHour)
	} else {
		close(schedDone)
		log.Info("agenda scheduler off (LASTRO_SCHEDULER=off)")
	}
	// The outbox's dispatcher delivers what a crash left undelivered (its
	// first pass, every entry) and then every failed delivery's next try
	// (ADR 0062). It runs whether or not the scheduler does: a run asked
	// for over HTTP leaves its failures to it too.
	dispatchDone := make(chan struct{})
	go func() { defer close(dispatchDone); agenda.NewDispatcher(e.Agenda, 0, log).Run(schedCtx) }()
	l := cfg.Limits
	tlsDone := make(chan error, 1)
	if cfg.PSPWebhookTLSAddr != "" {
		stop, err := e.serveWebhookTLS(schedCtx, cfg, tlsDone)
		if err != nil {
			return err
		}
		defer stop()
	} else {
		tlsDone <- nil
	}
	log.Info("lastro listening", "addr", ln.Addr().String(), "table", cfg.Table,
		"read_timeout", l.ReadTimeout.String(), "max_conns", l.MaxConns, "max_conns_per_addr", l.MaxConnsPerAddr,
		"max_in_flight", l.MaxInFlight, "max_in_flight_webhooks", l.MaxInFlightWebhooks, "webhook_body_timeout", l.WebhookBodyTimeout.String(),
		"egress", cfg.Egress.String(), "trusted_proxies", len(cfg.TrustedProxies))
	log.Info("pages for collectors and supervisors: open the URL and log in with one of the tenant's API keys "+
		"(its role decides what the pages show; POST /v1/tenants/{tenantId}/keys with the admin token issues one)",
		"url", "http://"+ln.Addr().String()+"/ui/login")
	err = httpserve.Run(ctx, ln, handler, l, 15*time.Second, log)
	// Run returns when ctx ends or the server fails: the scheduler and the
	// dispatcher stop too, and serve waits for them before the deferred
	// Close stops the store.
	stopSched()
	<-schedDone
	<-reconcileDone
	<-dispatchDone
	<-streamDone
	if tlsErr := <-tlsDone; err == nil {
		err = tlsErr
	}
	log.Info("shut down")
	return err
}

// serveWebhookTLS opens the mutual-TLS listener for PSP webhooks
// (docs/adr/0070) and serves it until ctx ends, its result sent on done.
// Each connection must present a client certificate; the handler checks
// it against the tenant the path names. stop closes the listener early
// (serve failing to start after it).
func (a *app) serveWebhookTLS(ctx context.Context, cfg config, done chan<- error) (stop func(), err error) {
	cert, err := tls.LoadX509KeyPair(cfg.PSPWebhookTLSCert, cfg.PSPWebhookTLSKey)
	if err != nil {
		return nil, fmt.Errorf("LASTRO_PSP_WEBHOOK_TLS_CERT and _KEY: %w", err)
	}
	raw, err := net.Listen("tcp", cfg.PSPWebhookTLSAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.PSPWebhookTLSAddr, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		done <- httpserve.RunTLS(ctx, raw, a.MutualTLSHandler(), cfg.Limits, 15*time.Second, a.log, engine.WebhookTLSConfig(cert))
	}()
	a.log.Info("PSP webhook listener on mutual TLS: each call's client certificate is checked against its tenant's webhook TLS settings",
		"addr", raw.Addr().String())
	return cancel, nil
}
