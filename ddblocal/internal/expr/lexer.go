package expr

import (
	"unicode/utf16"
	"unicode/utf8"
)

// tokKind is a token type of DynamoDB's expression grammar.
type tokKind uint8

const (
	tEOF     tokKind = iota
	tComma           // ,
	tLParen          // (
	tRParen          // )
	tDot             // .
	tLBrack          // [
	tRBrack          // ]
	tEQ              // =
	tNE              // <>
	tLT              // <
	tLE              // <=
	tGT              // >
	tGE              // >=
	tPlus            // +
	tMinus           // -
	tIn              // IN (keywords are case-insensitive)
	tBetween         // BETWEEN
	tNot             // NOT
	tAnd             // AND
	tOr              // OR
	tSet             // SET
	tAdd             // ADD
	tDelete          // DELETE
	tRemove          // REMOVE
	tIndex           // 0 | [1-9][0-9]*
	tID              // [A-Za-z][A-Za-z0-9_]*
	tName            // #[A-Za-z0-9_]+
	tValue           // :[A-Za-z0-9_]+
	tUnknown         // any other single character
)

// token is a lexeme, located by byte offsets into the expression.
type token struct {
	kind       tokKind
	start, end int
}

// keywords maps the upper-case spelling of each keyword to its token. An
// identifier is a keyword only when it matches one exactly: "INDEX" is an
// identifier, "in" is the IN keyword.
var keywords = map[string]tokKind{
	"IN": tIn, "BETWEEN": tBetween, "NOT": tNot, "AND": tAnd, "OR": tOr,
	"SET": tSet, "ADD": tAdd, "DELETE": tDelete, "REMOVE": tRemove,
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isIDChar(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }
func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// tokenize splits s into tokens, ending with tEOF. Whitespace separates
// tokens and is otherwise ignored (DynamoDB keeps it on a hidden channel,
// which only shows in the "near" text of syntax errors). The lexer never
// fails: characters outside the grammar become tUnknown tokens, which the
// parser reports as syntax errors.
func tokenize(s string, toks []token) []token {
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return append(toks, token{kind: tEOF, start: len(s), end: len(s)})
		}
		start := i
		c := s[i]
		kind := tUnknown
		i++
		switch {
		case c == ',':
			kind = tComma
		case c == '(':
			kind = tLParen
		case c == ')':
			kind = tRParen
		case c == '.':
			kind = tDot
		case c == '[':
			kind = tLBrack
		case c == ']':
			kind = tRBrack
		case c == '=':
			kind = tEQ
		case c == '+':
			kind = tPlus
		case c == '-':
			kind = tMinus
		case c == '<':
			kind = tLT
			if i < len(s) && s[i] == '>' {
				kind, i = tNE, i+1
			} else if i < len(s) && s[i] == '=' {
				kind, i = tLE, i+1
			}
		case c == '>':
			kind = tGT
			if i < len(s) && s[i] == '=' {
				kind, i = tGE, i+1
			}
		case c == '0':
			kind = tIndex // a leading zero is a number of its own: "01" is 0 then 1
		case isDigit(c):
			kind = tIndex
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		case isLetter(c):
			kind = tID
			for i < len(s) && isIDChar(s[i]) {
				i++
			}
			if k, ok := keyword(s[start:i]); ok {
				kind = k
			}
		case (c == '#' || c == ':') && i < len(s) && isIDChar(s[i]):
			kind = tName
			if c == ':' {
				kind = tValue
			}
			for i < len(s) && isIDChar(s[i]) {
				i++
			}
		case c >= utf8.RuneSelf:
			// One unknown token per character, not per byte.
			_, size := utf8.DecodeRuneInString(s[start:])
			i = start + size
		}
		toks = append(toks, token{kind: kind, start: start, end: i})
	}
}

// keyword looks an identifier up among the keywords, case-insensitively,
// without allocating (the upper-cased copy lives on the stack).
func keyword(w string) (tokKind, bool) {
	if len(w) > len("BETWEEN") {
		return 0, false
	}
	var buf [8]byte
	b := buf[:len(w)]
	for i := 0; i < len(w); i++ {
		c := w[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b[i] = c
	}
	k, ok := keywords[string(b)]
	return k, ok
}

// javaLen is the length of s in UTF-16 code units, which is how DynamoDB
// (written in Java) measures expression sizes and string sizes.
func javaLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r) // invalid bytes decode as U+FFFD: one unit each
	}
	return n
}
