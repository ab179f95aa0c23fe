package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"lastro/collections/httpserve"
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
	l := cfg.Limits
	log.Info("lastro listening", "addr", ln.Addr().String(), "table", cfg.Table,
		"read_timeout", l.ReadTimeout.String(), "max_conns", l.MaxConns, "max_in_flight", l.MaxInFlight)
	err = httpserve.Run(ctx, ln, e.Handler(), l, 15*time.Second, log)
	log.Info("shut down")
	return err
}
