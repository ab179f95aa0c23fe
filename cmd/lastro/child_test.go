package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testAdminToken is an admin token of the minimum length serve accepts.
const testAdminToken = "adm-test-0123456789abcdef0123456"

// childEnv marks a re-executed test binary that runs lastro's main.
const childEnv = "LASTRO_TEST_RUN_MAIN"

// TestMain lets tests run the binary itself as a child process: the test
// binary re-executed with childEnv set runs main with the arguments it got.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Args = append([]string{"lastro"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childCmd is lastro with args in a child process, with only the given
// LASTRO_* variables set (the parent's are not inherited).
func childCmd(ctx context.Context, t *testing.T, env map[string]string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LASTRO_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, childEnv+"=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// runChild runs lastro to completion and returns its exit code and output.
func runChild(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := childCmd(ctx, t, env, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	}
	if err != nil {
		t.Fatalf("run lastro %v: %v", args, err)
	}
	return 0, out.String(), errOut.String()
}

// server is a child lastro serve, running until the test ends.
type server struct {
	cmd  *exec.Cmd
	addr string // the API's listen address
}

// startServe starts lastro serve (API on a free loopback port) and waits
// for its "lastro listening" log line.
func startServe(t *testing.T, env map[string]string, args ...string) *server {
	t.Helper()
	if env["LASTRO_ADDR"] == "" {
		env["LASTRO_ADDR"] = "127.0.0.1:0"
	}
	return startChild(t, env, "lastro listening", append([]string{"serve"}, args...)...)
}

// readAdminToken reads the admin token serve generated in dir.
func readAdminToken(t *testing.T, dir string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "admin-token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(raw))
}

// startChild starts lastro with args, running until the test ends, and
// waits for the JSON log line whose msg is listening; its addr field is
// the server's address.
func startChild(t *testing.T, env map[string]string, listening string, args ...string) *server {
	t.Helper()
	cmd := childCmd(context.Background(), t, env, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if !sent && json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == listening {
				found <- line.Addr
				sent = true
			}
		}
		if !sent {
			close(found)
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case addr, ok := <-found:
		if !ok {
			t.Fatalf("lastro %v exited before listening", args)
		}
		s.addr = addr
	case <-time.After(5 * time.Minute):
		t.Fatalf("lastro %v did not start listening", args)
	}
	return s
}

func (s *server) String() string { return fmt.Sprintf("pid %d on %s", s.cmd.Process.Pid, s.addr) }
