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

	"lastro/ddblocal"
)

// ddbServe runs the embedded store on its own: lastro ddb serve.
func ddbServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("ddb serve", "[flags]", stderr)
	addr := fs.String("addr", "127.0.0.1:8000", "listen address")
	dir := fs.String("data-dir", "./lastro-ddb", "data directory")
	mem := fs.Bool("in-memory", false, "keep everything in memory (nothing survives a restart)")
	cacheMB := envString(fs, os.Getenv, "LASTRO_STORE_CACHE_MB", "store-cache-mb", "1024", "block cache in MiB (8-1048576); it fills only as data is read")
	layer := fs.String("validation-layer", "current", "DynamoDB validation layer PutItem, UpdateItem and DeleteItem errors are worded in: current or older (ADR 0060)")
	limits := addLimitFlags(fs, os.Getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	vl, err := ddblocal.ParseValidationLayer(*layer)
	if err != nil {
		return err
	}
	lim, err := limits()
	if err != nil {
		return err
	}
	cache, err := parseStoreCache(*cacheMB)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	opts := ddblocal.Options{Dir: *dir, Logger: log, CacheSize: cache, ValidationLayer: vl}
	if *mem {
		opts.Dir = ""
	}
	st, err := ddblocal.Open(opts)
	if err != nil {
		return err
	}
	defer st.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	where := opts.Dir
	if where == "" {
		where = ":memory:"
	}
	log.Info("embedded DynamoDB store listening", "addr", ln.Addr().String(), "data", where)
	return httpserve.Run(ctx, ln, st.Handler(), storeLimits(lim), 10*time.Second, log)
}

// storeLimits are l for the store's listener: past a cap the answer is
// DynamoDB's throttling error, which the SDKs retry, not the API's shape.
// Its clients are engines and tools, each one SDK process keeping many
// connections from one address, so the per-address cap (which guards the
// public API, ADR 0056) is the whole connection cap there.
func storeLimits(l httpserve.Limits) httpserve.Limits {
	l.Overload.ContentType, l.Overload.Body = ddblocal.Overloaded()
	l.MaxConnsPerAddr = l.MaxConns
	return l
}
