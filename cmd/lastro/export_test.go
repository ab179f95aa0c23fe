package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/arrangement"
	"lastro/collections/calendar"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/contract"
	"lastro/contract/regua"
	"lastro/ddblocal/ddbtest"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/report"
)

// portfolioSpec is one contract of the acceptance fixture: two monthly
// instalments of principal + 100.00 interest from first.
type portfolioSpec struct {
	id        string
	first     string
	principal int64
}

// expectedState derives a contract's state on a date from the fixture's
// facts alone: the oldest unpaid instalment's payable date under the
// national calendar, and regua's bucket boundaries.
func expectedState(s portfolioSpec, on calendar.Date, writtenOff bool) string {
	if writtenOff {
		return report.StateWrittenOff
	}
	first := calendar.MustParse(s.first)
	dpd := on.Sub(calendar.National.Adjust(first))
	if dpd <= 0 {
		return report.StateCurrent
	}
	return regua.Bucket(dpd)
}

// TestExportReportsMatchTheFacts is the acceptance test of lastro export
// and lastro report: a portfolio signed through the services, exported
// through the SDK a month apart (the headers never rewritten in between,
// so their stored buckets are stale by then), gives the aging and the roll
// rate that the contracts' due dates and balances imply.
func TestExportReportsMatchTheFacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := enginetest.New(t)
	tn, _ := env.Tenant(t, "t-export")
	specs := []portfolioSpec{
		{"c-current", "2026-10-10", 50000}, // current now, late (Oct 12 holiday) next month
		{"c-d001", "2026-09-10", 20000},
		{"c-d031", "2026-08-10", 30000},
		{"c-d061", "2026-07-10", 40000},
		{"c-d091", "2026-05-11", 60000},
		{"c-off", "2026-08-10", 70000}, // written off during the month
	}
	dks := map[string]string{}
	for _, s := range specs {
		r, err := env.Debtors.Register(ctx, tn, debtor.RegisterInput{Document: env.CPF(), Name: "Pessoa Sintética"}, debtor.Actor{Role: "operator"})
		if err != nil {
			t.Fatal(err)
		}
		dks[s.id] = r.DebtorKey
		in := contract.Input{ContractID: s.id, ProductCode: "CREDIARIO_2X", Installments: enginetest.Monthly(s.first, 2, s.principal, 10000)}
		if _, err := env.Contracts.Create(ctx, tn, r.DebtorKey, in, contract.Actor{Role: "operator"}); err != nil {
			t.Fatalf("create %s: %v", s.id, err)
		}
	}
	db := kit.NewEmbeddedClient(kit.InProcessEndpoint, env.StoreClient)
	export := func(prefix string) string {
		t.Helper()
		d, err := runExport(ctx, db, enginetest.Table, exportOptions{Bucket: "bi-exports", Prefix: prefix, Poll: 5 * time.Millisecond}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		dir, err := env.Store.ExportDir(aws.ToString(d.ExportArn))
		if err != nil || dir == "" {
			t.Fatalf("export folder %q: %v", dir, err)
		}
		return dir
	}
	rcuBefore := env.Store.ConsumedCapacity(enginetest.Table).ReadCapacityUnits
	septemberDir := export("monthly/2026-09")
	env.Clock.Advance(30 * 24 * time.Hour) // 2026-10-24
	if _, err := env.Arrangements.WriteOff(ctx, tn, dks["c-off"], "c-off", arrangement.WriteOffInput{Reason: "UNCOLLECTIBLE"}, contract.Actor{Role: "supervisor"}); err != nil {
		t.Fatalf("write off: %v", err)
	}
	env.Clock.Advance(time.Minute)
	octoberDir := export("monthly/2026-10")

	// An incremental export of the last hour holds exactly what the
	// write-off changed: c-off's header (now WRITTEN_OFF) and its audit
	// event, no other contract.
	now := env.Clock.Now()
	incr, err := runExport(ctx, db, enginetest.Table, exportOptions{Bucket: "bi-exports", Prefix: "incr", Type: "incremental",
		From: now.Add(-time.Hour), To: now, View: "NEW_AND_OLD_IMAGES", Poll: 5 * time.Millisecond}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	incrDir, _ := env.Store.ExportDir(aws.ToString(incr.ExportArn))
	sawHeader := false
	for _, l := range exportLines(t, incrDir) {
		sk := l.Keys["SK"]["S"]
		sawHeader = sawHeader || sk == "CT#c-off"
		if !strings.HasPrefix(sk, "CT#c-off") {
			t.Errorf("incremental export holds %s, which the write-off did not change", sk)
		}
		if sk == "CT#c-off" && (l.NewImage["status"]["S"] != contract.StatusWrittenOff || l.OldImage["status"]["S"] == contract.StatusWrittenOff) {
			t.Errorf("c-off header: old %v, new %v", l.OldImage["status"], l.NewImage["status"])
		}
	}
	if !sawHeader {
		t.Errorf("incremental export lacks c-off's header (%d items)", aws.ToInt64(incr.ItemCount))
	}
	if rcu := env.Store.ConsumedCapacity(enginetest.Table).ReadCapacityUnits - rcuBefore; rcu > 2 {
		// The write-off's own reads are the only ones allowed.
		t.Errorf("the exports consumed read capacity: %v RCU", rcu)
	}

	september, october := calendar.MustParse("2026-09-24"), calendar.MustParse("2026-10-24")
	balance := func(s portfolioSpec) int64 { return 2 * (s.principal + 10000) }
	wantAging := func(on calendar.Date, off bool) map[string]report.AgingRow {
		out := map[string]report.AgingRow{}
		for _, s := range specs {
			st := expectedState(s, on, off && s.id == "c-off")
			r := out[st]
			r.State, r.Contracts, r.BalanceCents = st, r.Contracts+1, r.BalanceCents+balance(s)
			out[st] = r
		}
		return out
	}
	for _, tc := range []struct {
		name string
		dir  string
		on   calendar.Date
		off  bool
	}{{"september", septemberDir, september, false}, {"october", octoberDir, october, true}} {
		ex, err := report.ReadExport(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ex.Positions) != len(specs) {
			t.Fatalf("%s: %d positions, want %d", tc.name, len(ex.Positions), len(specs))
		}
		want := wantAging(tc.on, tc.off)
		a := report.NewAging(ex.Positions)
		for _, r := range a.Rows {
			w := want[r.State]
			if r.Contracts != w.Contracts || (r.State != report.StateWrittenOff && r.BalanceCents != w.BalanceCents) {
				t.Errorf("%s aging %s = %d contracts, %s; want %d, %s", tc.name, r.State, r.Contracts, report.BRL(r.BalanceCents), w.Contracts, report.BRL(w.BalanceCents))
			}
		}
	}

	// The roll rate, and the command's files, from the two exports only
	// (--previous names the bucket/prefix folder: its newest export).
	out := t.TempDir()
	var stdout bytes.Buffer
	if err := reportCmd([]string{"rollrate", "--export", octoberDir, "--previous", filepath.Dir(filepath.Dir(septemberDir)), "--out", out}, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	prev, _ := report.ReadExport(septemberDir)
	cur, _ := report.ReadExport(octoberDir)
	r := report.NewRollRate(prev.Positions, cur.Positions)
	for _, s := range specs {
		from, to := expectedState(s, september, false), expectedState(s, october, s.id == "c-off")
		if r.Count(from, to) == 0 {
			t.Errorf("%s: no roll from %s to %s in %v", s.id, from, to, r.Counts)
		}
	}
	total := 0
	for _, n := range r.Counts {
		total += n
	}
	if total != len(specs) {
		t.Errorf("roll rate counts %d contracts, want %d", total, len(specs))
	}
	csv, err := os.ReadFile(filepath.Join(out, "rollrate.csv"))
	if err != nil || !strings.Contains(string(csv), "D001_030,D031_060,1,1,1000000,") {
		t.Errorf("rollrate.csv = %q, %v", csv, err)
	}
	if svg, err := os.ReadFile(filepath.Join(out, "rollrate.svg")); err != nil || !bytes.HasPrefix(svg, []byte("<svg")) {
		t.Errorf("rollrate.svg: %v", err)
	}
	// The folder as a shell completes it, with a trailing slash.
	if err := reportCmd([]string{"aging", "--export", octoberDir + string(filepath.Separator), "--out", out}, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), report.BRL(2*(50000+10000))) {
		t.Errorf("aging table lacks the current contract's balance:\n%s", stdout.String())
	}
}

// incrementalLine is one line of an incremental export.
type incrementalLine struct {
	Keys, NewImage, OldImage map[string]map[string]string
}

// exportLines reads every data line of the export in dir through its
// manifest (string and number attributes only: what the test looks at).
func exportLines(t *testing.T, dir string) []incrementalLine {
	t.Helper()
	files, err := os.ReadFile(filepath.Join(dir, "manifest-files.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []incrementalLine
	for line := range bytes.Lines(files) {
		var f struct {
			DataFileS3Key string `json:"dataFileS3Key"`
		}
		if err := json.Unmarshal(line, &f); err != nil {
			t.Fatal(err)
		}
		raw, err := os.Open(filepath.Join(dir, "data", path.Base(f.DataFileS3Key)))
		if err != nil {
			t.Fatal(err)
		}
		gz, err := gzip.NewReader(raw)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(gz)
		for dec.More() {
			var l struct {
				Keys, NewImage, OldImage map[string]json.RawMessage
			}
			if err := dec.Decode(&l); err != nil {
				t.Fatal(err)
			}
			out = append(out, incrementalLine{Keys: scalars(l.Keys), NewImage: scalars(l.NewImage), OldImage: scalars(l.OldImage)})
		}
		raw.Close()
	}
	return out
}

// scalars keeps the S and N attributes of an image.
func scalars(img map[string]json.RawMessage) map[string]map[string]string {
	out := map[string]map[string]string{}
	for name, raw := range img {
		var v map[string]any
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		for typ, val := range v {
			if s, ok := val.(string); ok {
				out[name] = map[string]string{typ: s}
			}
		}
	}
	return out
}

// TestExportNeedsNoFlagOnAFreshStore: the data directory lastro creates
// exports with no flag (the engine creates the table with point-in-time
// recovery on).
func TestExportNeedsNoFlagOnAFreshStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	common := []string{"--data-dir", t.TempDir(), "--admin-token", testAdminToken}
	var out, errOut bytes.Buffer
	if err := run(ctx, append([]string{"demo", "seed", "--tenant", "t-exp", "--debtors", "2"}, common...), &out, &errOut); err != nil {
		t.Fatalf("seed: %v\n%s", err, errOut.String())
	}
	out.Reset()
	if err := run(ctx, append([]string{"export", "--prefix", "fresh"}, common...), &out, &errOut); err != nil {
		t.Fatalf("export with no flag: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), " COMPLETED: ") || strings.Contains(out.String(), ": 0 items") {
		t.Errorf("export output:\n%s", out.String())
	}
}

// TestExportOfAnOlderTableSaysHowToEnablePITR: a table created without
// point-in-time recovery (before the engine turned it on) fails the
// export with the way to turn it on, and --enable-pitr does.
func TestExportOfAnOlderTableSaysHowToEnablePITR(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := ddbtest.New(t)
	in := table.CreateInput("old")
	in.DeletionProtectionEnabled = aws.Bool(false)
	if _, err := db.CreateTable(ctx, in); err != nil {
		t.Fatal(err)
	}
	o := exportOptions{Bucket: "old-exports", Poll: 5 * time.Millisecond}
	_, err := runExport(ctx, db, "old", o, &bytes.Buffer{})
	var pitr *types.PointInTimeRecoveryUnavailableException
	if !errors.As(err, &pitr) || !strings.Contains(err.Error(), "lastro export --enable-pitr") || !strings.Contains(err.Error(), "update-continuous-backups") {
		t.Fatalf("export without PITR: %v", err)
	}
	o.EnablePITR = true
	if d, err := runExport(ctx, db, "old", o, &bytes.Buffer{}); err != nil || d.ExportStatus != types.ExportStatusCompleted {
		t.Fatalf("export with --enable-pitr: %v %v", d, err)
	}
	o.EnablePITR = false // it stays on
	if _, err := runExport(ctx, db, "old", o, &bytes.Buffer{}); err != nil {
		t.Fatalf("second export: %v", err)
	}
}
