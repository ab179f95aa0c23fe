package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/schollz/progressbar/v3"

	"lastro/collections/calendar"
	"lastro/collections/table"
	"lastro/report"
)

// exportOptions are the flags of lastro export.
type exportOptions struct {
	Bucket, Prefix, Type, View, Token string
	At, From, To                      time.Time // zero: not given
	EnablePITR                        bool
	Poll                              time.Duration
}

// exportCmd: lastro export — ExportTableToPointInTime through the SDK, the
// same request on AWS and on the embedded store, waited for with
// DescribeExport.
func exportCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", "[flags]", stderr)
	var o exportOptions
	var at, from, to string
	fs.StringVar(&o.Bucket, "bucket", "lastro-exports", "S3 bucket (on the embedded store: a folder under <data dir>/exports)")
	fs.StringVar(&o.Prefix, "prefix", "", "S3 prefix inside the bucket")
	fs.StringVar(&o.Type, "type", "full", "full or incremental")
	fs.StringVar(&at, "at", "", "full export: the instant exported, RFC 3339 (default now)")
	fs.StringVar(&from, "from", "", "incremental export: start of the window, RFC 3339, inclusive")
	fs.StringVar(&to, "to", "", "incremental export: end of the window, RFC 3339, exclusive (default now)")
	fs.StringVar(&o.View, "view", "NEW_AND_OLD_IMAGES", "incremental export: NEW_AND_OLD_IMAGES or NEW_IMAGE")
	fs.StringVar(&o.Token, "client-token", "", "idempotency token: the same token and flags return the same export")
	fs.BoolVar(&o.EnablePITR, "enable-pitr", false, "enable point-in-time recovery on the table first: only a table created before the engine turned it on needs it")
	cfg, err := loadConfig(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	for _, t := range []struct {
		flag, v string
		dst     *time.Time
	}{{"at", at, &o.At}, {"from", from, &o.From}, {"to", to, &o.To}} {
		if t.v == "" {
			continue
		}
		if *t.dst, err = time.Parse(time.RFC3339, t.v); err != nil {
			return fmt.Errorf("--%s %q is not an RFC 3339 instant (for example 2026-09-01T00:00:00Z)", t.flag, t.v)
		}
	}
	switch {
	case o.Type != "full" && o.Type != "incremental":
		return fmt.Errorf("--type must be full or incremental, got %q", o.Type)
	// A window given to a full export, or an instant to an incremental
	// one, would be dropped: the export answered would not be the one
	// asked for.
	case o.Type == "full" && (from != "" || to != ""):
		return fmt.Errorf("--from and --to are for --type incremental; a full export takes --at")
	case o.Type == "incremental" && at != "":
		return fmt.Errorf("--at is for a full export; an incremental one takes --from and --to")
	}
	a, err := newApp(ctx, cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer a.Close()
	d, err := runExport(ctx, a.db, cfg.Table, o, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "export %s %s: %d items\n", aws.ToString(d.ExportArn), d.ExportStatus, aws.ToInt64(d.ItemCount))
	fmt.Fprintf(stdout, "manifest s3://%s/%s\n", aws.ToString(d.S3Bucket), aws.ToString(d.ExportManifest))
	if a.store != nil {
		dir, err := a.store.ExportDir(aws.ToString(d.ExportArn))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "folder %s\n", dir)
	}
	return nil
}

// runExport starts the export and waits for it, showing progress.
func runExport(ctx context.Context, db *dynamodb.Client, tableName string, o exportOptions, progress io.Writer) (*types.ExportDescription, error) {
	if o.EnablePITR {
		if err := table.EnablePITR(ctx, db, tableName); err != nil {
			return nil, err
		}
	}
	t, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(tableName)})
	if err != nil {
		return nil, err
	}
	in := &dynamodb.ExportTableToPointInTimeInput{TableArn: t.Table.TableArn, S3Bucket: aws.String(o.Bucket), ExportFormat: types.ExportFormatDynamodbJson}
	if o.Prefix != "" {
		in.S3Prefix = aws.String(o.Prefix)
	}
	if o.Token != "" {
		in.ClientToken = aws.String(o.Token)
	}
	if o.Type == "incremental" {
		if o.From.IsZero() {
			return nil, fmt.Errorf("an incremental export needs --from")
		}
		spec := &types.IncrementalExportSpecification{ExportFromTime: aws.Time(o.From), ExportViewType: types.ExportViewType(o.View)}
		if !o.To.IsZero() {
			spec.ExportToTime = aws.Time(o.To)
		}
		in.ExportType, in.IncrementalExportSpecification = types.ExportTypeIncrementalExport, spec
	} else if !o.At.IsZero() {
		in.ExportType, in.ExportTime = types.ExportTypeFullExport, aws.Time(o.At)
	}
	out, err := db.ExportTableToPointInTime(ctx, in)
	if err != nil {
		var pitr *types.PointInTimeRecoveryUnavailableException
		if errors.As(err, &pitr) {
			// The engine turns PITR on when it creates the table; only a
			// table created before that, or one whose PITR was turned off,
			// lands here.
			return nil, fmt.Errorf("table %s has point-in-time recovery off, and exports read it: "+
				"run lastro export --enable-pitr once to turn it on (on AWS: aws dynamodb update-continuous-backups "+
				"--table-name %s --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true): %w", tableName, tableName, err)
		}
		return nil, err
	}
	arn := out.ExportDescription.ExportArn
	bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(progress), progressbar.OptionSetDescription("exporting "+tableName),
		progressbar.OptionSpinnerType(14), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(200*time.Millisecond))
	defer bar.Finish()
	// Small exports finish in milliseconds, AWS's in minutes: poll from
	// 100 ms, doubling up to 5 s.
	poll := cmpDuration(o.Poll, 100*time.Millisecond)
	for {
		d, err := db.DescribeExport(ctx, &dynamodb.DescribeExportInput{ExportArn: arn})
		if err != nil {
			return nil, err
		}
		switch d.ExportDescription.ExportStatus {
		case types.ExportStatusCompleted:
			return d.ExportDescription, nil
		case types.ExportStatusFailed:
			return nil, fmt.Errorf("export %s failed: %s: %s", aws.ToString(arn),
				aws.ToString(d.ExportDescription.FailureCode), aws.ToString(d.ExportDescription.FailureMessage))
		}
		bar.Add(1)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stopped waiting for export %s (it goes on; DescribeExport reports it): %w", aws.ToString(arn), ctx.Err())
		case <-time.After(poll):
		}
		if o.Poll == 0 {
			poll = min(2*poll, 5*time.Second)
		}
	}
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// reportCmd: lastro report aging|rollrate --export DIR [--previous DIR]:
// reads only the export's files, prints the table and writes CSV and SVG.
func reportCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "aging" && args[0] != "rollrate") {
		fmt.Fprint(stderr, "usage: lastro report aging|rollrate --export DIR [--previous DIR] [--out DIR]\n")
		if len(args) > 0 && isHelp(args[0]) {
			return flag.ErrHelp
		}
		return fmt.Errorf("name the report: aging or rollrate")
	}
	kind := args[0]
	fs := newFlagSet("report "+kind, "--export DIR [flags]", stderr)
	exportDir := fs.String("export", "", "the export: its folder (holding manifest-summary.json) or the bucket/prefix folder above AWSDynamoDB/")
	previous := fs.String("previous", "", "rollrate: the previous month's export")
	outDir := fs.String("out", ".", "folder for the CSV and SVG files")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (lastro report %s -h lists the flags)", fs.Arg(0), kind)
	}
	if *exportDir == "" {
		return fmt.Errorf("--export is required")
	}
	if kind == "rollrate" && *previous == "" {
		return fmt.Errorf("rollrate needs --previous (the export it rolls from)")
	}
	return writeReport(kind, *exportDir, *previous, *outDir, stdout)
}

// writeReport computes one report and writes its three renderings.
func writeReport(kind, exportDir, previous, outDir string, stdout io.Writer) error {
	cur, err := report.ReadExport(exportDir)
	if err != nil {
		return err
	}
	date := calendar.Of(cur.ExportTime, time.UTC).String()
	var csvFn func(io.Writer) error
	var svg string
	if kind == "aging" {
		a := report.NewAging(cur.Positions)
		fmt.Fprintf(stdout, "aging as of %s (%s)\n", cur.ExportTime.Format(time.RFC3339), cur.ExportArn)
		if err := report.WriteAgingTable(stdout, a); err != nil {
			return err
		}
		csvFn = func(w io.Writer) error { return report.WriteAgingCSV(w, a) }
		svg = report.AgingSVG(a, "Aging by bucket, "+date)
	} else {
		prev, err := report.ReadExport(previous)
		if err != nil {
			return err
		}
		r := report.NewRollRate(prev.Positions, cur.Positions)
		fmt.Fprintf(stdout, "roll rate from %s to %s\n", prev.ExportTime.Format(time.RFC3339), cur.ExportTime.Format(time.RFC3339))
		if err := report.WriteRollTable(stdout, r); err != nil {
			return err
		}
		csvFn = func(w io.Writer) error { return report.WriteRollCSV(w, r) }
		svg = report.RollSVG(r, "Roll rate "+calendar.Of(prev.ExportTime, time.UTC).String()+" → "+date)
	}
	if err := os.MkdirAll(outDir, 0o700); err != nil {
		return err
	}
	csvPath, svgPath := filepath.Join(outDir, kind+".csv"), filepath.Join(outDir, kind+".svg")
	f, err := os.OpenFile(csvPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if err := errors.Join(csvFn(f), f.Close()); err != nil {
		return err
	}
	if err := os.WriteFile(svgPath, []byte(svg), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s\n", csvPath, svgPath)
	return nil
}
