// Package ui is the engine's web pages: server-rendered HTML (templates
// and CSS embedded, no front-end build) over the same services as the
// API. A login form takes an API key and starts a session kept on the
// server; an HttpOnly cookie carries its signed random id, never the key
// (docs/adr/0031, 0058). HTTP code is in
// http.go; this file and format.go are pure helpers.
package ui

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// Session is what the session cookie carries, signed: the tenant and
// the random id of the session the server keeps (tenant.WebSession,
// docs/adr/0058). Nothing else: the role, the key's fingerprint and the
// expiry stay in the stored session, so the cookie names no key and a
// logout that deletes the item ends it.
type Session struct {
	TenantID string `json:"t"`
	ID       string `json:"s"`
}

// errBadSession is any cookie that does not verify: tampered or
// malformed.
var errBadSession = errors.New("ui: invalid session")

// Signer signs and verifies sessions and CSRF tokens with one secret.
type Signer struct{ key []byte }

// NewSigner returns a signer keyed by a secret derived from the engine's
// data key, so every instance on one table accepts the others' sessions
// while the derived secret cannot open the data the key seals.
func NewSigner(dataKey []byte) Signer {
	m := hmac.New(sha256.New, dataKey)
	m.Write([]byte("lastro ui session v1"))
	return Signer{key: m.Sum(nil)}
}

func (s Signer) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

var b64 = base64.RawURLEncoding

// Encode returns the cookie value of ss: payload.signature.
func (s Signer) Encode(ss Session) string {
	body, _ := json.Marshal(ss) // a struct of strings: cannot fail
	p := b64.EncodeToString(body)
	return p + "." + b64.EncodeToString(s.mac("session", p))
}

// Decode verifies a cookie value and returns its session. Whether the
// session still exists, and has not expired, is the stored session's to
// say (tenant.Service.Session).
func (s Signer) Decode(v string) (Session, error) {
	p, sig, ok := strings.Cut(v, ".")
	if !ok {
		return Session{}, errBadSession
	}
	got, err := b64.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac("session", p)) {
		return Session{}, errBadSession
	}
	body, err := b64.DecodeString(p)
	if err != nil {
		return Session{}, errBadSession
	}
	var ss Session
	if err := json.Unmarshal(body, &ss); err != nil || ss.TenantID == "" || ss.ID == "" {
		return Session{}, errBadSession
	}
	return ss, nil
}

// CSRF is the token a form of this session carries: bound to the whole
// cookie value, so it changes with every login and cannot be forged
// without the secret (a session-bound HMAC, not a second cookie).
func (s Signer) CSRF(cookie string) string {
	return b64.EncodeToString(s.mac("csrf", cookie)[:18])
}

// CheckCSRF reports whether token is the CSRF token of cookie.
func (s Signer) CheckCSRF(cookie, token string) bool {
	got, err := b64.DecodeString(token)
	return err == nil && hmac.Equal(got, s.mac("csrf", cookie)[:18])
}
