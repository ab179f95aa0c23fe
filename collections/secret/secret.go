// Package secret seals small secrets (tenant keys and signing secrets) with
// AES-256-GCM under the service's data key before they are stored, binding
// each to its owner with additional authenticated data.
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

// Box seals and opens secrets with one data key, and tags values with a
// MAC key derived from it.
type Box struct {
	aead cipher.AEAD
	mac  []byte
}

// KeySize is the data key length in bytes.
const KeySize = 32

// New returns a box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret: data key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	// The MAC key is derived, never the data key itself, so a tag says
	// nothing about the key that seals.
	m := hmac.New(sha256.New, key)
	m.Write([]byte("lastro secret box: tag key v1"))
	return &Box{aead: aead, mac: m.Sum(nil)}, nil
}

// Tag is HMAC-SHA256 of parts under the box's derived MAC key, for the
// purpose label names (domain separation): every instance with the same
// data key computes the same tag, and no one without it can.
func (b *Box) Tag(label string, parts ...string) []byte {
	m := hmac.New(sha256.New, b.mac)
	m.Write([]byte(label))
	for _, p := range parts {
		m.Write([]byte{0})
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

// Seal encrypts plaintext bound to aad; the result is nonce || ciphertext.
func (b *Box) Seal(plaintext, aad []byte) []byte {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plaintext)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("secret: crypto/rand failed: " + err.Error())
	}
	return b.aead.Seal(nonce, nonce, plaintext, aad)
}

// ErrOpen means a sealed value was tampered with or bound to another owner.
var ErrOpen = errors.New("secret: cannot open sealed value")

// Open decrypts a value sealed with the same aad.
func (b *Box) Open(sealed, aad []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n {
		return nil, ErrOpen
	}
	out, err := b.aead.Open(nil, sealed[:n], sealed[n:], aad)
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
