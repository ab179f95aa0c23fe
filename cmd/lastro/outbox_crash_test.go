package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/kit"
	"lastro/ddblocal"
)

// TestKilledServeDeliversEveryContactOnce is the outbox's crash test
// (ADR 0062) against the real binary over HTTP: a portfolio with more
// than a thousand contracts due today, lastro serve killed with SIGKILL
// three times — mid-run after 300 outbox lines, at the restart while the
// dispatcher's start pass delivers what the first kill left, and mid-run
// again after 700 lines — then restarted and run to the end. In the end
// every contract messaged has exactly one line in the outbox, no message
// attempt is PENDING (a call's is, for the desk, with no line; a step
// that joined another contract's contact has none) and no outbox entry
// is left, every debtor's day counter equals its allowed evidence
// (joined attempts spend nothing), each line is a SENT attempt and no
// bureau notice went out twice.
func TestKilledServeDeliversEveryContactOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("seeds 1,400 debtors and kills lastro three times")
	}
	dir := t.TempDir()
	env := map[string]string{"LASTRO_DATA_DIR": dir, "LASTRO_ADMIN_TOKEN": testAdminToken, "LASTRO_NOW": workerNow, "LASTRO_SHARDS": "4",
		"LASTRO_SCHEDULER": "off", "LASTRO_STREAM": "off"}
	code, stdout, stderr := runChild(t, env, "demo", "seed", "--debtors", "1400")
	if code != 0 {
		t.Fatalf("demo seed: exit %d: %s", code, stderr)
	}
	sup := ""
	for _, l := range strings.Split(stdout, "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "supervisor" {
			sup = f[1]
		}
	}
	if sup == "" {
		t.Fatalf("no supervisor key in:\n%s", stdout)
	}
	outbox := filepath.Join(dir, "outbox.jsonl")
	lines := func() int {
		b, _ := os.ReadFile(outbox)
		return bytes.Count(b, []byte{'\n'})
	}
	client := &http.Client{Timeout: 5 * time.Minute}
	run := func(s *server) (map[string]any, error) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+s.addr+"/v1/agenda/run", strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+sup)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return out, fmt.Errorf("run: %d %v", resp.StatusCode, out)
		}
		return out, nil
	}
	kill := func(s *server) {
		t.Helper()
		if err := s.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		s.cmd.Wait()
	}
	// runUntil starts a run and kills the server once the outbox has n
	// lines (or the run ended first: then it is not killed).
	runUntil := func(s *server, n int) bool {
		t.Helper()
		done := make(chan error, 1)
		go func() { _, err := run(s); done <- err }()
		for {
			select {
			case err := <-done:
				t.Logf("the run ended before %d lines (%d): %v", n, lines(), err)
				return false
			default:
			}
			if lines() >= n {
				kill(s)
				t.Logf("killed after %d outbox lines", lines())
				<-done
				return true
			}
			time.Sleep(2 * time.Millisecond)
		}
	}

	s := startServe(t, copyEnv(env))
	if !runUntil(s, 300) {
		t.Fatal("the first run ended before its kill point: seed more")
	}
	// The restart's dispatcher starts delivering what the kill left:
	// killed again as soon as it listens.
	s = startServe(t, copyEnv(env))
	kill(s)
	t.Logf("killed at the restart, %d outbox lines", lines())
	s = startServe(t, copyEnv(env))
	runUntil(s, 700)
	s = startServe(t, copyEnv(env))
	executed := 0
	for i := range 5 {
		out, err := run(s)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, v := range out["executed"].(map[string]any) {
			n += int(v.(float64))
		}
		executed += n
		t.Logf("final run %d: executed %v, busy %v", i+1, out["executed"], out["busy"])
		if n == 0 && len(out["busy"].([]any)) == 0 {
			break
		}
	}
	// The dispatcher's start pass may still be delivering: wait for the
	// outbox to settle, then stop the server cleanly.
	for last := -1; last != lines(); time.Sleep(time.Second) {
		last = lines()
	}
	s.cmd.Process.Signal(os.Interrupt)
	s.cmd.Wait()

	// The outbox file: one line per attempt, one attempt per contract.
	f, err := os.Open(outbox)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	perContract, perAttempt := map[string]int{}, map[string]int{}
	notices := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m struct{ AttemptID, ContractID, Action string }
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("outbox line %q: %v", sc.Text(), err)
		}
		perContract[m.ContractID]++
		perAttempt[m.AttemptID]++
		if m.Action == "BUREAU_NOTICE" {
			notices[m.ContractID]++
		}
	}
	for c, n := range perContract {
		if n != 1 {
			t.Errorf("contract %s: %d messages", c, n)
		}
	}
	for c, n := range notices {
		if n != 1 {
			t.Errorf("contract %s: %d bureau notices", c, n)
		}
	}

	// The table: no PENDING attempt, no outbox entry, counters = evidence.
	st, err := ddblocal.Open(ddblocal.Options{Dir: filepath.Join(dir, "ddb"), TTLSweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k := kit.New(kit.NewEmbeddedClient(kit.InProcessEndpoint, kit.InProcess(st.Handler())), "lastro")
	allowed, counters := map[string]int{}, map[string]int{}
	contacted := map[string]bool{} // contracts with an allowed attempt: sent, called or joined
	sent, entries, calls, joined := 0, 0, 0, 0
	if err := k.MaintenanceScan(context.Background(), "test-audit", 0, 1, func(it kit.Item) error {
		var v struct {
			PK, SK, Type, LocalDate, AttemptID, Outcome string
			ContractID, Channel                         string
			Allowed                                     bool
			Attempts                                    int
		}
		if err := attributevalue.UnmarshalMap(it, &v); err != nil {
			return err
		}
		switch v.Type {
		case "CONTACT":
			if !v.Allowed {
				break
			}
			contacted[v.ContractID] = true
			if v.Outcome == "JOINED" {
				// Another contract's attempt on its channel is the day's
				// contact (ADR 0066): nothing spent, nothing sent.
				joined++
				break
			}
			allowed[v.PK+" "+v.LocalDate]++
			switch {
			case v.Channel == "CALL" && v.Outcome == "PENDING":
				// A call is the desk's to make: its task is on the call
				// list and its attempt PENDING until the desk records it;
				// it is never a message in the outbox.
				calls++
				if perAttempt[v.AttemptID] != 0 {
					t.Errorf("call attempt %s has %d outbox lines", v.AttemptID, perAttempt[v.AttemptID])
				}
			case v.Outcome == "SENT":
				sent++
				if perAttempt[v.AttemptID] != 1 {
					t.Errorf("attempt %s SENT with %d outbox lines", v.AttemptID, perAttempt[v.AttemptID])
				}
			default:
				t.Errorf("attempt %s left %s", v.AttemptID, v.Outcome)
			}
		case "LIMIT":
			counters[v.PK+" "+v.LocalDate] = v.Attempts
		case "OUTBOX":
			entries++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(contacted) < 1000 {
		t.Fatalf("%d contracts contacted (%d sent, %d calls, %d joined), want at least 1,000 due", len(contacted), sent, calls, joined)
	}
	if entries != 0 {
		t.Errorf("%d outbox entries left", entries)
	}
	for day, n := range counters {
		if allowed[day] != n {
			t.Errorf("%s: counter %d, allowed evidence %d", day, n, allowed[day])
		}
	}
	if sent != len(perAttempt) {
		t.Errorf("%d attempts SENT, %d in the outbox file", sent, len(perAttempt))
	}
	t.Logf("%d contracts messaged once, %d called, %d joined, %d notices, %d counters, %d steps in the final runs", len(perContract), calls, joined,
		len(notices), len(counters), executed)
}

// copyEnv is a copy of env (startServe adds the address to its map).
func copyEnv(env map[string]string) map[string]string {
	out := make(map[string]string, len(env)+1)
	for k, v := range env {
		out[k] = v
	}
	return out
}
