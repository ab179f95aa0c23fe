package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestExportAndReportRefuseArgumentsTheyWouldDrop: a flag or argument
// lastro export, report or psp sandbox would ignore is an error before anything
// runs, so the export or report made is never other than the one asked
// for.
func TestExportAndReportRefuseArgumentsTheyWouldDrop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"full export with a window", func() error {
			return exportCmd(context.Background(), []string{"--data-dir", dir, "--type", "full", "--from", "2026-09-01T00:00:00Z"}, &bytes.Buffer{}, &bytes.Buffer{})
		}, "--from and --to are for --type incremental"},
		{"full export with an end", func() error {
			return exportCmd(context.Background(), []string{"--data-dir", dir, "--to", "2026-09-01T00:00:00Z"}, &bytes.Buffer{}, &bytes.Buffer{})
		}, "--from and --to are for --type incremental"},
		{"incremental export at an instant", func() error {
			return exportCmd(context.Background(), []string{"--data-dir", dir, "--type", "incremental", "--from", "2026-09-01T00:00:00Z",
				"--at", "2026-09-01T01:00:00Z"}, &bytes.Buffer{}, &bytes.Buffer{})
		}, "--at is for a full export"},
		{"sandbox with a stray argument", func() error {
			return pspCmd(context.Background(), []string{"sandbox", "--webhook-secret", "whsec_x", "--addr", "127.0.0.1:0", "extra"}, &bytes.Buffer{})
		}, `unexpected argument "extra"`},
		{"report with a stray argument", func() error {
			return reportCmd([]string{"aging", "--export", dir, "extra"}, &bytes.Buffer{}, &bytes.Buffer{})
		}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		if err := tt.run(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error holding %q", tt.name, err, tt.want)
		}
	}
}
