package av

import (
	"encoding/binary"
	"errors"
)

// The binary form used for storage: a type byte, then for scalars a uvarint
// length and the bytes, for collections a uvarint count and the members.
// Map members are name (uvarint length + bytes) then value.

var errCorrupt = errors.New("av: corrupt encoded value")

// AppendBinary appends the storage form of v.
func AppendBinary(buf []byte, v *Value) []byte {
	buf = append(buf, byte(v.T))
	switch v.T {
	case S, N:
		buf = appendBytes(buf, v.Str)
	case B:
		buf = appendBytes(buf, string(v.Bin))
	case BOOL:
		if v.Bool {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
	case NULL:
	case SS, NS:
		buf = binary.AppendUvarint(buf, uint64(len(v.Strs)))
		for _, s := range v.Strs {
			buf = appendBytes(buf, s)
		}
	case BS:
		buf = binary.AppendUvarint(buf, uint64(len(v.Bins)))
		for _, b := range v.Bins {
			buf = appendBytes(buf, string(b))
		}
	case M:
		buf = AppendItemBinary(buf, v.Map)
	case L:
		buf = binary.AppendUvarint(buf, uint64(len(v.List)))
		for _, c := range v.List {
			buf = AppendBinary(buf, c)
		}
	}
	return buf
}

// AppendItemBinary appends the storage form of an item.
func AppendItemBinary(buf []byte, it map[string]*Value) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(it)))
	for k, v := range it {
		buf = appendBytes(buf, k)
		buf = AppendBinary(buf, v)
	}
	return buf
}

func appendBytes(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() int {
	if r.err != nil {
		return 0
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)) {
		r.err = errCorrupt
		return 0
	}
	r.b = r.b[k:]
	return int(n)
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || n > len(r.b) {
		r.err = errCorrupt
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) value() *Value {
	if r.err != nil || len(r.b) == 0 {
		r.err = errCorrupt
		return nil
	}
	v := &Value{T: Type(r.b[0])}
	r.b = r.b[1:]
	switch v.T {
	case S, N:
		v.Str = string(r.bytes())
	case B:
		v.Bin = append([]byte{}, r.bytes()...)
	case BOOL:
		if len(r.b) == 0 {
			r.err = errCorrupt
			return nil
		}
		v.Bool = r.b[0] == 1
		r.b = r.b[1:]
	case NULL:
	case SS, NS:
		n := r.uvarint()
		v.Strs = make([]string, 0, min(n, len(r.b)))
		for i := 0; i < n && r.err == nil; i++ {
			v.Strs = append(v.Strs, string(r.bytes()))
		}
	case BS:
		n := r.uvarint()
		v.Bins = make([][]byte, 0, min(n, len(r.b)))
		for i := 0; i < n && r.err == nil; i++ {
			v.Bins = append(v.Bins, append([]byte{}, r.bytes()...))
		}
	case M:
		v.Map = r.item()
	case L:
		n := r.uvarint()
		v.List = make([]*Value, 0, min(n, len(r.b)))
		for i := 0; i < n && r.err == nil; i++ {
			v.List = append(v.List, r.value())
		}
	default:
		r.err = errCorrupt
	}
	return v
}

func (r *reader) item() map[string]*Value {
	n := r.uvarint()
	it := make(map[string]*Value, min(n, len(r.b)))
	for i := 0; i < n && r.err == nil; i++ {
		k := string(r.bytes())
		it[k] = r.value()
	}
	return it
}

// DecodeItem decodes an item written by AppendItemBinary.
func DecodeItem(b []byte) (Item, error) {
	r := reader{b: b}
	it := r.item()
	if r.err == nil && len(r.b) != 0 {
		r.err = errCorrupt
	}
	return it, r.err
}
