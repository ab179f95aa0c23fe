package av

import (
	"bytes"
	"strings"
)

// CompareCanonical compares two numbers in canonical form (as produced by
// ParseNumber) without parsing them: -1, 0 or +1. Canonical numbers have no
// leading zeros in the integer part and no trailing zeros in the fraction,
// so sign, integer-part length and then the digits decide. It allocates
// nothing, which matters for filters that compare every scanned item.
func CompareCanonical(a, b string) int {
	if a == b {
		return 0
	}
	aNeg, bNeg := strings.HasPrefix(a, "-"), strings.HasPrefix(b, "-")
	switch {
	case aNeg && !bNeg:
		return -1
	case !aNeg && bNeg:
		return 1
	case aNeg:
		return -compareMagnitude(a[1:], b[1:])
	}
	return compareMagnitude(a, b)
}

func compareMagnitude(a, b string) int {
	ai, af, _ := strings.Cut(a, ".")
	bi, bf, _ := strings.Cut(b, ".")
	if len(ai) != len(bi) {
		if len(ai) < len(bi) {
			return -1
		}
		return 1
	}
	if c := strings.Compare(ai, bi); c != 0 {
		return c
	}
	return strings.Compare(af, bf)
}

// Compare orders two values of the same scalar type the way DynamoDB does:
// strings by their UTF-8 bytes, binaries as unsigned bytes, numbers by
// value. ok is false when the values are not both S, both N or both B.
func Compare(a, b *Value) (c int, ok bool) {
	if a == nil || b == nil || a.T != b.T {
		return 0, false
	}
	switch a.T {
	case S:
		return strings.Compare(a.Str, b.Str), true
	case N:
		return CompareCanonical(a.Str, b.Str), true
	case B:
		return bytes.Compare(a.Bin, b.Bin), true
	}
	return 0, false
}

// Same reports whether a and b are equal with DynamoDB's semantics, like
// Equal, but relies on numbers being canonical so that it never allocates.
func Same(a, b *Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.T != b.T {
		return false
	}
	switch a.T {
	case S, N:
		return a.Str == b.Str
	case B:
		return bytes.Equal(a.Bin, b.Bin)
	case BOOL:
		return a.Bool == b.Bool
	case NULL:
		return true
	case SS, NS:
		if len(a.Strs) != len(b.Strs) {
			return false
		}
		for _, x := range a.Strs {
			if !containsString(b.Strs, x) {
				return false
			}
		}
		return true
	case BS:
		if len(a.Bins) != len(b.Bins) {
			return false
		}
		for _, x := range a.Bins {
			if !containsBytes(b.Bins, x) {
				return false
			}
		}
		return true
	case L:
		if len(a.List) != len(b.List) {
			return false
		}
		for i := range a.List {
			if !Same(a.List[i], b.List[i]) {
				return false
			}
		}
		return true
	case M:
		if len(a.Map) != len(b.Map) {
			return false
		}
		for k, v := range a.Map {
			if w, ok := b.Map[k]; !ok || !Same(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

func containsString(set []string, s string) bool {
	for _, x := range set {
		if x == s {
			return true
		}
	}
	return false
}

func containsBytes(set [][]byte, b []byte) bool {
	for _, x := range set {
		if bytes.Equal(x, b) {
			return true
		}
	}
	return false
}
