//go:build linux

package main

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// listeningPorts returns the TCP ports pid listens on: its socket file
// descriptors matched against the LISTEN entries of /proc/net/tcp{,6}.
func listeningPorts(t *testing.T, pid int) []int {
	t.Helper()
	fds, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/fd/*")
	if err != nil {
		t.Fatal(err)
	}
	sockets := map[string]bool{}
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && strings.HasPrefix(link, "socket:[") {
			sockets[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	if len(sockets) == 0 {
		t.Fatalf("pid %d has no socket at all: the fd table was not read", pid)
	}
	var ports []int
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		raw, err := os.ReadFile(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !sockets[f[9]] { // 0A: TCP_LISTEN
				continue
			}
			_, hexPort, _ := strings.Cut(f[1], ":")
			port, err := strconv.ParseInt(hexPort, 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			ports = append(ports, int(port))
		}
	}
	return ports
}

// TestServeOpensOnlyTheAPIPort: by default the engine reaches its embedded
// store in process, so a running lastro serve listens on the API's port
// and nothing else; --store-addr (the control) adds the store's.
func TestServeOpensOnlyTheAPIPort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		args      []string
		listening int
	}{
		{"default", nil, 1},
		{"store asked to listen", []string{"--store-addr", "127.0.0.1:0"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := startServe(t, map[string]string{"LASTRO_DATA_DIR": t.TempDir(), "LASTRO_ADMIN_TOKEN": testAdminToken}, tt.args...)
			resp, err := http.Get("http://" + s.addr + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("readyz: %d", resp.StatusCode)
			}
			_, apiPort, _ := net.SplitHostPort(s.addr)
			ports := listeningPorts(t, s.cmd.Process.Pid)
			if len(ports) != tt.listening || !slices.Contains(ports, mustAtoi(t, apiPort)) {
				t.Fatalf("%s listens on %v, want %d port(s) including the API's %s", s, ports, tt.listening, apiPort)
			}
		})
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
