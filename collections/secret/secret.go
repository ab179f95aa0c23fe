// Package secret seals small secrets (tenant keys and signing secrets) with
// AES-256-GCM under the service's data key before they are stored, binding
// each to its owner with additional authenticated data. The data key can
// be rotated: a box holds a ring of keys (docs/adr/0083).
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Box seals and opens secrets with a ring of data keys: the current one
// seals, every one opens (a rotation keeps the old keys until nothing is
// sealed under them, docs/adr/0083). It tags values with a MAC key
// derived from the current key.
type Box struct {
	current string
	keys    map[string]*boxKey
}

type boxKey struct {
	aead cipher.AEAD
	mac  []byte
}

// KeySize is the data key length in bytes.
const KeySize = 32

// LegacyKeyID is the id of the data key of a deployment that never
// rotated: values it seals carry no key id (nonce || ciphertext), as every
// value sealed before rotation existed does.
const LegacyKeyID = "v1"

// Key is one data key of a ring and its id, recorded in what it seals.
type Key struct {
	ID    string
	Bytes []byte
}

// ValidKeyID reports whether id can name a data key: 1 to 16 of a-z, 0-9
// and '-'.
func ValidKeyID(id string) bool {
	if id == "" || len(id) > 16 {
		return false
	}
	for _, r := range id {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

// New returns a box for one 32-byte key, the legacy key.
func New(key []byte) (*Box, error) {
	return NewRing(Key{ID: LegacyKeyID, Bytes: key})
}

// NewRing returns a box that seals with current and opens with it and
// every old key.
func NewRing(current Key, old ...Key) (*Box, error) {
	b := &Box{current: current.ID, keys: map[string]*boxKey{}}
	for _, k := range append([]Key{current}, old...) {
		if !ValidKeyID(k.ID) {
			return nil, fmt.Errorf("secret: data key id %q: use 1-16 of a-z, 0-9 and -", k.ID)
		}
		if len(k.Bytes) != KeySize {
			return nil, fmt.Errorf("secret: data key %s must be %d bytes, got %d", k.ID, KeySize, len(k.Bytes))
		}
		if _, dup := b.keys[k.ID]; dup {
			return nil, fmt.Errorf("secret: data key id %s given twice", k.ID)
		}
		block, err := aes.NewCipher(k.Bytes)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		// The MAC key is derived, never the data key itself, so a tag says
		// nothing about the key that seals.
		m := hmac.New(sha256.New, k.Bytes)
		m.Write([]byte("lastro secret box: tag key v1"))
		b.keys[k.ID] = &boxKey{aead: aead, mac: m.Sum(nil)}
	}
	return b, nil
}

// Current is the id of the key that seals.
func (b *Box) Current() string { return b.current }

// Tag is HMAC-SHA256 of parts under the current key's derived MAC key,
// for the purpose label names (domain separation): every instance with
// the same data key computes the same tag, and no one without it can.
func (b *Box) Tag(label string, parts ...string) []byte {
	return b.keys[b.current].tag(label, parts...)
}

// Tags is Tag under every key of the ring, the current one first: a tag
// made before a rotation still verifies while its key is kept.
func (b *Box) Tags(label string, parts ...string) [][]byte {
	out := [][]byte{b.Tag(label, parts...)}
	for id, k := range b.keys {
		if id != b.current {
			out = append(out, k.tag(label, parts...))
		}
	}
	return out
}

func (k *boxKey) tag(label string, parts ...string) []byte {
	m := hmac.New(sha256.New, k.mac)
	m.Write([]byte(label))
	for _, p := range parts {
		m.Write([]byte{0})
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

// keyMark opens a value that records its key: keyMark, the id's length,
// the id, then nonce || ciphertext.
const keyMark = "\x00K"

// Seal encrypts plaintext bound to aad under the current key: nonce ||
// ciphertext for the legacy key, prefixed with the key's id for others.
func (b *Box) Seal(plaintext, aad []byte) []byte {
	k := b.keys[b.current]
	var out []byte
	if b.current != LegacyKeyID {
		out = append(append(append(out, keyMark...), byte(len(b.current))), b.current...)
	}
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plaintext)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("secret: crypto/rand failed: " + err.Error())
	}
	return append(out, k.aead.Seal(nonce, nonce, plaintext, aad)...)
}

// ErrOpen means a sealed value was tampered with, bound to another owner
// or sealed under a key the ring does not hold.
var ErrOpen = errors.New("secret: cannot open sealed value")

// Open decrypts a value sealed with the same aad.
func (b *Box) Open(sealed, aad []byte) ([]byte, error) {
	p, _, err := b.OpenKey(sealed, aad)
	return p, err
}

// OpenKey decrypts a value sealed with the same aad and names the key
// that sealed it: the one the value records, else (a value without an
// id, or a legacy nonce that happens to look like one) the legacy key.
func (b *Box) OpenKey(sealed, aad []byte) ([]byte, string, error) {
	if rest, ok := strings.CutPrefix(string(sealed), keyMark); ok && len(rest) > 0 && len(rest) > int(rest[0]) {
		id := rest[1 : 1+int(rest[0])]
		if k := b.keys[id]; k != nil {
			if p, err := k.open([]byte(rest[1+len(id):]), aad); err == nil {
				return p, id, nil
			}
		}
	}
	if k := b.keys[LegacyKeyID]; k != nil {
		if p, err := k.open(sealed, aad); err == nil {
			return p, LegacyKeyID, nil
		}
	}
	return nil, "", ErrOpen
}

func (k *boxKey) open(sealed, aad []byte) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(sealed) < n {
		return nil, ErrOpen
	}
	out, err := k.aead.Open(nil, sealed[:n], sealed[n:], aad)
	if err != nil {
		return nil, ErrOpen
	}
	return out, nil
}

// Random returns n bytes from crypto/rand.
func Random(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("secret: crypto/rand failed: " + err.Error())
	}
	return b
}

// LoadKey returns the data key: from value (base64, LASTRO_DATA_KEY) when
// set, else from file key in dir, created on first use. With neither (an
// in-memory engine) it returns a fresh random key.
func LoadKey(value, dir string) (key []byte, created bool, err error) {
	if value != "" {
		key, err = base64.StdEncoding.DecodeString(strings.TrimSpace(value))
		if err != nil || len(key) != KeySize {
			return nil, false, fmt.Errorf("LASTRO_DATA_KEY must be %d bytes in base64", KeySize)
		}
		return key, false, nil
	}
	if dir == "" {
		return Random(KeySize), true, nil
	}
	path := filepath.Join(dir, "data.key")
	raw, err := os.ReadFile(path)
	if err == nil {
		key, err = base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
		if err != nil || len(key) != KeySize {
			return nil, false, fmt.Errorf("data key file is corrupt")
		}
		return key, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, err
	}
	key = Random(KeySize)
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, false, err
	}
	return key, true, nil
}

// DecodeKey decodes a base64 data key (what LASTRO_DATA_KEY and the key
// files hold).
func DecodeKey(value string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
	if err != nil || len(key) != KeySize {
		return nil, fmt.Errorf("a data key must be %d bytes in base64", KeySize)
	}
	return key, nil
}

// ParseKeys reads a list of old data keys, "id:base64" separated by
// commas (LASTRO_OLD_DATA_KEYS): keys a rotation keeps for opening only.
// Errors never echo a key.
func ParseKeys(list string) ([]Key, error) {
	var out []Key
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		id, b64, ok := strings.Cut(f, ":")
		if !ok || !ValidKeyID(id) {
			return nil, fmt.Errorf("old data keys are id:base64 separated by commas, the id 1-16 of a-z, 0-9 and -")
		}
		key, err := DecodeKey(b64)
		if err != nil {
			return nil, fmt.Errorf("old data key %s: %w", id, err)
		}
		out = append(out, Key{ID: id, Bytes: key})
	}
	return out, nil
}
