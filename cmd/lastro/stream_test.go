package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestStreamOnceResumesFromItsCheckpoint: lastro stream --once on a
// seeded data directory publishes the seed's events to events.jsonl and
// creates the archive table; a second run finds nothing new.
func TestStreamOnceResumesFromItsCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	common := []string{"--data-dir", dir, "--admin-token", testAdminToken}
	var out, errOut bytes.Buffer
	if err := run(ctx, append([]string{"demo", "seed", "--tenant", "t-stream", "--debtors", "8"}, common...), &out, &errOut); err != nil {
		t.Fatalf("seed: %v\n%s", err, errOut.String())
	}
	report := func() map[string]int {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(ctx, append([]string{"stream", "--once"}, common...), &out, &errOut); err != nil {
			t.Fatalf("stream: %v\n%s", err, errOut.String())
		}
		var r map[string]int
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("report %q: %v", out.String(), err)
		}
		return r
	}
	first := report()
	if first["records"] == 0 || first["events"] == 0 {
		t.Fatalf("first run: %v, want the seed's records and events", first)
	}
	data, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); lines != first["events"] {
		t.Errorf("events.jsonl has %d lines, the report %d events", lines, first["events"])
	}
	if again := report(); again["records"] != 0 || again["events"] != 0 {
		t.Errorf("second run: %v, want nothing new", again)
	}
	out.Reset()
	if err := run(ctx, append([]string{"table", "describe", "--table", "lastro-archive"}, common...), &out, &errOut); err != nil {
		t.Fatalf("describe the archive: %v", err)
	}
	if !strings.Contains(out.String(), "table lastro-archive: ACTIVE") {
		t.Errorf("archive table: %s", out.String())
	}
}

func TestStreamRefusesNoPublisher(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"stream", "--once", "--no-file", "--data-dir", ":memory:", "--admin-token", testAdminToken}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "no publisher") {
		t.Fatalf("stream --no-file alone: %v", err)
	}
}

// TestServeRunsTheStreamConsumerWhenAsked: with LASTRO_STREAM=on, serve
// runs the consumer beside the API — its series are on /metrics, and a
// tenant created through the API leaves the consumer's checkpoint in the
// table — and a SIGINT still stops the process cleanly.
func TestServeRunsTheStreamConsumerWhenAsked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": dir, "LASTRO_ADMIN_TOKEN": testAdminToken, "LASTRO_STREAM": "on"})
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.addr+"/v1/tenants", strings.NewReader(`{"tenantId":"t-s","name":"Crediário t-s"}`))
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create tenant: %v %v", resp, err)
	}
	resp.Body.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + s.addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if m := regexp.MustCompile(`(?m)^lastro_stream_records_total (\d+)`).FindSubmatch(body); m != nil && string(m[1]) != "0" {
			break // the tenant's items went through the consumer
		}
		if time.Now().After(deadline) {
			t.Fatalf("the consumer never processed a record:\n%s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve after SIGINT: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop after SIGINT")
	}
}
