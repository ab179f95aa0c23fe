package av

import (
	"encoding/json"
	"unicode/utf8"
)

// Decoding the wire's attribute values. encoding/json decodes a Wire by
// reflection, field by field, and a transaction's items are hundreds of
// them: the largest share of the store's CPU and allocations for a write
// (docs/performance.md, settlement webhook). The shapes every SDK sends —
// one member among S, N, BOOL, M and L, strings without escapes — are read
// here in one pass; anything else (another member, an escape, null, a
// value of the wrong type, a duplicate) is handed to encoding/json as
// before, so its results and its errors stay the reference.

// UnmarshalJSON decodes an attribute value (see above).
func (w *Wire) UnmarshalJSON(raw []byte) error {
	p := wireParser{in: raw}
	if v, ok := p.value(); ok && p.end() {
		*w = *v
		return nil
	}
	type plain Wire // without this method
	return json.Unmarshal(raw, (*plain)(w))
}

// UnmarshalJSON decodes an item: its values in the same pass.
func (it *WireItem) UnmarshalJSON(raw []byte) error {
	p := wireParser{in: raw}
	if m, ok := p.object(); ok && p.end() {
		*it = m
		return nil
	}
	return json.Unmarshal(raw, (*map[string]*Wire)(it))
}

// wireParser reads the common shapes; false means "not one of them",
// never an error of its own.
type wireParser struct {
	in  []byte
	pos int
}

func (p *wireParser) space() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// end reports that only space follows.
func (p *wireParser) end() bool {
	p.space()
	return p.pos == len(p.in)
}

// next skips space and consumes b.
func (p *wireParser) next(b byte) bool {
	p.space()
	if p.pos < len(p.in) && p.in[p.pos] == b {
		p.pos++
		return true
	}
	return false
}

// peek skips space and reports whether b comes next, without consuming it.
func (p *wireParser) peek(b byte) bool {
	p.space()
	return p.pos < len(p.in) && p.in[p.pos] == b
}

// str reads a string without escapes or control characters, valid
// UTF-8 (encoding/json would rewrite the others).
func (p *wireParser) str() (string, bool) {
	if !p.next('"') {
		return "", false
	}
	start := p.pos
	ascii := true
	for p.pos < len(p.in) {
		switch c := p.in[p.pos]; {
		case c == '"':
			s := p.in[start:p.pos]
			p.pos++
			if !ascii && !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		p.pos++
	}
	return "", false
}

// literal reads true or false.
func (p *wireParser) literal() (bool, bool) {
	p.space()
	rest := p.in[p.pos:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		p.pos += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		p.pos += 5
		return false, true
	}
	return false, false
}

// value reads an attribute value with exactly one member.
func (p *wireParser) value() (*Wire, bool) {
	if !p.next('{') {
		return nil, false
	}
	name, ok := p.str()
	if !ok || !p.next(':') {
		return nil, false
	}
	w := &Wire{}
	switch name {
	case "S", "N":
		s, ok := p.str()
		if !ok {
			return nil, false
		}
		if name == "S" {
			w.S = &s
		} else {
			w.N = &s
		}
	case "BOOL", "NULL":
		b, ok := p.literal()
		if !ok {
			return nil, false
		}
		if name == "BOOL" {
			w.BOOL = &b
		} else {
			w.NULL = &b
		}
	case "M":
		m, ok := p.object()
		if !ok {
			return nil, false
		}
		w.M = (*map[string]*Wire)(&m)
	case "L":
		if !p.next('[') {
			return nil, false
		}
		l := []*Wire{}
		if !p.next(']') {
			for {
				v, ok := p.value()
				if !ok {
					return nil, false
				}
				l = append(l, v)
				if p.next(']') {
					break
				}
				if !p.next(',') {
					return nil, false
				}
			}
		}
		w.L = &l
	default:
		return nil, false
	}
	if !p.next('}') {
		return nil, false
	}
	return w, true
}

// object reads a map of names to attribute values; a repeated name is
// left to encoding/json.
func (p *wireParser) object() (WireItem, bool) {
	if !p.next('{') {
		return nil, false
	}
	m := WireItem{}
	if p.next('}') {
		return m, true
	}
	for {
		if !p.peek('"') {
			return nil, false
		}
		k, ok := p.str()
		if !ok || !p.next(':') {
			return nil, false
		}
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		if _, dup := m[k]; dup {
			return nil, false
		}
		m[k] = v
		if p.next('}') {
			return m, true
		}
		if !p.next(',') {
			return nil, false
		}
	}
}
