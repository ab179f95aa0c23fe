package av

import "unicode/utf8"

// Size rules from the DynamoDB developer guide ("Item sizes and formats"):
// names and strings count their UTF-8 bytes, binaries their raw bytes,
// numbers about one byte per two significant digits plus one, NULL and BOOL
// one byte, and each list or map three bytes of overhead plus one byte per
// member.

// ItemSize returns the size DynamoDB accounts for an item.
func ItemSize(it map[string]*Value) int {
	n := 0
	for k, v := range it {
		n += len(k) + Size(v)
	}
	return n
}

// Size returns the size of one value (without its attribute name).
func Size(v *Value) int {
	switch v.T {
	case S:
		return len(v.Str)
	case N:
		return NumberSize(v.Str)
	case B:
		return len(v.Bin)
	case BOOL, NULL:
		return 1
	case SS:
		n := 0
		for _, s := range v.Strs {
			n += len(s)
		}
		return n
	case NS:
		n := 0
		for _, s := range v.Strs {
			n += NumberSize(s)
		}
		return n
	case BS:
		n := 0
		for _, b := range v.Bins {
			n += len(b)
		}
		return n
	case M:
		n := 3
		for k, c := range v.Map {
			n += 1 + len(k) + Size(c)
		}
		return n
	case L:
		n := 3
		for _, c := range v.List {
			n += 1 + Size(c)
		}
		return n
	}
	return 0
}

// NumberSize is the stored size of a canonical number: its significant
// digits grouped in base-100 pairs aligned on the decimal point, plus one
// byte of exponent, plus one for negatives.
func NumberSize(s string) int {
	neg, digits, point := NumberDigits(s)
	if digits == "" {
		return 1
	}
	// Align on the decimal point: an odd point position means the first
	// pair holds a single digit.
	lead := 0
	if point%2 != 0 {
		lead = 1
	}
	pairs := (lead + len(digits) + 1) / 2
	n := pairs + 1
	if neg {
		n++
	}
	return n
}

// ValidUTF8 reports whether s is valid UTF-8 (DynamoDB rejects invalid strings).
func ValidUTF8(s string) bool { return utf8.ValidString(s) }
