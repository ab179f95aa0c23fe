package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"lastro/agenda"
	"lastro/collections/clock"
	"lastro/collections/kit"
	"lastro/collections/secret"
	"lastro/contactlimit"
	"lastro/cost"
	"lastro/ddblocal"
	"lastro/engine"
	"lastro/tenant"
)

// costNow is the instant lastro cost freezes the engine's clock at:
// Thursday 2026-09-24, 09:00 in São Paulo, a business day inside the
// default contact window. A fixed instant makes every item, and so every
// unit, the same on every run.
var costNow = time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)

// costAdminToken is the admin token of lastro cost's private engine: it
// listens on a loopback port for the run's own requests only.
const costAdminToken = "cost-admin-token-for-the-run-only"

// costEngine is a private engine for measurements: a fresh in-memory
// embedded store, the engine wired on it as lastro serve wires it
// (engine.New, the SDK client reaching the store in process), a manual
// clock, and the API served on a loopback port.
type costEngine struct {
	*engine.Engine
	store *ddblocal.Store
	db    *dynamodb.Client
	clock *clock.Manual
	url   string
	srv   *http.Server
	dir   string
}

// costEngineOptions tune newCostEngine.
type costEngineOptions struct {
	now    time.Time
	dir    string // "" keeps the store in memory
	shards int
	log    *slog.Logger
}

func newCostEngine(ctx context.Context, o costEngineOptions) (*costEngine, error) {
	if o.now.IsZero() {
		o.now = costNow
	}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	files, err := os.MkdirTemp("", "lastro-cost-")
	if err != nil {
		return nil, err
	}
	c := &costEngine{clock: clock.NewManual(o.now), dir: files}
	opts := ddblocal.Options{Now: c.clock.Now, Logger: o.log, ExportDir: filepath.Join(files, "exports")}
	if o.dir != "" {
		opts.Dir = o.dir
	}
	if c.store, err = ddblocal.Open(opts); err != nil {
		os.RemoveAll(files)
		return nil, err
	}
	c.db = kit.NewEmbeddedClient(kit.InProcessEndpoint, kit.InProcess(c.store.Handler()))
	// The caches of tenants and keys expire on the wall clock: a slow,
	// loaded machine would otherwise charge an operation the read of a
	// key warmed long before. Kept for the run, so each operation pays for
	// itself alone, as in steady state, whatever the machine's speed.
	auth := tenant.Options{TenantCacheTTL: time.Hour, KeyCacheTTL: time.Hour}
	c.Engine, err = engine.New(ctx, engine.Deps{DB: c.db, Table: "lastro", Clock: c.clock, Logger: o.log, Auth: auth,
		DataKey: secret.Random(32), AdminToken: costAdminToken, Shards: o.shards,
		Sender: contactlimit.NewOutbox(filepath.Join(files, "outbox.jsonl")), Bureau: agenda.NewFileBureau(filepath.Join(files, "bureau.jsonl"))})
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	c.url = "http://" + ln.Addr().String()
	c.srv = &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go c.srv.Serve(ln) //nolint:errcheck // Serve returns ErrServerClosed on Close
	return c, nil
}

// Close stops the API and the store.
func (c *costEngine) Close() error {
	var err error
	if c.srv != nil {
		err = c.srv.Close()
	}
	if c.store != nil {
		err = errors.Join(err, c.store.Close())
	}
	return errors.Join(err, os.RemoveAll(c.dir))
}

// meter is the store's meter of table name as the cost package reads it.
func (c *costEngine) meter(name string) cost.Meter {
	return func() cost.Capacity { return capacityOf(c.store.ConsumedCapacity(name)) }
}

// capacityOf converts the embedded store's meter (CloudWatch's view:
// table and each index apart, failed conditional writes included).
func capacityOf(m ddblocal.Consumed) cost.Capacity {
	out := cost.Capacity{Table: cost.Units{RRU: m.ReadCapacityUnits, WRU: m.WriteCapacityUnits}, Indexes: map[string]cost.Units{}}
	for name, g := range m.GlobalSecondaryIndexes {
		out.Indexes[name] = cost.Units{RRU: g.ReadCapacityUnits, WRU: g.WriteCapacityUnits}
	}
	return out
}

// parts are the engine's own per-operation totals (the kit's meter).
func (c *costEngine) parts() map[string]cost.Units {
	out := map[string]cost.Units{}
	for _, o := range c.Kit.Meter().Snapshot() {
		out[o.Name] = cost.Units{RRU: o.RRU, WRU: o.WRU}
	}
	return out
}

// target is the catalogue's view of the engine.
func (c *costEngine) target() cost.Target {
	return cost.Target{Client: cost.Client{URL: c.url, HTTP: &http.Client{Timeout: time.Minute}}, AdminToken: costAdminToken,
		Meter: c.meter("lastro"), Parts: c.parts, Now: c.clock.Now(), Advance: c.clock.Advance,
		Export: func(ctx context.Context) error {
			_, err := runExport(ctx, c.db, "lastro", exportOptions{Bucket: "lastro-cost", Type: "full", Poll: 20 * time.Millisecond}, io.Discard)
			return err
		}}
}

// costCmd: lastro cost [--json] | lastro cost compare [flags].
func costCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "compare" {
		return compareCmd(ctx, args[1:], stdout, stderr)
	}
	fs := newFlagSet("cost", "[--json] | lastro cost compare [flags]", stderr)
	asJSON := fs.Bool("json", false, "print the results as JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (lastro cost -h lists the flags; the comparisons are lastro cost compare)", fs.Arg(0))
	}
	results, err := runCatalogue(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "capacity per business operation on a fresh embedded store, through the HTTP API, clock frozen at %s\n\n", costNow.Format(time.RFC3339))
		if err := cost.Print(stdout, results); err != nil {
			return err
		}
	}
	if over := cost.Over(results); len(over) > 0 {
		return fmt.Errorf("%d operation(s) over budget, the first %s: %s", len(over), over[0].Name, over[0].Over)
	}
	return nil
}

// runCatalogue runs the catalogue on a fresh private engine.
func runCatalogue(ctx context.Context) ([]cost.Result, error) {
	c, err := newCostEngine(ctx, costEngineOptions{})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return cost.Run(ctx, c.target())
}
