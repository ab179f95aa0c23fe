package settlement

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
	}{
		{"missing timestamp", secret, "", sig, body, now},
		{"missing signature", secret, tsh, "", body, now},
		{"301 s old", secret, tsh, sig, body, now.Add(301 * time.Second)},
		{"an hour old (replay)", secret, tsh, sig, body, now.Add(time.Hour)},
		{"301 s in the future", secret, tsh, sig, body, now.Add(-301 * time.Second)},
		{"forged", secret, tsh, "v1=" + strings.Repeat("00", 32), body, now},
		{"other secret", "whsec_other", tsh, sig, body, now},
		{"body changed", secret, tsh, sig, []byte(`{"settlementId":"s2"}`), now},
		{"timestamp changed", secret, strconv.FormatInt(ts+1, 10), sig, body, now},
		{"no scheme", secret, tsh, strings.TrimPrefix(sig, "v1="), body, now},
		{"other scheme", secret, tsh, "v0=" + strings.TrimPrefix(sig, "v1="), body, now},
		{"not hex", secret, tsh, "v1=zz", body, now},
		{"truncated", secret, tsh, sig[:20], body, now},
		{"timestamp not a number", secret, "12a", sig, body, now},
		{"negative timestamp", secret, "-1", sig, body, now},
		{"no secret", "", tsh, sig, body, now},
	}
	for _, tt := range bad {
		err := Verify(tt.secret, tt.ts, tt.sig, tt.body, tt.now)
		if status, code, _ := errs.Public(err); err == nil || status != 401 || code != "invalid_signature" {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}
