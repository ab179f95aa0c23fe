package web

import (
	"strconv"

	"lastro/collections/errs"
)

// Page sizes of list endpoints (?limit=).
const (
	DefaultListLimit = 100
	MaxLimit         = 1000
)

// ParseLimit reads ?limit= (1..MaxLimit, def when empty).
func ParseLimit(s string, def int) (int32, error) {
	if s == "" {
		return int32(def), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxLimit {
		return 0, errs.E(errs.Invalid, "invalid_limit", "limit must be 1-%d", MaxLimit)
	}
	return int32(n), nil
}
