package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
)

func open(t *testing.T, dir string) *DB {
	t.Helper()
	d, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestCommitIsVisibleOnlyOnceDurable(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"", t.TempDir()} {
		d := open(t, dir)
		before := d.Acquire()
		b := d.NewBatch()
		b.Set([]byte("k"), []byte("v"))
		if err := d.ApplyUnsynced(b, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Acquire().Get([]byte("k")); !errors.Is(err, ErrNotFound) {
			t.Errorf("durable=%v: unsettled write visible to readers: %v", d.Durable(), err)
		}
		if err := d.Settle(); err != nil {
			t.Fatal(err)
		}
		v := d.Acquire()
		if got, err := v.Get([]byte("k")); err != nil || string(got) != "v" {
			t.Errorf("durable=%v: after Settle Get = %q, %v", d.Durable(), got, err)
		}
		v.Release()
		if _, err := before.Get([]byte("k")); !errors.Is(err, ErrNotFound) {
			t.Errorf("an older view changed: %v", err)
		}
		before.Release()
	}
}

func TestCommitRefusedByPrepareWritesNothing(t *testing.T) {
	t.Parallel()
	d := open(t, "")
	refuse := errors.New("refused")
	b := d.NewBatch()
	b.Set([]byte("k"), []byte("v"))
	if err := d.Commit(b, func() error { return refuse }); !errors.Is(err, refuse) {
		t.Fatalf("Commit = %v, want %v", err, refuse)
	}
	if d.Has([]byte("k")) {
		t.Error("refused commit applied")
	}
	b.Reset()
	b.Set([]byte("k"), []byte("v"))
	if err := d.Commit(b, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	v := d.Acquire()
	defer v.Release()
	if _, err := v.Get([]byte("k")); err != nil {
		t.Errorf("committed key not visible: %v", err)
	}
}

func TestCommitAfterCloseIsClosed(t *testing.T) {
	t.Parallel()
	d, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Pipeline.close()
	b := d.NewBatch()
	b.Set([]byte("k"), []byte("v"))
	if err := d.Commit(b, func() error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Commit after close = %v, want %v", err, ErrClosed)
	}
	d.db.Close()
}

func TestLocks(t *testing.T) {
	t.Parallel()
	var l Locks
	if !l.Acquire("a", true) {
		t.Fatal("free key refused")
	}
	if l.Acquire("a", true) {
		t.Error("a transaction acquired a key another transaction holds")
	}
	done := make(chan struct{})
	go func() {
		l.Acquire("a", false) // waits
		l.Release("a")
		close(done)
	}()
	l.Release("a")
	<-done
	if !l.Acquire("a", true) {
		t.Error("released key refused")
	}
}

func TestBulk(t *testing.T) {
	t.Parallel()
	d := open(t, "")
	src := d.NewBatch()
	for i := range 1000 {
		src.Set(RecordKey(1, uint64(i)), fmt.Appendf(nil, "%d", i%2))
	}
	if err := src.Commit(); err != nil {
		t.Fatal(err)
	}
	lo, hi := RecordSpan(1)
	odd, err := d.Keys(context.Background(), lo, hi, func(_, v []byte) (bool, error) { return string(v) == "1", nil })
	if err != nil || len(odd) != 500 || RecordSeq(odd[0]) != 1 {
		t.Fatalf("Keys = %d keys (first %x), %v; want 500 from seq 1", len(odd), odd[0], err)
	}
	snap := d.NewSnapshot()
	defer snap.Close()
	flushes := 0
	err = d.Fill(context.Background(), snap, lo, hi, func(b *Batch, k, v []byte) error {
		b.Set(RecordKey(2, RecordSeq(k)), v)
		return nil
	}, func() { flushes++ })
	if err != nil || flushes != 1 {
		t.Fatalf("Fill = %v after %d flushes", err, flushes)
	}
	lo2, hi2 := RecordSpan(2)
	copied, err := d.Keys(context.Background(), lo2, hi2, nil)
	if err != nil || len(copied) != 1000 {
		t.Errorf("copied %d keys, %v; want 1000", len(copied), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Keys(ctx, lo, hi, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Keys on a cancelled context = %v", err)
	}
	if err := d.Fill(ctx, snap, lo, hi, func(*Batch, []byte, []byte) error { return nil }, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Fill on a cancelled context = %v", err)
	}
}

func TestKeyLayout(t *testing.T) {
	t.Parallel()
	lo, hi := TableSpan(5)
	tests := []struct {
		name string
		key  []byte
		in   bool
	}{
		{"base table", SpaceKey(5, 0), true},
		{"an index", SpaceKey(5, 3), true},
		{"next table", SpaceKey(6, 0), false},
		{"previous table", SpaceKey(4, 0xFFFF), false},
		{"stream record", RecordKey(5, 1), false},
	}
	for _, tt := range tests {
		if in := bytes.Compare(tt.key, lo) >= 0 && bytes.Compare(tt.key, hi) < 0; in != tt.in {
			t.Errorf("%s: in table span = %v, want %v", tt.name, in, tt.in)
		}
	}
	if id, ix := DataKeyTable(SpaceKey(9, 4)); id != 9 || ix != 4 {
		t.Errorf("DataKeyTable = %d, %d", id, ix)
	}
	if got := HorizonTable(HorizonKey(77)); got != 77 {
		t.Errorf("HorizonTable = %d", got)
	}
	if got := RecordSeq(RecordKey(3, 1<<40)); got != 1<<40 {
		t.Errorf("RecordSeq = %d", got)
	}
	if !bytes.Equal(PrefixEnd([]byte{1, 0xFF}), []byte{2}) || PrefixEnd([]byte{0xFF}) != nil {
		t.Error("PrefixEnd")
	}
}
