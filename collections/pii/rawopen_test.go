package pii

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// sdkOnly is s without the native path: what the SDK alone answers.
func sdkOnly(s *ESDK) *ESDK { c := *s; c.raw = nil; return &c }

// TestRawOpenerAgreesWithTheSDK: every message the SDK seals under the
// raw AES keyring, of one frame or several (the frame is 4 KiB), opens
// natively to the same plaintext the SDK opens it to.
func TestRawOpenerAgreesWithTheSDK(t *testing.T) {
	t.Parallel()
	s := local(t, 7)
	owner := Owner{Tenant: "t-a", Partition: "T#t-a#D#0123456789abcdef"}
	for _, n := range []int{1, 97, 4095, 4096, 4097, 8192, 10_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			plain := bytes.Repeat([]byte("0123456789abcdefghij"), n/20+1)[:n]
			ct, err := s.Seal(ctx, plain, owner)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.raw[0].open(ct, owner.context())
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("native: %v, %d bytes", err, len(got))
			}
			sdk, err := sdkOnly(s).Open(ctx, ct, owner)
			if err != nil || !bytes.Equal(sdk, plain) {
				t.Fatalf("SDK: %v", err)
			}
		})
	}
}

// TestRawOpenerRefusesWhatDoesNotAuthenticate: another owner, another
// wrapping key, any flipped byte, any truncation or extra byte — the
// native path opens none of them, and Open (which then asks the SDK)
// refuses them all with ErrOpen.
func TestRawOpenerRefusesWhatDoesNotAuthenticate(t *testing.T) {
	t.Parallel()
	s := local(t, 7)
	owner := Owner{Tenant: "t-a", Partition: "T#t-a#D#0123456789abcdef"}
	ct, err := s.Seal(ctx, []byte(`{"document":"52998224725","phone":"+5511900000000"}`), owner)
	if err != nil {
		t.Fatal(err)
	}
	type variant struct {
		name  string
		ct    []byte
		owner Owner
		s     *ESDK
	}
	vs := []variant{
		{"other tenant", ct, Owner{Tenant: "t-b", Partition: owner.Partition}, s},
		{"other debtor", ct, Owner{Tenant: "t-a", Partition: "T#t-a#D#fedcba9876543210"}, s},
		{"no owner", ct, Owner{}, s},
		{"other key", ct, owner, local(t, 8)},
		{"extra byte", append(bytes.Clone(ct), 0), owner, s},
		{"empty", nil, owner, s},
	}
	for i := range ct {
		bad := bytes.Clone(ct)
		bad[i] ^= 0x01
		vs = append(vs, variant{fmt.Sprintf("bit flipped at %d", i), bad, owner, s})
		vs = append(vs, variant{fmt.Sprintf("truncated to %d", i), ct[:i], owner, s})
	}
	for _, v := range vs {
		if p, err := v.s.raw[0].open(v.ct, v.owner.context()); !errors.Is(err, errUnrecognised) || p != nil {
			t.Errorf("%s: native path opened it (%v)", v.name, err)
		}
		if _, err := v.s.Open(ctx, v.ct, v.owner); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: Open: %v, want ErrOpen", v.name, err)
		}
	}
}

// TestContextAADIsCanonical: the pair count, then the pairs by key in
// byte order, each with a two-byte length; nothing for no context.
func TestContextAADIsCanonical(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ec   map[string]string
		want []byte
	}{
		{nil, nil},
		{map[string]string{"tenant": "t", "pk": "P"}, []byte("\x00\x02\x00\x02pk\x00\x01P\x00\x06tenant\x00\x01t")},
		{map[string]string{"b": "", "a": "x"}, []byte("\x00\x02\x00\x01a\x00\x01x\x00\x01b\x00\x00")},
	} {
		if got := contextAAD(tc.ec); !bytes.Equal(got, tc.want) {
			t.Errorf("%v: %q, want %q", tc.ec, got, tc.want)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	s, err := NewLocal(ctx, bytes.Repeat([]byte{7}, 32))
	if err != nil {
		b.Fatal(err)
	}
	owner := Owner{Tenant: "t-a", Partition: "T#t-a#D#0123456789abcdef"}
	ct, err := s.Seal(ctx, []byte(`{"document":"52998224725","name":"Pessoa Sintética","phone":"+5511900000000","email":"p@example.test"}`), owner)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		s    *ESDK
	}{{"native", s}, {"sdk", sdkOnly(s)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.s.Open(ctx, ct, owner); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
