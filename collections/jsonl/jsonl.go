// Package jsonl appends JSON lines to a file durably, with group commit:
// the local stand-ins for a messaging provider and a credit bureau (the
// contact outbox, the bureau file) write one line per record, and
// concurrent writers share one fsync instead of queueing one each.
package jsonl

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sync"
)

// File is an append-only JSON-lines file, created 0600 (its lines may hold
// recipients' addresses: it is not a log). Safe for concurrent use.
type File struct {
	path string

	mu      sync.Mutex // guards f and written
	f       *os.File
	written uint64 // writes so far (one per Append or AppendAll)

	syncMu sync.Mutex // one fsync at a time; guards synced
	synced uint64     // writes known to be on disk
}

// Open returns the file at path; it is created on the first Append.
func Open(path string) *File { return &File{path: path} }

// Append writes v as one JSON line and returns once it is on disk. Lines
// written while another writer's fsync runs are synced together by the
// next one.
func (f *File) Append(v any) error { return f.AppendAll(v) }

// AppendAll writes each of vs as one JSON line, all in one write, and
// returns once they are on disk: a batch costs one fsync, not one per
// line.
func (f *File) AppendAll(vs ...any) error {
	var buf []byte
	for _, v := range vs {
		line, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("jsonl: encode: %w", err)
		}
		buf = append(append(buf, line...), '\n')
	}
	if len(vs) == 0 {
		return nil
	}
	var err error
	f.mu.Lock()
	if f.f == nil {
		if f.f, err = os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err != nil {
			f.mu.Unlock()
			return fmt.Errorf("jsonl: open: %w", err)
		}
	}
	if _, err := f.f.Write(buf); err != nil {
		f.mu.Unlock()
		return fmt.Errorf("jsonl: write: %w", err)
	}
	f.written++
	mine := f.written
	f.mu.Unlock()

	// Writers that are ready to append go first, so the sync below
	// covers them too; with nothing else runnable this returns at once.
	runtime.Gosched()
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	if f.synced >= mine {
		return nil // a sync that started after our write covered it
	}
	f.mu.Lock()
	target, file := f.written, f.f
	f.mu.Unlock()
	if err := file.Sync(); err != nil {
		return fmt.Errorf("jsonl: sync: %w", err)
	}
	f.synced = target
	return nil
}

// Close closes the file (a later Append opens it again).
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f = nil
	return err
}
