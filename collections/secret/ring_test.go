package secret

import (
	"bytes"
	"errors"
	"testing"
)

// TestRing: a ring seals under its current key, records the key's id in
// what it seals (none for the legacy key), opens under every key and
// names the one that sealed; without the old key its values stay shut.
func TestRing(t *testing.T) {
	t.Parallel()
	k1, k2 := bytes.Repeat([]byte{1}, KeySize), bytes.Repeat([]byte{2}, KeySize)
	legacy, err := New(k1)
	if err != nil {
		t.Fatal(err)
	}
	aad := []byte("T#t-a")
	old := legacy.Seal([]byte("s1"), aad)
	ring, err := NewRing(Key{ID: "v2", Bytes: k2}, Key{ID: LegacyKeyID, Bytes: k1})
	if err != nil {
		t.Fatal(err)
	}
	fresh := ring.Seal([]byte("s2"), aad)
	for _, c := range []struct {
		sealed     []byte
		plain, key string
	}{{old, "s1", LegacyKeyID}, {fresh, "s2", "v2"}} {
		p, key, err := ring.OpenKey(c.sealed, aad)
		if err != nil || string(p) != c.plain || key != c.key {
			t.Errorf("OpenKey = %q %q %v, want %q under %s", p, key, err, c.plain, c.key)
		}
	}
	if _, err := ring.Open(fresh, []byte("T#t-b")); !errors.Is(err, ErrOpen) {
		t.Errorf("opened under another owner: %v", err)
	}
	only, err := NewRing(Key{ID: "v2", Bytes: k2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := only.Open(old, aad); !errors.Is(err, ErrOpen) {
		t.Errorf("the retired key's value opened: %v", err)
	}
	if _, err := legacy.Open(fresh, aad); !errors.Is(err, ErrOpen) {
		t.Errorf("the old key opened the new key's value: %v", err)
	}
	tags := ring.Tags("label", "a")
	if len(tags) != 2 || !bytes.Equal(tags[0], ring.Tag("label", "a")) || !bytes.Equal(tags[1], legacy.Tag("label", "a")) {
		t.Error("Tags is not the current key's tag then the old key's")
	}
	for _, bad := range [][]Key{{{ID: "V2", Bytes: k2}}, {{ID: "v2", Bytes: k2[:8]}}, {{ID: "v2", Bytes: k2}, {ID: "v2", Bytes: k1}}} {
		if _, err := NewRing(bad[0], bad[1:]...); err == nil {
			t.Errorf("NewRing accepted %v", bad[0].ID)
		}
	}
	keys, err := ParseKeys("v1:" + "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=" + ", ")
	if err != nil || len(keys) != 1 || keys[0].ID != "v1" || !bytes.Equal(keys[0].Bytes, k1) {
		t.Errorf("ParseKeys: %v %v", keys, err)
	}
	if _, err := ParseKeys("v1:c2VjcmV0"); err == nil || bytes.Contains([]byte(err.Error()), []byte("c2VjcmV0")) {
		t.Errorf("ParseKeys of a short key: %v", err)
	}
}
