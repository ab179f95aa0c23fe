package av

import (
	"bytes"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a validation failure of one attribute value, carrying the text
// DynamoDB answers with.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

const invalidPrefix = "One or more parameter values were invalid: "

// Wire is an attribute value as the JSON wire protocol carries it, before
// validation. Absent and empty members are told apart.
type Wire struct {
	S    *string           `json:"S,omitempty"`
	N    *string           `json:"N,omitempty"`
	B    *[]byte           `json:"B,omitempty"`
	SS   *[]string         `json:"SS,omitempty"`
	NS   *[]string         `json:"NS,omitempty"`
	BS   *[][]byte         `json:"BS,omitempty"`
	M    *map[string]*Wire `json:"M,omitempty"`
	L    *[]*Wire          `json:"L,omitempty"`
	NULL *bool             `json:"NULL,omitempty"`
	BOOL *bool             `json:"BOOL,omitempty"`
}

// WireItem is an item as the wire protocol carries it.
type WireItem map[string]*Wire

// FromWire validates w and returns its value.
func FromWire(w *Wire) (*Value, error) {
	if w == nil {
		return nil, &Error{Msg: "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"}
	}
	if hasEmptyName(w) {
		return nil, &Error{Msg: MsgEmptyName}
	}
	// DynamoDB reports an empty nested value before anything else.
	if err := checkEmpty(w); err != nil {
		return nil, err
	}
	v, err := fromWire(w)
	if err != nil {
		return nil, err
	}
	if err := checkShape(v, 1); err != nil {
		return nil, err
	}
	return v, nil
}

// Limits on a value's shape: DynamoDB stores attribute names (map keys
// included) of at most 65535 bytes, and documents nested at most 32 levels
// deep, the attribute itself counting as level 1.
const (
	MaxNameBytes = 65535
	MaxDepth     = 32
)

const (
	msgNameTooLarge = "Attribute name is too large, must be less than 65536 bytes"
	msgTooDeep      = "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"
)

// checkShape checks the map keys and the nesting depth of v, found at
// the given level.
func checkShape(v *Value, level int) error {
	if level > MaxDepth {
		return &Error{Msg: msgTooDeep}
	}
	for k, c := range v.Map {
		if len(k) > MaxNameBytes {
			return &Error{Msg: msgNameTooLarge}
		}
		if err := checkShape(c, level+1); err != nil {
			return err
		}
	}
	for _, c := range v.List {
		if err := checkShape(c, level+1); err != nil {
			return err
		}
	}
	return nil
}

// MsgEmptyName is DynamoDB's refusal of an attribute name that is the
// empty string, at the top of an item or as a map key at any depth: such a
// name could be stored but never named by an expression path, so it could
// never be updated or removed. DynamoDB checks it before anything else in
// the values.
const MsgEmptyName = "Empty attribute name"

// hasEmptyName reports whether a map inside w, at any depth, has the empty
// string as a key.
func hasEmptyName(w *Wire) bool {
	switch {
	case w == nil:
	case w.M != nil:
		for k, c := range *w.M {
			if k == "" || hasEmptyName(c) {
				return true
			}
		}
	case w.L != nil:
		for _, c := range *w.L {
			if hasEmptyName(c) {
				return true
			}
		}
	}
	return false
}

func count(w *Wire) int {
	n := 0
	for _, set := range []bool{w.S != nil, w.N != nil, w.B != nil, w.SS != nil, w.NS != nil, w.BS != nil, w.M != nil, w.L != nil, w.NULL != nil, w.BOOL != nil} {
		if set {
			n++
		}
	}
	return n
}

func checkEmpty(w *Wire) error {
	if w == nil || count(w) == 0 {
		return &Error{Msg: "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"}
	}
	if w.M != nil {
		for _, c := range *w.M {
			if err := checkEmpty(c); err != nil {
				return err
			}
		}
	}
	if w.L != nil {
		for _, c := range *w.L {
			if err := checkEmpty(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// fromWire decodes one attribute value of the wire format. It is long
// because it is one case per attribute type, each with the checks DynamoDB
// makes of that type.
func fromWire(w *Wire) (*Value, error) {
	if count(w) > 1 {
		return nil, &Error{Msg: "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes"}
	}
	switch {
	case w.S != nil:
		return &Value{T: S, Str: *w.S}, nil
	case w.N != nil:
		n, err := ParseNumber(*w.N)
		if err != nil {
			return nil, err
		}
		return &Value{T: N, Str: n}, nil
	case w.B != nil:
		b := *w.B
		if b == nil {
			b = []byte{}
		}
		return &Value{T: B, Bin: b}, nil
	case w.BOOL != nil:
		return &Value{T: BOOL, Bool: *w.BOOL}, nil
	case w.NULL != nil:
		// eu-west-2 and eu-central-1 briefly accepted {"NULL": false} as a
		// NULL in 2026, then reverted: every region refuses it again.
		if !*w.NULL {
			return nil, &Error{Msg: invalidPrefix + "Null attribute value types must have the value of true"}
		}
		return &Value{T: NULL}, nil
	case w.SS != nil:
		ss := *w.SS
		if len(ss) == 0 {
			return nil, &Error{Msg: invalidPrefix + "An string set  may not be empty"}
		}
		seen := make(map[string]bool, len(ss))
		for _, s := range ss {
			if seen[s] {
				return nil, &Error{Msg: invalidPrefix + "Input collection [" + strings.Join(ss, ", ") + "] contains duplicates."}
			}
			seen[s] = true
		}
		return &Value{T: SS, Strs: slices.Clone(ss)}, nil
	case w.NS != nil:
		ns := *w.NS
		if len(ns) == 0 {
			return nil, &Error{Msg: invalidPrefix + "An number set  may not be empty"}
		}
		out := make([]string, 0, len(ns))
		for _, s := range ns {
			n, err := ParseNumber(s)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		for i := range out {
			for j := i + 1; j < len(out); j++ {
				if CompareNumbers(out[i], out[j]) == 0 {
					return nil, &Error{Msg: "Input collection contains duplicates"}
				}
			}
		}
		return &Value{T: NS, Strs: out}, nil
	case w.BS != nil:
		bs := *w.BS
		if len(bs) == 0 {
			return nil, &Error{Msg: invalidPrefix + "Binary sets should not be empty"}
		}
		for i := range bs {
			for j := i + 1; j < len(bs); j++ {
				if bytes.Equal(bs[i], bs[j]) {
					enc := make([]string, len(bs))
					for k, b := range bs {
						enc[k] = base64.StdEncoding.EncodeToString(b)
					}
					return nil, &Error{Msg: invalidPrefix + "Input collection [" + strings.Join(enc, ", ") + "]of type BS contains duplicates."}
				}
			}
		}
		out := make([][]byte, len(bs))
		for i, b := range bs {
			if b == nil {
				b = []byte{}
			}
			out[i] = b
		}
		return &Value{T: BS, Bins: out}, nil
	case w.M != nil:
		m := make(map[string]*Value, len(*w.M))
		for k, c := range *w.M {
			v, err := fromWire(c)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		return &Value{T: M, Map: m}, nil
	case w.L != nil:
		l := make([]*Value, len(*w.L))
		for i, c := range *w.L {
			v, err := fromWire(c)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return &Value{T: L, List: l}, nil
	}
	return nil, &Error{Msg: "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"}
}

// ItemFromWire validates every value of a wire item.
func ItemFromWire(w WireItem) (Item, error) {
	it := make(Item, len(w))
	for k, c := range w {
		if k == "" || hasEmptyName(c) {
			return nil, &Error{Msg: MsgEmptyName}
		}
	}
	// Empty values are reported before any other problem, as DynamoDB does.
	for _, c := range w {
		if err := checkEmpty(c); err != nil {
			return nil, err
		}
	}
	for k, c := range w {
		v, err := fromWire(c)
		if err != nil {
			return nil, err
		}
		it[k] = v
	}
	for k, v := range it {
		if len(k) > MaxNameBytes {
			return nil, &Error{Msg: msgNameTooLarge}
		}
		if err := checkShape(v, 1); err != nil {
			return nil, err
		}
	}
	return it, nil
}

// MarshalJSON writes the wire form of the value.
func (v *Value) MarshalJSON() ([]byte, error) { return AppendJSON(nil, v), nil }

// AppendJSON appends the wire form of v to buf.
func AppendJSON(buf []byte, v *Value) []byte {
	switch v.T {
	case S:
		buf = append(buf, `{"S":`...)
		buf = appendString(buf, v.Str)
	case N:
		buf = append(buf, `{"N":`...)
		buf = appendString(buf, v.Str)
	case B:
		buf = append(buf, `{"B":"`...)
		buf = base64.StdEncoding.AppendEncode(buf, v.Bin)
		buf = append(buf, '"')
	case BOOL:
		buf = append(buf, `{"BOOL":`...)
		buf = strconv.AppendBool(buf, v.Bool)
	case NULL:
		buf = append(buf, `{"NULL":true`...)
	case SS, NS:
		buf = append(buf, `{"`...)
		buf = append(buf, v.T.String()...)
		buf = append(buf, `":[`...)
		for i, s := range v.Strs {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, s)
		}
		buf = append(buf, ']')
	case BS:
		buf = append(buf, `{"BS":[`...)
		for i, b := range v.Bins {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '"')
			buf = base64.StdEncoding.AppendEncode(buf, b)
			buf = append(buf, '"')
		}
		buf = append(buf, ']')
	case M:
		buf = append(buf, `{"M":`...)
		buf = AppendItemJSON(buf, v.Map)
	case L:
		buf = append(buf, `{"L":[`...)
		for i, c := range v.List {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = AppendJSON(buf, c)
		}
		buf = append(buf, ']')
	default:
		buf = append(buf, '{')
	}
	return append(buf, '}')
}

// AppendString appends s as a JSON string; invalid UTF-8 is replaced.
func AppendString(buf []byte, s string) []byte { return appendString(buf, s) }

// AppendItemJSON appends the wire form of an item (a JSON object).
func AppendItemJSON(buf []byte, it map[string]*Value) []byte {
	buf = append(buf, '{')
	first := true
	for k, v := range it {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = appendString(buf, k)
		buf = append(buf, ':')
		buf = AppendJSON(buf, v)
	}
	return append(buf, '}')
}

// MarshalJSON writes the wire form of the item.
func (it Item) MarshalJSON() ([]byte, error) { return AppendItemJSON(nil, it), nil }

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string; invalid UTF-8 is replaced.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// ToWire converts a value back to its wire form.
func (v *Value) ToWire() *Wire {
	w := &Wire{}
	switch v.T {
	case S:
		w.S = &v.Str
	case N:
		w.N = &v.Str
	case B:
		w.B = &v.Bin
	case BOOL:
		w.BOOL = &v.Bool
	case NULL:
		t := true
		w.NULL = &t
	case SS:
		w.SS = &v.Strs
	case NS:
		w.NS = &v.Strs
	case BS:
		w.BS = &v.Bins
	case M:
		m := make(map[string]*Wire, len(v.Map))
		for k, c := range v.Map {
			m[k] = c.ToWire()
		}
		w.M = &m
	case L:
		l := make([]*Wire, len(v.List))
		for i, c := range v.List {
			l[i] = c.ToWire()
		}
		w.L = &l
	}
	return w
}
