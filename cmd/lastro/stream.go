package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kgo"

	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/stream"
)

// streamOptions are the stream consumer's flags (lastro stream, and serve
// with LASTRO_STREAM=on, which takes the defaults).
type streamOptions struct {
	events, deadLetter string // JSON-lines files; "" = in the data directory
	deadEvents         string // the events dead letter of the tenants' webhooks; "" = in the data directory
	noWebhooks         bool   // do not post to the tenants' events webhooks
	webhookPause       time.Duration
	kafka, kafkaTopic  string // comma-separated brokers; the topic
	eventBridge        string // the bus name
	archive            string // the archive table; "-" for none
	owner, metrics     string
	once               bool
	noFile             bool
	poll               time.Duration
}

func addStreamFlags(fs *flag.FlagSet) *streamOptions {
	o := &streamOptions{}
	fs.StringVar(&o.events, "events", "", "JSON-lines file of the published events (default: events.jsonl in the data directory)")
	fs.BoolVar(&o.noFile, "no-file", false, "do not write the events file (with -kafka or -eventbridge)")
	fs.StringVar(&o.deadLetter, "dead-letter", "", "JSON-lines file of poison records (default: dead-letter.jsonl in the data directory)")
	fs.BoolVar(&o.noWebhooks, "no-webhooks", false, "do not post events to the tenants' events webhooks (PUT /v1/tenant/events-webhook)")
	fs.StringVar(&o.deadEvents, "webhook-dead-letter", "", "JSON-lines file of the events a tenant's webhook gave up on (default: webhook-dead-letter.jsonl in the data directory)")
	fs.DurationVar(&o.webhookPause, "webhook-pause", time.Minute, "after a tenant's webhook gave up, send its events straight to the dead letter for this long")
	fs.StringVar(&o.kafka, "kafka", "", "also publish to these Kafka brokers (comma-separated host:port)")
	fs.StringVar(&o.kafkaTopic, "kafka-topic", "lastro-events", "the Kafka topic (keyed by contract)")
	fs.StringVar(&o.eventBridge, "eventbridge", "", "also publish to this EventBridge bus")
	fs.StringVar(&o.archive, "archive", "", "archive table of the TTL's deletions (default: the table's name + -archive; - for none)")
	fs.StringVar(&o.owner, "owner", "", "this consumer's name on shard leases (default: host name and process id)")
	fs.StringVar(&o.metrics, "metrics", "", "serve Prometheus metrics (lag, throughput, failures) at http://ADDR/metrics (serve has them at /metrics)")
	fs.BoolVar(&o.once, "once", false, "process what the stream holds now, print a report and exit (fails when another consumer keeps the shards)")
	fs.DurationVar(&o.poll, "poll", time.Second, "pause after a pass that found nothing new")
	return o
}

// streamCmd: lastro stream [flags]. It runs the consumer until
// interrupted (SIGINT, SIGTERM) — a stop mid-chunk is safe: the chunk is
// published again from the checkpoint by whoever reads the shard next,
// with the same event ids — or, with -once, until the stream is quiet.
func streamCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "replay" {
		return streamReplayCmd(ctx, args[1:], stdout, stderr)
	}
	fs := newFlagSet("stream", "[flags]", stderr)
	o := addStreamFlags(fs)
	cfg, err := loadConfig(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	a, err := newApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	c, closeAll, err := a.consumer(ctx, *o)
	if err != nil {
		return err
	}
	defer closeAll()
	if o.once {
		rep, err := c.Drain(ctx)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]int{"records": rep.Records, "events": rep.Events, "dead": rep.Dead, "archived": rep.Archived})
	}
	log.Info("stream consumer running", "table", cfg.Table)
	return c.Run(ctx)
}

// consumer wires the stream consumer on the app from o; closeAll closes
// its sinks and clients.
func (a *app) consumer(ctx context.Context, o streamOptions) (c *stream.Consumer, closeAll func(), err error) {
	var closers []func()
	closeEach := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeEach()
		}
	}()
	dir := a.cfg.DataDir
	if a.cfg.inMemory() {
		if dir, err = os.MkdirTemp("", "lastro-stream-"); err != nil {
			return nil, nil, err
		}
	}
	// The engine's registry: with serve, /metrics on the API shows the
	// consumer's series; lastro stream serves it with -metrics.
	reg := a.Metrics
	metrics, err := stream.NewMetrics(reg)
	if err != nil {
		return nil, nil, err
	}
	// The lag is measured on the engine's clock: the embedded store stamps
	// its records with it (a frozen LASTRO_NOW would otherwise read as
	// months of lag), and on AWS it is the wall clock.
	lag, err := stream.NewLag(reg, a.Clock)
	if err != nil {
		return nil, nil, err
	}
	pubs, closePubs, err := a.publishers(ctx, o, metrics, dir)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, closePubs)
	deadPath := o.deadLetter
	if deadPath == "" {
		deadPath = filepath.Join(dir, "dead-letter.jsonl")
	}
	dead := stream.NewDeadLetterFile(deadPath)
	closers = append(closers, func() { dead.Close() })
	archive, err := a.archive(ctx, o.archive)
	if err != nil {
		return nil, nil, err
	}
	if o.metrics != "" {
		ln, err := net.Listen("tcp", o.metrics)
		if err != nil {
			return nil, nil, fmt.Errorf("metrics listener: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		closers = append(closers, func() { srv.Close() })
		a.log.Info("stream metrics", "addr", ln.Addr().String())
	}
	owner := o.owner
	if owner == "" {
		host, _ := os.Hostname()
		owner = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	c, err = stream.New(stream.Config{Kit: a.Kit, Streams: a.streams, Archive: archive, Translate: stream.Translate,
		Publisher: pubs, DeadLetter: metrics.CountDead(dead), Owner: owner, Clock: a.Clock, Poll: o.poll,
		Observe: lag.Observe, Tenants: a.Tenants.List, Zone: a.tenantZone, Logger: a.log})
	return c, closeEach, err
}

// tenantZone is a tenant's time zone, for the stream's day counters.
func (a *app) tenantZone(ctx context.Context, id string) (*time.Location, error) {
	t, err := a.Tenants.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return t.Location, nil
}

// publishers wires the consumer's publishers from o, in dir unless o
// names the files: the events file (unless o.noFile), Kafka and
// EventBridge when asked, the tenants' webhooks last (unless
// o.noWebhooks). lastro stream and lastro stream replay --records share
// them, so a replayed record goes where the stream would have sent it.
func (a *app) publishers(ctx context.Context, o streamOptions, metrics *stream.Metrics, dir string) (pubs stream.Fanout, closeAll func(), err error) {
	var closers []func()
	closeEach := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeEach() // not closeAll: a failing return set it to nil
		}
	}()
	if !o.noFile {
		path := o.events
		if path == "" {
			path = filepath.Join(dir, "events.jsonl")
		}
		f := stream.NewFileSink(path)
		closers = append(closers, func() { f.Close() })
		pubs = append(pubs, metrics.Instrument("file", f))
		a.log.Info("stream events file", "path", path)
	}
	if o.kafka != "" {
		kc, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(o.kafka, ",")...))
		if err != nil {
			return nil, nil, fmt.Errorf("kafka: %w", err)
		}
		closers = append(closers, kc.Close)
		pubs = append(pubs, metrics.Instrument("kafka", stream.NewKafka(kc, o.kafkaTopic)))
	}
	if o.eventBridge != "" {
		awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("AWS configuration: %w", err)
		}
		pubs = append(pubs, metrics.Instrument("eventbridge", stream.NewEventBridge(awsCfg, o.eventBridge)))
	}
	if len(pubs) == 0 {
		return nil, nil, errors.New("no publisher: -no-file needs -kafka or -eventbridge")
	}
	// The tenants' webhooks come last: the shared sinks have the batch
	// before a tenant's endpoint is tried, and a failing endpoint keeps
	// its tenant's events in its own dead letter instead of failing the
	// batch for everyone (ADR 0050).
	if !o.noWebhooks {
		deadEventsPath := o.deadEvents
		if deadEventsPath == "" {
			deadEventsPath = filepath.Join(dir, "webhook-dead-letter.jsonl")
		}
		deadEvents := stream.NewEventDeadLetterFile(deadEventsPath)
		closers = append(closers, func() { deadEvents.Close() })
		metrics.Prepare("webhook")
		pubs = append(pubs, &stream.Webhook{Targets: stream.TenantTargets(a.Tenants), Clock: a.Clock, Egress: a.Egress, DeadLetter: deadEvents,
			Pause: cmp.Or(o.webhookPause, time.Minute), Metrics: metrics})
	}
	return pubs, closeEach, nil
}

// archive returns the kit of the archive table named name (default: the
// table's name + table.ArchiveSuffix; "-" for none). The embedded store
// creates it; on AWS it must exist (lastro table create --archive).
func (a *app) archive(ctx context.Context, name string) (*kit.Kit, error) {
	if name == "-" {
		return nil, nil
	}
	if name == "" {
		name = a.cfg.Table + table.ArchiveSuffix
	}
	if a.cfg.Endpoint == "" {
		if _, err := table.EnsureArchive(ctx, a.db, name); err != nil {
			return nil, err
		}
	} else if err := table.Ready(ctx, a.db, name); err != nil {
		return nil, fmt.Errorf("archive table %s: %w (create it with lastro table create --archive, or pass -archive -)", name, err)
	}
	return kit.New(a.db, name, kit.WithClock(a.Clock)), nil
}
