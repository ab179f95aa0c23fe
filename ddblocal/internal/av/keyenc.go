package av

// AppendKey appends an order-preserving, prefix-free encoding of a key
// value (S, N or B): encoded keys compare bytewise exactly as DynamoDB
// orders the values (strings and binaries bytewise, numbers numerically).
func AppendKey(buf []byte, v *Value) []byte {
	switch v.T {
	case S:
		return appendEscaped(buf, v.Str)
	case B:
		return appendEscaped(buf, string(v.Bin))
	case N:
		return appendNumberKey(buf, v.Str)
	}
	panic("av: key of type " + v.T.String())
}

// appendEscaped writes s with 0x00 escaped as 0x00 0xFF and ends it with
// 0x00 0x01, so no encoded value is a prefix of another.
func appendEscaped(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			buf = append(buf, 0, 0xFF)
		} else {
			buf = append(buf, s[i])
		}
	}
	return append(buf, 0, 1)
}

// Numbers: a sign class byte (1 negative, 2 zero, 3 positive), the adjusted
// exponent biased into a uint16, the digits, and a terminator; negatives
// have exponent, digits and terminator inverted so larger magnitudes sort
// first.
func appendNumberKey(buf []byte, s string) []byte {
	neg, digits, point := NumberDigits(s)
	if digits == "" {
		return append(buf, 2)
	}
	exp := uint16(point + 0x8000)
	if !neg {
		buf = append(buf, 3, byte(exp>>8), byte(exp))
		for i := 0; i < len(digits); i++ {
			buf = append(buf, digits[i]-'0'+1)
		}
		return append(buf, 0)
	}
	exp = ^exp
	buf = append(buf, 1, byte(exp>>8), byte(exp))
	for i := 0; i < len(digits); i++ {
		buf = append(buf, 0xFF-(digits[i]-'0'+1))
	}
	return append(buf, 0xFF)
}

// AppendKeyPrefix appends the encoding of an S or B value without its
// terminator: the encodings of exactly the values that begin with v start
// with it (begins_with on a sort key becomes a key range).
func AppendKeyPrefix(buf []byte, v *Value) []byte {
	enc := AppendKey(nil, v)
	return append(buf, enc[:len(enc)-2]...)
}
