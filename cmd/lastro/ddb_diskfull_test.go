package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"lastro/ddblocal"
)

// TestDdbServeOnFullDiskFailsFast: lastro ddb serve on a full disk exits
// at once, non-zero, with one line saying the disk is full, instead of
// spinning and logging "no space left" without opening its port (issue
// 25, finding 3; ADR 0059). The disk is a tmpfs the test mounts; the test
// skips where it cannot mount.
func TestDdbServeOnFullDiskFailsFast(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("mounting a tmpfs needs Linux")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256m,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (needs root and mount(8)): %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	dir := filepath.Join(mnt, "ddb")
	st, err := ddblocal.Open(ddblocal.Options{Dir: dir, TTLSweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for err == nil {
		_, err = f.Write(chunk)
	}
	for err = nil; err == nil; {
		_, err = f.Write(chunk[:512])
	}
	f.Close()

	code, _, stderr := runChild(t, nil, "ddb", "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	if code == 0 {
		t.Fatalf("lastro ddb serve on a full disk exited 0; stderr:\n%s", stderr)
	}
	t.Logf("exit %d, stderr: %s", code, stderr)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) > 3 || !strings.Contains(stderr, "disk full") {
		t.Errorf("lastro ddb serve on a full disk wrote %d lines, want one saying the disk is full:\n%s", len(lines), stderr)
	}
}
