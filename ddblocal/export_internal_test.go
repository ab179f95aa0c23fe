package ddblocal

import (
	"testing"
	"time"

	"lastro/ddblocal/internal/backup"
	"lastro/ddblocal/internal/engine"
)

// TestInterruptedExportIsFailedAfterOpen: an export still IN_PROGRESS when
// the store stopped (a crash, or Close cancelling it) may have left partial
// files, so the next Open reports it FAILED instead of forever running.
func TestInterruptedExportIsFailedAfterOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Open(engine.Options{Dir: dir, TTLSweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	e := &backup.ExportDesc{ARN: "arn:aws:dynamodb:us-east-1:123456789012:table/t/export/01790000000000-0000abcd", ID: "01790000000000-0000abcd",
		Status: backup.ExportInProgress, Table: "t", Bucket: "bkt", Format: "DYNAMODB_JSON", Type: "FULL_EXPORT", Start: time.Now().UTC()}
	if err := s.bk.SaveExport(e); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(engine.Options{Dir: dir, TTLSweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all, err := s.bk.LoadExports()
	if err != nil || len(all) != 1 {
		t.Fatalf("exports after reopen: %v, %v", all, err)
	}
	if got := all[0]; got.Status != backup.ExportFailed || got.FailureCode != "ExportInterrupted" || got.End.IsZero() {
		t.Errorf("interrupted export after Open = %s %s (end %v), want FAILED ExportInterrupted", got.Status, got.FailureCode, got.End)
	}
}
