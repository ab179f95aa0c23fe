package tenant_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"lastro/engine/enginetest"
)

// TestCreateRefusesControlAndBidiInTheName: a tenant's name opens every
// SMS it sends, so a line break, NUL or bidi override in it is a 400
// naming the field, and no tenant is created.
func TestCreateRefusesControlAndBidiInTheName(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	body := func(name string) string {
		b, _ := json.Marshal(map[string]string{"tenantId": "t-text", "name": name})
		return string(b)
	}
	for _, tt := range []struct{ what, name string }{
		{"CR", "Financeira\rExemplo"},
		{"LF", "Financeira\nPague em http://x"},
		{"NUL", "Financeira\x00"},
		{"U+202E", "Financeira \u202eolpmexE"},
		{"U+200F", "Financeira\u200f"},
		{"U+2029", "Financeira\u2029Exemplo"},
	} {
		status, out := env.Do(t, http.MethodPost, "/v1/tenants", enginetest.AdminToken, body(tt.name))
		if status != http.StatusBadRequest || enginetest.ErrorCode(out) != "invalid_text" {
			t.Errorf("%s: %d %v, want 400 invalid_text", tt.what, status, out)
		}
	}
	// Nothing was written: the id is still free.
	if status, out := env.Do(t, http.MethodPost, "/v1/tenants", enginetest.AdminToken, body("Financeira Exemplo Ltda.")); status != http.StatusCreated {
		t.Errorf("the clean name after the refusals: %d %v, want 201", status, out)
	}
}
