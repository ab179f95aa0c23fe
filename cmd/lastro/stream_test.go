package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"lastro/collections/signature"
	"lastro/stream"
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
		// Once the tenant's items went through the consumer, its lag,
		// throughput and failures are all on the engine's /metrics, the
		// tenants' webhooks among the publishers. The lag of a shard is
		// set when its batch is done, after its records were counted, so
		// every series is waited for, not only the count.
		var missing []string
		if m := regexp.MustCompile(`(?m)^lastro_stream_records_total (\d+)`).FindSubmatch(body); m == nil || string(m[1]) == "0" {
			missing = append(missing, "lastro_stream_records_total > 0")
		}
		for _, series := range []string{
			`(?m)^lastro_stream_lag_seconds\{shard="[^"]+"\} `,
			`(?m)^lastro_stream_events_published_total\{publisher="file",type="BucketChanged"\} `,
			`(?m)^lastro_stream_events_published_total\{publisher="webhook",type="SettlementApplied"\} 0`,
			`(?m)^lastro_stream_publish_failures_total\{publisher="file"\} 0`,
			`(?m)^lastro_stream_publish_failures_total\{publisher="webhook"\} 0`,
			`(?m)^lastro_stream_dead_records_total 0`,
			`(?m)^lastro_stream_dead_events_total 0`,
		} {
			if !regexp.MustCompile(series).Match(body) {
				missing = append(missing, series)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics still lacks %v:\n%s", missing, body)
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

// TestServePostsATenantsEventsToItsWebhook: with LASTRO_STREAM=on, a
// tenant that set PUT /v1/tenant/events-webhook receives its events
// there, signed with the secret the PUT answered.
func TestServePostsATenantsEventsToItsWebhook(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var secret string
	got := make(chan stream.Event, 64)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		sec := secret
		mu.Unlock()
		if err := signature.Verify(sec, r.Header.Get(signature.TimestampHeader), r.Header.Get(signature.SignatureHeader), body, time.Now()); err != nil {
			t.Errorf("signature: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var b stream.WebhookBody
		if err := json.Unmarshal(body, &b); err != nil {
			t.Errorf("body: %v", err)
		}
		for _, e := range b.Events {
			select {
			case got <- e:
			default: // the test has what it waits for, or stopped waiting
			}
		}
	}))
	defer recv.Close()
	// The endpoint is an httptest server on loopback: allowed explicitly.
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": t.TempDir(), "LASTRO_ADMIN_TOKEN": testAdminToken, "LASTRO_STREAM": "on",
		"LASTRO_EGRESS_ALLOW": "loopback"})
	call := func(method, path, token, body string, want int) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+s.addr+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %v, want %d", method, path, resp.StatusCode, out, want)
		}
		return out
	}
	created := call(http.MethodPost, "/v1/tenants", testAdminToken, `{"tenantId":"t-hook","name":"Crediário t-hook"}`, http.StatusCreated)
	k := created["apiKeys"].(map[string]any)
	sup, op := k["supervisor"].(string), k["operator"].(string)
	set := call(http.MethodPut, "/v1/tenant/events-webhook", sup, `{"url":"`+recv.URL+`/events"}`, http.StatusOK)
	mu.Lock()
	secret = set["secret"].(string)
	mu.Unlock()
	dk := call(http.MethodPost, "/v1/debtors", op, `{"document":"529.982.247-25","name":"Pessoa Sintética"}`, http.StatusCreated)["debtorKey"].(string)
	call(http.MethodPost, "/v1/debtors/"+dk+"/contracts", op, `{"contractId":"C-1","productCode":"CREDIARIO_12X","installments":[
		{"seq":1,"dueDate":"2026-01-10","principalCents":90000,"interestCents":10000}]}`, http.StatusCreated)
	call(http.MethodPost, "/v1/debtors/"+dk+"/contracts/C-1/write-off", sup, `{"reason":"UNCOLLECTIBLE"}`, http.StatusOK)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case e := <-got:
			if e.Tenant != "t-hook" {
				t.Fatalf("event of tenant %s", e.Tenant)
			}
			if e.Type == stream.WrittenOff && e.ContractID == "C-1" {
				return
			}
		case <-deadline:
			t.Fatal("the tenant's webhook never got the WrittenOff event")
		}
	}
}
