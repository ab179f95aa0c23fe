package pii

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
)

var ctx = context.Background()

func local(t *testing.T, seed byte) *ESDK {
	t.Helper()
	s, err := NewLocal(ctx, bytes.Repeat([]byte{seed}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSealOpenBoundToOwner(t *testing.T) {
	t.Parallel()
	s := local(t, 7)
	owner := Owner{Tenant: "t-a", Partition: "T#t-a#D#0123456789abcdef"}
	plain := []byte(`{"document":"52998224725","name":"Pessoa Sintética","phone":"+5511900000000","email":"p@example.test"}`)
	ct, err := s.Seal(ctx, plain, owner)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(ct, []byte("52998224725")) || bytes.Contains(ct, []byte("Sint")) || bytes.Contains(ct, []byte("t-a")) {
		t.Fatal("ciphertext holds plaintext or the owner")
	}
	t.Logf("plaintext %d bytes → ciphertext %d bytes (suite %s, owner not stored)", len(plain), len(ct), Suite)
	got, err := s.Open(ctx, ct, owner)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("open: %v %q", err, got)
	}
	for name, other := range map[string]Owner{
		"other tenant": {Tenant: "t-b", Partition: owner.Partition},
		"other debtor": {Tenant: "t-a", Partition: "T#t-a#D#fedcba9876543210"},
	} {
		if _, err := s.Open(ctx, ct, other); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := local(t, 8).Open(ctx, ct, owner); !errors.Is(err, ErrOpen) {
		t.Errorf("other key: %v", err)
	}
	bad := bytes.Clone(ct)
	bad[len(bad)-1] ^= 1
	if _, err := s.Open(ctx, bad, owner); !errors.Is(err, ErrOpen) {
		t.Errorf("tampered: %v", err)
	}
	if _, err := s.Seal(ctx, plain, Owner{}); err == nil {
		t.Error("sealed without an owner")
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	s := local(t, 9)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := Owner{Tenant: "t-a", Partition: fmt.Sprintf("T#t-a#D#%016d", i)}
			p := []byte(fmt.Sprintf("payload-%d", i))
			ct, err := s.Seal(ctx, p, o)
			if err == nil {
				var got []byte
				if got, err = s.Open(ctx, ct, o); err == nil && !bytes.Equal(got, p) {
					err = fmt.Errorf("got %q", got)
				}
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestKMSKeyringIsUsed builds the KMS sealer against an endpoint that does
// not answer: construction needs no network, sealing goes to KMS and fails
// without leaking the plaintext into the error.
func TestKMSKeyringIsUsed(t *testing.T) {
	t.Parallel()
	client := kms.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("x", "y", ""),
		RetryMaxAttempts: 1}, func(o *kms.Options) { o.BaseEndpoint = aws.String("http://127.0.0.1:1") })
	s, err := NewKMS(ctx, "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab", client)
	if err != nil {
		t.Fatal(err)
	}
	if s.Keyring() != "aws-kms" {
		t.Fatalf("keyring %s", s.Keyring())
	}
	_, err = s.Seal(ctx, []byte("52998224725"), Owner{Tenant: "t-a", Partition: "T#t-a#D#1"})
	if err == nil || bytes.Contains([]byte(err.Error()), []byte("52998224725")) {
		t.Fatalf("seal through an unreachable KMS: %v", err)
	}
}
