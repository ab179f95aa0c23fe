package main

import (
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataDirIsPrivate: lastro serve on a fresh data directory creates it
// 0700, and nothing it writes there (the store's files and folder, the
// admin token, the data key, the outbox and bureau files) is readable by
// the group or others.
func TestDataDirIsPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, map[string]string{"LASTRO_DATA_DIR": dir})
	// A tenant makes the store write tables and items.
	adminToken := readAdminToken(t, dir)
	req, err := http.NewRequest(http.MethodPost, "http://"+s.addr+"/v1/tenants", strings.NewReader(`{"tenantId":"t-modes","name":"Modes"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create tenant: %d", resp.StatusCode)
	}
	assertPrivate(t, dir, []string{"admin-token", "data.key", "ddb"})
}

// TestDDBServeDataDirIsPrivate: the standalone store creates its data
// directory 0700 and its files 0600 too.
func TestDDBServeDataDirIsPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "ddb")
	startChild(t, map[string]string{}, "embedded DynamoDB store listening", "ddb", "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	assertPrivate(t, dir, []string{"LOCK"})
}

// assertPrivate checks dir is 0700, holds the named entries, and that no
// file or folder under it grants anything to the group or others.
func assertPrivate(t *testing.T, dir string, want []string) {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		seen[rel] = true
		if path == dir && info.Mode().Perm() != 0o700 {
			t.Errorf("data directory mode %v, want 0700", info.Mode().Perm())
		}
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v: readable beyond its owner", rel, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("%s not written in the data directory (saw %v): the check proves nothing", w, seen)
		}
	}
}
