package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveLog starts lastro serve with env and returns every log line it
// wrote up to and including its "lastro listening" line; the server runs
// until the test ends.
func serveLog(t *testing.T, env map[string]string) []map[string]any {
	t.Helper()
	env["LASTRO_ADDR"] = "127.0.0.1:0"
	cmd := childCmd(context.Background(), t, env, "serve")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	lines := make(chan []map[string]any, 1)
	go func() {
		var got []map[string]any
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			got = append(got, line)
			if line["msg"] == "lastro listening" {
				lines <- got
				for sc.Scan() { // drain, so the child never blocks on its log
				}
				return
			}
		}
		close(lines)
	}()
	select {
	case got, ok := <-lines:
		if !ok {
			t.Fatal("lastro serve exited before listening")
		}
		return got
	case <-time.After(2 * time.Minute):
		t.Fatal("lastro serve did not start listening")
	}
	return nil
}

// TestServeTightensAnOpenDataDir: a data directory made by hand under
// umask 022 (0755) holds the data key and the admin token once serve has
// run; serve makes it 0700 and says so in one WARN line.
func TestServeTightensAnOpenDataDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	lines := serveLog(t, map[string]string{"LASTRO_DATA_DIR": dir, "LASTRO_SCHEDULER": "off"})
	var warned []map[string]any
	for _, l := range lines {
		if msg, _ := l["msg"].(string); strings.Contains(msg, "data directory") && strings.Contains(msg, "0700") {
			warned = append(warned, l)
		}
	}
	if len(warned) != 1 || warned[0]["level"] != "WARN" || warned[0]["was"] != "0755" {
		t.Errorf("log lines about the directory's mode: %v, want one WARN naming 0755", warned)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o700 {
		t.Errorf("data directory mode %v after serve, want 0700", info.Mode().Perm())
	}
	assertPrivate(t, dir, []string{"admin-token", "data.key", "ddb"})
}

// TestServeRefusesAnOpenDataDirOfAnotherUser: a 0755 directory that is
// not ours could be tightened only by root, taking it from its owner, and
// its owner could read the key: serve refuses it on one line and writes
// nothing there. Making another user's directory needs root.
func TestServeRefusesAnOpenDataDirOfAnotherUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil { // nobody
		t.Fatal(err)
	}
	code, _, stderr := runChild(t, map[string]string{"LASTRO_DATA_DIR": dir, "LASTRO_ADDR": "127.0.0.1:0"}, "serve")
	failsOnOneLine(t, code, stderr, "the data directory "+dir+" is open to group or others (mode 0755) and owned by another user")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(dir); len(entries) != 0 || info.Mode().Perm() != 0o755 {
		t.Errorf("refused directory: mode %v, entries %v; want it untouched", info.Mode().Perm(), entries)
	}
}

// TestServeTightensTheDataDirBesideAnEndpoint: with a DynamoDB endpoint
// the data directory holds no store, but still the data key and the admin
// token, so it is tightened the same way.
func TestServeTightensTheDataDirBesideAnEndpoint(t *testing.T) {
	t.Parallel()
	store := startChild(t, map[string]string{}, "embedded DynamoDB store listening", "ddb", "serve", "--addr", "127.0.0.1:0", "--in-memory")
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	serveLog(t, map[string]string{"LASTRO_DATA_DIR": dir, "LASTRO_SCHEDULER": "off", "LASTRO_DYNAMODB_ENDPOINT": "http://" + store.addr,
		"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_REGION": "us-east-1"})
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o700 {
		t.Errorf("data directory mode %v after serve beside an endpoint, want 0700", info.Mode().Perm())
	}
	assertPrivate(t, dir, []string{"admin-token", "data.key"})
}
