package tenant

import (
	"strings"
	"testing"
)

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
