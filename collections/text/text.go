// Package text is the one rule for the free text the API takes (debtor
// and tenant names, message templates): it must be valid UTF-8 and hold
// no character that can forge a line or reorder what a reader sees.
//
// Such text is shown on pages, written to CSV exports and logs-adjacent
// evidence, and put into SMS and e-mail bodies (a tenant's name opens
// every message). A CR or LF there forges a second line or header, a NUL
// truncates the string in some readers, and a bidirectional override
// (U+202E) makes "exe.fdp" read as "pdf.exe". Refusing them at the edge,
// with a 400 naming the field, is simpler and safer than escaping them in
// every place the text ends up.
package text

import (
	"unicode"
	"unicode/utf8"

	"lastro/collections/errs"
)

// Code is the error code of text refused by Check.
const Code = "invalid_text"

// Allowed reports whether r may appear in free text: not a control
// character (Unicode category Cc: C0, DEL, C1), not a line or paragraph
// separator (U+2028, U+2029), not a bidirectional control (U+061C,
// U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), and not U+FFFD, the
// character JSON decoders substitute for invalid UTF-8: refusing it is
// how a body's invalid bytes are refused once it has been decoded.
func Allowed(r rune) bool {
	switch {
	case unicode.Is(unicode.Cc, r):
		return false
	case r == '\u2028', r == '\u2029':
		return false
	case r == '\u061c', r == '\u200e', r == '\u200f':
		return false
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return false
	case r == utf8.RuneError:
		return false
	}
	return true
}

// Valid reports whether s is valid UTF-8 made only of Allowed runes.
func Valid(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !Allowed(r) { // an invalid byte decodes as RuneError
			return false
		}
		i += n
	}
	return true
}

// Check returns an Invalid error with code invalid_text naming field when
// s is not Valid; nil otherwise. The message never repeats the value,
// which may be personal data.
func Check(field, s string) error {
	if Valid(s) {
		return nil
	}
	return errs.E(errs.Invalid, Code, "%s must be valid UTF-8 text without control characters (such as CR, LF, NUL or tab), line separators or bidirectional controls", field)
}
