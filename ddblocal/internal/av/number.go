package av

import (
	"errors"
	"regexp"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// DynamoDB numbers: up to 38 significant digits, magnitude between 1E-130
// and 9.99...E+125.
const (
	maxDigits   = 38
	maxExponent = 125  // largest adjusted exponent
	minExponent = -130 // smallest adjusted exponent
)

// The messages DynamoDB gives for numbers it cannot store.
const (
	msgNotNumber = "The parameter cannot be converted to a numeric value"
	msgOverflow  = "Number overflow. Attempting to store a number with magnitude larger than supported range"
	msgUnderflow = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
	msgPrecision = "Attempting to store more than 38 significant digits in a Number"
)

// ctx does exact arithmetic: results needing more than 38 digits are reported
// (Inexact) rather than silently rounded.
var ctx = apd.Context{
	Precision:   maxDigits,
	MaxExponent: 1000,
	MinExponent: -1000,
	Traps:       apd.InvalidOperation,
	Rounding:    apd.RoundHalfEven,
}

// ParseNumber validates a number as DynamoDB does and returns its canonical
// text (plain notation, no superfluous zeros).
func ParseNumber(s string) (string, error) {
	d, err := parseDecimal(s)
	if err != nil {
		return "", err
	}
	return canonical(d), nil
}

func parseDecimal(s string) (*apd.Decimal, error) {
	if s == "" {
		return nil, &Error{Msg: msgNotNumber}
	}
	// apd accepts forms DynamoDB rejects (Infinity, NaN, hex is not an issue).
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return nil, &Error{Msg: msgNotNumber + ": " + s}
		}
	}
	d, _, err := apd.NewFromString(s)
	if err != nil {
		// An exponent too large for the decimal package is still a number,
		// out of DynamoDB's range.
		if m := hugeExponent.FindStringSubmatch(s); m != nil && strings.Trim(m[1], "0.") != "" {
			if m[2] == "-" {
				return nil, &Error{Msg: msgUnderflow}
			}
			return nil, &Error{Msg: msgOverflow}
		}
	}
	if err != nil || d.Form != apd.Finite {
		return nil, &Error{Msg: msgNotNumber + ": " + s}
	}
	return checkRange(d)
}

// hugeExponent matches a decimal in exponent notation: mantissa digits,
// exponent sign.
var hugeExponent = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)[eE]([+-]?)\d+$`)

func checkRange(d *apd.Decimal) (*apd.Decimal, error) {
	d.Reduce(d)
	if d.IsZero() {
		d.SetInt64(0)
		return d, nil
	}
	digits := int64(d.NumDigits())
	adjusted := int64(d.Exponent) + digits - 1
	switch {
	case adjusted > maxExponent:
		return nil, &Error{Msg: msgOverflow}
	case adjusted < minExponent:
		return nil, &Error{Msg: msgUnderflow}
	case digits > maxDigits:
		return nil, &Error{Msg: msgPrecision}
	}
	return d, nil
}

// canonical renders a reduced decimal in plain notation.
func canonical(d *apd.Decimal) string {
	if d.IsZero() {
		return "0"
	}
	coef := d.Coeff.String()
	exp := int(d.Exponent)
	var b strings.Builder
	if d.Negative {
		b.WriteByte('-')
	}
	switch {
	case exp >= 0:
		b.WriteString(coef)
		b.WriteString(strings.Repeat("0", exp))
	case -exp < len(coef):
		b.WriteString(coef[:len(coef)+exp])
		b.WriteByte('.')
		b.WriteString(coef[len(coef)+exp:])
	default:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -exp-len(coef)))
		b.WriteString(coef)
	}
	return b.String()
}

func mustDecimal(s string) *apd.Decimal {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		// Stored numbers are canonical; this cannot happen.
		panic("av: bad canonical number " + s)
	}
	return d
}

// CompareNumbers compares two canonical numbers: -1, 0 or +1.
func CompareNumbers(a, b string) int {
	if a == b {
		return 0
	}
	return mustDecimal(a).Cmp(mustDecimal(b))
}

// ErrNumberRange is wrapped by arithmetic results DynamoDB cannot store.
var ErrNumberRange = errors.New("number out of range")

// AddNumbers returns a+b (or a-b when sub) in canonical form, or an *Error
// with DynamoDB's message when the result cannot be stored.
func AddNumbers(a, b string, sub bool) (string, error) {
	x, y := mustDecimal(a), mustDecimal(b)
	var r apd.Decimal
	var cond apd.Condition
	var err error
	if sub {
		cond, err = ctx.Sub(&r, x, y)
	} else {
		cond, err = ctx.Add(&r, x, y)
	}
	if err != nil {
		return "", &Error{Msg: msgNotNumber}
	}
	if cond.Inexact() {
		return "", &Error{Msg: "Number overflow. Attempting to store a number with magnitude larger than supported range"}
	}
	d, err := checkRange(&r)
	if err != nil {
		return "", err
	}
	return canonical(d), nil
}

// NumberDigits returns the significant digits of a canonical number and the
// position of the decimal point relative to their start (the adjusted
// exponent plus one). Used by the size rules and the key encoding.
func NumberDigits(s string) (neg bool, digits string, pointPos int) {
	if s == "0" {
		return false, "", 0
	}
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "0" {
		trimmed := strings.TrimLeft(frac, "0")
		pointPos = -(len(frac) - len(trimmed))
		digits = trimmed
	} else {
		pointPos = len(intPart)
		digits = intPart + frac
	}
	digits = strings.TrimRight(digits, "0")
	return neg, digits, pointPos
}
