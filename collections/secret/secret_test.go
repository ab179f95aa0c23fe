package secret

import (
	"bytes"
	"testing"
)

func TestSealOpen(t *testing.T) {
	t.Parallel()
	b, err := New(Random(KeySize))
	if err != nil {
		t.Fatal(err)
	}
	sealed := b.Seal([]byte("webhook-secret"), []byte("T#t1"))
	if bytes.Contains(sealed, []byte("webhook-secret")) {
		t.Fatal("plaintext visible in sealed value")
	}
	got, err := b.Open(sealed, []byte("T#t1"))
	if err != nil || string(got) != "webhook-secret" {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := b.Open(sealed, []byte("T#t2")); err != ErrOpen {
		t.Fatal("opened under another owner")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := b.Open(sealed, []byte("T#t1")); err != ErrOpen {
		t.Fatal("opened a tampered value")
	}
}

func TestLoadKeyPersistsInDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k1, created, err := LoadKey("", dir)
	if err != nil || !created {
		t.Fatalf("first load: %v %v", created, err)
	}
	k2, created, err := LoadKey("", dir)
	if err != nil || created || !bytes.Equal(k1, k2) {
		t.Fatalf("second load differs: %v %v", created, err)
	}
	if _, _, err := LoadKey("short", ""); err == nil {
		t.Fatal("accepted a bad LASTRO_DATA_KEY")
	}
}
