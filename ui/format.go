package ui

import (
	"errors"
	"strconv"
	"strings"
)

// money formats cents as Brazilian reais: R$ 1.234,56 (negative with a
// leading minus).
func money(cents int64) string {
	neg := cents < 0
	if neg {
		cents = -cents
	}
	units := strconv.FormatInt(cents/100, 10)
	var b strings.Builder
	for i, r := range units {
		if i > 0 && (len(units)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	frac := cents % 100
	s := "R$ " + b.String() + "," + string(rune('0'+frac/10)) + string(rune('0'+frac%10))
	if neg {
		return "-" + s
	}
	return s
}

var errAmount = errors.New("amount must be reais with up to two decimals, such as 150,00 or 150.00")

// parseCents reads an amount typed in a form, "150", "150,5", "1.234,56"
// or "1234.56", into cents. A comma is the decimal separator when
// present; then dots group thousands.
func parseCents(s string) (int64, error) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "R$"))
	if strings.Contains(s, ",") {
		s = strings.ReplaceAll(s, ".", "")
		s = strings.Replace(s, ",", ".", 1)
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(whole) > 12 || len(frac) > 2 {
		return 0, errAmount
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, errAmount
		}
	}
	for len(frac) < 2 {
		frac += "0"
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt(frac, 10, 64)
	return w*100 + f, nil
}

// safeNext keeps a post-login destination only when it is a path of the
// web pages: anything else (another host, a scheme, //) goes to "/",
// which sends each role to its start page.
func safeNext(next string) string {
	if strings.HasPrefix(next, "/ui/") && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return "/"
}
