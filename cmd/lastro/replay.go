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
	"os"
	"path/filepath"
	"time"

	"lastro/stream"
)

// replaySynopsis is lastro stream replay's usage line and what -h says of
// idempotency and the survivors' file.
const replaySynopsis = `--records FILE | --events FILE [--out FILE] [flags]

Sends a dead letter on once its cause is fixed. --records FILE (dead-letter.jsonl)
translates each poison record again and publishes its events where lastro stream
would (the events file, -kafka, -eventbridge, the tenants' webhooks); --events FILE
(webhook-dead-letter.jsonl) posts each event again to its tenant's events webhook,
signed. What still fails is written, with its new cause, to --out (default
FILE.remaining, replaced whole); FILE itself is never changed: delete it once the
report says nothing is left. A replay is idempotent: event ids are deterministic
(the record's sequence number and the event's position), so events delivered
before, or replayed twice, arrive with the same ids and consumers drop the
duplicates. Prints a JSON report: read, replayed, stillDead, events, remaining.`

// replayReport is what lastro stream replay prints.
type replayReport struct {
	stream.ReplayReport
	Remaining string `json:"remaining"` // the survivors' file
}

// streamReplayCmd: lastro stream replay --records FILE | --events FILE.
func streamReplayCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("stream replay", replaySynopsis, stderr)
	records := fs.String("records", "", "replay this records dead letter (lastro stream's dead-letter.jsonl)")
	events := fs.String("events", "", "replay this events dead letter (lastro stream's webhook-dead-letter.jsonl)")
	out := fs.String("out", "", "write what still fails here (default: the input's path + .remaining; never the input)")
	// The publishers of --records, as lastro stream names them; the events
	// file is -events-file here, -events being the input.
	var o streamOptions
	fs.StringVar(&o.events, "events-file", "", "with --records: JSON-lines file of the published events (default: events.jsonl in the data directory)")
	fs.BoolVar(&o.noFile, "no-file", false, "with --records: do not write the events file (with -kafka or -eventbridge)")
	fs.StringVar(&o.kafka, "kafka", "", "with --records: also publish to these Kafka brokers (comma-separated host:port)")
	fs.StringVar(&o.kafkaTopic, "kafka-topic", "lastro-events", "with --records: the Kafka topic (keyed by contract)")
	fs.StringVar(&o.eventBridge, "eventbridge", "", "with --records: also publish to this EventBridge bus")
	fs.BoolVar(&o.noWebhooks, "no-webhooks", false, "with --records: do not post events to the tenants' events webhooks")
	fs.StringVar(&o.deadEvents, "webhook-dead-letter", "", "with --records: where a tenant's webhook keeps the events it gave up on (default: webhook-dead-letter.jsonl in the data directory)")
	cfg, err := loadConfig(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	in, outPath, err := replayPaths(fs, *records, *events, *out)
	if err != nil {
		return err
	}
	// Read and check the whole input before opening the table: a wrong
	// file fails before anything is sent.
	var recs []stream.Record
	var deads []stream.DeadEvent
	if *records != "" {
		recs, err = readDeadRecords(in)
	} else {
		deads, err = readDeadEvents(in)
	}
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	a, err := newApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	var rep stream.ReplayReport
	err = writeSurvivors(outPath, func(tmp string) error {
		if *records != "" {
			rep, err = a.replayRecords(ctx, o, recs, tmp)
		} else {
			rep, err = a.replayEvents(ctx, deads, tmp)
		}
		return err
	})
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(replayReport{ReplayReport: rep, Remaining: outPath})
}

// replayPaths checks the flags: exactly one input, which exists, the
// publishers' flags only with --records, and an output that is not the
// input. It returns the input and the output's path.
func replayPaths(fs *flag.FlagSet, records, events, out string) (in, outPath string, err error) {
	switch {
	case records == "" && events == "":
		return "", "", errors.New("stream replay needs --records FILE or --events FILE (lastro stream replay -h)")
	case records != "" && events != "":
		return "", "", errors.New("stream replay takes --records or --events, not both")
	}
	in = cmp.Or(records, events)
	if events != "" {
		var only []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "events-file", "no-file", "kafka", "kafka-topic", "eventbridge", "no-webhooks", "webhook-dead-letter":
				only = append(only, "-"+f.Name)
			}
		})
		if len(only) > 0 {
			return "", "", fmt.Errorf("%s only applies to --records: --events posts to the tenants' webhooks only", only[0])
		}
	}
	st, err := os.Stat(in)
	if err != nil {
		return "", "", fmt.Errorf("dead letter %s: %w", in, errors.Unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return "", "", fmt.Errorf("dead letter %s is not a regular file", in)
	}
	outPath = cmp.Or(out, in+".remaining")
	absIn, err1 := filepath.Abs(in)
	absOut, err2 := filepath.Abs(outPath)
	if err := errors.Join(err1, err2); err != nil {
		return "", "", err
	}
	if absIn == absOut {
		return "", "", fmt.Errorf("--out %s is the input: replay never changes its input", outPath)
	}
	if ost, err := os.Stat(outPath); err == nil && os.SameFile(st, ost) {
		return "", "", fmt.Errorf("--out %s is the input: replay never changes its input", outPath)
	}
	return in, outPath, nil
}

// readDeadRecords reads a records dead letter, refusing a line that is not
// a dead record (an events dead letter given to --records).
func readDeadRecords(path string) ([]stream.Record, error) {
	recs, deads, err := stream.ReadDeadLetters(path)
	if err != nil {
		return nil, err
	}
	for i, d := range deads {
		if d.Sequence == "" || d.Name == "" {
			return nil, fmt.Errorf("dead letter %s line %d is not a dead record (an events dead letter? use --events)", path, i+1)
		}
	}
	return recs, nil
}

// readDeadEvents reads an events dead letter, refusing a line that is not
// a dead event (a records dead letter given to --events).
func readDeadEvents(path string) ([]stream.DeadEvent, error) {
	deads, err := stream.ReadDeadEvents(path)
	if err != nil {
		return nil, err
	}
	for i, d := range deads {
		if d.Event.ID == "" || cmp.Or(d.Tenant, d.Event.Tenant) == "" {
			return nil, fmt.Errorf("events dead letter %s line %d is not a dead event (a records dead letter? use --records)", path, i+1)
		}
	}
	return deads, nil
}

// writeSurvivors runs replay on a temporary file beside path and renames
// it to path when replay succeeds, so path is whole or untouched (an
// interrupted replay leaves the input, which can be replayed again); it
// is written, empty, when nothing survives, so the report's file always
// says what is left. 0600: records hold items as the table stores them.
func writeSurvivors(path string, replay func(tmp string) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("survivors' file: %w", err)
	}
	tmp := f.Name()
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("survivors' file: %w", err)
	}
	if err := replay(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("survivors' file: %w", err)
	}
	return nil
}

// replayRecords publishes recs through the publishers lastro stream would
// use, the ones that still fail to the dead letter at tmp.
func (a *app) replayRecords(ctx context.Context, o streamOptions, recs []stream.Record, tmp string) (stream.ReplayReport, error) {
	dir := a.cfg.DataDir
	if a.cfg.inMemory() {
		// Nothing of an in-memory engine outlives the command: its events
		// file would be lost anyway.
		d, err := os.MkdirTemp("", "lastro-replay-")
		if err != nil {
			return stream.ReplayReport{}, err
		}
		dir = d
	}
	metrics, err := stream.NewMetrics(a.Metrics)
	if err != nil {
		return stream.ReplayReport{}, err
	}
	pubs, closeAll, err := a.publishers(ctx, o, metrics, dir)
	if err != nil {
		return stream.ReplayReport{}, err
	}
	defer closeAll()
	dead := stream.NewDeadLetterFile(tmp)
	rep, err := stream.ReplayRecords(ctx, recs, stream.Translate, pubs, dead)
	return rep, errors.Join(err, dead.Close())
}

// replayEvents posts deads to their tenants' webhooks, signed as the
// stream signs them, the ones that fail again to the dead letter at tmp.
func (a *app) replayEvents(ctx context.Context, deads []stream.DeadEvent, tmp string) (stream.ReplayReport, error) {
	keep := stream.NewEventDeadLetterFile(tmp)
	w := &stream.Webhook{Targets: stream.TenantTargets(a.Tenants), Clock: a.Clock, Egress: a.Egress, Pause: time.Minute}
	rep, err := w.Replay(ctx, deads, keep)
	return rep, errors.Join(err, keep.Close())
}
