package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"lastro/agenda"
)

// serve runs the engine: lastro serve.
func serve(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, err := loadConfig(newFlagSet("serve", "[flags]", stderr), args, os.Getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	e, err := newApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer e.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	// The scheduler stops with ctx, or when the server fails; serve waits
	// for it before the deferred Close stops the store under it.
	schedCtx, stopSched := context.WithCancel(ctx)
	defer stopSched()
	schedDone := make(chan struct{})
	if cfg.Scheduler {
		sched, err := agenda.NewScheduler(e.Agenda, agenda.SchedulerOptions{Hour: cfg.AgendaHour, Logger: log})
		if err != nil {
			return err
		}
		go func() { defer close(schedDone); sched.Run(schedCtx) }()
		log.Info("agenda scheduler on", "hour", cfg.AgendaHour)
	} else {
		close(schedDone)
		log.Info("agenda scheduler off (LASTRO_SCHEDULER=off)")
	}
	srv := &http.Server{Handler: e.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	log.Info("lastro listening", "addr", ln.Addr().String(), "table", cfg.Table)
	select {
	case err := <-done:
		stopSched()
		<-schedDone
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdown)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	<-schedDone
	return err
}
