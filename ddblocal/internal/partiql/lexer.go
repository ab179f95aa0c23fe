package partiql

import (
	"strings"
	"unicode/utf8"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tEOF    tokKind = iota
	tIdent          // bare identifier or keyword
	tQuoted         // "quoted identifier"
	tString         // 'string literal'
	tNumber         // numeric literal, text as written
	tParam          // ?
	tPunct          // operators and delimiters
)

// token is one lexeme with its position: line and column count characters
// from 1, as DynamoDB's "at line:column:length" suffixes do.
type token struct {
	kind tokKind
	text string // identifier or literal text (unescaped), or the operator
	line int
	col  int
	len  int // length in characters as written
}

// kw reports whether t is the bare keyword k (case-insensitive).
func (t token) kw(k string) bool { return t.kind == tIdent && strings.EqualFold(t.text, k) }

func (t token) punct(p string) bool { return t.kind == tPunct && t.text == p }

// lex splits a statement into tokens. Lexical errors (an unknown
// character, an unterminated quote or comment, a number PartiQL cannot
// represent) are reported as a malformed statement with no detail, as
// DynamoDB does.
//
// It is long because a lexer is one loop with a case per token kind.
func lex(src string) ([]token, error) {
	var toks []token
	line, col := 1, 1
	i := 0
	// advance moves over n bytes, keeping line and column.
	advance := func(n int) {
		for _, r := range src[i : i+n] {
			if r == '\n' {
				line++
				col = 1
			} else {
				col++
			}
		}
		i += n
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			advance(1)
			continue
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			advance(end)
			continue
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, malformed("")
			}
			advance(end + 4)
			continue
		}
		start, sl, sc := i, line, col
		emit := func(kind tokKind, text string) {
			toks = append(toks, token{kind: kind, text: text, line: sl, col: sc, len: utf8.RuneCountInString(src[start:i])})
		}
		switch {
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			text := src[i:j]
			advance(j - i)
			emit(tIdent, text)
		case c == '"' || c == '\'':
			text, n, ok := quoted(src[i:], c)
			if !ok {
				return nil, malformed("")
			}
			advance(n)
			if c == '"' {
				emit(tQuoted, text)
			} else {
				emit(tString, text)
			}
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			n, ok := number(src[i:])
			if !ok {
				return nil, malformed("")
			}
			text := src[i : i+n]
			advance(n)
			emit(tNumber, text)
		case c == '?':
			advance(1)
			emit(tParam, "?")
		default:
			op := ""
			for _, p := range []string{"<<", ">>", "<>", "!=", "<=", ">=", "||"} {
				if strings.HasPrefix(src[i:], p) {
					op = p
					break
				}
			}
			if op == "" && strings.IndexByte("()[]{},.:;*+-/%=<>", c) >= 0 {
				op = string(c)
			}
			if op == "" {
				return nil, malformed("")
			}
			advance(len(op))
			emit(tPunct, op)
		}
	}
	toks = append(toks, token{kind: tEOF, line: line, col: col})
	return toks, nil
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// quoted reads a quoted run starting at s[0] == q, where a doubled quote
// stands for itself. It returns the unescaped text and the bytes read.
func quoted(s string, q byte) (string, int, bool) {
	var b strings.Builder
	for j := 1; j < len(s); j++ {
		if s[j] != q {
			b.WriteByte(s[j])
			continue
		}
		if j+1 < len(s) && s[j+1] == q {
			b.WriteByte(q)
			j++
			continue
		}
		return b.String(), j + 1, true
	}
	return "", 0, false
}

// number reads a numeric literal: digits, an optional fraction and an
// optional exponent. DynamoDB's parser holds the exponent and the scale
// (fraction digits less the exponent) in 32-bit integers; a literal
// outside that range cannot be read at all.
func number(s string) (int, bool) {
	j := 0
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	frac := 0
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
			frac++
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		neg := false
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			neg = s[k] == '-'
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			var exp int64
			for k < len(s) && isDigit(s[k]) {
				if exp <= 1<<40 {
					exp = exp*10 + int64(s[k]-'0')
				}
				k++
			}
			if neg {
				exp = -exp
			}
			const maxInt32, minInt32 = 1<<31 - 1, -(1 << 31)
			scale := int64(frac) - exp
			if exp > maxInt32 || exp < minInt32 || scale > maxInt32 || scale < minInt32 {
				return 0, false
			}
			j = k
		}
	}
	return j, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
