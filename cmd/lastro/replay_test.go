package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/signature"
	"lastro/stream"
)

// receiver is a tenant's events endpoint: it verifies every batch's
// signature with the tenant's secret and, while up, keeps the event ids.
type receiver struct {
	t      *testing.T
	mu     sync.Mutex
	secret string
	down   bool
	ids    []string
	types  []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err := signature.Verify(rc.secret, r.Header.Get(signature.TimestampHeader), r.Header.Get(signature.SignatureHeader), body, time.Now()); err != nil {
		rc.t.Errorf("signature: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if rc.down {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var b stream.WebhookBody
	if err := json.Unmarshal(body, &b); err != nil {
		rc.t.Errorf("body: %v", err)
	}
	for _, e := range b.Events {
		rc.ids, rc.types = append(rc.ids, e.ID), append(rc.types, e.Type)
	}
}

// take returns the ids received so far and forgets them.
func (rc *receiver) take() (ids, types []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	ids, types = rc.ids, rc.types
	rc.ids, rc.types = nil, nil
	return ids, types
}

func (rc *receiver) setDown(down bool) {
	rc.mu.Lock()
	rc.down = down
	rc.mu.Unlock()
}

// deadLetterTheStream reads the data directory's stream with a consumer
// whose translator refuses every record that has events — as if their
// publisher had been down when they were read — so dead has real records
// the current translator accepts; a poison record follows them. It
// returns the ids of the events the refused records translate to.
func deadLetterTheStream(t *testing.T, dir, dead string) []string {
	t.Helper()
	ctx := context.Background()
	fs := newFlagSet("test", "", io.Discard)
	cfg, err := loadConfig(fs, []string{"--data-dir", dir, "--admin-token", testAdminToken, "--egress-allow", "loopback"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	a, err := newApp(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	dl := stream.NewDeadLetterFile(dead)
	defer dl.Close()
	var mu sync.Mutex // shards may be read at once
	var want []string
	refuse := func(r stream.Record) ([]stream.Event, error) {
		evs, err := stream.Translate(r)
		if err != nil || len(evs) == 0 {
			return evs, err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, e := range evs {
			want = append(want, e.ID)
		}
		return nil, errors.New("stream: publish: kafka: broker unreachable")
	}
	c, err := stream.New(stream.Config{Kit: a.Kit, Streams: a.streams, Translate: refuse, Publisher: stream.Fanout{},
		DeadLetter: dl, Clock: a.Clock})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dead == 0 || len(want) == 0 {
		t.Fatalf("drain %+v: no record was dead-lettered", rep)
	}
	poison := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "T#t-replay#D#0123456789abcdef"}, "SK": &types.AttributeValueMemberS{Value: "CT#C-9"},
		"type": &types.AttributeValueMemberS{Value: "CONTRACT"}, "outstandingCents": &types.AttributeValueMemberS{Value: "lots"},
	}
	if err := dl.Dead(ctx, stream.Record{EventID: "poison", Sequence: "1", Name: stream.Modify, New: poison, At: time.Now()},
		stream.ErrUndecodable); err != nil {
		t.Fatal(err)
	}
	// Sorted: shards read at once interleave their records.
	return slices.Sorted(slices.Values(want))
}

// replayRun runs lastro stream replay in process and decodes its report.
func replayRun(t *testing.T, args ...string) replayReport {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), append([]string{"stream", "replay", "--admin-token", testAdminToken}, args...), &out, &errOut); err != nil {
		t.Fatalf("stream replay %v: %v\n%s", args, err, errOut.String())
	}
	var rep replayReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report %q: %v", out.String(), err)
	}
	return rep
}

// TestStreamReplaySendsDeadLettersOn: records dead-lettered while their
// publisher was down are replayed through the events file and the
// tenant's webhook, the poison one kept; the webhook being down then,
// its events land in the webhook dead letter, and replaying that posts
// them, signed, once the endpoint is back. Inputs are never changed, and
// a second replay yields the same event ids.
func TestStreamReplaySendsDeadLettersOn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rc := &receiver{t: t, down: true}
	recv := httptest.NewServer(rc)
	defer recv.Close()

	// The endpoint is an httptest server on loopback: allowed explicitly.
	// The consumer off: the records wait in the stream for the test to dead-letter them.
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": dir, "LASTRO_ADMIN_TOKEN": testAdminToken, "LASTRO_EGRESS_ALLOW": "loopback", "LASTRO_STREAM": "off"})
	call := func(method, path, token, body string, want int) map[string]any {
		t.Helper()
		status, out := doJSON(t, method, "http://"+s.addr+path, token, body)
		if status != want {
			t.Fatalf("%s %s: %d %v, want %d", method, path, status, out, want)
		}
		return out
	}
	k := call(http.MethodPost, "/v1/tenants", testAdminToken, `{"tenantId":"t-replay","name":"Crediário t-replay"}`, http.StatusCreated)["apiKeys"].(map[string]any)
	sup, op := k["supervisor"].(string), k["operator"].(string)
	secret := call(http.MethodPut, "/v1/tenant/events-webhook", sup, `{"url":"`+recv.URL+`/events"}`, http.StatusOK)["secret"].(string)
	rc.mu.Lock()
	rc.secret = secret
	rc.mu.Unlock()
	dk := call(http.MethodPost, "/v1/debtors", op, `{"document":"529.982.247-25","name":"Pessoa Sintética"}`, http.StatusCreated)["debtorKey"].(string)
	call(http.MethodPost, "/v1/debtors/"+dk+"/contracts", op, `{"contractId":"C-1","productCode":"CREDIARIO_12X","installments":[
		{"seq":1,"dueDate":"2026-01-10","principalCents":90000,"interestCents":10000}]}`, http.StatusCreated)
	call(http.MethodPost, "/v1/debtors/"+dk+"/contracts/C-1/write-off", sup, `{"reason":"UNCOLLECTIBLE"}`, http.StatusOK)
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGINT: %v", err)
	}

	dead := filepath.Join(t.TempDir(), "dead-letter.jsonl")
	want := deadLetterTheStream(t, dir, dead)
	before, err := os.ReadFile(dead)
	if err != nil {
		t.Fatal(err)
	}
	common := []string{"--data-dir", dir, "--egress-allow", "loopback"}

	// The records, the tenant's endpoint still down.
	rep := replayRun(t, append([]string{"--records", dead}, common...)...)
	if rep.Read != rep.Replayed+1 || rep.Dead != 1 || rep.Events != len(want) || rep.Remaining != dead+".remaining" {
		t.Errorf("records replay %+v, want every record but the poison replayed, %d events", rep, len(want))
	}
	published := slices.Sorted(slices.Values(eventIDs(t, filepath.Join(dir, "events.jsonl"))))
	if !slices.Equal(published, want) {
		t.Errorf("events.jsonl has %v, want each replayed event once: %v", published, want)
	}
	left, deads, err := stream.ReadDeadLetters(rep.Remaining)
	if err != nil || len(left) != 1 || left[0].EventID != "poison" || !strings.Contains(deads[0].Cause, "cannot be translated") {
		t.Errorf("survivors %+v %+v (%v), want the poison record with its cause", left, deads, err)
	}
	if ids, _ := rc.take(); len(ids) != 0 {
		t.Errorf("the endpoint, down, accepted %v", ids)
	}

	// The webhook's dead letter, the endpoint back.
	rc.setDown(false)
	hookDead := filepath.Join(dir, "webhook-dead-letter.jsonl")
	rep = replayRun(t, append([]string{"--events", hookDead, "--out", filepath.Join(t.TempDir(), "left.jsonl")}, common...)...)
	if rep.Replayed != len(want) || rep.Dead != 0 {
		t.Errorf("events replay %+v, want %d delivered, none left", rep, len(want))
	}
	ids, types := rc.take()
	if ids = slices.Sorted(slices.Values(ids)); !slices.Equal(ids, want) {
		t.Errorf("the endpoint received %v, want %v once", ids, want)
	}
	if !slices.Contains(types, stream.WrittenOff) {
		t.Errorf("the endpoint received %v, no WrittenOff", types)
	}
	if evs, err := stream.ReadDeadEvents(rep.Remaining); err != nil || len(evs) != 0 {
		t.Errorf("survivors %v (%v), want none", evs, err)
	}

	// Again: the same ids, the input untouched.
	replayRun(t, append([]string{"--records", dead, "--events-file", filepath.Join(t.TempDir(), "again.jsonl")}, common...)...)
	if ids, _ := rc.take(); !slices.Equal(slices.Sorted(slices.Values(ids)), want) {
		t.Errorf("a second replay posted %v, want the same ids %v", ids, want)
	}
	if after, _ := os.ReadFile(dead); !bytes.Equal(after, before) {
		t.Error("replay changed its input")
	}
}

func eventIDs(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		var e stream.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ids = append(ids, e.ID)
	}
	return ids
}

// TestStreamReplayRefusesBadArguments: every bad argument is a clear
// error before the data directory is opened.
func TestStreamReplayRefusesBadArguments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	records := write("dead-letter.jsonl", `{"eventId":"e1","sequence":"7","name":"MODIFY","at":"2026-09-21T13:00:00Z","cause":"x"}`+"\n")
	events := write("webhook-dead-letter.jsonl", `{"tenant":"t1","cause":"x","event":{"id":"7-0","type":"WrittenOff","tenant":"t1"}}`+"\n")
	garbage := write("garbage.jsonl", "not json\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no input", nil, "needs --records FILE or --events FILE"},
		{"both inputs", []string{"--records", records, "--events", events}, "not both"},
		{"missing file", []string{"--records", filepath.Join(dir, "none.jsonl")}, "none.jsonl: no such file or directory"},
		{"a directory", []string{"--events", dir}, "is not a regular file"},
		{"out is the input", []string{"--records", records, "--out", records}, "is the input"},
		{"publisher flag with events", []string{"--events", events, "--kafka", "127.0.0.1:9092"}, "-kafka only applies to --records"},
		{"events file as records", []string{"--records", events}, "line 1 is not a dead record"},
		{"records file as events", []string{"--events", records}, "line 1 is not a dead event"},
		{"garbage", []string{"--records", garbage}, "dead letter line 1"},
		{"no publisher", []string{"--records", records, "--no-file"}, "no publisher"},
		{"stray argument", []string{"--records", records, "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := run(context.Background(), append([]string{"stream", "replay", "--data-dir", ":memory:"}, tt.args...), &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one holding %q", err, tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("a refused replay printed %q", out.String())
			}
		})
	}
	t.Cleanup(func() {
		// After the cases: no survivors' file, and no temporary one left.
		left, err := filepath.Glob(filepath.Join(dir, "*remaining*"))
		hidden, _ := filepath.Glob(filepath.Join(dir, ".*"))
		if err != nil || len(left)+len(hidden) > 0 {
			t.Errorf("refused replays left %v %v (%v)", left, hidden, err)
		}
	})
	code, _, stderr := runChild(t, map[string]string{"LASTRO_DATA_DIR": ":memory:"}, "stream", "replay", "--records", records, "--events", events)
	failsOnOneLine(t, code, stderr, "not both")
}
