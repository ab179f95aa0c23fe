package ddblocal_test

// A full disk, on a real small file system: a tmpfs mounted by the test
// (issue 25, findings 2 and 3; ADR 0059).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// mountTmpfs mounts a tmpfs of the given size (mount's syntax, "64m") on
// a fresh folder, unmounted when the test ends; it skips the test where
// the process cannot mount (not Linux, not root, no mount(8)).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("mounting a tmpfs needs Linux")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (needs root and mount(8)): %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		// Lazily: a store a failed test left open must not keep the mount.
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk writes a file in dir until the file system is full and returns
// its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !strings.Contains(err.Error(), "no space left") {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	// Fill the last partial block too.
	for {
		if _, err := f.Write(chunk[:512]); err != nil {
			break
		}
	}
	return name
}

func bigItem(k string, n int) map[string]types.AttributeValue {
	return avmap{"PK": vS(k), "SK": vS("1"), "v": vS(strings.Repeat("x", n))}
}

// within runs f with a 30 s context: a write that hangs fails the test
// instead of the suite.
func within(t *testing.T, what string, f func(ctx context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := f(ctx)
	if ctx.Err() != nil {
		t.Fatalf("%s did not answer within 30 s: %v", what, err)
	}
	return err
}

// isDiskFull500 reports an InternalServerError answered with HTTP 500.
func isDiskFull500(err error) bool {
	var ae smithy.APIError
	var re *awshttp.ResponseError
	return errors.As(err, &ae) && ae.ErrorCode() == "InternalServerError" && errors.As(err, &re) && re.HTTPStatusCode() == 500
}

// TestDiskFullWritesFailAndRecover: on a full disk a write is answered
// with a 500 InternalServerError at once, again and again, never hanging;
// reads keep working; once space is freed writes succeed without a
// restart, and no acknowledged write is lost. Before, the first write's
// ENOSPC left Pebble's commit pipeline blocked and every later write hung
// until a restart.
func TestDiskFullWritesFailAndRecover(t *testing.T) {
	t.Parallel()
	mnt := mountTmpfs(t, "96m")
	srv := ddbtest.Start(t, ddblocal.Options{Dir: filepath.Join(mnt, "store"), MinFreeBytes: 4 << 20, TTLSweepInterval: -1})
	c := srv.Client()
	createOrders(t, c)
	for i := range 20 {
		if _, err := c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String("orders"), Item: bigItem(fmt.Sprintf("acked%02d", i), 10_000)}); err != nil {
			t.Fatal(err)
		}
	}
	filler := fillDisk(t, mnt)

	// Writes fail, quickly and repeatedly, from several clients at once.
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				err := within(t, "a write on a full disk", func(ctx context.Context) error {
					_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"), Item: bigItem(fmt.Sprintf("full%d-%d", w, i), 10_000)})
					return err
				})
				if !isDiskFull500(err) {
					t.Errorf("write on a full disk: %v, want a 500 InternalServerError", err)
				}
			}
		}()
	}
	wg.Wait()
	// Reads keep working.
	for i := range 20 {
		err := within(t, "a read on a full disk", func(ctx context.Context) error {
			out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("orders"), Key: avmap{"PK": vS(fmt.Sprintf("acked%02d", i)), "SK": vS("1")}})
			if err == nil && out.Item == nil {
				err = fmt.Errorf("acknowledged item acked%02d is missing", i)
			}
			return err
		})
		if err != nil {
			t.Fatalf("read on a full disk: %v", err)
		}
	}
	if err := within(t, "a scan on a full disk", func(ctx context.Context) error {
		out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("orders"), Select: types.SelectCount})
		if err == nil && out.Count != 20 {
			err = fmt.Errorf("scan counts %d items, want 20", out.Count)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// Space returns: writes succeed without a restart.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := within(t, "a write after space returned", func(ctx context.Context) error {
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"), Item: bigItem(fmt.Sprintf("after%02d", i), 10_000)})
			return err
		}); err != nil {
			t.Fatalf("write after space returned: %v", err)
		}
	}
	out, err := c.Scan(bg, &dynamodb.ScanInput{TableName: aws.String("orders"), Select: types.SelectCount})
	if err != nil || out.Count != 40 {
		t.Fatalf("after recovery the table has %v items (%v), want 40", out, err)
	}
}

// lineCounter counts log lines.
type lineCounter struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineCounter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.Split(strings.TrimSpace(string(p)), "\n")...)
	return len(p), nil
}

// TestDiskFullStartFailsFast: opening a store on a full disk fails at
// once with one error saying so, logging next to nothing, and opens again
// once space is freed. Before, the open spun logging "no space left"
// without ever answering.
func TestDiskFullStartFailsFast(t *testing.T) {
	t.Parallel()
	mnt := mountTmpfs(t, "96m")
	dir := filepath.Join(mnt, "store")
	st, err := ddblocal.Open(ddblocal.Options{Dir: dir, TTLSweepInterval: -1, MinFreeBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	filler := fillDisk(t, mnt)
	var logged lineCounter
	log := slog.New(slog.NewTextHandler(&logged, nil))
	type result struct {
		st  *ddblocal.Store
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := ddblocal.Open(ddblocal.Options{Dir: dir, TTLSweepInterval: -1, Logger: log, MinFreeBytes: 4 << 20})
		done <- result{st, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Open on a full disk neither started nor failed within 30 s")
	}
	if r.err == nil {
		r.st.Close()
		t.Fatal("Open on a full disk succeeded, want it refused")
	}
	if !errors.Is(r.err, ddblocal.ErrDiskFull) || !strings.Contains(r.err.Error(), "free") {
		t.Errorf("Open on a full disk: %v, want ErrDiskFull saying how much is free", r.err)
	}
	if n := len(logged.lines); n > 3 {
		t.Errorf("Open on a full disk logged %d lines, want at most 3: %q", n, logged.lines[:min(n, 5)])
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	st, err = ddblocal.Open(ddblocal.Options{Dir: dir, TTLSweepInterval: -1, MinFreeBytes: 4 << 20})
	if err != nil {
		t.Fatalf("Open once space is freed: %v", err)
	}
	st.Close()
}

// createOrders creates table "orders" (PK S, SK S).
func createOrders(t *testing.T, c *dynamodb.Client) {
	t.Helper()
	if _, err := c.CreateTable(bg, &dynamodb.CreateTableInput{
		TableName: aws.String("orders"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: "S"}, {AttributeName: aws.String("SK"), AttributeType: "S"}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: "HASH"}, {AttributeName: aws.String("SK"), KeyType: "RANGE"}},
	}); err != nil {
		t.Fatal(err)
	}
}
