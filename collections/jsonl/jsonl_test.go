package jsonl_test

import (
	"bufio"
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
