package signature

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"lastro/collections/errs"
)

func TestVerify(t *testing.T) {
	t.Parallel()
	secret := "whsec_test"
	now := time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"settlementId":"s1"}`)
	ts := now.Unix()
	sig := Sign(secret, ts, body)
	tsh := strconv.FormatInt(ts, 10)
	ok := []struct {
		name    string
		ts, sig string
		now     time.Time
	}{
		{"fresh", tsh, sig, now},
		{"299 s old", tsh, sig, now.Add(299 * time.Second)},
		{"300 s old", tsh, sig, now.Add(300 * time.Second)},
		{"slightly in the future", tsh, sig, now.Add(-300 * time.Second)},
		{"rotation: one of two", tsh, "v1=" + strings.Repeat("ab", 32) + ", " + sig, now},
	}
	for _, tt := range ok {
		if err := Verify(secret, tt.ts, tt.sig, body, tt.now); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	bad := []struct {
		name    string
		secret  string
		ts, sig string
		body    []byte
		now     time.Time
		code    string
	}{
		{"missing timestamp", secret, "", sig, body, now, "signature_missing"},
		{"missing signature", secret, tsh, "", body, now, "signature_missing"},
		{"301 s old", secret, tsh, sig, body, now.Add(301 * time.Second), "signature_stale"},
		{"an hour old (replay)", secret, tsh, sig, body, now.Add(time.Hour), "signature_stale"},
		{"301 s in the future", secret, tsh, sig, body, now.Add(-301 * time.Second), "signature_stale"},
		{"forged", secret, tsh, "v1=" + strings.Repeat("00", 32), body, now, "invalid_signature"},
		{"other secret", "whsec_other", tsh, sig, body, now, "invalid_signature"},
		{"body changed", secret, tsh, sig, []byte(`{"settlementId":"s2"}`), now, "invalid_signature"},
		{"timestamp changed", secret, strconv.FormatInt(ts+1, 10), sig, body, now, "invalid_signature"},
		{"no scheme", secret, tsh, strings.TrimPrefix(sig, "v1="), body, now, "invalid_signature"},
		{"other scheme", secret, tsh, "v0=" + strings.TrimPrefix(sig, "v1="), body, now, "invalid_signature"},
		{"not hex", secret, tsh, "v1=zz", body, now, "invalid_signature"},
		{"truncated", secret, tsh, sig[:20], body, now, "invalid_signature"},
		{"timestamp not a number", secret, "12a", sig, body, now, "invalid_signature"},
		{"negative timestamp", secret, "-1", sig, body, now, "invalid_signature"},
		{"no secret", "", tsh, sig, body, now, "invalid_signature"},
	}
	for _, tt := range bad {
		err := Verify(tt.secret, tt.ts, tt.sig, tt.body, tt.now)
		if status, code, _ := errs.Public(err); err == nil || status != 401 || code != tt.code {
			t.Errorf("%s: %v, want 401 %s", tt.name, err, tt.code)
		}
	}
}

// TestStaleSignatureNamesTheEngineClock: the message gives the engine's
// now, so a provider signing against a frozen LASTRO_NOW sees why.
func TestStaleSignatureNamesTheEngineClock(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)
	real := now.Add(400 * 24 * time.Hour)
	body := []byte(`{}`)
	err := Verify("whsec_test", strconv.FormatInt(real.Unix(), 10), Sign("whsec_test", real.Unix(), body), body, now)
	_, code, msg := errs.Public(err)
	if code != "signature_stale" || !strings.Contains(msg, strconv.FormatInt(now.Unix(), 10)) || !strings.Contains(msg, "300 s") {
		t.Fatalf("%s: %s", code, msg)
	}
}

// TestVerifyAny: during a rotation's overlap a signature under either
// secret passes; under neither, or with no secret at all, it fails.
func TestVerifyAny(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"settlementId":"s1"}`)
	tsh := strconv.FormatInt(now.Unix(), 10)
	for _, tt := range []struct {
		name    string
		secrets []string
		signer  string
		ok      bool
	}{
		{"new secret", []string{"whsec_new", "whsec_old"}, "whsec_new", true},
		{"old secret", []string{"whsec_new", "whsec_old"}, "whsec_old", true},
		{"neither", []string{"whsec_new", "whsec_old"}, "whsec_other", false},
		{"overlap over", []string{"whsec_new"}, "whsec_old", false},
		{"no secrets", nil, "whsec_new", false},
		{"empty secrets only", []string{"", ""}, "", false},
	} {
		err := VerifyAny(tt.secrets, tsh, Sign(tt.signer, now.Unix(), body), body, now)
		if _, code, _ := errs.Public(err); (err == nil) != tt.ok || (!tt.ok && code != "invalid_signature") {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}
