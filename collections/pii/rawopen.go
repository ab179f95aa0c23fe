package pii

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"sort"
)

// rawOpener opens, natively, the one message shape this package's raw AES
// keyring seals: an Encryption SDK message format version 2 under Suite
// (0x0478: AES-256-GCM, HKDF-SHA512, key commitment, no signature), no
// stored encryption context (the owner is required and reproduced), and
// one data key wrapped by the keyring's namespace and name. The SDK's
// Decrypt spends most of its time in generated code parsing that message;
// the cryptography is the same few AES-GCM and HKDF operations done here
// with the standard library (ADR 0033).
//
// It only ever accepts: every check the message format asks for is made
// (commitment, header authentication, every frame's tag, order and IV),
// and a message it does not recognise or cannot authenticate goes to the
// SDK, whose answer stands. So it cannot open anything the SDK would
// refuse unless the message authenticates under the wrapping key and the
// owner's context.
type rawOpener struct {
	namespace, name string
	wrap            cipher.AEAD // AES-256-GCM under the wrapping key
}

func newRawOpener(namespace, name string, wrappingKey []byte) (*rawOpener, error) {
	b, err := aes.NewCipher(wrappingKey)
	if err != nil {
		return nil, err
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		return nil, err
	}
	return &rawOpener{namespace: namespace, name: name, wrap: g}, nil
}

// wrappingKey reads the provider id and info of a message's one
// encrypted data key (format version 2, no stored context).
func wrappingKey(msg []byte) (provider string, info []byte, ok bool) {
	r := &reader{b: msg}
	if r.u8() != msgVersion2 {
		return "", nil, false
	}
	r.u16() // suite
	r.bytes(messageIDLen)
	if r.u16() != 0 || r.u16() != 1 {
		return "", nil, false
	}
	p := r.bytes(r.u16())
	info = r.bytes(r.u16())
	if r.bad {
		return "", nil, false
	}
	return string(p), info, true
}

// errUnrecognised sends a message to the SDK.
var errUnrecognised = errors.New("pii: not a message the native path opens")

// Message format constants (Encryption SDK message format, version 2).
const (
	msgVersion2     = 0x02
	suiteID         = 0x0478
	messageIDLen    = 32
	commitKeyLen    = 32
	dataKeyLen      = 32
	ivLen           = 12
	tagLen          = 16
	contentFramed   = 0x02
	endFrameSeq     = 0xFFFFFFFF
	frameLabel      = "AWSKMSEncryptionClient Frame"
	finalFrameLabel = "AWSKMSEncryptionClient Final Frame"
)

// reader walks a message, failing once past its end.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) bytes(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u8() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16() int {
	if b := r.bytes(2); b != nil {
		return int(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

// contextAAD is the canonical serialisation of an encryption context: the
// pair count, then each key and value with a two-byte length, by key in
// byte order; empty for an empty context.
func contextAAD(ec map[string]string) []byte {
	if len(ec) == 0 {
		return nil
	}
	keys := make([]string, 0, len(ec))
	for k := range ec {
		keys = append(keys, k)
	}
	sort.Strings(keys) // byte order: Go strings compare bytewise
	out := binary.BigEndian.AppendUint16(nil, uint16(len(ec)))
	for _, k := range keys {
		out = binary.BigEndian.AppendUint16(out, uint16(len(k)))
		out = append(out, k...)
		out = binary.BigEndian.AppendUint16(out, uint16(len(ec[k])))
		out = append(out, ec[k]...)
	}
	return out
}

// open decrypts msg for the encryption context ec, or returns
// errUnrecognised.
func (o *rawOpener) open(msg []byte, ec map[string]string) ([]byte, error) {
	for k, v := range ec {
		if len(k) > 0xFFFF || len(v) > 0xFFFF {
			return nil, errUnrecognised
		}
	}
	r := &reader{b: msg}
	// Header body.
	if r.u8() != msgVersion2 || r.u16() != suiteID {
		return nil, errUnrecognised
	}
	messageID := r.bytes(messageIDLen)
	if r.u16() != 0 { // stored encryption context: this keyring's messages have none
		return nil, errUnrecognised
	}
	if r.u16() != 1 { // one encrypted data key
		return nil, errUnrecognised
	}
	providerID := r.bytes(r.u16())
	providerInfo := r.bytes(r.u16())
	wrapped := r.bytes(r.u16())
	if r.u8() != contentFramed {
		return nil, errUnrecognised
	}
	frameLen := r.u32()
	commitment := r.bytes(commitKeyLen)
	if r.bad || string(providerID) != o.namespace || frameLen == 0 {
		return nil, errUnrecognised
	}
	headerBody := msg[:len(msg)-len(r.b)]
	headerTag := r.bytes(tagLen)

	// The data key: provider info is the key name, the tag length in
	// bits, the IV length and the IV; the wrapping AAD is the whole
	// encryption context.
	pi := &reader{b: providerInfo}
	if string(pi.bytes(len(o.name))) != o.name || pi.u32() != tagLen*8 || pi.u32() != ivLen {
		return nil, errUnrecognised
	}
	wrapIV := pi.bytes(ivLen)
	if pi.bad || len(pi.b) != 0 || len(wrapped) != dataKeyLen+tagLen {
		return nil, errUnrecognised
	}
	full := contextAAD(ec)
	dataKey, err := o.wrap.Open(nil, wrapIV, wrapped, full)
	if err != nil {
		return nil, errUnrecognised
	}

	// Key derivation and commitment: HKDF-SHA512 salted with the message
	// ID; the encryption key's info is the suite ID then "DERIVEKEY".
	prk, err := hkdf.Extract(sha512.New, dataKey, messageID)
	if err != nil {
		return nil, errUnrecognised
	}
	info := binary.BigEndian.AppendUint16(nil, suiteID)
	key, err := hkdf.Expand(sha512.New, prk, string(append(info, "DERIVEKEY"...)), 32)
	if err != nil {
		return nil, errUnrecognised
	}
	commit, err := hkdf.Expand(sha512.New, prk, "COMMITKEY", commitKeyLen)
	if err != nil || subtle.ConstantTimeCompare(commit, commitment) != 1 {
		return nil, errUnrecognised
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, errUnrecognised
	}
	gcm, err := cipher.NewGCM(b)
	if err != nil {
		return nil, errUnrecognised
	}

	// Header authentication: a zero IV, over the header body and the
	// required (not stored) encryption context — here all of it.
	zero := make([]byte, ivLen)
	if r.bad {
		return nil, errUnrecognised
	}
	if _, err := gcm.Open(nil, zero, headerTag, append(append([]byte(nil), headerBody...), full...)); err != nil {
		return nil, errUnrecognised
	}

	// Frames, in order from 1, the last one marked final.
	var plain []byte
	for seq := uint32(1); ; seq++ {
		final := false
		n := int(frameLen)
		mark := r.u32()
		if mark == endFrameSeq {
			final = true
			if r.u32() != seq {
				return nil, errUnrecognised
			}
		} else if mark != seq {
			return nil, errUnrecognised
		}
		iv := r.bytes(ivLen)
		if final {
			if n = int(r.u32()); n > int(frameLen) {
				return nil, errUnrecognised
			}
		}
		content := r.bytes(n)
		tag := r.bytes(tagLen)
		if r.bad {
			return nil, errUnrecognised
		}
		want := binary.BigEndian.AppendUint32(make([]byte, ivLen-4), seq)
		if subtle.ConstantTimeCompare(iv, want) != 1 {
			return nil, errUnrecognised
		}
		label := frameLabel
		if final {
			label = finalFrameLabel
		}
		aad := append(append([]byte(nil), messageID...), label...)
		aad = binary.BigEndian.AppendUint32(aad, seq)
		aad = binary.BigEndian.AppendUint64(aad, uint64(n))
		sealed := append(append(make([]byte, 0, n+tagLen), content...), tag...)
		if plain, err = gcm.Open(plain, iv, sealed, aad); err != nil {
			return nil, errUnrecognised
		}
		if final {
			break
		}
		if seq == endFrameSeq-1 {
			return nil, errUnrecognised
		}
	}
	if len(r.b) != 0 { // a footer belongs to signed suites only
		return nil, errUnrecognised
	}
	return plain, nil
}
