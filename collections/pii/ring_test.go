package pii

import (
	"bytes"
	"testing"

	esdktypes "github.com/aws/aws-encryption-sdk/releases/go/encryption-sdk/awscryptographyencryptionsdksmithygeneratedtypes"
)

// TestLocalRing: a ring sealing under a new key opens what the old key
// sealed and names the key each message is wrapped under; without the
// old key, only the new key's messages open, natively and through the
// SDK's multi-keyring alike.
func TestLocalRing(t *testing.T) {
	t.Parallel()
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	owner := Owner{Tenant: "t-a", Partition: "T#t-a#D#0123456789abcdef"}
	legacy := local(t, 1)
	before, err := legacy.Seal(ctx, []byte("before"), owner)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := NewLocalRing(ctx, LocalKey{ID: "v2", DataKey: newKey}, LocalKey{ID: LegacyKeyID, DataKey: oldKey})
	if err != nil {
		t.Fatal(err)
	}
	after, err := ring.Seal(ctx, []byte("after"), owner)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+len("after")-len("before") {
		t.Errorf("a message under key v2 is %d bytes, under v1 %d: the key name should not change the size", len(after), len(before))
	}
	if got := ring.KeyOf(before); got != LegacyKeyID {
		t.Errorf("KeyOf(legacy message) = %q", got)
	}
	if got := ring.KeyOf(after); got != "v2" || ring.Current() != "v2" {
		t.Errorf("KeyOf(new message) = %q, current %q", got, ring.Current())
	}
	if got := ring.KeyOf([]byte("nonsense")); got != "" {
		t.Errorf("KeyOf(nonsense) = %q", got)
	}
	for _, m := range []struct {
		msg  []byte
		want string
	}{{before, "before"}, {after, "after"}} {
		if p, err := ring.Open(ctx, m.msg, owner); err != nil || string(p) != m.want {
			t.Errorf("ring opens %q: %q %v", m.want, p, err)
		}
		// The SDK path, with the ring's multi-keyring, agrees.
		out, err := ring.client.Decrypt(ctx, decryptInput(m.msg, owner, ring))
		if err != nil || string(out.Plaintext) != m.want {
			t.Errorf("SDK multi-keyring opens %q: %v", m.want, err)
		}
	}
	if p, err := legacy.Open(ctx, after, owner); err == nil {
		t.Errorf("the old key alone opened a message of the new key: %q", p)
	}
	only, err := NewLocalRing(ctx, LocalKey{ID: "v2", DataKey: newKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := only.Open(ctx, before, owner); err == nil {
		t.Error("the new key alone opened a message of the retired key")
	}
	if p, err := only.Open(ctx, after, owner); err != nil || string(p) != "after" {
		t.Errorf("the new key alone: %q %v", p, err)
	}
}

func decryptInput(msg []byte, owner Owner, s *ESDK) esdktypes.DecryptInput {
	return esdktypes.DecryptInput{Ciphertext: msg, EncryptionContext: owner.context(), MaterialsManager: s.open}
}
