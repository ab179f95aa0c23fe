package tenant

import (
	"strings"
	"testing"

	"lastro/collections/secret"
)

// testService is a service with only a box: enough for key tags.
func testService(t *testing.T) *Service {
	t.Helper()
	box, err := secret.New(make([]byte, secret.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return &Service{box: box}
}

func TestValidID(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		"t042": true, "t-demo": true, "0a": true, strings.Repeat("a", 32): true,
		"t": false, "-t": false, "T1": false, "t_1": false, "t#1": false, strings.Repeat("a", 33): false, "": false,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestAPIKeysCarryTheirTenant(t *testing.T) {
	t.Parallel()
	s := testService(t)
	newAPIKey := s.newAPIKey
	for _, id := range []string{"t1", "t-demo", "a-b-c"} {
		key := newAPIKey(id)
		got, ok := tenantOfKey(key)
		if !ok || got != id {
			t.Errorf("tenantOfKey(newAPIKey(%q)) = %q, %v", id, got, ok)
		}
		if hashKey(key) == hashKey(newAPIKey(id)) {
			t.Error("two keys hash alike")
		}
	}
	for _, bad := range []string{"", "lst_", "lst_t1_short", "xyz_t1_" + strings.Repeat("a", 48), "lst_T1_" + strings.Repeat("a", 48)} {
		if _, ok := tenantOfKey(bad); ok {
			t.Errorf("tenantOfKey(%q) accepted", bad)
		}
	}
}

// TestKeyTags: a key the service issued carries a tag that verifies for
// its own tenant only; a key whose random part or tag was changed, an
// old untagged key, another data key's key, or a malformed one does not.
func TestKeyTags(t *testing.T) {
	t.Parallel()
	s := testService(t)
	key := s.newAPIKey("t-tag")
	if len(key) != len("lst_t-tag_")+48 || !s.keyTagged(key, "t-tag") {
		t.Fatalf("a fresh key %q does not verify", key)
	}
	otherBox, err := secret.New([]byte(strings.Repeat("k", secret.KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	other := (&Service{box: otherBox}).newAPIKey("t-tag")
	flip := func(k string, i int) string {
		b := []byte(k)
		b[i] = map[bool]byte{true: '1', false: '0'}[b[i] == '0']
		return string(b)
	}
	for name, k := range map[string]string{
		"random part changed": flip(key, len(key)-20),
		"tag changed":         flip(key, len(key)-1),
		"other tenant":        "lst_t-other_" + key[len("lst_t-tag_"):],
		"untagged":            "lst_t-tag_" + strings.Repeat("ab", 24),
		"another data key":    other,
		"short":               "lst_t-tag_abc",
	} {
		id, _ := tenantOfKey(k)
		if id == "" {
			id = "t-tag"
		}
		if s.keyTagged(k, id) {
			t.Errorf("%s: %q verifies", name, k)
		}
	}
}
