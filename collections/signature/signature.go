// Package signature is the engine's HMAC scheme for webhook bodies, both
// ways: the settlement webhooks it receives and the webhooks it sends
// (tenant events, messaging, the sandbox PSP's notices). A body is signed
// at a unix-seconds timestamp as v1=<hex HMAC-SHA256(secret, timestamp +
// "." + body)> in X-Lastro-Signature, the timestamp in X-Lastro-Timestamp,
// and refused when the timestamp is more than Window from now
// (docs/design.md#webhook-signatures).
package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"lastro/collections/errs"
)

// Webhook signature headers (docs/design.md#webhook-signatures).
const (
	TimestampHeader = "X-Lastro-Timestamp"
	SignatureHeader = "X-Lastro-Signature"
)

// Window is how far the signed timestamp may be from now, either way.
const Window = 300 * time.Second

// Sign returns the X-Lastro-Signature value of body signed at ts (unix
// seconds): v1=<hex HMAC-SHA256(secret, ts + "." + body)>. The engine's own
// outgoing webhooks, the sandbox PSP and tests use it; Verify checks it.
func Sign(secret string, ts int64, body []byte) string {
	return "v1=" + hex.EncodeToString(mac(secret, strconv.FormatInt(ts, 10), body))
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// The three ways a signature fails, each a 401 a provider can act on:
// send the headers, sign with the current time, or use the right secret
// and the exact body.
var (
	errSignatureMissing = errs.E(errs.Unauth, "signature_missing",
		"the "+TimestampHeader+" and "+SignatureHeader+" headers are required")
	errSignature = errs.E(errs.Unauth, "invalid_signature",
		SignatureHeader+" is not v1=<hex HMAC-SHA256(webhook secret, timestamp + \".\" + body)> for this tenant, timestamp and body")
)

// errSignatureStale says how far the engine's clock is: with a frozen
// LASTRO_NOW the provider must sign with that instant, not its own.
func errSignatureStale(now time.Time) error {
	return errs.E(errs.Unauth, "signature_stale",
		"%s is more than %d s from the engine's clock (now %d unix seconds)", TimestampHeader, int(Window.Seconds()), now.Unix())
}

// Verify checks a webhook's signature headers against the raw body: the
// timestamp must be within Window of now and the signature must be the
// HMAC of timestamp + "." + body under secret, compared in constant time.
// A failure says whether the headers were missing, the timestamp stale or
// the signature wrong — nothing a forger can use: which bytes of the MAC
// differ is never told. Several comma-separated signatures are accepted
// (a provider rotating secrets sends the old and the new one).
func Verify(secret, tsHeader, sigHeader string, body []byte, now time.Time) error {
	return VerifyAny([]string{secret}, tsHeader, sigHeader, body, now)
}

// VerifyAny is Verify against several secrets: a signature under any of
// them passes. During a webhook secret rotation's overlap the tenant has
// two (tenant.Tenant.WebhookSecrets). Every secret and every candidate
// signature is compared, so timing tells neither which matched.
func VerifyAny(secrets []string, tsHeader, sigHeader string, body []byte, now time.Time) error {
	h, err := CheckHeaders(tsHeader, sigHeader, now)
	if err != nil {
		return err
	}
	return h.Verify(secrets, body)
}

// sigLen is the length of a v1 signature: a hex HMAC-SHA256.
const sigLen = 2 * sha256.Size

// SignedHeaders are a webhook's signature headers, checked for their form
// and freshness but not yet against a body.
type SignedHeaders struct {
	ts   string   // the timestamp as sent: the MAC covers its text
	sigs [][]byte // the v1 candidates, decoded
}

// CheckHeaders checks what of a webhook's signature needs no body: both
// headers present, the timestamp unix seconds within Window of now, and
// at least one v1=<64 hex> among the comma-separated signatures. It
// refuses exactly what no body could make pass, so the webhook answers
// 401 before reading a body it would refuse anyway.
func CheckHeaders(tsHeader, sigHeader string, now time.Time) (SignedHeaders, error) {
	if tsHeader == "" || sigHeader == "" {
		return SignedHeaders{}, errSignatureMissing
	}
	if len(tsHeader) > 12 || len(sigHeader) > 1024 {
		return SignedHeaders{}, errSignature
	}
	ts, err := strconv.ParseInt(tsHeader, 10, 64)
	if err != nil || ts <= 0 {
		return SignedHeaders{}, errSignature
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Window || d < -Window {
		return SignedHeaders{}, errSignatureStale(now)
	}
	h := SignedHeaders{ts: tsHeader}
	for part := range strings.SplitSeq(sigHeader, ",") {
		hexSig, found := strings.CutPrefix(strings.TrimSpace(part), "v1=")
		if !found || len(hexSig) != sigLen {
			continue // another scheme, or a length no HMAC-SHA256 has
		}
		if got, err := hex.DecodeString(hexSig); err == nil {
			h.sigs = append(h.sigs, got)
		}
	}
	if len(h.sigs) == 0 {
		return SignedHeaders{}, errSignature
	}
	return h, nil
}

// Verify checks the headers against the raw body under any of secrets.
func (h SignedHeaders) Verify(secrets []string, body []byte) error {
	var wants [][]byte
	for _, secret := range secrets {
		if secret != "" {
			wants = append(wants, mac(secret, h.ts, body))
		}
	}
	ok := false
	// hmac.Equal is constant time in the length of the inputs; go on over
	// every candidate so timing does not say which one matched.
	for _, got := range h.sigs {
		for _, want := range wants {
			if hmac.Equal(got, want) {
				ok = true
			}
		}
	}
	if !ok {
		return errSignature
	}
	return nil
}
