package debtor_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"lastro/engine/enginetest"
)

// TestRegisterRefusesControlAndBidiText sends names and e-mails that
// could forge lines or reorder what a reader sees: each is a 400 naming
// the field, and nothing is written.
func TestRegisterRefusesControlAndBidiText(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	_, k := env.Tenant(t, "t-text")
	doc := env.CPF()
	before := len(env.ScanAll(t))
	body := func(name, email string) string {
		in := map[string]string{"document": doc, "name": name}
		if email != "" {
			in["email"] = email
		}
		b, _ := json.Marshal(in)
		return string(b)
	}
	tests := []struct{ name, body string }{
		// Invalid bytes never reach the field: the body's reader refuses
		// them as invalid_json (see below); these are valid JSON strings.
		{"CR", body("Maria\rSilva", "")},
		{"LF", body("Maria\nSilva", "")},
		{"CRLF", body("Maria\r\nSilva", "")},
		{"NUL", body("Maria\x00", "")},
		{"tab", body("Maria\tSilva", "")},
		{"U+202E", body("Maria \u202eavliS", "")},
		{"U+2066", body("Maria \u2066Silva", "")},
		{"U+2028", body("Maria\u2028Silva", "")},
		{"U+FFFD (what a decoder makes of invalid UTF-8)", body("Maria \ufffd Silva", "")},
		{"e-mail with U+202E", body("Maria Silva", "maria\u202e@example.com")},
	}
	for _, tt := range tests {
		status, out := env.Do(t, http.MethodPost, "/v1/debtors", k["operator"], tt.body)
		if status != http.StatusBadRequest || enginetest.ErrorCode(out) != "invalid_text" {
			t.Errorf("%s: %d %v, want 400 invalid_text", tt.name, status, out)
		}
	}
	raw := `{"document":"` + doc + `","name":"Maria \xff Silva"}`
	if status, out := env.Do(t, http.MethodPost, "/v1/debtors", k["operator"], raw); status != http.StatusBadRequest {
		t.Errorf("invalid UTF-8: %d %v, want 400", status, out)
	}
	if status, out := env.Do(t, http.MethodPost, "/v1/debtors/lookup", k["operator"], `{"document":"`+doc+`"}`); status != http.StatusNotFound {
		t.Errorf("lookup after the refusals: %d %v, want 404", status, out)
	}
	if after := len(env.ScanAll(t)); after != before {
		t.Errorf("%d items written by refused registrations", after-before)
	}
	// The same person with a clean name registers.
	if status, out := env.Do(t, http.MethodPost, "/v1/debtors", k["operator"], body("Maria  da Conceição", "")); status != http.StatusCreated && status != http.StatusOK {
		t.Errorf("clean name: %d %v", status, out)
	}
}
