package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// failsOnOneLine checks a child's failure: exit code 1, no panic, and the
// error as exactly one "lastro: " line holding want.
func failsOnOneLine(t *testing.T, code int, stderr, want string) {
	t.Helper()
	if code != 1 || strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	var errLines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "lastro: ") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) != 1 || !strings.Contains(errLines[0], want) {
		t.Fatalf("error lines %q, want one holding %q; stderr:\n%s", errLines, want, stderr)
	}
}

// TestCommandsFailOnOneLineWhenTheDataDirIsInUse: with lastro serve
// holding the data directory, every other command that opens it says so
// in one line and exits 1 (it used to panic in Close).
func TestCommandsFailOnOneLineWhenTheDataDirIsInUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"LASTRO_DATA_DIR": dir, "LASTRO_ADMIN_TOKEN": testAdminToken}
	startServe(t, map[string]string{"LASTRO_DATA_DIR": dir, "LASTRO_ADMIN_TOKEN": testAdminToken})
	want := "the data directory " + dir + " is in use by another lastro process"
	for _, args := range [][]string{
		{"demo", "seed", "--debtors", "1"},
		{"inspect", "T#t-demo"},
		{"table", "describe"},
		{"table", "create"},
		{"serve", "--addr", "127.0.0.1:0"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runChild(t, env, args...)
			failsOnOneLine(t, code, stderr, want)
		})
	}
}

func TestServeFailsOnOneLineOnBadSettings(t *testing.T) {
	t.Parallel()
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"garbage LASTRO_NOW", map[string]string{"LASTRO_NOW": "garbage", "LASTRO_DATA_DIR": ":memory:"},
			`LASTRO_NOW "garbage" is not an RFC 3339 instant`},
		{"LASTRO_NOW without a zone", map[string]string{"LASTRO_NOW": "2026-09-24T12:00:00", "LASTRO_DATA_DIR": ":memory:"},
			"is not an RFC 3339 instant"},
		// Under a regular file: no directory can be created there, for
		// root too (which permission bits would not stop).
		{"data dir that cannot be created", map[string]string{"LASTRO_DATA_DIR": filepath.Join(notADir, "data")},
			"the data directory " + filepath.Join(notADir, "data") + " cannot be created: not a directory"},
		{"bad shards", map[string]string{"LASTRO_SHARDS": "0", "LASTRO_DATA_DIR": ":memory:"}, "LASTRO_SHARDS must be 1-100"},
		{"bad agenda hour", map[string]string{"LASTRO_AGENDA_HOUR": "24", "LASTRO_DATA_DIR": ":memory:"}, "LASTRO_AGENDA_HOUR must be an hour 0-23"},
		{"bad scheduler", map[string]string{"LASTRO_SCHEDULER": "maybe", "LASTRO_DATA_DIR": ":memory:"}, "LASTRO_SCHEDULER must be on or off"},
		{"bad stream", map[string]string{"LASTRO_STREAM": "yes", "LASTRO_DATA_DIR": ":memory:"}, "LASTRO_STREAM must be on, off or auto"},
		{"store cache too small", map[string]string{"LASTRO_STORE_CACHE_MB": "4", "LASTRO_DATA_DIR": ":memory:"}, "LASTRO_STORE_CACHE_MB must be 8-1048576"},
		{"store cache not a number", map[string]string{"LASTRO_STORE_CACHE_MB": "1GiB", "LASTRO_DATA_DIR": ":memory:"}, "LASTRO_STORE_CACHE_MB must be 8-1048576"},
		{"10-character admin token", map[string]string{"LASTRO_ADMIN_TOKEN": "0123456789", "LASTRO_DATA_DIR": ":memory:"},
			"LASTRO_ADMIN_TOKEN is 10 characters: use at least 32"},
		{"31-character admin token", map[string]string{"LASTRO_ADMIN_TOKEN": testAdminToken[:31], "LASTRO_DATA_DIR": ":memory:"},
			"LASTRO_ADMIN_TOKEN is 31 characters: use at least 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.env["LASTRO_ADDR"] = "127.0.0.1:0"
			code, _, stderr := runChild(t, tt.env, "serve")
			failsOnOneLine(t, code, stderr, tt.want)
		})
	}
}

// TestHelpOnEverySubcommand: -h exits 0 and lists the subcommand's own
// flags.
func TestHelpOnEverySubcommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args   []string
		flags  []string
		absent []string // serve's own flags, not listed by other commands
	}{
		{[]string{"serve", "-h"}, []string{"-addr", "-data-dir", "-store-addr", "-now", "LASTRO_STORE_ADDR", "-store-cache-mb"}, nil},
		{[]string{"table", "create", "-h"}, []string{"-table", "-data-dir", "-archive"}, nil},
		{[]string{"stream", "-h"}, []string{"-once", "-kafka", "-eventbridge", "-events", "-dead-letter", "-archive", "-metrics", "-data-dir"},
			[]string{"-max-conns", "-trusted-proxies", "-scheduler", "-psp-sandbox", "-addr"}},
		{[]string{"serve", "-h"}, []string{"-stream", "LASTRO_STREAM"}, nil},
		{[]string{"table", "describe", "--help"}, []string{"-table", "-dynamodb-endpoint"}, nil},
		{[]string{"table", "definition", "-h"}, []string{"-table"}, nil},
		{[]string{"inspect", "-h"}, []string{"<PK>", "-data-dir"}, nil},
		{[]string{"inspect", "T#t-demo", "-h"}, []string{"-data-dir"}, nil},
		{[]string{"ddb", "serve", "-h"}, []string{"-addr", "-in-memory", "-data-dir", "-store-cache-mb"}, nil},
		{[]string{"worker", "-h"}, []string{"-date", "-tenant", "-shard", "-data-dir"},
			[]string{"-max-conns", "-read-timeout", "-trusted-proxies", "-store-addr"}},
		{[]string{"serve", "-h"}, []string{"-max-conns", "-trusted-proxies", "-psp-sandbox"}, nil},
		{[]string{"serve", "-h"}, []string{"-agenda-hour", "LASTRO_AGENDA_HOUR", "-scheduler"}, nil},
		{[]string{"demo", "seed", "-h"}, []string{"-tenant", "-debtors", "-seed", "-data-dir"}, nil},
		{[]string{"table", "-h"}, []string{"create|describe|definition"}, nil},
		{[]string{"demo", "-h"}, []string{"demo seed"}, nil},
		{[]string{"ddb", "-h"}, []string{"ddb serve"}, nil},
		{[]string{"boleto", "parse", "-h"}, []string{"-today"}, nil},
		{[]string{"boleto", "-h"}, []string{"boleto parse"}, nil},
		{[]string{"rotate", "debtor-keys", "-h"}, []string{"-tenant", "-wcu", "-data-dir"}, []string{"-max-conns", "-addr", "-out"}},
		{[]string{"-h"}, []string{"serve", "inspect", "demo seed", "worker", "stream"}, nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runChild(t, map[string]string{"LASTRO_DATA_DIR": ":memory:"}, tt.args...)
			out := stdout + stderr
			if code != 0 {
				t.Fatalf("exit %d: %s", code, out)
			}
			for _, f := range tt.flags {
				if !strings.Contains(out, f) {
					t.Errorf("help does not mention %s:\n%s", f, out)
				}
			}
			for _, f := range tt.absent {
				if strings.Contains(out, "  "+f+" ") || strings.Contains(out, "  "+f+"\n") {
					t.Errorf("help lists serve's flag %s:\n%s", f, out)
				}
			}
		})
	}
}
