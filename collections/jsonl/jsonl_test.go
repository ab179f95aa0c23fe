package jsonl_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"lastro/collections/jsonl"
)

func TestConcurrentAppendsAreWholeLines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.jsonl")
	f := jsonl.Open(path)
	defer f.Close()
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := f.Append(map[string]int{"w": w, "i": i}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	seen := map[[2]int]bool{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var m map[string]int
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("torn line %q: %v", sc.Text(), err)
		}
		seen[[2]int{m["w"], m["i"]}] = true
	}
	if len(seen) != writers*each {
		t.Fatalf("%d distinct lines, want %d", len(seen), writers*each)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", st.Mode(), err)
	}
}

func TestAppendAllWritesABatchContiguouslyOrNothing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.jsonl")
	f := jsonl.Open(path)
	defer f.Close()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			batch := make([]any, 10)
			for i := range batch {
				batch[i] = map[string]int{"w": w, "i": i}
			}
			if err := f.AppendAll(batch...); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// A value that cannot be encoded fails the whole batch.
	if err := f.AppendAll(map[string]int{"w": 9}, func() {}); err == nil {
		t.Fatal("encoded a func")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []map[string]int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]int
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("torn line %q", sc.Text())
		}
		lines = append(lines, m)
	}
	if len(lines) != 40 {
		t.Fatalf("%d lines, want 40", len(lines))
	}
	for i, m := range lines {
		if m["i"] != i%10 || m["w"] != lines[i-i%10]["w"] {
			t.Fatalf("line %d = %v: a batch was interleaved", i, m)
		}
	}
}
