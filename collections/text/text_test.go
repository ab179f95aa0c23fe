package text_test

import (
	"errors"
	"strings"
	"testing"

	"lastro/collections/errs"
	"lastro/collections/text"
)

func TestValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		ok   bool
	}{
		{"empty", "", true},
		{"ascii", "Financeira Exemplo S.A.", true},
		{"accents", "João da Conceição Ávila", true},
		{"apostrophe and hyphen", "D'Ávila-Souza", true},
		{"emoji", "Loja 🛒", true},
		{"arabic letters", "شركة", true},
		{"zero-width joiner", "a\u200db", true},
		{"NUL", "a\x00b", false},
		{"CR", "a\rb", false},
		{"LF", "a\nb", false},
		{"tab", "a\tb", false},
		{"ESC", "a\x1b[31mb", false},
		{"DEL", "a\x7fb", false},
		{"C1 NEL", "a\u0085b", false},
		{"line separator", "a\u2028b", false},
		{"paragraph separator", "a\u2029b", false},
		{"arabic letter mark", "a\u061cb", false},
		{"LRM", "a\u200eb", false},
		{"RLM", "a\u200fb", false},
		{"LRE", "a\u202ab", false},
		{"RLO", "fdp\u202eexe", false},
		{"LRI", "a\u2066b", false},
		{"PDI", "a\u2069b", false},
		{"invalid byte", "a\xffb", false},
		{"truncated sequence", "a\xc3", false},
		{"overlong NUL", "a\xc0\x80b", false},
		{"surrogate half", "a\xed\xa0\x80b", false},
		{"replacement character", "a\ufffdb", false},
	}
	for _, tt := range tests {
		if got := text.Valid(tt.s); got != tt.ok {
			t.Errorf("%s: Valid(%q) = %v, want %v", tt.name, tt.s, got, tt.ok)
		}
	}
}

func TestCheckNamesTheFieldNotTheValue(t *testing.T) {
	t.Parallel()
	if err := text.Check("name", "Maria"); err != nil {
		t.Fatalf("valid text: %v", err)
	}
	err := text.Check("name", "Maria\u202eSilva")
	var e *errs.Error
	if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Code != text.Code {
		t.Fatalf("refused text: %#v, want Invalid %s", err, text.Code)
	}
	if !strings.Contains(e.Error(), "name") || strings.Contains(e.Error(), "Maria") {
		t.Errorf("message %q: want the field named and the value not repeated", e.Error())
	}
}
